// aws-ofi-nccl's region tuner (tuner=aws-p5): its p5 tables' picks, worked
// out by hand from the vertices and checked against the plugin's own record of
// its decisions, and NCCL's plan with the plugin on a data-parallel group.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "tests/system/test_util.h"
#include "../nccl_test_cluster.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/tuner_regions.h"

namespace sim {
namespace {

using namespace sim::testing;

TEST(NcclTuner, AwsP5RegionsPickPerSizeAndRanks) {
  using nccl::Algo;
  using nccl::Proto;
  const auto pick = [](std::uint64_t bytes, int nodes) {
    return nccl::tuner_pick(nccl::TunerPlugin::kAwsP5, CollectiveType::kAllReduce, bytes, 8 * nodes, nodes);
  };
  const std::uint64_t MiB = 1 << 20, GiB = MiB << 10;
  const struct {
    std::uint64_t bytes;
    int nodes;
    Algo algo;
    Proto proto;
  } cases[] = {
      {36 * MiB, 4, Algo::kTree, Proto::kLL128},       {32 * MiB, 4, Algo::kTree, Proto::kLL128},
      {64 * MiB, 4, Algo::kRing, Proto::kLL128},       {1 * GiB, 4, Algo::kRing, Proto::kLL128},
      {2 * GiB, 4, Algo::kRing, Proto::kSimple},       {64 * MiB, 8, Algo::kTree, Proto::kLL128},
      {128 * MiB, 8, Algo::kRing, Proto::kLL128},      {4 * GiB, 8, Algo::kRing, Proto::kSimple},
      {4 * GiB, 16, Algo::kNvlsTree, Proto::kSimple},  {8 * GiB, 16, Algo::kRing, Proto::kSimple},
      {512 * MiB, 32, Algo::kNvlsTree, Proto::kSimple}, {1536 * MiB, 32, Algo::kRing, Proto::kLL128},
      // Between two vertices' rank counts the boundary moves linearly in bytes: on 5
      // nodes (40 ranks) tree/LL128 ends at 37748736 + (8 / 32) x (117440512 - 37748736)
      // = 57,671,680 B (55 MiB), where a line in log2-log2 space would end it at 49.6 MiB.
      {53 * MiB, 5, Algo::kTree, Proto::kLL128},       {56 * MiB, 5, Algo::kRing, Proto::kLL128},
  };
  for (const auto& c : cases) {
    const auto p = pick(c.bytes, c.nodes);
    ASSERT_TRUE(p.has_value()) << c.bytes << " B on " << c.nodes << " nodes";
    EXPECT_EQ(p->algo, c.algo) << c.bytes << " B on " << c.nodes << " nodes";
    EXPECT_EQ(p->proto, c.proto) << c.bytes << " B on " << c.nodes << " nodes";
  }
  // Outside its table (not 8 GPUs per node, not all-reduce) NCCL's model decides,
  // and on two nodes or fewer, where the table has regions the plugin skips.
  for (const std::uint64_t bytes : {MiB, 30 * MiB, 32 * MiB, 8 * GiB}) {
    EXPECT_FALSE(pick(bytes, 2).has_value()) << bytes;
    EXPECT_FALSE(pick(bytes, 1).has_value()) << bytes;
  }
  EXPECT_FALSE(nccl::tuner_pick(nccl::TunerPlugin::kAwsP5, CollectiveType::kAllReduce, GiB, 12, 2).has_value());
  EXPECT_FALSE(nccl::tuner_pick(nccl::TunerPlugin::kAwsP5, CollectiveType::kAllGather, GiB, 16, 2).has_value());
}

TEST(NcclTuner, AwsP5RegionsForTwoRanksAndOneRankPerNode) {
  // The plugin's tables for groups of 2 and 1 GPUs per node (region_init_internal_p5_p5e):
  // a data-parallel group beside tensor parallelism of 4 or 8. The boundaries below are
  // its edges on the plane of bytes and ranks, worked out by hand.
  using nccl::Algo;
  using nccl::Proto;
  const std::uint64_t MiB = 1 << 20, GiB = MiB << 10;
  const auto pick = [](CollectiveType type, std::uint64_t bytes, int ranks, int nodes) {
    return nccl::tuner_pick(nccl::TunerPlugin::kAwsP5, type, bytes, ranks, nodes);
  };
  const struct {
    CollectiveType type;
    std::uint64_t bytes;
    int per_node, nodes;
    Algo algo;
    Proto proto;
  } cases[] = {
      // 1 rank per node, 16 nodes: tree/LL128 to 2,367,488 B, ring/LL128 to 4736000 + 14 x
      // (269484032 - 4736000) / 126 = 34,152,448 B, then ring/Simple.
      {CollectiveType::kAllReduce, 1 * MiB, 1, 16, Algo::kTree, Proto::kLL128},
      {CollectiveType::kAllReduce, 8 * MiB, 1, 16, Algo::kRing, Proto::kLL128},
      {CollectiveType::kAllReduce, 64 * MiB, 1, 16, Algo::kRing, Proto::kSimple},
      // 64 nodes: tree/LL128 is the sliver between its chain, at 9,999,360 B, and the
      // straight edge back from its far point (1e11 B at 62,828 ranks) to (0, 16), at
      // about 82.05 MB; ring/LL128 to 135,008,841 B; below 9,999,360 B no region (below).
      {CollectiveType::kAllReduce, 64 * MiB, 1, 64, Algo::kTree, Proto::kLL128},
      {CollectiveType::kAllReduce, 128 * MiB, 1, 64, Algo::kRing, Proto::kLL128},
      {CollectiveType::kAllReduce, 256 * MiB, 1, 64, Algo::kRing, Proto::kSimple},
      // 256 nodes, 448 MiB: above the ring/LL128 line (223 ranks there), below the sliver
      // (291 to 333 ranks): ring/LL128, where log2-log2 lines would give tree/LL128.
      {CollectiveType::kAllReduce, 448 * MiB, 1, 256, Algo::kRing, Proto::kLL128},
      // all-gather (the gathered total) from 4194304 + 14 x (8589934592 - 4194304) / 2046 =
      // 62,943,240 B on 16 ranks, reduce-scatter from 64 MiB: the ring, Simple.
      {CollectiveType::kAllGather, 1 * GiB, 1, 16, Algo::kRing, Proto::kSimple},
      {CollectiveType::kReduceScatter, 64 * MiB, 1, 16, Algo::kRing, Proto::kSimple},
      // 2 ranks per node, 16 nodes (32 ranks): tree/LL128 to 5,525,504 B, ring/LL128 to about
      // 154 MB, NVLS-tree to 275,775,488 B, ring/Simple above.
      {CollectiveType::kAllReduce, 4 * MiB, 2, 16, Algo::kTree, Proto::kLL128},
      {CollectiveType::kAllReduce, 64 * MiB, 2, 16, Algo::kRing, Proto::kLL128},
      {CollectiveType::kAllReduce, 200 * MiB, 2, 16, Algo::kNvlsTree, Proto::kSimple},
      {CollectiveType::kAllReduce, 1 * GiB, 2, 16, Algo::kRing, Proto::kSimple},
  };
  for (const auto& c : cases) {
    const auto p = pick(c.type, c.bytes, c.per_node * c.nodes, c.nodes);
    const std::string what = std::string(collective_name(c.type)) + " " + std::to_string(c.bytes) + " B on " +
                             std::to_string(c.nodes) + " nodes x " + std::to_string(c.per_node);
    ASSERT_TRUE(p.has_value()) << what;
    EXPECT_EQ(p->algo, c.algo) << what;
    EXPECT_EQ(p->proto, c.proto) << what;
  }
  // Below its regions (all-gather under 62,943,240 B, reduce-scatter under 64 MiB) NCCL decides;
  // so it does for other collectives, other GPUs per node, on two nodes, and for one GPU a
  // node from 24 ranks on below the tree/LL128 sliver (9,999,360 B on 64 ranks).
  EXPECT_FALSE(pick(CollectiveType::kAllGather, 8 * MiB, 16, 16).has_value());
  EXPECT_FALSE(pick(CollectiveType::kReduceScatter, 16 * MiB, 16, 16).has_value());
  EXPECT_FALSE(pick(CollectiveType::kAllGather, GiB, 32, 16).has_value());
  EXPECT_FALSE(pick(CollectiveType::kAllReduce, GiB, 64, 16).has_value());
  EXPECT_FALSE(pick(CollectiveType::kAllReduce, 8 * MiB, 2, 2).has_value());
  EXPECT_FALSE(pick(CollectiveType::kAllReduce, 4 * MiB, 64, 64).has_value());
  EXPECT_FALSE(pick(CollectiveType::kAllReduce, 1 * MiB, 32, 32).has_value());
  // A region whose choice the group cannot run is passed over, as the plugin skips a
  // choice NCCL's cost table ignores, and the next that holds the point wins: on the
  // NVLS-tree region's edge with ring/Simple's, without NVLS the ring.
  const std::uint64_t edge = 275775488;
  EXPECT_EQ(pick(CollectiveType::kAllReduce, edge, 32, 16)->algo, Algo::kNvlsTree);
  const auto no_nvls = [](Algo a, Proto) { return a != Algo::kNvlsTree; };
  const auto ring = nccl::tuner_pick(nccl::TunerPlugin::kAwsP5, CollectiveType::kAllReduce, edge, 32, 16, no_nvls);
  ASSERT_TRUE(ring.has_value());
  EXPECT_EQ(ring->algo, Algo::kRing);
  EXPECT_EQ(ring->proto, Proto::kSimple);
  EXPECT_FALSE(
      nccl::tuner_pick(nccl::TunerPlugin::kAwsP5, CollectiveType::kAllReduce, 200 * MiB, 32, 16, no_nvls).has_value());
}

TEST(NcclTuner, AwsP5DecisionsAreThePluginsOwnToTheByte) {
  // The plugin's own record of its p5 decisions: aws/aws-ofi-nccl
  // tests/integration/test-output/tuner_ranks{8,1}_nodes{4..256}.out.expected
  // (show-tuner-decisions, which bisects each change of decision to the byte
  // between 32 B and 32 GiB; sizes where no region holds are left out there).
  // Each row is the first size of a decision: it holds there and not one byte
  // below. These are where its edges fall on the linear plane of bytes and
  // ranks, including the dead zone its crossing test leaves near a vertex
  // (128 GPUs of 128 nodes: 119,477,259 B, eleven bytes past the vertex).
  using nccl::Algo;
  using nccl::Proto;
  const auto A = CollectiveType::kAllReduce, G = CollectiveType::kAllGather, S = CollectiveType::kReduceScatter;
  const Algo T = Algo::kTree, R = Algo::kRing, N = Algo::kNvlsTree;
  const Proto L = Proto::kLL128, P = Proto::kSimple;
  const struct {
    CollectiveType type;
    int per_node, nodes;
    std::uint64_t first;
    Algo algo;
    Proto proto;
  } rows[] = {
      {A, 8, 4, 32, T, L},           {A, 8, 4, 37748737, R, L},     {A, 8, 4, 1610612736, R, P},
      {A, 8, 8, 32, T, L},           {A, 8, 8, 117440513, R, L},    {A, 8, 8, 2684354560, R, P},
      {A, 8, 16, 32, T, L},          {A, 8, 16, 301989889, R, L},   {A, 8, 16, 2147483649, N, P},
      {A, 8, 16, 6442450945, R, P},  {A, 8, 32, 32, T, L},          {A, 8, 32, 301989889, N, P},
      {A, 8, 32, 12884901889, R, P}, {A, 8, 64, 32, T, L},          {A, 8, 64, 335544321, N, P},
      {A, 8, 64, 25769803777, R, P}, {A, 8, 128, 32, T, L},         {A, 8, 128, 536870913, N, P},
      {A, 8, 256, 32, T, L},         {A, 8, 256, 402653185, N, P},  {A, 1, 4, 32, R, L},
      {A, 1, 4, 8938350, R, P},      {A, 1, 8, 32, R, L},           {A, 1, 8, 17343050, R, P},
      {A, 1, 16, 32, T, L},          {A, 1, 16, 2367489, R, L},     {A, 1, 16, 34152449, R, P},
      {A, 1, 32, 4911446, T, L},     {A, 1, 32, 27351104, R, L},    {A, 1, 32, 67771246, R, P},
      {A, 1, 64, 9999360, T, L},     {A, 1, 64, 82053312, R, L},    {A, 1, 64, 135008842, R, P},
      {A, 1, 128, 119477259, T, L},  {A, 1, 128, 191457728, R, L},  {A, 1, 128, 269484043, R, P},
      {A, 1, 256, 338433024, T, L},  {A, 1, 256, 410266559, R, L},  {A, 1, 256, 538434414, R, P},
      {G, 1, 4, 12587013, R, P},     {G, 1, 8, 29372429, R, P},     {G, 1, 16, 62943261, R, P},
      {G, 1, 32, 130084925, R, P},   {G, 1, 64, 264368253, R, P},   {G, 1, 128, 532934909, R, P},
      {G, 1, 256, 1070068221, R, P}, {S, 1, 4, 16777216, R, P},     {S, 1, 8, 33554432, R, P},
      {S, 1, 16, 67108864, R, P},    {S, 1, 32, 134217728, R, P},   {S, 1, 64, 268435456, R, P},
      {S, 1, 128, 536870912, R, P},  {S, 1, 256, 1073741824, R, P},
  };
  const auto same = [](const std::optional<nccl::TunerPick>& p, Algo a, Proto q) {
    return p.has_value() && p->algo == a && p->proto == q;
  };
  for (const auto& r : rows) {
    const int ranks = r.per_node * r.nodes;
    const std::string what = std::string(collective_name(r.type)) + " on " + std::to_string(r.nodes) + " nodes x " +
                             std::to_string(r.per_node) + " from " + std::to_string(r.first) + " B";
    EXPECT_TRUE(same(nccl::tuner_pick(nccl::TunerPlugin::kAwsP5, r.type, r.first, ranks, r.nodes), r.algo, r.proto))
        << what;
    if (r.first > 32) {
      EXPECT_FALSE(
          same(nccl::tuner_pick(nccl::TunerPlugin::kAwsP5, r.type, r.first - 1, ranks, r.nodes), r.algo, r.proto))
          << what << ", one byte below";
    }
  }
}

TEST(NcclTuner, AwsP5PicksForADataParallelGroupBesideTensorParallelism) {
  // On 16 dgx-h100 nodes (a p5's shape), NCCL's plan with the plugin for the
  // groups a data-parallel dimension makes: one GPU a node (beside tp 8) and
  // two (beside tp 4), each as the plugin's table says; the same group
  // without the plugin takes NCCL's own model.
  const Topology topo = dgx_h100(16);
  const std::uint64_t MiB = 1 << 20;
  const auto plan = [&](std::uint32_t per_node, CollectiveType type, std::uint64_t bytes, bool tuner) {
    std::vector<std::uint32_t> members;
    for (std::uint32_t node = 0; node < 16; ++node) {
      for (std::uint32_t g = 0; g < per_node; ++g) members.push_back(node * 8 + g * (8 / per_node));
    }
    nccl::Params params;
    if (tuner) params["tuner"] = nccl::param_value("tuner", "aws-p5");
    return nccl::plan(type, bytes, params, *context(topo, members));
  };
  const auto named = [](const nccl::Plan& p) {
    return std::string(nccl::algo_name(p.algo)) + "/" + nccl::proto_name(p.proto);
  };
  EXPECT_EQ(named(plan(1, CollectiveType::kAllReduce, 1 * MiB, true)), "tree/ll128");
  EXPECT_EQ(named(plan(1, CollectiveType::kAllReduce, 8 * MiB, true)), "ring/ll128");
  EXPECT_EQ(named(plan(1, CollectiveType::kAllReduce, 64 * MiB, true)), "ring/simple");
  EXPECT_EQ(named(plan(2, CollectiveType::kAllReduce, 64 * MiB, true)), "ring/ll128");
  EXPECT_EQ(named(plan(2, CollectiveType::kAllReduce, 200 * MiB, true)), "nvlstree/simple");
  // all-gather tunes on the gathered total: 4 MiB a rank is 64 MiB on 16 ranks, in the ring's region.
  EXPECT_EQ(named(plan(1, CollectiveType::kAllGather, 4 * MiB, true)), "ring/simple");
  EXPECT_EQ(named(plan(1, CollectiveType::kReduceScatter, 256 * MiB, true)), "ring/simple");
  // Where NCCL's model chooses otherwise, the plugin's choice is what changed.
  bool differs = false;
  for (const std::uint64_t bytes : {1 * MiB, 8 * MiB, 64 * MiB}) {
    differs = differs || named(plan(1, CollectiveType::kAllReduce, bytes, true)) !=
                             named(plan(1, CollectiveType::kAllReduce, bytes, false));
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace sim
