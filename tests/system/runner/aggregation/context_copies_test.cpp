// Context-parallel ranks folded as copies (system/groups/replica_folding.h,
// "cycles"): a dense model's cp ranks run the same ops at every position of
// the ring attention's ring, so with its data-parallel replicas they are
// cp x dp copies of one rank, and only the ranks with cp = dp = 0 are
// simulated. A K/V exchange a rank sends to its next context rank comes back
// to it as the one from its previous. Exact where the checks admit it: every
// simulated rank's finish, compute, communication and idle times those of
// the run of every rank, to the picosecond. Where a copy's route differs
// (the ring crosses from NVLink to the network), the run simulates each
// replica's cp ranks instead, as exactly.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/error.h"
#include "system/runner/simulation.h"
#include "system/scenario/fold_plan.h"
#include "system/scenario/scenario.h"
#include "tests/common/temp_folder.h"

namespace sim {
namespace {

class ContextCopiesTest : public testing::TempFolderTest {
 protected:
  // `gpus` GPUs per node, every node under one switch: 32 GPUs.
  std::string one_switch(std::uint32_t gpus) const {
    return write("net" + std::to_string(gpus) + ".yml",
                 "topology: [Switch, Switch]\nnpus_count: [" + std::to_string(gpus) + ", " +
                     std::to_string(32 / gpus) +
                     "]\nbandwidth: [450GB/s, 50GB/s]\nlatency: [300ns, 1350ns]\n");
  }
  // 4 GPUs per node, 2 nodes per leaf, 4 leaves.
  std::string leaves() const {
    return write("leaves.yml",
                 "topology: [Switch, Switch, Switch]\nnpus_count: [4, 2, 4]\n"
                 "bandwidth: [450GB/s, 50GB/s, 50GB/s]\nlatency: [300ns, 1350ns, 500ns]\n");
  }
  ScenarioSpec spec(const std::string& workload, const std::string& network, bool folded) const {
    ScenarioSpec s;
    s.network = network;
    s.system = write("sys.yml", "compute: {peak_tflops: 989, memory_bandwidth: 3350GB/s}\n"
                                "network: {backend: analytical}\n");
    s.no_aggregation = !folded;
    s.jobs = {JobInput{"", workload, ""}};
    return s;
  }
  struct Folded {
    SimulationResult result;
    ReplicaFolding folding;
  };
  // The command line's way: along the fold plan (system/scenario/fold_plan.h).
  Folded run_folded(const ScenarioSpec& s, std::vector<std::string>& notes) const {
    return simulate_folded_if_exact(
        s,
        [](const ScenarioSpec& x) {
          const Scenario sc = build_scenario(x);
          Simulation sim(sc.graphs, *sc.topology, sc.config, sc.options);
          return Folded{sim.run(), sc.options.folding};
        },
        [&](const std::string& why) { notes.push_back(why); });
  }
  static SimulationResult run_every_rank(const ScenarioSpec& s) {
    const Scenario full = build_scenario(s);
    EXPECT_FALSE(full.options.folding.active());
    Simulation b(full.graphs, *full.topology, full.config, full.options);
    return b.run();
  }
  static void expect_same_ranks(const Folded& a, const SimulationResult& b, const std::string& w) {
    EXPECT_EQ(a.result.makespan, b.makespan) << w;
    ASSERT_EQ(a.result.ranks.size() * a.result.folded_replicas * a.result.replica_period, b.ranks.size()) << w;
    for (std::size_t i = 0; i < a.result.ranks.size(); ++i) {
      const std::uint32_t rank = a.folding.real_rank[i];
      const RankStats &x = a.result.ranks[i], &y = b.ranks[rank];
      EXPECT_EQ(x.finish, y.finish) << w << ", rank " << rank;
      EXPECT_EQ(x.compute, y.compute) << w << ", rank " << rank;
      EXPECT_EQ(x.exposed_comm, y.exposed_comm) << w << ", rank " << rank;
      EXPECT_EQ(x.comm, y.comm) << w << ", rank " << rank;
      EXPECT_EQ(x.idle, y.idle) << w << ", rank " << rank;
    }
  }
};

// One node per copy, every node under one switch: every copy's routes are the
// rank's, so the cp ranks fold with the replicas, 1F1B and interleaved, ZeRO
// 0 and 1, cp 2 and 4, dp 1 to 4. And two copies per node on leaves of two
// nodes (tp 2, cp 2, dp 2): each cp pair inside a node, the gradient group
// a ring per dimension (NVLink, then the leaf), whose every member's routes
// are the rank's. With K/V all-gathered instead of passed around the ring,
// the gathers and reduce-scatters over the cp group mirror as the gradient
// group's collectives do.
TEST_F(ContextCopiesTest, ContextRanksFoldAsCopiesToThePicosecond) {
  const std::string base = "gen:transformer?model=llama3-8b&seq=1024&";
  for (const std::string plan :
       {"parallel=tp=4,pp=2,cp=2,dp=2&global-batch=8", "parallel=tp=4,pp=2,cp=4,dp=1,sp&global-batch=4",
        "parallel=tp=4,pp=1,cp=4,dp=2,sp&global-batch=4&zero=1",
        "parallel=tp=4,pp=2,cp=2,dp=2,sp&global-batch=8&schedule=interleaved:2&zero=1",
        "parallel=tp=8,pp=1,cp=2,dp=2&global-batch=4", "parallel=tp=2,pp=2,cp=2,dp=2&global-batch=8",
        // K/V all-gathered over the cp group (collectives over the copies), recomputed too.
        "parallel=tp=4,pp=2,cp=4,dp=1,sp&global-batch=4&cp-comm=all-gather",
        "parallel=tp=4,pp=2,cp=2,dp=2,sp&global-batch=8&schedule=interleaved:2&zero=1&cp-comm=all-gather&recompute=selective",
        "parallel=tp=2,pp=2,cp=2,dp=2&global-batch=8&cp-comm=all-gather"}) {
    const std::string w = base + plan;
    const std::string net = plan.find("tp=2") != std::string::npos ? leaves()
                            : one_switch(plan.find("tp=8") != std::string::npos ? 8 : 4);
    std::vector<std::string> notes;
    const Folded a = run_folded(spec(w, net, true), notes);
    EXPECT_TRUE(notes.empty()) << w << ": " << (notes.empty() ? "" : notes[0]);
    EXPECT_EQ(a.folding.ring, a.result.context_ring) << w;
    EXPECT_GT(a.folding.ring, 1u) << w;
    EXPECT_EQ(a.result.replica_period, 1u) << w;
    const SimulationResult b = run_every_rank(spec(w, net, false));
    EXPECT_LT(a.result.events * 2, b.events) << w;
    expect_same_ranks(a, b, w);
  }
}

// A ring of four context ranks over two nodes (tp 2, 4 GPUs a node): copy
// 0 -> 1 crosses NVLink, 1 -> 2 the network, so the ring attention's
// exchanges do not mirror (kPointToPoint). The run says so and simulates
// each replica's cp ranks, exactly.
TEST_F(ContextCopiesTest, CopiesWhoseRoutesDifferAreSimulated) {
  const std::string base = "gen:transformer?model=llama3-8b&seq=512&global-batch=8&parallel=tp=2,pp=2,";
  for (const std::string plan : {"cp=4,dp=2"}) {
    const std::string w = base + plan;
    const ScenarioSpec s = spec(w, leaves(), true);
    {
      const Scenario sc = build_scenario(s);
      ASSERT_TRUE(sc.options.folding.active()) << w;
      ASSERT_GT(sc.options.folding.ring, 1u) << w;
      try {
        Simulation refused(sc.graphs, *sc.topology, sc.config, sc.options);
        ADD_FAILURE() << w << ": folded as copies although copy routes differ";
      } catch (const FoldingRefused& e) {
        EXPECT_EQ(e.reason(), FoldingRefused::kPointToPoint) << e.what();
        EXPECT_NE(std::string(e.what()).find("context-parallel"), std::string::npos) << e.what();
      }
    }
    std::vector<std::string> notes;
    const Folded a = run_folded(s, notes);
    ASSERT_FALSE(notes.empty()) << w;
    EXPECT_NE(notes[0].find("context-parallel ranks simulated"), std::string::npos) << notes[0];
    EXPECT_EQ(a.folding.ring, 1u) << w;
    expect_same_ranks(a, run_every_rank(spec(w, leaves(), false)), w);
  }
}

// The pairing check: the mirror of a send to copy k is copy mirror(k)'s
// send to the rank, digit by digit.
TEST(ReplicaFoldingRing, MirrorAndShiftAreDigitByDigit) {
  ReplicaFolding f;
  f.replicas = 12;
  f.ring = 4;  // copies (c, d), c < 4, d < 3
  EXPECT_EQ(f.mirror(0), 0u);
  EXPECT_EQ(f.mirror(1), 3u);       // (1, 0) -> (3, 0)
  EXPECT_EQ(f.mirror(4 + 1), 11u);  // (1, 1) -> (3, 2)
  for (std::uint32_t k = 0; k < 12; ++k) {
    EXPECT_EQ(f.mirror(f.mirror(k)), k);
    EXPECT_EQ(f.shifted(f.mirror(k), k), 0u) << k;  // the mirrored copy's message reaches the rank
    for (std::uint32_t j = 0; j < 12; ++j) EXPECT_EQ(f.shifted(j, k), f.shifted(k, j));
  }
  EXPECT_EQ(f.shifted(3, 1), 0u);  // (3, 0) + (1, 0): the ring closes inside a replica
  EXPECT_EQ(f.shifted(7, 1), 4u);  // (3, 1) + (1, 0)
}

}  // namespace
}  // namespace sim
