// Binary trees (NCCL's btree, and the double binary tree) against their
// closed forms on the analytical backend (exact, in ps), one chunk, a switch
// (path latency a, every message of a rank through its one egress):
//   BROADCAST  R(root) = 0; a node reached at R sends to child 0 then child 1,
//              reaching them at R + t + a and R + 2t + a; T = max R
//   REDUCE     U(leaf) = t + a; U(node) = max U(children) + t + a; T = max U(root's children)
//   ALL_REDUCE (one tree)  T = T_reduce + T_broadcast
//   ALL_REDUCE (double tree, 2 ranks)  2 * (a + t(S/2))
#include <gtest/gtest.h>

#include <algorithm>

#include "system/collectives/tree.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using testing::shape;
using testing::simulate_collective;
using testing::tt;

SimulationResult run_tree(const Topology& topo, CollectiveType type, std::uint64_t bytes, const std::string& algo,
                          std::uint32_t k = 1) {
  SystemConfig cfg;
  cfg.collective_chunks = k;
  cfg.algorithms[type] = algo;
  return simulate_collective(topo, type, bytes, cfg);
}

Time broadcast_form(std::uint32_t n, std::uint32_t node, Time reached, Time t, Time a) {
  const TreeProgram::Node nd = TreeProgram::btree(n, node);
  Time worst = reached, at = reached;
  for (std::int64_t c : nd.child) {
    if (c < 0) continue;
    at += t;
    worst = std::max(worst, broadcast_form(n, static_cast<std::uint32_t>(c), at + a, t, a));
  }
  return worst;
}

Time reduce_form(std::uint32_t n, std::uint32_t node, Time t, Time a) {  // when node's data reaches its parent
  const TreeProgram::Node nd = TreeProgram::btree(n, node);
  Time ready = 0;
  for (std::int64_t c : nd.child) {
    if (c >= 0) ready = std::max(ready, reduce_form(n, static_cast<std::uint32_t>(c), t, a));
  }
  return nd.parent < 0 ? ready : ready + t + a;
}

TEST(TreeCollective, NcclBtreeShape) {
  // NCCL's tree on 8 ranks: 0 -> 4; 4 -> 2, 6; 2 -> 1, 3; 6 -> 5, 7.
  EXPECT_EQ(TreeProgram::btree(8, 0).child[1], 4);
  EXPECT_EQ(TreeProgram::btree(8, 4).parent, 0);
  EXPECT_EQ(TreeProgram::btree(8, 4).child[0], 2);
  EXPECT_EQ(TreeProgram::btree(8, 4).child[1], 6);
  EXPECT_EQ(TreeProgram::btree(8, 6).child[1], 7);
  EXPECT_EQ(TreeProgram::btree(8, 7).parent, 6);
  // The second tree mirrors (even n): rank 7 is its root.
  EXPECT_EQ(TreeProgram::dtree(8, 7, 1).parent, -1);
  // Odd n shifts by one: rank 1 is the root.
  EXPECT_EQ(TreeProgram::dtree(7, 1, 1).parent, -1);
}

TEST(TreeCollective, SingleTreeMatchesClosedForm) {
  const Time a = 1000 * kNanosecond;
  for (std::uint32_t n : {2u, 3u, 5u, 8u, 13u, 16u}) {
    const Topology topo = shape("Switch", n);
    const std::uint64_t s = 1 << 20;
    const Time t = tt(s);
    const Time bcast = broadcast_form(n, 0, 0, t, a);
    const Time reduce = reduce_form(n, 0, t, a);
    const auto b = run_tree(topo, CollectiveType::kBroadcast, s, "binaryTree");
    EXPECT_EQ(b.makespan, bcast) << "n=" << n;
    EXPECT_EQ(b.collectives[0].algorithm, "binaryTree");
    EXPECT_EQ(run_tree(topo, CollectiveType::kReduce, s, "binaryTree").makespan, reduce) << "n=" << n;
    EXPECT_EQ(run_tree(topo, CollectiveType::kAllReduce, s, "binaryTree").makespan, reduce + bcast) << "n=" << n;
    // Broadcast and reduce default to the binary tree.
    EXPECT_EQ(simulate_collective(topo, CollectiveType::kBroadcast, s).collectives[0].algorithm, "binaryTree");
  }
}

TEST(TreeCollective, DoubleTreeOnTwoRanks) {
  const std::uint64_t s = 1 << 20;
  EXPECT_EQ(run_tree(shape("Switch", 2), CollectiveType::kAllReduce, s, "doubleBinaryTree").makespan,
            2 * (1000 * kNanosecond + tt(s / 2)));
}

TEST(TreeCollective, DoubleTreeCompletesOnA4x4x4Torus) {
  // ASTRA-sim hangs on this one.
  const Topology torus =
      parse_topology("shape: Torus\ndims: [4, 4, 4]\nbandwidth: 50GB/s\nlatency: 500ns\n", "torus");
  for (std::uint32_t k : {1u, 4u}) {
    const auto r = run_tree(torus, CollectiveType::kAllReduce, 1 << 20, "doubleBinaryTree", k);
    EXPECT_GT(r.makespan, 0);
    EXPECT_EQ(r.collectives.size(), 64u);
    EXPECT_EQ(r.collectives[0].algorithm, "doubleBinaryTree");
  }
}

}  // namespace
}  // namespace sim
