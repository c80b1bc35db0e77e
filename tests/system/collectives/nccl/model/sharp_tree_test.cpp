// SHARP over several switch levels (nccl/model/sharp_tree.h): which switches a
// group's ranks reduce through, and CollNet and NVLS running over them. The
// levels below the top reduce-scatter, the top all-reduces, the levels below
// multicast back: checked op by op on a free network (an exact closed form),
// and at 1 GiB against one reducing switch per rail, on both backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tests/system/test_util.h"
#include "../nccl_test_cluster.h"
#include "report/report.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/sharp_tree.h"

namespace sim {
namespace {

using namespace sim::testing;

// `per_node` GPUs on a node switch, nodes on `leaves` x `spines` rails: a
// leaf level (the GPUs of one rail under one leaf) and a spine level (the
// rail's GPUs of the same place under every leaf).
Topology leaf_spine(std::uint32_t per_node, std::uint32_t per_leaf, std::uint32_t leaves, const std::string& bw,
                    bool leaf_reduces, bool spine_reduces) {
  const auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  return parse_topology("topology: [Switch, Switch, Switch]\nnpus_count: [" + std::to_string(per_node) + ", " +
                            std::to_string(per_leaf) + ", " + std::to_string(leaves) + "]\nbandwidth: [450, " + bw +
                            ", " + bw + "]\nlatency: [0, 0, 0]\nin_network_reduction: [true, " + flag(leaf_reduces) +
                            ", " + flag(spine_reduces) + "]\n",
                        "leaf-spine");
}

// One all-reduce of `bytes` by `members` alone (a process group).
SimulationResult group_all_reduce(const Topology& topo, const std::vector<std::uint32_t>& members, std::uint64_t bytes,
                                  const SystemConfig& config) {
  const auto traces = make_traces(static_cast<int>(topo.npu_count()), [&](int r) {
    std::vector<et::Node> nodes;
    if (std::find(members.begin(), members.end(), static_cast<std::uint32_t>(r)) != members.end()) {
      et::Node n = coll_node(1, CollectiveType::kAllReduce, bytes);
      set_attr_string(n, "pg_name", "g");
      nodes.push_back(n);
    }
    return nodes;
  });
  SimulationOptions options;
  options.comm_groups["g"] = members;
  return simulate(traces, topo, config, options);
}

std::vector<std::uint32_t> all_of(const Topology& topo) {
  std::vector<std::uint32_t> m;
  for (std::uint32_t i = 0; i < topo.npu_count(); ++i) m.push_back(i);
  return m;
}

TEST(SharpTree, OneLevelPerRailOrLeavesThenSpines) {
  const Topology one = nccl_cluster(4, 4, "450", "50", "0", "0", true, true);
  const nccl::SharpTree rail = nccl::sharp_tree(*context(one, all_of(one)));
  ASSERT_EQ(rail.depth(), 1u);
  EXPECT_EQ(rail.under(0, 1), (std::vector<std::uint32_t>{1, 5, 9, 13}));  // GPU 1 of every node
  EXPECT_EQ(rail.index[0][9], 2u);

  // 2 GPUs per node, 2 nodes per leaf, 2 leaves: GPU id = (place, node in leaf, leaf).
  const Topology two = leaf_spine(2, 2, 2, "50", true, true);
  const nccl::SharpTree t = nccl::sharp_tree(*context(two, all_of(two)));
  ASSERT_EQ(t.depth(), 2u);
  EXPECT_EQ(t.under(0, 0), (std::vector<std::uint32_t>{0, 2}));  // the leaf: nodes 0 and 1
  EXPECT_EQ(t.under(1, 0), (std::vector<std::uint32_t>{0, 4}));  // the spine: node 0 of either leaf
  EXPECT_EQ(t.under(0, 7), (std::vector<std::uint32_t>{5, 7}));
  EXPECT_EQ(t.index[0][7], 1u);
  EXPECT_EQ(t.index[1][7], 1u);
  EXPECT_NE(t.levels[0][0], t.levels[0][1]);  // a leaf per rail
  EXPECT_NE(t.levels[0][0], t.levels[1][0]);

  // A level that does not reduce: no SHARP (and so no CollNet).
  EXPECT_TRUE(nccl::sharp_tree(*context(leaf_spine(2, 2, 2, "50", true, false), all_of(two))).empty());
  EXPECT_TRUE(nccl::sharp_tree(*context(leaf_spine(2, 2, 2, "50", false, true), all_of(two))).empty());
  EXPECT_FALSE(all_reduce_plan(leaf_spine(2, 2, 2, "50", true, false), 1 << 20, {}).system.collnet);
  EXPECT_TRUE(all_reduce_plan(two, 1 << 20, {}).system.collnet);

  // A group under one leaf stops there; across leaves only, the spine alone.
  const nccl::SharpTree leaf = nccl::sharp_tree(*context(two, {0, 2}));
  ASSERT_EQ(leaf.depth(), 1u);
  EXPECT_EQ(leaf.levels[0][0], t.levels[0][0]);
  const nccl::SharpTree spine = nccl::sharp_tree(*context(two, {0, 4}));
  ASSERT_EQ(spine.depth(), 1u);
  EXPECT_EQ(spine.levels[0][0], t.levels[1][0]);
  // Three of the four nodes: the rail does not fill the grid.
  EXPECT_TRUE(nccl::sharp_tree(*context(two, {0, 2, 4})).empty());
}

// CollNet direct, GPU 0 of each of 4 nodes (2 leaves of 2), one channel, one
// loop of 128 KiB, links of d = one half's time and no latency. Each GPU
// uploads its buffer to its leaf (2d), which sends half the sum to each of
// its two nodes (3d); each node's half goes up to the spine and its total
// comes down (5d); both nodes upload their half to the leaf (6d), which sends
// both halves down to both (8d). With NCCL's base and network step H once:
// base + 8d + H. One switch per rail (the same four nodes on one level):
// base + 4d + H (the whole buffer up and down).
TEST(SharpTree, CollNetDirectOverLeafAndSpineClosedForm) {
  const Topology topo = leaf_spine(2, 2, 2, "1", true, true);  // 1 GB/s
  const std::uint64_t bytes = 128 << 10;
  const nccl::Params params = {{"algo", static_cast<int>(nccl::Algo::kCollNetDirect)}, {"channels", 1}};
  const std::vector<std::uint32_t> members = {0, 2, 4, 6};
  const auto ctx = context(topo, members);
  const nccl::Plan pl = nccl::plan(CollectiveType::kAllReduce, bytes, params, *ctx);
  ASSERT_EQ(pl.name, "nccl:collnetdirect/simple");
  const SimulationResult r =
      group_all_reduce(topo, members, bytes, choose_all_reduce("nccl:algo=collnetdirect,channels=1"));
  const Time d = transfer_time(bytes / 2, 1'000'000'000);
  EXPECT_EQ(r.makespan, pl.model.base + 8 * d + pl.model.hop_inter);

  // Three levels of 2 (8 nodes; e = a quarter's time): the buffer up and half
  // down (6e), half up and a quarter down (9e), the top's quarter up and down
  // (11e), then the gathers: a quarter up and half down (14e), half up and the
  // whole down (20e).
  const Topology three = parse_topology(
      "topology: [Switch, Switch, Switch, Switch]\nnpus_count: [2, 2, 2, 2]\nbandwidth: [450, 1, 1, 1]\n"
      "latency: [0, 0, 0, 0]\nin_network_reduction: [true, true, true, true]\n",
      "three-levels");
  const std::vector<std::uint32_t> eight = {0, 2, 4, 6, 8, 10, 12, 14};
  ASSERT_EQ(nccl::sharp_tree(*context(three, eight)).depth(), 3u);
  const nccl::Plan pl8 = nccl::plan(CollectiveType::kAllReduce, bytes, params, *context(three, eight));
  const SimulationResult r8 =
      group_all_reduce(three, eight, bytes, choose_all_reduce("nccl:algo=collnetdirect,channels=1"));
  EXPECT_EQ(r8.makespan, pl8.model.base + 20 * transfer_time(bytes / 4, 1'000'000'000) + pl8.model.hop_inter);

  const Topology flat = nccl_cluster(2, 4, "450", "1", "0", "0", true, true);
  const SimulationResult one =
      group_all_reduce(flat, members, bytes, choose_all_reduce("nccl:algo=collnetdirect,channels=1"));
  EXPECT_EQ(one.makespan, pl.model.base + 4 * d + pl.model.hop_inter);
}

// 1 GiB over 4 nodes of 8 GPUs at 50 GB/s per NIC: CollNet chain, CollNet
// direct and NVLS each as fast over leaves and spines as over one switch per
// rail, within 1.5% (the leaves' extra stages fill the pipeline once), on the
// analytical and the flow backend.
TEST(SharpTree, EachSharpAlgorithmOverTwoLevelsAt1GiB) {
  const Topology flat = nccl_cluster(8, 4, "450", "50", "0", "0", true, true);
  const Topology two = leaf_spine(8, 2, 2, "50", true, true);
  const std::uint64_t bytes = std::uint64_t{1} << 30;
  for (const char* algo : {"collnetchain", "collnetdirect", "nvls"}) {
    for (const char* backend : {"analytical", "flow"}) {
      SCOPED_TRACE(std::string(algo) + " " + backend);
      const SystemConfig c = choose_all_reduce(std::string("nccl:algo=") + algo, backend);
      const SimulationResult a = simulate_collective(flat, CollectiveType::kAllReduce, bytes, c);
      const SimulationResult b = simulate_collective(two, CollectiveType::kAllReduce, bytes, c);
      EXPECT_EQ(a.collectives[0].algorithm, b.collectives[0].algorithm);
      EXPECT_NEAR(static_cast<double>(b.makespan), static_cast<double>(a.makespan), 0.015 * a.makespan);
    }
  }
}

}  // namespace
}  // namespace sim
