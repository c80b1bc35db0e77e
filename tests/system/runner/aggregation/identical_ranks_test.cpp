// Ranks with identical traces simulated once (system/scenario/identical_ranks.h):
// random workloads whose every rank runs the same trace, written as ET files
// and run through build_scenario, give the same reports byte for byte (JSON,
// CSV, link statistics; event counts aside) as the full run
// (--no-aggregation), whether they fold (one Switch dimension, analytical,
// rank-symmetric collectives over all ranks) or not (other topologies, the
// flow backend, uneven sizes, all-to-all, collectives beside compute).
#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "report/report.h"
#include "workload/generators/workload_generator.h"
#include "system/scenario/scenario.h"
#include "workload/et/et_io.h"
#include "tests/common/temp_folder.h"
#include "stable_reports.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using testing::coll_node;
using testing::comp_node;

// "" when equal, else the first line that differs in each (reports are long).
std::string first_difference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  std::istringstream x(a), y(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(x, la)), more_b = static_cast<bool>(std::getline(y, lb));
    if (!more_a || !more_b || la != lb) {
      return "line " + std::to_string(line) + ": '" + (more_a ? la : "<end>") + "' vs '" + (more_b ? lb : "<end>") + "'";
    }
  }
}

struct FoldOutputs {
  std::string json, csv, links;
  std::uint32_t identical_ranks = 0;
};

class IdenticalRanks : public testing::TempFolderTest {
 protected:
  // `name` replaces the workload's name in the reports (to compare two
  // spellings of one workload).
  FoldOutputs run(const std::string& topology, const std::string& system, const std::string& prefix, bool fold,
                  const std::string& name = "") {
    ScenarioSpec spec;
    spec.network = topology;
    spec.system = system;
    spec.no_aggregation = !fold;
    spec.jobs.push_back(JobInput{"", prefix, ""});
    spec.load_threads = 1;
    const Scenario s = build_scenario(spec);
    Simulation sim(s.graphs, *s.topology, s.config, s.options);
    const SimulationResult r = sim.run();
    FoldOutputs out;
    out.identical_ranks = r.identical_ranks;
    const testing::StableReports reports =
        testing::stable_reports(r, RunInfo{name.empty() ? s.workload_name : name, s.topology->description(),
                                           s.config.network.backend, 0, 0});
    out.json = reports.json;
    out.csv = reports.csv;
    out.links = reports.links;
    return out;
  }
};

TEST_F(IdenticalRanks, RandomIdenticalWorkloadsEqualTheFullRun) {
  std::mt19937_64 rng(20261127);
  auto pick = [&](std::uint64_t n) { return static_cast<std::uint64_t>(rng() % n); };
  constexpr int kCases = 200;
  int folded = 0, overlapped_folded = 0;
  for (int i = 0; i < kCases; ++i) {
    static const char* kShapes[] = {"Switch", "Switch", "Switch", "Ring", "FullyConnected"};
    static const std::uint32_t kSizes[] = {2, 3, 4, 6, 8};
    const std::string shape = kShapes[pick(5)];
    const std::uint32_t n = kSizes[pick(5)];
    const std::uint32_t npus = n + (pick(3) == 0 ? 2 : 0);  // sometimes NPUs no rank uses
    static const char* kBw[] = {"50GB/s", "100GB/s", "25GB/s"};
    static const char* kLat[] = {"500ns", "1us", "0ns"};
    const std::string topo = path("t" + std::to_string(i) + ".yml");
    std::ofstream(topo) << "shape: " << shape << "\ndims: [" << npus << "]\nbandwidth: " << kBw[pick(3)]
                        << "\nlatency: " << kLat[pick(3)] << "\n";
    const std::string sys = path("s" + std::to_string(i) + ".yml");
    {
      std::ofstream y(sys);
      y << "collective:\n  chunks: " << 1 + pick(4) << "\n";
      if (pick(4) == 0) y << "  endpoint_delay: 10ns\n";
      if (pick(4) == 0) y << "  reduction_bandwidth: 200GB/s\n";
      if (pick(5) == 0) y << "network:\n  backend: flow\n";
    }
    // The plan every rank runs: compute, then a collective; sometimes a
    // compute node beside the collective (the collective is then not
    // aggregated and its copies are mirrored message by message).
    static const CollectiveType kTypes[] = {CollectiveType::kAllReduce, CollectiveType::kReduceScatter,
                                            CollectiveType::kAllGather, CollectiveType::kAllToAll};
    static const std::uint64_t kBytes[] = {1 << 20, 1 << 16, 3 << 14, 1000003, 4096, 1 << 22, 96};
    const int layers = 2 + static_cast<int>(pick(4));
    struct Layer {
      std::uint64_t compute_us, beside_us, bytes;
      CollectiveType type;
    };
    std::vector<Layer> plan;
    bool overlapped = false;
    for (int l = 0; l < layers; ++l) {
      Layer L{pick(3) * 5, pick(3) == 0 ? 1 + pick(20) : 0, kBytes[pick(7)], kTypes[pick(5) == 0 ? 3 : pick(3)]};
      overlapped = overlapped || L.beside_us > 0;
      plan.push_back(L);
    }
    std::uint64_t id = 1, last = 0;
    std::vector<et::Node> nodes;
    for (const Layer& L : plan) {
      std::vector<std::uint64_t> deps;
      if (last) deps.push_back(last);
      nodes.push_back(comp_node(id, L.compute_us, deps));
      const std::uint64_t comp = id++;
      et::Node c = coll_node(id, L.type, L.bytes);
      c.add_data_deps(comp);
      nodes.push_back(c);
      last = id++;
      if (L.beside_us > 0) {
        nodes.push_back(comp_node(id, L.beside_us, {comp}));
        nodes.push_back(comp_node(id + 1, 0, {last, id}));
        last = id + 1;
        id += 2;
      }
    }
    const std::string prefix = path("w" + std::to_string(i) + "/w");
    std::filesystem::create_directories(path("w" + std::to_string(i)));
    const std::vector<EtTrace> traces = testing::make_traces(static_cast<int>(n), [&](int) { return nodes; });
    for (std::uint32_t r = 0; r < n; ++r) write_et(traces[r], prefix + "." + std::to_string(r) + ".et");

    const std::string name = "case " + std::to_string(i) + ": " + shape + " " + std::to_string(n) + " of " +
                             std::to_string(npus) + ", " + std::to_string(layers) + " layers" +
                             (overlapped ? ", compute beside" : "");
    SCOPED_TRACE(name);
    const FoldOutputs with = run(topo, sys, prefix, true);
    const FoldOutputs without = run(topo, sys, prefix, false);
    EXPECT_EQ(without.identical_ranks, 0u);
    EXPECT_EQ(first_difference(with.json, without.json), "");
    EXPECT_EQ(first_difference(with.csv, without.csv), "");
    EXPECT_EQ(first_difference(with.links, without.links), "");
    if (with.identical_ranks > 0) {
      EXPECT_EQ(with.identical_ranks, n);
      EXPECT_EQ(shape, "Switch");
      ++folded;
      if (overlapped) ++overlapped_folded;
    }
  }
  // Not vacuous: folding happened, with collectives mirrored both aggregated and message by message.
  EXPECT_GT(folded, kCases / 10);
  EXPECT_GT(overlapped_folded, 0);
  std::printf("folded %d of %d cases (%d with compute beside a collective)\n", folded, kCases, overlapped_folded);
}

// What must not fold: traces that differ, and a timeline (which shows every rank).
TEST_F(IdenticalRanks, DifferentTracesOrATimelineRunEveryRank) {
  const std::string topo = path("sw.yml");
  std::ofstream(topo) << "shape: Switch\ndims: [4]\nbandwidth: 100GB/s\nlatency: 500ns\n";
  std::filesystem::create_directories(path("w"));
  const std::vector<EtTrace> same = testing::make_traces(4, [](int) {
    return std::vector<et::Node>{comp_node(1, 5), coll_node(2, CollectiveType::kAllReduce, 1 << 20)};
  });
  for (int r = 0; r < 4; ++r) write_et(same[r], path("w/w." + std::to_string(r) + ".et"));
  EXPECT_EQ(run(topo, "", path("w/w"), true).identical_ranks, 4u);
  // Rank 3 computes longer: not identical, every rank runs.
  const std::vector<EtTrace> late = testing::make_traces(4, [](int r) {
    return std::vector<et::Node>{comp_node(1, r == 3 ? 6 : 5), coll_node(2, CollectiveType::kAllReduce, 1 << 20)};
  });
  write_et(late[3], path("w/w.3.et"));
  const FoldOutputs differ = run(topo, "", path("w/w"), true);
  EXPECT_EQ(differ.identical_ranks, 0u);
  EXPECT_EQ(first_difference(differ.json, run(topo, "", path("w/w"), false).json), "");
  write_et(same[3], path("w/w.3.et"));
  ScenarioSpec spec;
  spec.network = topo;
  spec.jobs.push_back(JobInput{"", path("w/w"), ""});
  spec.fold_identical_ranks = false;  // what the command line sets when writing a timeline
  const Scenario s = build_scenario(spec);
  EXPECT_EQ(s.graphs->size(), 4u);
}

// A microbenchmark named as a workload (gen:collectives?..., gen:chain?...)
// is generated in memory and folds with no file read: its reports equal those
// of the same microbenchmark written by `sim workload gen` and run rank by
// rank, byte for byte.
TEST_F(IdenticalRanks, GeneratedMicrobenchmarksFoldAndEqualTheirFilesRunInFull) {
  const std::string topo = path("sw.yml");
  std::ofstream(topo) << "shape: Switch\ndims: [16]\nbandwidth: 50GB/s\nlatency: 500ns\n";
  const std::string ring = path("ring.yml");
  std::ofstream(ring) << "shape: Ring\ndims: [16]\nbandwidth: 50GB/s\nlatency: 500ns\n";
  struct Case {
    std::string query, algorithm, topology;
    bool folds;
  };
  const std::vector<Case> cases = {
      {"gen:collectives?npus=16&coll=allreduce&size=1GiB", "halvingDoubling", topo, true},
      {"gen:collectives?npus=16&coll=allreduce&size=1MiB", "direct", topo, true},
      {"gen:collectives?npus=16&coll=allreduce,allgather,reducescatter&size=3MiB&compute=7us", "ring", topo, true},
      {"gen:collectives?npus=16&coll=allreduce&size=1MiB", "ring", ring, false},  // a ring's ports differ per NPU
      {"gen:chain?npus=16&nodes=50&duration=3us", "ring", topo, true},
      {"gen:p2p-ring?npus=16&size=64KiB&iterations=3", "ring", topo, false},  // ranks send to different peers
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.query + " (" + c.algorithm + ")");
    const std::string sys = path("s" + std::to_string(i) + ".yml");
    std::ofstream(sys) << "collective:\n  algorithms:\n    all_reduce: " << c.algorithm << "\n";
    // The same microbenchmark as files, as `sim workload gen` writes it.
    const Microbenchmark mb = parse_microbenchmark_workload(c.query);
    const std::string prefix = path("w" + std::to_string(i) + "/w");
    std::filesystem::create_directories(path("w" + std::to_string(i)));
    for (std::uint32_t r = 0; r < mb.npus(); ++r) write_et(microbenchmark_trace(mb, r), prefix + "." + std::to_string(r) + ".et");
    const FoldOutputs generated = run(c.topology, sys, c.query, true, "w");
    const FoldOutputs files = run(c.topology, sys, prefix, false, "w");
    EXPECT_EQ(generated.identical_ranks, c.folds ? 16u : 0u);
    EXPECT_EQ(first_difference(generated.json, files.json), "");
    EXPECT_EQ(first_difference(generated.csv, files.csv), "");
    EXPECT_EQ(first_difference(generated.links, files.links), "");
  }
}

}  // namespace
}  // namespace sim
