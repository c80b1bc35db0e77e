// NCCL's programs shared between groups of one shape (nccl/program_shapes.h):
// each group's program, as make_program returns it, is op for op the one its
// builder makes for that group alone, and groups that differ only in their
// rail (so in the leaves and spines they reduce through) or in their node's
// switch run one set of ops.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/system/collectives/nccl/nccl_test_cluster.h"
#include "tests/system/test_util.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/programs/nccl_dag.h"
#include "system/collectives/nccl/programs/nccl_programs.h"

namespace sim {
namespace {

using namespace sim::testing;

// 4 GPUs per node, 2 nodes per leaf, 2 leaves; every level reduces. GPU id =
// place + 4 x node in its leaf + 8 x leaf.
Topology fabric() {
  return parse_topology(
      "topology: [Switch, Switch, Switch]\nnpus_count: [4, 2, 2]\nbandwidth: [450, 50, 50]\n"
      "latency: [150, 700, 700]\nin_network_reduction: [true, true, true]\n",
      "leaf-spine");
}

// The GPUs at `places` of every node.
std::vector<std::uint32_t> at_places(std::initializer_list<std::uint32_t> places) {
  std::vector<std::uint32_t> m;
  for (std::uint32_t node = 0; node < 4; ++node) {
    for (const std::uint32_t p : places) m.push_back(4 * node + p);
  }
  return m;
}

// The program `plan` names, built for this group alone (nccl_algorithm.cpp's choice, without sharing).
std::shared_ptr<const CollectiveProgram> built_alone(CollectiveType type, std::uint64_t bytes, const nccl::Plan& pl,
                                                     const AlgorithmContext& ctx) {
  switch (pl.algo) {
    case nccl::Algo::kTree: return nccl::make_tree_program(pl.name, bytes, ctx, pl.model);
    case nccl::Algo::kNvls:
      return type == CollectiveType::kAllReduce
                 ? nccl::make_nvls_program(pl.name, bytes, ctx, pl.model)
                 : nccl::make_nvls_scatter_gather_program(pl.name, type, bytes, ctx, pl.model);
    case nccl::Algo::kNvlsTree: return nccl::make_nvls_tree_program(pl.name, bytes, ctx, pl.model);
    case nccl::Algo::kCollNetChain: return nccl::make_collnet_chain_program(pl.name, bytes, ctx, pl.model);
    case nccl::Algo::kCollNetDirect: return nccl::make_collnet_direct_program(pl.name, bytes, ctx, pl.model);
    default: return nccl::make_chain_program(pl.name, type, bytes, ctx, pl.model);
  }
}

void expect_same_ops(const CollectiveProgram& a, const CollectiveProgram& b) {
  ASSERT_EQ(a.group_size(), b.group_size());
  EXPECT_EQ(a.name(), b.name());
  for (std::uint32_t pos = 0; pos < a.group_size(); ++pos) {
    ASSERT_EQ(a.op_count(pos), b.op_count(pos)) << "rank " << pos;
    RankCursor ca, cb;
    std::vector<OpRef> ra, rb;
    a.start(pos, ca, ra);
    b.start(pos, cb, rb);
    EXPECT_EQ(ra, rb) << "rank " << pos;
    for (OpRef ref = 0; ref < a.op_count(pos); ++ref) {
      const CollectiveOp x = a.op(pos, ref), y = b.op(pos, ref);
      ASSERT_TRUE(x.kind == y.kind && x.peer == y.peer && x.bytes == y.bytes && x.tag == y.tag &&
                  x.duration == y.duration && x.channel == y.channel && x.rate == y.rate && x.node == y.node &&
                  x.proxy_ns == y.proxy_ns)
          << "rank " << pos << " op " << ref;
      std::vector<OpRef> pa, pb;
      a.parents(pos, ref, pa);
      b.parents(pos, ref, pb);
      ASSERT_EQ(pa, pb) << "rank " << pos << " op " << ref;
    }
  }
}

struct ShapeCase {
  CollectiveType type;
  const char* algo;
  std::vector<std::uint32_t> first, second;  // two groups of one shape
  bool other_switches;                        // whose switch ops name other switches
};

TEST(ProgramShapes, GroupsOfOneShapeRunOneSetOfOpsEachOnItsOwnSwitches) {
  const Topology topo = fabric();
  const std::vector<std::uint32_t> node0 = {0, 1, 2, 3}, node1 = {4, 5, 6, 7};
  const std::vector<ShapeCase> cases = {
      {CollectiveType::kAllReduce, "collnetchain", at_places({0, 1}), at_places({2, 3}), true},
      {CollectiveType::kAllReduce, "collnetdirect", at_places({0, 1}), at_places({2, 3}), true},
      {CollectiveType::kAllReduce, "collnetchain", at_places({0}), at_places({3}), true},
      {CollectiveType::kAllReduce, "nvls", at_places({0, 1}), at_places({2, 3}), true},
      // The nodes' switches: the same for both groups.
      {CollectiveType::kAllReduce, "nvlstree", at_places({0, 1}), at_places({2, 3}), false},
      {CollectiveType::kAllReduce, "tree", at_places({1}), at_places({2}), false},
      {CollectiveType::kBroadcast, "ring", at_places({0, 1}), at_places({2, 3}), false},
      {CollectiveType::kAllReduce, "nvls", node0, node1, true},
      {CollectiveType::kAllGather, "nvls", node0, node1, true},
  };
  const std::uint64_t bytes = 6 << 20;
  for (const ShapeCase& c : cases) {
    SCOPED_TRACE(std::string(c.algo) + " on " + std::to_string(c.first.size()) + " ranks");
    const nccl::Params params = {{"algo", nccl::param_value("algo", c.algo)}, {"channels", 2}};
    std::shared_ptr<const CollectiveProgram> shared[2];
    for (int g = 0; g < 2; ++g) {
      const auto ctx = context(topo, g == 0 ? c.first : c.second);
      shared[g] = nccl::make_program(c.type, bytes, params, *ctx);
      expect_same_ops(*shared[g], *built_alone(c.type, bytes, nccl::plan(c.type, bytes, params, *ctx), *ctx));
    }
    const auto* a = dynamic_cast<const nccl::NcclDagProgram*>(shared[0].get());
    const auto* b = dynamic_cast<const nccl::NcclDagProgram*>(shared[1].get());
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(a->same_ops(*b));
    // On other rails or another node, the same ops name other switches.
    EXPECT_EQ(a->switches() != b->switches(), c.other_switches);
  }
}

TEST(ProgramShapes, AnotherSizeOrAnotherPlanIsAnotherShape) {
  const Topology topo = fabric();
  const auto ctx = context(topo, at_places({0, 1}));
  const nccl::Params chain = {{"algo", nccl::param_value("algo", "collnetchain")}};
  const nccl::Params direct = {{"algo", nccl::param_value("algo", "collnetdirect")}};
  const auto a = nccl::make_program(CollectiveType::kAllReduce, 4 << 20, chain, *ctx);
  const auto b = nccl::make_program(CollectiveType::kAllReduce, 8 << 20, chain, *ctx);
  const auto c = nccl::make_program(CollectiveType::kAllReduce, 4 << 20, direct, *ctx);
  const auto* da = dynamic_cast<const nccl::NcclDagProgram*>(a.get());
  ASSERT_TRUE(da);
  EXPECT_FALSE(da->same_ops(dynamic_cast<const nccl::NcclDagProgram&>(*b)));
  EXPECT_FALSE(da->same_ops(dynamic_cast<const nccl::NcclDagProgram&>(*c)));
  // The same group and size again: the same ops.
  EXPECT_TRUE(da->same_ops(
      dynamic_cast<const nccl::NcclDagProgram&>(*nccl::make_program(CollectiveType::kAllReduce, 4 << 20, chain, *ctx))));
}

}  // namespace
}  // namespace sim
