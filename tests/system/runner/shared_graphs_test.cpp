// Ranks whose trace files are byte for byte the same share one graph
// (workload/loader/workload_loader.h, RankGraph::storage()). The run keeps every
// rank's state (ready counts, cursors) itself, so a run on shared graphs must
// give what the same files decoded one by one (a graph per rank) give, to the
// picosecond and byte.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "system/scenario/system_files.h"
#include "tests/common/temp_folder.h"
#include "tests/system/test_util.h"
#include "workload/loader/workload_loader.h"

namespace sim {
namespace {

using namespace sim::testing;

class SharedGraphs : public TempFolderTest {};

et::Node after(et::Node n, std::uint64_t dep) {
  n.add_data_deps(dep);
  return n;
}

// What a run gives, but its event counts.
std::string describe(const SimulationResult& r) {
  std::ostringstream s;
  s << "makespan " << r.makespan << "\n";
  for (const RankStats& k : r.ranks) {
    s << "rank " << k.finish << ' ' << k.compute << ' ' << k.exposed_comm << ' ' << k.memory << ' ' << k.idle << ' '
      << k.comm << ' ' << k.nodes << "\n";
  }
  for (const CollectiveRecord& c : r.collectives) {
    s << "coll " << c.rank << ' ' << c.node_id << ' ' << static_cast<int>(c.type) << ' ' << c.bytes << ' '
      << c.group_size << ' ' << c.npu << ' ' << c.start << ' ' << c.duration << ' ' << c.algorithm << "\n";
  }
  for (const LinkRecord& l : r.links) s << "link " << l.from << ' ' << l.to << ' ' << l.usage.bytes << ' ' << l.usage.busy << "\n";
  return s.str();
}

TEST_F(SharedGraphs, RunOnSharedGraphsEqualsRunOnOneGraphPerRank) {
  // Every rank: compute, then all-reduce and all-gather of different sizes
  // interleaved with compute, and a second compute chain beside them.
  std::vector<et::Node> nodes;
  nodes.push_back(comp_node(1, 40));
  nodes.push_back(after(coll_node(2, CollectiveType::kAllReduce, 1 << 20), 1));
  nodes.push_back(comp_node(3, 25, {2}));
  nodes.push_back(after(coll_node(4, CollectiveType::kAllGather, 3 << 16), 3));
  nodes.push_back(comp_node(5, 70, {1}));
  nodes.push_back(after(coll_node(6, CollectiveType::kReduceScatter, 1 << 18), 5));
  nodes.push_back(comp_node(7, 10, {4, 6}));
  EtTrace trace;
  trace.metadata.set_version("0.0.4");
  trace.nodes = nodes;
  const Topology topo = load_topology(source_dir() + "/configs/ring8.yml");
  std::vector<std::string> files;
  for (std::uint32_t r = 0; r < topo.npu_count(); ++r) {
    files.push_back(path("w." + std::to_string(r) + ".et"));
    write_et(trace, files.back());
  }

  LoadStats stats;
  std::vector<RankGraph> shared = load_rank_graphs(files, {}, 1, &stats);
  ASSERT_EQ(stats.decoded, 1u);
  for (const RankGraph& g : shared) EXPECT_EQ(g.storage(), shared[0].storage());
  std::vector<RankGraph> alone;
  for (std::size_t r = 0; r < files.size(); ++r) alone.emplace_back(files[r], static_cast<int>(r), GraphOptions{});
  EXPECT_NE(alone[0].storage(), alone[1].storage());

  const SimulationResult a = Simulation(std::move(shared), topo, {}, {}).run();
  const SimulationResult b = Simulation(std::move(alone), topo, {}, {}).run();
  EXPECT_GT(a.makespan, 145 * kMicrosecond);  // the compute alone: 40 + 70 + ... on the longest path
  EXPECT_EQ(a.collectives.size(), 3 * files.size());
  EXPECT_EQ(describe(a), describe(b));
}

}  // namespace
}  // namespace sim
