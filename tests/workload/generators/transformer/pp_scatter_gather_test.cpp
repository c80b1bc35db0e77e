// `--pp-scatter-gather` (Narayanan et al., SC'21, section 4.1; Megatron-LM
// 2021's --scatter-gather-tensors-in-pipeline): each tensor-parallel rank
// sends 1/tp of the pipeline message to its peer of the next stage, and the
// receiving stage all-gathers the slices over its tensor-parallel group before
// the pass that needs them. Checked on every generated node: message and
// all-gather sizes against the closed form b s h x 2 B / tp, one all-gather per
// received message, each depending on its receive; the model FLOPs unchanged.
#include <gtest/gtest.h>

#include "workload/rank_graph.h"

#include "core/error.h"
#include "tests/workload/generators/generator_test_util.h"

namespace sim::testing {
namespace {

TEST_F(GeneratorTest, PipelineMessagesAreScatteredOverTensorRanksAndGatheredAtTheReceiver) {
  const std::uint64_t hidden = 64, seq = 32, micro = 2, tp = 4;
  const std::string model = model_file("gpt", gpt_yaml(4, hidden, 8, 256));
  const std::uint64_t message = micro * seq * hidden * 2;  // b s h, 2 B: what each rank holds
  for (const char* schedule : {"1f1b", "interleaved:2"}) {
    gen::TrainingOptions o = options(model, "tp=4,pp=2,dp=1", 8, seq);
    o.micro_batch = micro;
    o.schedule = schedule;
    const gen::TrainingSpec plain = gen::make_training_spec(o);
    o.pp_scatter_gather = true;
    const gen::TrainingSpec split = gen::make_training_spec(o);
    EXPECT_EQ(counted_flops(split), counted_flops(plain)) << schedule;

    std::uint64_t sends = 0, recvs = 0, gathers = 0, plain_sends = 0;
    each_node(plain, [&](std::uint32_t, const et::Node& n) {
      if (n.type() != et::COMM_SEND_NODE) return;
      ++plain_sends;
      EXPECT_EQ(attr_int(n, "comm_size"), static_cast<std::int64_t>(message)) << n.name();
    });
    each_node(split, [&](std::uint32_t rank, const et::Node& n) {
      if (n.type() == et::COMM_SEND_NODE) {
        ++sends;
        EXPECT_EQ(attr_int(n, "comm_size"), static_cast<std::int64_t>(message / tp)) << n.name();
      } else if (n.type() == et::COMM_RECV_NODE) {
        ++recvs;
        EXPECT_EQ(attr_int(n, "comm_size"), static_cast<std::int64_t>(message / tp)) << n.name();
      } else if (n.type() == et::COMM_COLL_NODE && n.name().rfind("pp.gather_", 0) == 0) {
        ++gathers;
        // An all-gather of each rank's slice over the tensor-parallel group, after the receive.
        EXPECT_EQ(attr_int(n, "comm_type"), static_cast<std::int64_t>(CollectiveType::kAllGather)) << n.name();
        EXPECT_EQ(attr_int(n, "comm_size"), static_cast<std::int64_t>(message / tp)) << n.name();
        EXPECT_EQ(n.data_deps_size(), 1) << rank << " " << n.name();
      }
    });
    EXPECT_EQ(sends, plain_sends) << schedule;
    EXPECT_EQ(recvs, sends) << schedule;
    EXPECT_EQ(gathers, recvs) << schedule;
    EXPECT_GT(gathers, 0u) << schedule;
  }
}

TEST_F(GeneratorTest, PipelineScatterGatherNeedsTensorRanksWithoutSequenceParallelism) {
  const std::string model = model_file("gpt", gpt_yaml(4, 64, 8, 256));
  for (const char* plan : {"tp=1,pp=2,dp=1", "tp=2,pp=2,dp=1,sp"}) {
    gen::TrainingOptions o = options(model, plan, 8, 32);
    o.pp_scatter_gather = true;
    try {
      gen::make_training_spec(o);
      FAIL() << plan;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--pp-scatter-gather: needs tp > 1 without sp"), std::string::npos)
          << e.what();
    }
  }
  // One stage has no pipeline message: the flag changed nothing, silently.
  gen::TrainingOptions one_stage = options(model, "tp=2,pp=1,dp=1", 8, 32);
  one_stage.pp_scatter_gather = true;
  try {
    gen::make_training_spec(one_stage);
    FAIL() << "pp=1";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--pp-scatter-gather: needs pp > 1 (with one stage there is no pipeline message "
                                         "to split)"),
              std::string::npos)
        << e.what();
  }
  // The in-memory form takes it as a flag.
  EXPECT_TRUE(gen::parse_training_query("model=x&pp-scatter-gather").pp_scatter_gather);
  EXPECT_THROW(gen::parse_training_query("model=x&pp-scatter-gather=yes"), InputError);
}

}  // namespace
}  // namespace sim::testing
