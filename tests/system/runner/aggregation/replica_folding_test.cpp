// Folded replicas (system/groups/replica_folding.h): a generated training
// iteration whose data-parallel replicas are simulated as one gives the run
// of every rank exactly: the same makespan to the picosecond, and each
// simulated rank the same compute, communication and finish time as that
// rank in the full run. Plans cover 1F1B and the interleaved schedule, ZeRO
// stages (parameter all-gathers over the replicas) and data-parallel groups
// spanning one or two network dimensions.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "system/runner/simulation.h"
#include "system/scenario/fold_plan.h"
#include "system/scenario/scenario.h"
#include "tests/common/temp_folder.h"
#include "core/error.h"

namespace sim {
namespace {

class ReplicaFoldingTest : public testing::TempFolderTest {
 protected:
  // 4 GPUs per node, 2 nodes per leaf, 4 leaves: 32 GPUs; node = rank / 4.
  std::string network() const {
    return write("net.yml",
                 "topology: [Switch, Switch, Switch]\nnpus_count: [4, 2, 4]\n"
                 "bandwidth: [450GB/s, 50GB/s, 50GB/s]\nlatency: [300ns, 1350ns, 500ns]\n");
  }
  std::string system(const std::string& backend = "analytical") const {
    return write("sys_" + backend + ".yml", "compute: {peak_tflops: 989, memory_bandwidth: 3350GB/s}\n"
                                            "network: {backend: " + backend + "}\n");
  }
  ScenarioSpec spec(const std::string& workload, bool folded, const std::string& backend = "analytical") const {
    ScenarioSpec s;
    s.network = network();
    s.system = system(backend);
    s.no_aggregation = !folded;
    s.jobs = {JobInput{"", workload, ""}};
    return s;
  }
};

TEST_F(ReplicaFoldingTest, FoldedRunsEqualTheFullRunsToThePicosecond) {
  const std::string base = "gen:transformer?model=llama3-8b&seq=512&";
  for (const std::string plan :
       {"parallel=tp=4,pp=2,dp=4,sp&global-batch=8", "parallel=tp=2,pp=2,dp=8&global-batch=16&zero=1",
        "parallel=tp=2,pp=4,dp=4&global-batch=16&schedule=interleaved:2&zero=3",
        "parallel=tp=2,pp=2,dp=4&global-batch=8&micro-batch=2", "parallel=tp=1,pp=2,dp=16&global-batch=32"}) {
    const Scenario folded = build_scenario(spec(base + plan, true));
    const Scenario full = build_scenario(spec(base + plan, false));
    ASSERT_TRUE(folded.options.folding.active()) << plan;
    ASSERT_FALSE(full.options.folding.active()) << plan;
    ASSERT_EQ(full.graphs->size(), folded.options.folding.world) << plan;
    ASSERT_EQ(folded.graphs->size() * folded.options.folding.replicas, full.graphs->size()) << plan;
    Simulation a(folded.graphs, *folded.topology, folded.config, folded.options);
    Simulation b(full.graphs, *full.topology, full.config, full.options);
    const SimulationResult ra = a.run(), rb = b.run();
    EXPECT_EQ(ra.makespan, rb.makespan) << plan;
    EXPECT_EQ(ra.folded_replicas, folded.options.folding.replicas) << plan;
    EXPECT_EQ(ra.rank_numbers, folded.options.folding.real_rank) << plan;  // reports name the world's ranks
    EXPECT_LT(ra.events, rb.events) << plan;
    for (std::size_t i = 0; i < ra.ranks.size(); ++i) {
      const std::uint32_t rank = folded.options.folding.real_rank[i];
      const RankStats &x = ra.ranks[i], &y = rb.ranks[rank];
      EXPECT_EQ(x.finish, y.finish) << plan << ", rank " << rank;
      EXPECT_EQ(x.compute, y.compute) << plan << ", rank " << rank;
      EXPECT_EQ(x.exposed_comm, y.exposed_comm) << plan << ", rank " << rank;
      EXPECT_EQ(x.comm, y.comm) << plan << ", rank " << rank;
      EXPECT_EQ(x.idle, y.idle) << plan << ", rank " << rank;
    }
  }
}

TEST_F(ReplicaFoldingTest, OnlyWhereItIsExact) {
  const std::string w = "gen:transformer?model=llama3-8b&seq=512&parallel=tp=4,pp=2,dp=4&global-batch=8";
  // The flow backend shares links inside the fabric: every rank is simulated.
  EXPECT_FALSE(build_scenario(spec(w, true, "flow")).options.folding.active());
  // No replicas to fold: dp = 1; a mixture of experts whose one expert-parallel
  // group spans every replica (ep = tp x dp) has no two blocks, though with
  // uniform routing its replicas are copies (gen::expert_copies).
  EXPECT_FALSE(build_scenario(spec("gen:transformer?model=llama3-8b&seq=512&parallel=tp=4,pp=2,dp=1&global-batch=8",
                                   true))
                   .options.folding.active());
  ScenarioSpec one_group = spec("gen:transformer?model=mixtral-8x7b&seq=512&parallel=tp=2,pp=1,dp=4,ep=8,sp"
                                "&global-batch=8",
                                true);
  EXPECT_TRUE(build_scenario(one_group).options.folding.active());
  one_group.expert_copies = false;
  EXPECT_FALSE(build_scenario(one_group).options.folding.active());
  // A network whose NPUs number their ports differently (a ring): not folded.
  ScenarioSpec ring = spec(w, true);
  ring.network = write("ring.yml", "topology: [Ring]\nnpus_count: [32]\nbandwidth: [50]\nlatency: [500]\n");
  EXPECT_FALSE(build_scenario(ring).options.folding.active());
}

// A folded world larger than the network: the error counts the world's ranks,
// not a simulated rank's NPU.
// Named before the fold plans anything over NPUs past the last (an
// algorithm's own checks there gave another reason).
TEST_F(ReplicaFoldingTest, AWorldLargerThanTheNetworkIsNamed) {
  try {
    build_scenario(spec("gen:transformer?model=llama3-8b&seq=512&parallel=tp=4,pp=2,dp=8&global-batch=8", true));
    ADD_FAILURE() << "a 64-rank world was planned on 32 NPUs";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "the workload has 64 ranks but the network has only 32 NPUs");
  }
}

// One GPU per node in each data-parallel ring over 8 nodes, 2 nodes per leaf:
// the ring crosses the spine at every other hop, so replica 1 does not do
// what replica 0 does (refused, a route differs), but replica 2 does. Folded
// two replicas at a time, every simulated rank ends as in the full run.
TEST_F(ReplicaFoldingTest, APeriodOfReplicasFoldsWhereOneReplicaAlone) {
  const std::string w = "gen:transformer?model=llama3-8b&seq=512&parallel=tp=4,pp=1,dp=8&global-batch=8";
  for (const std::string algorithm : {"allreduce=ring", "allreduce=nccl:algo=ring"}) {
    ScenarioSpec one = spec(w, true);
    one.collectives = {algorithm};
    const Scenario folded_one = build_scenario(one);
    ASSERT_TRUE(folded_one.options.folding.active()) << algorithm;
    EXPECT_EQ(folded_one.options.folding.period, 1u);
    try {  // refused before anything is simulated
      Simulation refused(folded_one.graphs, *folded_one.topology, folded_one.config, folded_one.options);
      ADD_FAILURE() << algorithm << ": folded one replica at a time although the ring's hops differ";
    } catch (const FoldingRefused& e) {
      EXPECT_EQ(e.reason(), FoldingRefused::kRoutes) << e.what();
    }

    ScenarioSpec periodic = one;
    periodic.replica_period = 0;  // chosen from the topology: 2 nodes per leaf, 4 GPUs each
    const Scenario folded = build_scenario(periodic);
    ASSERT_EQ(folded.options.folding.period, 2u) << algorithm;
    ASSERT_EQ(folded.graphs->size(), 2u * 4u) << algorithm;
    ScenarioSpec every = spec(w, false);
    every.collectives = {algorithm};
    const Scenario full = build_scenario(every);
    Simulation a(folded.graphs, *folded.topology, folded.config, folded.options);
    Simulation b(full.graphs, *full.topology, full.config, full.options);
    const SimulationResult ra = a.run(), rb = b.run();
    EXPECT_EQ(ra.makespan, rb.makespan) << algorithm;
    EXPECT_EQ(ra.folded_replicas, 4u) << algorithm;
    EXPECT_EQ(ra.replica_period, 2u) << algorithm;
    EXPECT_LT(ra.events, rb.events) << algorithm;
    for (std::size_t i = 0; i < ra.ranks.size(); ++i) {
      const std::uint32_t rank = folded.options.folding.real_rank[i];
      const RankStats &x = ra.ranks[i], &y = rb.ranks[rank];
      EXPECT_EQ(x.finish, y.finish) << algorithm << ", rank " << rank;
      EXPECT_EQ(x.compute, y.compute) << algorithm << ", rank " << rank;
      EXPECT_EQ(x.exposed_comm, y.exposed_comm) << algorithm << ", rank " << rank;
      EXPECT_EQ(x.comm, y.comm) << algorithm << ", rank " << rank;
    }

    // The command line's order: one replica, then a period, then every rank.
    std::vector<std::string> notes;
    const Time t = simulate_folded_if_exact(
        one,
        [](const ScenarioSpec& s) {
          const Scenario sc = build_scenario(s);
          Simulation sim(sc.graphs, *sc.topology, sc.config, sc.options);
          return sim.run().makespan;
        },
        [&](const std::string& why) { notes.push_back(why); });
    EXPECT_EQ(t, rb.makespan);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("a period at a time"), std::string::npos) << notes[0];
  }
}

// Gradient buckets that do not divide by the data-parallel group (3 and 5
// replicas here, as 15, 9 and 6 in Megatron-LM's SC'21 runs): the ring pads
// its parts to ceil(S / N) bytes (system/collectives/ring.h), so every
// replica does what replica 0 does and the run folds, to the picosecond of
// the full run. Before, those rings cut parts a byte apart and every rank ran.
TEST_F(ReplicaFoldingTest, BucketsThatDoNotDivideByTheGroupFold) {
  struct Case {
    const char* net;  // 4 GPUs per node, a leaf of dp nodes (x 2 leaves for pp 2)
    const char* plan;
    std::uint32_t dp;
  };
  const Case cases[] = {
      {"topology: [Switch, Switch, Switch]\nnpus_count: [4, 3, 2]\nbandwidth: [450GB/s, 50GB/s, 50GB/s]\n"
       "latency: [300ns, 1350ns, 500ns]\n",
       "parallel=tp=4,pp=2,dp=3&global-batch=6", 3},
      {"topology: [Switch, Switch]\nnpus_count: [4, 5]\nbandwidth: [450GB/s, 50GB/s]\nlatency: [300ns, 1350ns]\n",
       "parallel=tp=4,pp=1,dp=5&global-batch=5&bucket-params=100000000000", 5},
  };
  // The flat ring, and a ring per dimension (the presets' choice above one network level).
  for (const Case& c : cases) {
    for (const char* algorithm : {"allreduce=ring", "allreduce=hierarchical"}) {
      SCOPED_TRACE(algorithm);
      ScenarioSpec one = spec("gen:transformer?model=llama3-8b&seq=512&" + std::string(c.plan), true);
      one.network = write("uneven.yml", c.net);
      one.collectives = {algorithm};
      ScenarioSpec every = one;
      every.no_aggregation = true;
      const Scenario folded = build_scenario(one);
      const Scenario full = build_scenario(every);
      ASSERT_TRUE(folded.options.folding.active()) << c.plan;
      ASSERT_EQ(folded.options.folding.replicas, c.dp) << c.plan;
      // The premise: some gradient all-reduce does not divide into dp parts.
      std::uint64_t uneven = 0;
      const RankGraph& g = (*full.graphs)[0];
      for (std::uint32_t i = 0; i < g.size(); ++i) {
        const TaskNode n = g.node(i);
        if (n.kind == NodeKind::kCommColl && n.coll == CollectiveType::kAllReduce && n.comm_size % c.dp != 0) ++uneven;
      }
      ASSERT_GT(uneven, 0u) << c.plan;
      Simulation a(folded.graphs, *folded.topology, folded.config, folded.options);  // not refused
      Simulation b(full.graphs, *full.topology, full.config, full.options);
      const SimulationResult ra = a.run(), rb = b.run();
      EXPECT_EQ(ra.makespan, rb.makespan) << c.plan;
      EXPECT_EQ(ra.folded_replicas, c.dp) << c.plan;
      // Uneven gradient all-reduces ran the algorithm named (a ring, or hierarchical(ring;...)).
      const std::string want = std::string(algorithm) == "allreduce=ring" ? "ring" : "hierarchical(ring";
      std::size_t named = 0;
      for (const CollectiveRecord& r : ra.collectives) {
        named += r.type == CollectiveType::kAllReduce && r.group_size == c.dp && r.bytes % c.dp != 0 &&
                         r.algorithm.rfind(want, 0) == 0
                     ? 1
                     : 0;
      }
      EXPECT_GT(named, 0u) << c.plan;
      EXPECT_LT(ra.events, rb.events) << c.plan;
      for (std::size_t i = 0; i < ra.ranks.size(); ++i) {
        const std::uint32_t rank = folded.options.folding.real_rank[i];
        EXPECT_EQ(ra.ranks[i].finish, rb.ranks[rank].finish) << c.plan << ", rank " << rank;
        EXPECT_EQ(ra.ranks[i].comm, rb.ranks[rank].comm) << c.plan << ", rank " << rank;
      }
    }
  }
}

// Context parallelism: the gradient group is data x context (Megatron-LM's
// dp-cp group), replica 0's cp = 2 ranks followed by their copies, folded as
// a period of cp members (replica_folding.h). tp 2 x cp 2 is one node of 4
// GPUs; dp 2 keeps the group under one leaf (folded one replica at a time),
// dp 4 spans two leaves, whose ring crosses the spine at replica 1 -> 2 but
// not 0 -> 1 (refused one replica at a time, folded two at a time). With
// ZeRO 0 and 1 (the parameter all-gather over the group too), every
// simulated rank ends as in the full run, to the picosecond.
TEST_F(ReplicaFoldingTest, ContextParallelRanksFoldAsAPeriodOfTheGradientGroup) {
  const std::string base = "gen:transformer?model=llama3-8b&seq=512&global-batch=8&parallel=tp=2,pp=2,cp=2,";
  struct Case {
    std::string plan;
    std::uint32_t period, folded;  // replicas simulated, and how many copies each stands for
  };
  for (const Case& c : {Case{"dp=2", 1, 2}, Case{"dp=2,sp&zero=1", 1, 2}, Case{"dp=4", 2, 2},
                        Case{"dp=4,sp&zero=1&schedule=interleaved:2", 2, 2}}) {
    const std::string w = base + c.plan;
    ScenarioSpec s = spec(w, true);
    s.context_copies = false;  // each replica's cp ranks simulated (context_copies_test.cpp: as copies)
    std::vector<std::string> notes;
    const auto run = [&](const ScenarioSpec& x) {
      const Scenario sc = build_scenario(x);
      EXPECT_TRUE(sc.options.folding.active()) << w;
      Simulation sim(sc.graphs, *sc.topology, sc.config, sc.options);
      return std::make_pair(sim.run(), sc.options.folding);
    };
    const auto [ra, folding] = simulate_folded_if_exact(s, run, [&](const std::string& why) { notes.push_back(why); });
    const Scenario full = build_scenario(spec(w, false));
    ASSERT_FALSE(full.options.folding.active()) << w;
    Simulation b(full.graphs, *full.topology, full.config, full.options);
    const SimulationResult rb = b.run();
    // One replica at a time where the ring's hops repeat every cp members;
    // else the note and a period of replicas.
    EXPECT_EQ(notes.size(), c.period == 1 ? 0u : 1u) << w;
    if (c.period > 1 && !notes.empty()) {
      EXPECT_NE(notes[0].find("a period at a time"), std::string::npos) << notes[0];
    }
    EXPECT_EQ(folding.period, c.period) << w;
    EXPECT_EQ(ra.replica_period, c.period) << w;
    EXPECT_EQ(ra.folded_replicas, c.folded) << w;
    ASSERT_EQ(ra.ranks.size() * c.folded, rb.ranks.size()) << w;
    EXPECT_EQ(ra.makespan, rb.makespan) << w;
    EXPECT_LT(ra.events, rb.events) << w;
    for (std::size_t i = 0; i < ra.ranks.size(); ++i) {
      const std::uint32_t rank = folding.real_rank[i];
      const RankStats &x = ra.ranks[i], &y = rb.ranks[rank];
      EXPECT_EQ(x.finish, y.finish) << w << ", rank " << rank;
      EXPECT_EQ(x.compute, y.compute) << w << ", rank " << rank;
      EXPECT_EQ(x.exposed_comm, y.exposed_comm) << w << ", rank " << rank;
      EXPECT_EQ(x.comm, y.comm) << w << ", rank " << rank;
      EXPECT_EQ(x.idle, y.idle) << w << ", rank " << rank;
    }
  }
}

// Refused where the gradient group's program does not repeat every cp
// members: NCCL's tree over the dp-cp group (two GPUs on each of two nodes)
// has node 0's GPU at its root and node 1's below it, and repeats at no
// longer period either, so no period of replicas is tried. The run says why
// before it simulates anything, and without stand-ins the command line's
// re-run of every rank gives the full run's iteration.
TEST_F(ReplicaFoldingTest, ContextParallelGroupsThatDoNotRepeatAreRunRankByRank) {
  const std::string w = "gen:transformer?model=llama3-8b&seq=512&global-batch=8&parallel=tp=2,pp=2,cp=2,dp=2";
  ScenarioSpec s = spec(w, true);
  s.context_copies = false;  // each replica's cp ranks simulated (context_copies_test.cpp: as copies)
  s.collectives = {"allreduce=nccl:algo=tree"};
  const Scenario folded = build_scenario(s);
  ASSERT_TRUE(folded.options.folding.active());
  try {
    Simulation refused(folded.graphs, *folded.topology, folded.config, folded.options);
    ADD_FAILURE() << "folded although NCCL's tree does not repeat every 2 members";
  } catch (const FoldingRefused& e) {
    EXPECT_EQ(e.reason(), FoldingRefused::kNoPeriod) << e.what();  // no longer period repeats either
    EXPECT_NE(std::string(e.what()).find("does not repeat every 2 members"), std::string::npos) << e.what();
  }
  std::vector<std::string> notes;
  const SimulationResult ra = simulate_folded_if_exact(
      s,
      [](const ScenarioSpec& x) {
        const Scenario sc = build_scenario(x);
        Simulation sim(sc.graphs, *sc.topology, sc.config, sc.options);
        return sim.run();
      },
      [&](const std::string& why) { notes.push_back(why); });
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("ranks not folded"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("no period of replicas repeats it"), std::string::npos) << notes[0];
  ScenarioSpec every = spec(w, false);
  every.collectives = s.collectives;
  const Scenario full = build_scenario(every);
  Simulation b(full.graphs, *full.topology, full.config, full.options);
  const SimulationResult rb = b.run();
  EXPECT_EQ(ra.folded_replicas, 1u);
  EXPECT_EQ(ra.ranks.size(), rb.ranks.size());
  EXPECT_EQ(ra.makespan, rb.makespan);
}

TEST(ReplicaPeriod, AWholeBlockOfTheHighestDimensionTheJobSpans) {
  const auto dims = [](std::vector<std::uint32_t> sizes) {
    std::vector<TopologyDimension> d(sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) d[i].size = sizes[i];
    return d;
  };
  // 16,384 H100s on 32-node leaves, one replica per node: 32 replicas a leaf.
  EXPECT_EQ(replica_period(dims({8, 32, 64}), 16384, 128, 8), 32u);
  // A replica of 16 nodes: two a leaf.
  EXPECT_EQ(replica_period(dims({8, 32, 64}), 16384, 64, 128), 2u);
  // One network level: any shift of whole nodes maps the network onto itself.
  EXPECT_EQ(replica_period(dims({8, 16}), 128, 16, 8), 1u);
  // Two replicas a node (tp = 4): the period is a node.
  EXPECT_EQ(replica_period(dims({8, 16}), 128, 32, 4), 2u);
  // No shorter period: every replica.
  EXPECT_EQ(replica_period(dims({8, 32, 2}), 512, 3, 8), 3u);
}

}  // namespace
}  // namespace sim
