// --tp-comm-overlap: Transformer Engine's userbuffers overlap of the
// sequence-parallel all-gathers and reduce-scatters with the GEMMs. Checked:
// model FLOPs are unchanged (the pieces sum to the GEMMs), the ring steps and
// chunked reduce-scatters move exactly the bytes of the collectives they
// replace, and with communication free the iteration is its compute, each
// GEMM piece timed by the roofline's closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "network/topology.h"
#include "system/runner/simulation.h"
#include "tests/workload/generators/generator_test_util.h"
#include "workload/generators/spec/model_flops.h"
#include "workload/generators/transformer/transformer_workload.h"

namespace sim::testing {
namespace {

std::int64_t comm_size(const et::Node& n) { return attr_int(n, "comm_size").value_or(-1); }
bool is_piece(const std::string& name) { return name.find(".piece") != std::string::npos; }

TEST_F(GeneratorTest, TpOverlapKeepsModelFlopsExact) {
  const std::string llama = model_file("llama", llama_yaml(4, 64, 176, 8, 4, 256));
  const std::string gpt = model_file("gpt", gpt_yaml(4, 64, 4, 128));
  const std::string moe = model_file("moe", llama_yaml(2, 64, 96, 4, 2, 128, 4, 2));
  struct Case {
    std::string model, plan, recompute;
  };
  for (const Case& c : {Case{llama, "tp=2,pp=2,dp=1,sp", "none"}, Case{llama, "tp=4,pp=1,dp=1,cp=2,sp", "full"},
                        Case{gpt, "tp=2,pp=2,dp=2,sp", "selective"}, Case{gpt, "tp=4,pp=1,dp=1,sp", "full"},
                        Case{moe, "tp=2,pp=1,dp=2,ep=2,sp", "none"}}) {
    gen::TrainingOptions o = options(c.model, c.plan, 8, 64);
    o.recompute = c.recompute;
    const auto before = counted_flops(gen::make_training_spec(o));
    o.tp_comm_overlap = true;
    const gen::TrainingSpec spec = gen::make_training_spec(o);
    const auto after = counted_flops(spec);
    EXPECT_EQ(after.first, gen::model_flops_exact(spec)) << c.plan;
    EXPECT_EQ(after.first, before.first) << c.plan;
    EXPECT_EQ(after.second, before.second) << c.plan << " (recomputed FLOPs)";
    std::uint64_t pieces = 0;
    each_node(spec, [&](std::uint32_t, const et::Node& n) { pieces += is_piece(n.name()) ? 1 : 0; });
    EXPECT_GT(pieces, 0u) << c.plan;
  }
}

// Per rank: the TP collectives of the plain trace that the overlap replaced
// (by name), against the ring's sends and receives and the chunked
// reduce-scatters that replace them.
TEST_F(GeneratorTest, TpOverlapMovesExactlyTheReplacedCollectivesBytes) {
  const std::string llama = model_file("llama", llama_yaml(4, 64, 176, 8, 4, 256));
  for (const char* plan : {"tp=2,pp=2,dp=1,sp", "tp=4,pp=1,dp=2,cp=2,sp"}) {
    gen::TrainingOptions o = options(llama, plan, 8, 64);
    o.recompute = "full";  // the recomputed forward overlaps too
    const gen::TrainingSpec base = gen::make_training_spec(o);
    o.tp_comm_overlap = true;
    const gen::TrainingSpec over = gen::make_training_spec(o);
    const std::uint64_t tp = base.plan.tp;
    for (std::uint32_t r = 0; r < base.plan.world(); ++r) {
      const EtTrace plain = gen::transformer_rank_trace(base, r), overlapped = gen::transformer_rank_trace(over, r);
      std::set<std::string> kept;
      std::int64_t new_rs = 0, sent = 0, received = 0;
      for (const et::Node& n : overlapped.nodes) {
        if (n.type() == et::COMM_COLL_NODE) kept.insert(n.name());
        if (n.type() == et::COMM_COLL_NODE && (n.name().find(".proj.tp_reduce_scatter") != std::string::npos ||
                                               n.name().find(".fc2.tp_reduce_scatter") != std::string::npos)) {
          new_rs += comm_size(n);
        }
        if (n.type() == et::COMM_SEND_NODE && n.name().find(".tp_send") != std::string::npos) sent += comm_size(n);
        if (n.type() == et::COMM_RECV_NODE && n.name().find(".tp_recv") != std::string::npos) received += comm_size(n);
      }
      // The first ring step starts when piece 0 could: its send and receive wait for all piece 0 waits for.
      std::map<std::string, const et::Node*> by_name;
      for (const et::Node& n : overlapped.nodes) by_name[n.name()] = &n;
      std::size_t first_steps = 0;
      for (const auto& [name, node] : by_name) {
        for (const char* step : {".tp_send1.", ".tp_recv1."}) {
          const std::size_t at = name.find(step);
          if (at == std::string::npos) continue;
          const et::Node* piece0 = by_name.at(name.substr(0, at) + ".piece0." + name.substr(at + 10));
          const std::set<std::uint64_t> deps(node->data_deps().begin(), node->data_deps().end());
          for (std::uint64_t d : piece0->data_deps()) EXPECT_EQ(deps.count(d), 1u) << name << " on " << d;
          ++first_steps;
        }
      }
      EXPECT_GT(first_steps, 0u);
      std::int64_t removed_ag = 0, removed_rs = 0, removed_other = 0;
      for (const et::Node& n : plain.nodes) {
        if (n.type() != et::COMM_COLL_NODE || kept.count(n.name())) continue;
        const auto type = attr_int(n, "comm_type").value_or(-1);
        if (type == static_cast<std::int64_t>(CollectiveType::kAllGather)) removed_ag += comm_size(n);
        else if (type == static_cast<std::int64_t>(CollectiveType::kReduceScatter)) removed_rs += comm_size(n);
        else removed_other += comm_size(n) + 1;
      }
      EXPECT_GT(removed_ag, 0) << plan << " rank " << r;
      EXPECT_EQ(removed_other, 0) << plan << " rank " << r << ": only sequence-parallel collectives are replaced";
      // A ring all-gather sends tp - 1 shards of its comm_size (each rank's input) per rank.
      EXPECT_EQ(sent, static_cast<std::int64_t>(tp - 1) * removed_ag) << plan << " rank " << r;
      EXPECT_EQ(received, sent) << plan << " rank " << r;
      // The chunked reduce-scatters cover the whole buffer (REDUCE_SCATTER's comm_size) of the one they replace.
      EXPECT_EQ(new_rs, removed_rs) << plan << " rank " << r;
    }
  }
}

// Rank 0's GPU stream with free communication: when its last node ends, the
// durations of its nodes, and the nodes themselves.
struct Stream : TimelineSink {
  Time end = 0, busy = 0;
  std::map<std::uint64_t, Time> duration;  // node id -> time on the GPU stream
  void slice(const TimelineSlice& s) override {
    if (s.rank != 0 || s.lane != 0) return;
    busy += s.end - s.start;
    end = std::max(end, s.end);
    duration[s.node_id] = s.end - s.start;
  }
};

constexpr double kPeak = 1e15, kMemory = 1e12;  // FLOP/s, B/s: the roofline of the test

Stream run_comm_free(const gen::TrainingSpec& spec) {
  const Topology topology = parse_topology("shape: Switch\nnpus: " + std::to_string(spec.plan.world()) +
                                               "\nbandwidth: 100GB/s\nlatency: 0ns\n",
                                           "<test switch>");
  SystemConfig config;
  config.peak_flops = kPeak;
  config.compute_memory_bandwidth = static_cast<std::uint64_t>(kMemory);
  Stream stream;
  SimulationOptions options;
  options.timeline = &stream;
  Simulation sim(gen::transformer_rank_graphs(spec, GraphOptions{}, "test", 1), topology, config, options);
  sim.run();
  return stream;
}

// The roofline's time of a GEMM node, in ps: max(FLOPs / peak, bytes / memory bandwidth).
double gemm_ps(const et::Node& n) {
  std::uint64_t bytes = 0;
  for (const et::AttributeProto& a : n.attr()) {
    if (a.name() == "tensor_size") bytes = a.uint64_val();
  }
  const double flops = static_cast<double>(*attr_int(n, "num_ops"));
  return std::max(flops / kPeak, static_cast<double>(bytes) / kMemory) * 1e12;
}

TEST_F(GeneratorTest, TpOverlapWithFreeCommunicationIsThePiecesCompute) {
  const std::string llama = model_file("llama", llama_yaml(2, 256, 704, 8, 2, 512));
  gen::TrainingOptions o = options(llama, "tp=2,pp=1,dp=1,sp", 2, 256);
  o.comm_free = true;
  const gen::TrainingSpec base_spec = gen::make_training_spec(o);
  o.tp_comm_overlap = true;
  const gen::TrainingSpec spec = gen::make_training_spec(o);
  const Stream base = run_comm_free(base_spec), over = run_comm_free(spec);
  // Nothing waits on communication: the iteration is the stream's compute.
  EXPECT_EQ(over.end, over.busy);
  EXPECT_EQ(base.end, base.busy);
  // Every GEMM piece takes its closed form (to the picosecond's rounding), and the
  // iteration changes by exactly the pieces' time minus the whole GEMMs' time.
  const EtTrace t = gen::transformer_rank_trace(spec, 0), b = gen::transformer_rank_trace(base_spec, 0);
  double pieces = 0, wholes = 0;
  std::size_t n_pieces = 0, n_wholes = 0;
  std::set<std::string> names;
  for (const et::Node& n : t.nodes) {
    names.insert(n.name());
    if (n.type() != et::COMP_NODE || !is_piece(n.name())) continue;
    EXPECT_NEAR(static_cast<double>(over.duration.at(n.id())), gemm_ps(n), 1.0) << n.name();
    pieces += gemm_ps(n);
    ++n_pieces;
  }
  for (const et::Node& n : b.nodes) {
    if (n.type() != et::COMP_NODE || names.count(n.name())) continue;
    EXPECT_EQ(attr_string(n, "kernel"), "gemm") << n.name() << ": only GEMMs are split";
    wholes += gemm_ps(n);
    ++n_wholes;
  }
  // Per layer and micro-batch: qkv and fc1 forward, proj and fc2 data gradients in tp = 2 pieces, proj and fc2 forward in 4.
  EXPECT_EQ(n_wholes, 2u * 2u * 6u);  // 2 layers x 2 micro-batches x 6 GEMMs
  EXPECT_EQ(n_pieces, 2u * 2u * (4u * 2u + 2u * gen::kTpOverlapSplits));
  const double delta = static_cast<double>(over.end) - static_cast<double>(base.end);
  EXPECT_NEAR(delta, pieces - wholes, static_cast<double>(n_pieces + n_wholes)) << "pieces " << pieces << " ps, wholes " << wholes << " ps";
  EXPECT_GT(pieces, wholes);  // each piece reads the whole weight again
}

TEST_F(GeneratorTest, TpOverlapBadPlansAreErrors) {
  const std::string llama = model_file("llama", llama_yaml(4, 64, 176, 8, 4, 256));
  gen::TrainingOptions o = options(llama, "tp=2,pp=1,dp=1", 8, 64);
  o.tp_comm_overlap = true;
  EXPECT_EQ(error_of(o), "--tp-comm-overlap needs sequence parallelism (sp in --parallel, and tp > 1)");
  o = options(llama, "tp=4,pp=1,dp=1,sp", 8, 36);  // 36 tokens: 4 pieces x tp 4 = 16 does not divide
  o.tp_comm_overlap = true;
  EXPECT_EQ(error_of(o), "--tp-comm-overlap: the micro-batch's 36 tokens on a rank (micro-batch x seq / cp) must be a "
                         "multiple of 4 pieces x tp = 16");
  EXPECT_TRUE(gen::parse_training_query("model=m&tp-comm-overlap").tp_comm_overlap);
  EXPECT_FALSE(gen::parse_training_query("model=m&tp-comm-overlap=false").tp_comm_overlap);
  EXPECT_FALSE(gen::parse_training_query("model=m").tp_comm_overlap);
  try {
    gen::parse_training_query("model=m&tp-comm-overlap=yes");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "gen:transformer: tp-comm-overlap takes true or false, got 'yes'");
  }
}

}  // namespace
}  // namespace sim::testing
