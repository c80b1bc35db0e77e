// Parameters, gradients and optimizer state per rank equal the closed form
// for each ZeRO stage, and the generated data-parallel traffic and optimizer
// step move exactly those bytes.
#include <gtest/gtest.h>

#include "tests/workload/generators/generator_test_util.h"
#include "workload/generators/spec/model_flops.h"

namespace sim::testing {
namespace {

TEST_F(GeneratorTest, BytesPerRankFollowTheZeroStage) {
  // Llama-style: per layer 2h (two RMSNorms) + h (h + 2 h_kv) / tp + h^2 / tp + 3 h f / tp parameters;
  // the first stage adds the embedding V h / tp, the last the final norm h and the output layer V h / tp.
  const std::uint64_t l = 4, h = 64, f = 192, heads = 8, kv = 4, V = 512, tp = 2, pp = 2, dp = 4, m = 2;
  const std::string model = model_file("llama", llama_yaml(l, h, f, heads, kv, V));
  const std::uint64_t hkv = kv * (h / heads);
  const std::uint64_t layer = 2 * h + h * (h + 2 * hkv) / tp + h * h / tp + 3 * h * f / tp;
  const std::uint64_t first = l / pp * layer + V * h / tp, last = l / pp * layer + h + V * h / tp;
  for (std::uint32_t zero = 0; zero <= 3; ++zero) {
    gen::TrainingOptions o = options(model, "tp=2,pp=2,dp=4", m * dp, 16);
    o.zero = zero;
    o.bucket_params = 20000;  // several buckets
    const gen::TrainingSpec spec = gen::make_training_spec(o);
    for (std::uint32_t rank = 0; rank < spec.plan.world(); ++rank) {
      const std::uint64_t P = gen::coords_of(spec.plan, rank).pp == 0 ? first : last;
      ASSERT_EQ(P % dp, 0u);
      const gen::RankMemory mem = gen::rank_memory(spec, rank);
      EXPECT_EQ(mem.param_bytes, zero >= 3 ? 2 * P / dp : 2 * P) << "zero " << zero << " rank " << rank;
      EXPECT_EQ(mem.grad_bytes, zero >= 2 ? 2 * P / dp : 2 * P) << "zero " << zero << " rank " << rank;
      EXPECT_EQ(mem.optimizer_bytes, zero >= 1 ? 12 * P / dp : 12 * P) << "zero " << zero << " rank " << rank;
    }
    // What the trace moves: gradients reduced once per iteration (ZeRO 3: every micro-batch), the optimizer
    // step over the rank's shard, updated parameters gathered back (ZeRO 1, 2) or before every use (ZeRO 3).
    for (std::uint32_t rank : {0u, 15u}) {
      const std::uint64_t P = gen::coords_of(spec.plan, rank).pp == 0 ? first : last;
      const EtTrace t = gen::transformer_rank_trace(spec, rank);
      std::uint64_t grad = 0, gathered = 0, adam = 0, metadata_param = 0;
      for (const et::Node& n : t.nodes) {
        const std::string& name = n.name();
        if (name.find("dp.grad_") != std::string::npos || name.find("dp_grad_") != std::string::npos) {
          grad += static_cast<std::uint64_t>(*attr_int(n, "comm_size"));
        }
        if (name.find("param_allgather") != std::string::npos) {
          gathered += static_cast<std::uint64_t>(*attr_int(n, "comm_size"));
        }
        if (name == "optimizer.step") adam = static_cast<std::uint64_t>(*attr_int(n, "elements"));
      }
      metadata_param = static_cast<std::uint64_t>(*metadata_int(t.metadata, "param_bytes"));
      EXPECT_EQ(metadata_param, gen::rank_memory(spec, rank).param_bytes);
      EXPECT_EQ(grad, (zero == 3 ? m : 1) * 2 * P) << "zero " << zero << " rank " << rank;
      EXPECT_EQ(adam, zero >= 1 ? P / dp : P) << "zero " << zero << " rank " << rank;
      // ALL_GATHER's comm_size is each rank's input: its shard.
      EXPECT_EQ(gathered, zero == 0 ? 0 : zero == 3 ? 2 * m * 2 * P / dp : 2 * P / dp) << "zero " << zero;
    }
  }
}

}  // namespace
}  // namespace sim::testing
