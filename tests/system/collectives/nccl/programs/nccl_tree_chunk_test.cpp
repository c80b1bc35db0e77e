// NCCL's tree chunk (src/enqueue.cc, calcCollChunking): one slot of the
// connection's buffer, Simple 512 KiB and LL128 576,000 bytes of payload,
// LL128's halved while a channel would get too few chunks for the tree's
// depth in steps, 1 + log2i(nodes) + 0.1 ppn (and before 2.21 Simple's by
// the tree's depth). Checked on the rule's
// thresholds, on what `nccl` plans for four 8-GPU nodes, and on a pipelined
// run's closed form.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/system/test_util.h"
#include "tests/common/sizes.h"
#include "../nccl_test_cluster.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/nccl_protocol.h"

namespace sim {
namespace {

using namespace sim::testing;

// 4 nodes of 8 (ppn 8): nsteps = 1 + 2 + 0.8 = 3.8, so halve while a channel
// gets fewer than 30.4 chunks (and the chunk is above 128 KiB), then while
// fewer than 7.6 (above 32 KiB). On 16 channels: 576,000 B chunks need
// 16 x 576,000 x 31 = 285,696,000 B; 32 MiB gets 72,000 (27 chunks a channel
// after three halvings); 1 MiB gets 18,000.
TEST(NcclTreeChunk, LL128Rule) {
  using nccl::Proto;
  EXPECT_EQ(nccl::tree_chunk(Proto::kLL128, 16 * 576000 * 31, 16, 32, 4), 576000u);
  EXPECT_EQ(nccl::tree_chunk(Proto::kLL128, 16 * 576000 * 31 - 16, 16, 32, 4), 288000u);
  EXPECT_EQ(nccl::tree_chunk(Proto::kLL128, 32 * kMiB, 16, 32, 4), 72000u);
  EXPECT_EQ(nccl::tree_chunk(Proto::kLL128, kMiB, 16, 32, 4), 18000u);
  // One node of 8: nsteps 1.8, thresholds 14.4 and 3.6 chunks.
  EXPECT_EQ(nccl::tree_chunk(Proto::kLL128, 8 * 576000 * 15, 8, 8, 1), 576000u);
  EXPECT_EQ(nccl::tree_chunk(Proto::kLL128, 8 * 576000 * 14, 8, 8, 1), 288000u);
  // Simple: one 512 KiB slot at every size; LL: its step.
  EXPECT_EQ(nccl::tree_chunk(Proto::kSimple, kMiB, 16, 32, 4), 512u * 1024);
  EXPECT_EQ(nccl::tree_chunk(Proto::kSimple, std::uint64_t{8} << 30, 16, 32, 4), 512u * 1024);
  EXPECT_EQ(nccl::tree_chunk(Proto::kLL, 32 * kMiB, 16, 32, 4), nccl::step_payload(Proto::kLL));
}

// Before 2.21 Simple is halved by the tree's depth, ranks per node - 1 +
// log2i(nodes): 9 on 4 nodes of 8. On 16 channels 512 KiB needs 8 x 9 = 72
// chunks a channel (576 MiB); 32 MiB stops at 64 KiB (32 chunks, fewer than
// 4 x 9 but no longer above 64 KiB); 1 MiB gets 32 KiB. 2.21 keeps the slot.
TEST(NcclTreeChunk, SimpleByDepthBefore221) {
  using nccl::Proto;
  const auto chunk = [](std::uint64_t bytes, int version) {
    return nccl::tree_chunk(Proto::kSimple, bytes, 16, 32, 4, nccl::kSimpleBuffer, version);
  };
  EXPECT_EQ(chunk(576 * kMiB, 220), 512u * 1024);
  EXPECT_EQ(chunk(576 * kMiB - 1, 220), 256u * 1024);
  EXPECT_EQ(chunk(288 * kMiB - 1, 220), 128u * 1024);
  EXPECT_EQ(chunk(32 * kMiB, 219), 64u * 1024);
  EXPECT_EQ(chunk(kMiB, 218), 32u * 1024);
  EXPECT_EQ(chunk(kMiB, 221), 512u * 1024);
  const Topology four = nccl_cluster(8, 4, "450GB/s", "50GB/s", "300ns", "1350ns", false, false);
  const nccl::Plan pl = all_reduce_plan(four, 32 * kMiB, {{"algo", kTree}, {"proto", kSimple}, {"version", 220}});
  EXPECT_EQ(pl.model.step_bytes, nccl::tree_chunk(Proto::kSimple, 32 * kMiB, pl.channels, 32, 4, nccl::kSimpleBuffer, 220));
  EXPECT_LT(pl.model.step_bytes, 512u * 1024);
}

TEST(NcclTreeChunk, PlannedAcrossNodes) {
  const Topology four = nccl_cluster(8, 4, "450GB/s", "50GB/s", "300ns", "1350ns", false, false);
  for (const std::uint64_t bytes : {kMiB, 32 * kMiB, std::uint64_t{2} << 30}) {
    const nccl::Plan pl = all_reduce_plan(four, bytes, {{"algo", kTree}, {"proto", kLL128}});
    EXPECT_EQ(pl.model.step_bytes, nccl::tree_chunk(nccl::Proto::kLL128, bytes, pl.channels, 32, 4)) << bytes;
    EXPECT_EQ(pl.model.window, 8u) << bytes;
  }
}

// Two ranks, one channel, Simple, 1 MiB: two 512 KiB chunks. The leaf's
// pacer sends both up back to back; the root sends each down once it has it
// and the hop has passed; the leaf has the last one a hop after it lands:
// base + 3 x pace + 2 x hop. (One chunk of 1 MiB would be base + 4 x pace +
// 2 x hop.)
TEST(NcclTreeChunk, TwoChunksPipelineOnAChain) {
  const Topology topo = parse_topology("shape: Switch\nnpus: 2\nbandwidth: 100000GB/s\nlatency: 0ns\n", "pair");
  const nccl::Params params = {{"algo", kTree}, {"proto", kSimple}, {"channels", 1}};
  const nccl::Plan pl = all_reduce_plan(topo, kMiB, params);
  ASSERT_EQ(pl.model.step_bytes, 512u * 1024);
  const SimulationResult r =
      simulate_collective(topo, CollectiveType::kAllReduce, kMiB, choose_all_reduce("nccl:algo=tree,proto=simple,channels=1"));
  const Time pace = transfer_time(512 * 1024, nccl::wire_rate(pl.model));
  EXPECT_EQ(r.makespan, pl.model.base + 3 * pace + 2 * pl.model.hop_intra);
}

// A connection's slot takes its next chunk two hops after its send
// (nccl_program_parts.h, slot_cycle): with the hop far above a chunk's pace
// the tree's 8 slots a connection set its pace, 8 chunks every 2 hops and a
// pace. Two one-GPU hosts on a leaf, one channel, 16 chunks of 512 KiB and a 200 us
// network hop: the leaf sends chunk j when the pacer is free and chunk
// j - 8's slot has come back; the root sends it down a hop after it lands,
// in turn, once its own slot j - 8 is back; the leaf has it a hop later.
TEST(NcclTreeChunk, ASlotComesBackTwoHopsAfterItsSend) {
  const Topology two = parse_topology(std::string("topology: [Switch]\nnpus_count: [2]\nbandwidth: [") + kFast +
                                          "]\nlatency: [0ns]\nroles: [leaf]\n",
                                      "two-hosts");
  const nccl::Params params = {{"algo", kTree}, {"proto", kSimple}, {"channels", 1}, {"net_latency", 200 * kMicrosecond}};
  const std::uint64_t bytes = 16 * 512 * 1024;
  const nccl::Plan pl = all_reduce_plan(two, bytes, params);
  ASSERT_EQ(pl.model.step_bytes, 512u * 1024);
  ASSERT_EQ(pl.model.window, 8u);
  const Time h = pl.model.hop_inter, pace = transfer_time(512 * 1024, nccl::wire_rate(pl.model));
  ASSERT_EQ(h, 200 * kMicrosecond);
  ASSERT_GT(2 * h, 8 * pace);  // the slots bind
  std::vector<Time> up(16), down(16);
  for (std::size_t j = 0; j < 16; ++j) {
    Time start = std::max(pl.model.base, j > 0 ? up[j - 1] : 0);
    if (j >= 8) start = std::max(start, up[j - 8] + 2 * h);
    up[j] = start + pace;
    start = std::max(up[j] + h, j > 0 ? down[j - 1] : 0);
    if (j >= 8) start = std::max(start, down[j - 8] + 2 * h);
    down[j] = start + pace;
  }
  const SimulationResult r = simulate_collective(
      two, CollectiveType::kAllReduce, bytes,
      choose_all_reduce("nccl:algo=tree,proto=simple,channels=1,net_latency=200us"));
  EXPECT_EQ(r.makespan, down[15] + h);
  // In closed form: the second 8 chunks leave 2 hops after the first, so
  // base + 10 paces + 4 hops, where unbounded slots would take base + 17
  // paces + 2 hops.
  EXPECT_EQ(r.makespan, pl.model.base + 10 * pace + 4 * h);
}

}  // namespace
}  // namespace sim
