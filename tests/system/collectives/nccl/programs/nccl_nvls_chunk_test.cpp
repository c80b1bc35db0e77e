// NCCL's NVLS and NVLS-tree chunk by size (src/enqueue.cc, calcCollChunking):
// in NCCL, NVLS all-reduce takes the same rule as NVLS all-gather and
// reduce-scatter (the branch is per algorithm, not per collective), NVLS-tree
// its own. `nccl` follows it but for NVLS all-reduce on one node, which keeps
// 128 KiB (nccl_algorithm.cpp, docs/nccl.md "nvls" say why). Checked on the
// rule's thresholds and on what `nccl` plans for dgx-h100 nodes.
#include <gtest/gtest.h>

#include <string>

#include "tests/system/test_util.h"
#include "tests/common/sizes.h"
#include "../nccl_test_cluster.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/nccl_protocol.h"

namespace sim {
namespace {

using namespace sim::testing;

// NVLS-tree: 128 KiB (64 KiB from 4 nodes), 64 KiB below 4 x ops x chunk,
// 32 KiB below 1 x ops x 64 KiB. Two dgx-h100 (8 channels x 8 heads = 64
// ops): 32 MiB and 4 MiB.
TEST(NcclNvlsChunk, TreeRule) {
  EXPECT_EQ(nccl::nvls_tree_chunk(32 * kMiB, 64, 2), 131072u);
  EXPECT_EQ(nccl::nvls_tree_chunk(32 * kMiB - 1, 64, 2), 65536u);
  EXPECT_EQ(nccl::nvls_tree_chunk(4 * kMiB, 64, 2), 65536u);
  EXPECT_EQ(nccl::nvls_tree_chunk(4 * kMiB - 1, 64, 2), 32768u);
  EXPECT_EQ(nccl::nvls_tree_chunk(std::uint64_t{4} << 30, 64, 4), 65536u);  // NVLSTREE_MAX_CHUNKSIZE's default
  EXPECT_EQ(nccl::nvls_tree_chunk(4 * kMiB - 1, 64, 4), 32768u);
}

// NVLS across nodes: at most 32 KiB when NCCL's NVLS all-reduce bandwidth is below 150 GB/s.
TEST(NcclNvlsChunk, AcrossNodesCap) {
  EXPECT_EQ(nccl::nvls_chunk(std::uint64_t{4} << 30, 64, 2, 266.7), 131072u);
  EXPECT_EQ(nccl::nvls_chunk(std::uint64_t{4} << 30, 64, 2, 149.9), 32768u);
  EXPECT_EQ(nccl::nvls_chunk(std::uint64_t{4} << 30, 64, 1, 149.9), 131072u);  // one node: no cap
  EXPECT_EQ(nccl::nvls_chunk(kMiB, 64, 2, 149.9), 16384u);
}

// What `nccl` plans. NVLS all-reduce on one dgx-h100 node: 128 KiB at every
// size, where NCCL's rule by nBytes would give 16 KiB below 4 MiB, 32 KiB
// below 32 MiB, 64 KiB below 512 MiB. NVLS with SHARP on two nodes: NCCL's
// rule (NVLS's 266.7 GB/s is over 150, so no 32 KiB cap). NVLS-tree on two
// nodes: 32 KiB below 4 MiB, 64 KiB below 32 MiB, 128 KiB beyond.
TEST(NcclNvlsChunk, PlannedSteps) {
  const Topology node = parse_topology(
      "shape: Switch\nnpus: 8\nbandwidth: 450GB/s\nlatency: 500ns\nin_network_reduction: true\n", "dgx-h100");
  const std::pair<std::uint64_t, std::uint64_t> by_rule[] = {
      {kMiB, 16384}, {16 * kMiB, 32768}, {256 * kMiB, 65536}, {std::uint64_t{4} << 30, 131072}};
  for (const auto& [bytes, chunk] : by_rule) {
    EXPECT_EQ(nccl::nvls_chunk(bytes, 64), chunk) << bytes;
    const nccl::Plan pl = all_reduce_plan(node, bytes, {{"algo", kNvls}});
    EXPECT_EQ(pl.model.step_bytes, nccl::kNvlsChunk) << bytes;
  }
  const Topology sharp = nccl_cluster(8, 2, "450", "50", "500", "1000", true, true);
  for (const auto& [bytes, chunk] : by_rule) {
    const nccl::Plan pl = all_reduce_plan(sharp, bytes, {{"algo", kNvls}});
    EXPECT_EQ(pl.model.step_bytes, chunk) << bytes;
  }
  const Topology two = nccl_cluster(8, 2, "450", "50", "500", "1000", true, false);
  const std::pair<std::uint64_t, std::uint64_t> two_nodes[] = {
      {kMiB, 32768}, {16 * kMiB, 65536}, {256 * kMiB, 131072}, {std::uint64_t{4} << 30, 131072}};
  for (const auto& [bytes, chunk] : two_nodes) {
    const nccl::Plan pl = all_reduce_plan(two, bytes, {{"algo", kNvlsTree}});
    EXPECT_EQ(pl.model.step_bytes, chunk) << bytes;
  }
}

}  // namespace
}  // namespace sim
