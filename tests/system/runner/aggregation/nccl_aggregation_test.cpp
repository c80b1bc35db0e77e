// NCCL's programs (system/collectives/nccl/) advanced as one and folded:
// a ring whose every rank does the same thing (one node, or one GPU per
// node) is rank-symmetric (NcclDagProgram finds it), its paced channels and
// base latency are run by the origin alone (symmetric_run.h), and results
// equal the per-message run byte for byte; what is not symmetric (trees,
// NVLS, rings whose channels leave nodes through different GPUs, pieces of
// unequal size) is simulated message by message. Folded replicas with NCCL
// equal the full run where the data-parallel ring is symmetric, and are
// refused (FoldingRefused: the command line then runs every rank) where its
// hops differ.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "report/report.h"
#include "system/scenario/scenario.h"
#include "workload/et/et_io.h"
#include "tests/common/temp_folder.h"
#include "stable_reports.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using testing::coll_node;
using testing::comp_node;

struct Outcome {
  testing::StableReports reports;
  std::uint64_t aggregated = 0;
  Time makespan = 0;
};

class NcclAggregation : public testing::TempFolderTest {
 protected:
  Outcome run(ScenarioSpec spec) {
    spec.load_threads = 1;
    const Scenario s = build_scenario(spec);
    Simulation sim(s.graphs, *s.topology, s.config, s.options);
    const SimulationResult r = sim.run();
    Outcome out;
    out.aggregated = r.aggregated_collectives;
    out.makespan = r.makespan;
    out.reports = testing::stable_reports(r, RunInfo{s.workload_name, s.topology->description(), "analytical", 0, 0});
    return out;
  }
};

TEST_F(NcclAggregation, RandomNcclWorkloadsEqualThePerMessageRun) {
  std::mt19937_64 rng(20261128);
  auto pick = [&](std::uint64_t n) { return static_cast<std::uint64_t>(rng() % n); };
  constexpr int kCases = 40;
  std::uint64_t aggregated = 0;
  int cases_aggregated = 0;
  for (int i = 0; i < kCases; ++i) {
    // GPUs per node x nodes: one node, or several (channels then leave nodes
    // through different GPUs: not symmetric). One GPU per node: the folded
    // replicas' data-parallel rings below.
    static const std::uint32_t kShapes[][2] = {{8, 1}, {4, 1}, {6, 1}, {2, 2}, {4, 2}, {2, 3}};
    const auto& shape = kShapes[pick(6)];
    const std::uint32_t n = shape[0] * shape[1];
    const std::string topo = write("t" + std::to_string(i) + ".yml",
                                   shape[1] == 1 ? "topology: [Switch]\nnpus_count: [" + std::to_string(shape[0]) +
                                                       "]\nbandwidth: [450GB/s]\nlatency: [300ns]\n"
                                                 : "topology: [Switch, Switch]\nnpus_count: [" +
                                                       std::to_string(shape[0]) + ", " + std::to_string(shape[1]) +
                                                       "]\nbandwidth: [450GB/s, 50GB/s]\nlatency: [300ns, 1us]\n");
    static const char* kAlgos[] = {"nccl", "nccl:algo=ring", "nccl:algo=ring,proto=ll", "nccl:algo=ring,channels=3"};
    const std::string algo = kAlgos[pick(4)];
    const std::string sys = write("s" + std::to_string(i) + ".yml",
                                  "collective:\n  algorithms: {all_reduce: '" + algo + "', all_gather: '" + algo +
                                      "', reduce_scatter: '" + algo + "'}\n" +
                                      (pick(4) == 0 ? "  endpoint_delay: 20ns\n" : ""));
    static const CollectiveType kTypes[] = {CollectiveType::kAllReduce, CollectiveType::kReduceScatter,
                                            CollectiveType::kAllGather};
    static const std::uint64_t kBytes[] = {1 << 20, 1 << 16, 3 << 14, 1000003, 4096, 24 << 20, 96};
    const int layers = 2 + static_cast<int>(pick(3));
    const bool late = pick(3) == 0;  // one rank computes longer before each collective
    std::vector<std::uint64_t> compute(layers), bytes(layers);
    std::vector<CollectiveType> types(layers);
    for (int l = 0; l < layers; ++l) {
      compute[l] = pick(3) * 5;
      bytes[l] = kBytes[pick(7)];
      types[l] = kTypes[pick(3)];
    }
    const std::string dir = path("w" + std::to_string(i));
    std::filesystem::create_directories(dir);
    const std::vector<EtTrace> traces = testing::make_traces(static_cast<int>(n), [&](int rank) {
      std::vector<et::Node> nodes;
      std::uint64_t id = 1, last = 0;
      for (int l = 0; l < layers; ++l) {
        std::vector<std::uint64_t> deps;
        if (last) deps.push_back(last);
        nodes.push_back(comp_node(id, compute[l] + (late && rank == 1 ? 3 : 0), deps));
        et::Node c = coll_node(id + 1, types[l], bytes[l]);
        c.add_data_deps(id);
        nodes.push_back(c);
        last = id + 1;
        id += 2;
      }
      return nodes;
    });
    for (std::uint32_t r = 0; r < n; ++r) write_et(traces[r], dir + "/w." + std::to_string(r) + ".et");
    SCOPED_TRACE("case " + std::to_string(i) + ": " + std::to_string(shape[0]) + " GPUs x " +
                 std::to_string(shape[1]) + " nodes, " + algo + (late ? ", a late rank" : ""));
    ScenarioSpec spec;
    spec.network = topo;
    spec.system = sys;
    spec.jobs.push_back(JobInput{"", dir + "/w", ""});
    const Outcome with = run(spec);
    spec.no_aggregation = true;
    const Outcome without = run(spec);
    EXPECT_EQ(without.aggregated, 0u);
    EXPECT_EQ(with.makespan, without.makespan);
    EXPECT_EQ(with.reports.json, without.reports.json);
    EXPECT_EQ(with.reports.csv, without.reports.csv);
    EXPECT_EQ(with.reports.links, without.reports.links);
    aggregated += with.aggregated;
    if (with.aggregated > 0) ++cases_aggregated;
  }
  // Not vacuous: NCCL rings were advanced as one in many cases.
  EXPECT_GT(cases_aggregated, kCases / 4);
  std::printf("%d of %d cases aggregated %llu NCCL collectives\n", cases_aggregated, kCases,
              static_cast<unsigned long long>(aggregated));
}

// A generated iteration's replicas, NCCL everywhere: folded where the
// data-parallel ring's hops are alike (every node under one switch), equal
// to the full run; refused where some hops cross a second level.
TEST_F(NcclAggregation, FoldedReplicasWithNcclEqualTheFullRunOrAreRefused) {
  const std::string sys = write("sys.yml",
                                "compute: {peak_tflops: 989, memory_bandwidth: 3350GB/s}\n"
                                "collective:\n  algorithms: {all_reduce: nccl, all_gather: nccl, reduce_scatter: nccl}\n");
  const std::string one_level = write("one.yml",
                                      "topology: [Switch, Switch]\nnpus_count: [4, 8]\n"
                                      "bandwidth: [450GB/s, 50GB/s]\nlatency: [300ns, 1350ns]\n");
  const std::string two_levels = write("two.yml",
                                       "topology: [Switch, Switch, Switch]\nnpus_count: [4, 2, 4]\n"
                                       "bandwidth: [450GB/s, 50GB/s, 50GB/s]\nlatency: [300ns, 1350ns, 500ns]\n");
  const std::string w = "gen:transformer?model=llama3-8b&seq=512&parallel=tp=4,pp=2,dp=4,sp&global-batch=8&zero=1";
  ScenarioSpec spec;
  spec.system = sys;
  spec.jobs = {JobInput{"", w, ""}};
  spec.network = one_level;
  {
    const Scenario folded = build_scenario(spec);
    ASSERT_TRUE(folded.options.folding.active());
    Simulation a(folded.graphs, *folded.topology, folded.config, folded.options);
    const SimulationResult ra = a.run();
    spec.no_aggregation = true;
    const Scenario full = build_scenario(spec);
    Simulation b(full.graphs, *full.topology, full.config, full.options);
    const SimulationResult rb = b.run();
    EXPECT_EQ(ra.makespan, rb.makespan);
    EXPECT_EQ(ra.folded_replicas, 4u);
    EXPECT_LT(ra.events, rb.events);
    for (std::size_t i = 0; i < ra.ranks.size(); ++i) {
      const std::uint32_t rank = folded.options.folding.real_rank[i];
      EXPECT_EQ(ra.ranks[i].finish, rb.ranks[rank].finish) << "rank " << rank;
      EXPECT_EQ(ra.ranks[i].exposed_comm, rb.ranks[rank].exposed_comm) << "rank " << rank;
    }
  }
  // One node per data-parallel rank, two nodes per leaf: the ring's hops
  // alternate between a leaf and the spine.
  spec.no_aggregation = false;
  spec.network = two_levels;
  spec.jobs = {JobInput{"", "gen:transformer?model=llama3-8b&seq=512&parallel=tp=4,pp=1,dp=8&global-batch=8", ""}};
  const Scenario folded = build_scenario(spec);
  ASSERT_TRUE(folded.options.folding.active());
  EXPECT_THROW(Simulation(folded.graphs, *folded.topology, folded.config, folded.options).run(), FoldingRefused);
}

// Two data-parallel ranks per node (tp 2 on nodes of 4 GPUs): NCCL's ring
// alternates an NVLink and a network hop, so its program is not
// rank-symmetric, but it is the same node after node: folded two replicas
// at a time (a node), every simulated rank ends as in the full run, though
// its messages to the other GPU of its node leave through that GPU's NIC
// (NCCL's PXN, a bottleneck past the port on a simulated NPU).
TEST_F(NcclAggregation, TwoReplicasPerNodeFoldANodeAtATime) {
  const std::string sys = write("sys.yml",
                                "compute: {peak_tflops: 989, memory_bandwidth: 3350GB/s}\n"
                                "collective:\n  algorithms: {all_reduce: nccl, all_gather: nccl, reduce_scatter: nccl}\n");
  const std::string one_level = write("one.yml",
                                      "topology: [Switch, Switch]\nnpus_count: [4, 8]\n"
                                      "bandwidth: [450GB/s, 50GB/s]\nlatency: [300ns, 1350ns]\n");
  for (const std::string zero : {"0", "1"}) {
    ScenarioSpec spec;
    spec.system = sys;
    spec.network = one_level;
    spec.jobs = {JobInput{"", "gen:transformer?model=llama3-8b&seq=512&parallel=tp=2,pp=2,dp=8,sp&global-batch=8&zero=" +
                                  zero, ""}};
    EXPECT_THROW(
        {
          const Scenario one = build_scenario(spec);
          Simulation(one.graphs, *one.topology, one.config, one.options).run();
        },
        FoldingRefused);
    spec.replica_period = 0;
    const Scenario folded = build_scenario(spec);
    ASSERT_EQ(folded.options.folding.period, 2u);
    Simulation a(folded.graphs, *folded.topology, folded.config, folded.options);
    const SimulationResult ra = a.run();
    spec.no_aggregation = true;
    const Scenario full = build_scenario(spec);
    Simulation b(full.graphs, *full.topology, full.config, full.options);
    const SimulationResult rb = b.run();
    EXPECT_EQ(ra.makespan, rb.makespan) << "zero " << zero;
    EXPECT_EQ(ra.folded_replicas, 4u);
    EXPECT_LT(ra.events, rb.events);
    for (std::size_t i = 0; i < ra.ranks.size(); ++i) {
      const std::uint32_t rank = folded.options.folding.real_rank[i];
      EXPECT_EQ(ra.ranks[i].finish, rb.ranks[rank].finish) << "zero " << zero << ", rank " << rank;
      EXPECT_EQ(ra.ranks[i].exposed_comm, rb.ranks[rank].exposed_comm) << "zero " << zero << ", rank " << rank;
      EXPECT_EQ(ra.ranks[i].comm, rb.ranks[rank].comm) << "zero " << zero << ", rank " << rank;
    }
  }
}

}  // namespace
}  // namespace sim
