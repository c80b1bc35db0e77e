// NVLS-tree: all-reduce across nodes whose NVSwitches reduce. Inside each
// node the switch reduces the GPUs' copies of each shard into its owner (as
// NVLS), the owners of a shard in every node reduce it up a binary tree over
// the network and broadcast it down, and each owner multicasts the total into
// its node. Checked against NCCL's search and tuning model and its closed form.
#include <gtest/gtest.h>

#include <string>

#include "tests/system/test_util.h"
#include "../nccl_test_cluster.h"
#include "report/report.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/nccl_protocol.h"
#include "system/collectives/nccl/model/nccl_system.h"
#include "system/collectives/nccl/model/nccl_tuner.h"

namespace sim {
namespace {

using namespace sim::testing;

// NCCL's NVLS search with NICs: the inter-node speed list (48, 45, 42, 40, ...):
// 8 channels of s need s x 9 <= 370.8 GB/s: 40; then pass 2 raises bwInter
// while below 2 x 40, as far as one 50 GB/s NIC per head carries: 48.
TEST(NcclNvlsTree, SearchAcrossNodes) {
  for (const int nodes : {2, 4}) {
    const auto g = nccl::search_graphs(nccl::Arch::kHopper, 8 * nodes, nodes, 18 * 20.6, 50, true, false);
    EXPECT_EQ(g[kNvlsTree].channels, 8);
    EXPECT_DOUBLE_EQ(g[kNvlsTree].bw_intra, 40.0);
    EXPECT_DOUBLE_EQ(g[kNvlsTree].bw_inter, 48.0);
  }
  // A 25 GB/s NIC caps bwInter at the list's first speed below it: 24.
  const auto slow = nccl::search_graphs(nccl::Arch::kHopper, 16, 2, 18 * 20.6, 25, true, false);
  EXPECT_DOUBLE_EQ(slow[kNvlsTree].bw_inter, 24.0);
}

// tuning.cc: NVLS-tree bw = min(bwIntra, bwInter on 2 nodes, bwInter / 2
// beyond), x channels x 5/6; latency = hwLat NVLink 23 + 2 log2(nodes) x hwLat net 14.
TEST(NcclNvlsTree, TunerTable) {
  nccl::TuneInput in;
  in.type = CollectiveType::kAllReduce;
  in.arch = nccl::Arch::kHopper;
  for (const int nodes : {2, 4}) {
    in.ranks = 8 * nodes;
    in.nodes = nodes;
    in.graphs = nccl::search_graphs(nccl::Arch::kHopper, in.ranks, nodes, 18 * 20.6, 50, true, false);
    const nccl::TuneTable t = nccl::tune(in);
    EXPECT_NEAR(t.bandwidth[kNvlsTree][kSimple], (nodes == 2 ? 8 * 40.0 : 8 * 24.0) * 5 / 6, 1e-9) << nodes;
    EXPECT_NEAR(t.latency[kNvlsTree][kSimple], 23 + 2 * (nodes == 2 ? 1 : 2) * 14.0, 1e-9) << nodes;
    EXPECT_EQ(t.bandwidth[kNvlsTree][0], 0);  // Simple only
    // From NCCL 2.21 on the NVLink hop is 25 us.
    in.version = 221;
    EXPECT_NEAR(nccl::tune(in).latency[kNvlsTree][kSimple], 25 + 2 * (nodes == 2 ? 1 : 2) * 14.0, 1e-9) << nodes;
    in.version = nccl::kDefaultTablesVersion;
  }
}

// NCCL's choice on two dgx-h100 (16 GPUs): tree/LL for small sizes (the
// least latency across nodes), NVLS-tree (51 us + S / 266.7 GB/s) from 1 MiB on.
TEST(NcclNvlsTree, ChoicePerSizeOnTwoDgxH100) {
  const Topology topo = dgx_h100(2);
  const auto name = [&](std::uint64_t bytes) { return all_reduce_plan(topo, bytes, {}).name; };
  EXPECT_EQ(name(64 << 10), "nccl:tree/ll");
  EXPECT_EQ(name(1 << 20), "nccl:nvlstree/simple");
  EXPECT_EQ(name(std::uint64_t{4} << 30), "nccl:nvlstree/simple");
  const nccl::Plan pl = all_reduce_plan(topo, 1 << 20, {});
  EXPECT_NEAR(pl.predicted_us, 51 + 1048576 / (1000 * 320.0 * 5 / 6), 1e-9);
  // Without reduction in the node switches NCCL has no NVLS graph: rings
  // (16 x 22.5 GB/s x 16/30 = 192 GB/s) beat trees (x .92 / 2 = 165.6 GB/s).
  EXPECT_EQ(all_reduce_plan(dgx_h100(2, false), std::uint64_t{4} << 30, {}).name, "nccl:ring/simple");
  // Four nodes halve NVLS-tree's network bandwidth (bwInter / 2): 160 GB/s
  // against the ring's 16 x 22.5 x 32/62 = 185.8 GB/s, so rings win large sizes.
  EXPECT_EQ(all_reduce_plan(dgx_h100(4), std::uint64_t{1} << 30, {}).name, "nccl:ring/simple");
}

// Two nodes of n = 4 GPUs, one channel, one round (a 32 KiB shard per GPU),
// on a network too fast to matter (d = a shard's time on a link, 1 ps).
// GPU x (rail x) uploads its 4 shards one pace p apart; the node's sum of
// shard x comes down at base + (x+1) p + d in both nodes. Channel 0's tree has
// node 0 at the root: node 1's owner sends its sum up (d), node 0's waits the
// network hop H, has the total and sends it down (d), node 1's waits H. Each
// owner then multicasts (p, then d down): node 1's last owner (x = 3) ends
// the collective at base + (x+1) p + d + 2d + 2H + p + d = base + (n+1) p + 4d + 2H.
// 2H (28 us) > (n-1) p (2.0 us): the multicasts leave one pace apart, never
// queueing at the switch's ports.
TEST(NcclNvlsTree, ClosedFormTwoNodes) {
  const std::uint32_t n = 4;
  const Topology topo = nccl_cluster(n, 2, "1000000000", "1000000000", "0", "0", true, false);
  // One round: NCCL's NVLS-tree chunk for 4 x 32 KiB on 4 ops is 32 KiB (below 1 x 4 x 64 KiB).
  const std::uint64_t shard = 32 * 1024;
  const std::uint64_t bytes = shard * n;
  ASSERT_EQ(nccl::nvls_tree_chunk(bytes, n, 2), shard);
  const nccl::Plan pl = all_reduce_plan(topo, bytes, {{"algo", kNvlsTree}, {"channels", 1}});
  const SimulationResult r = simulate_collective(topo, CollectiveType::kAllReduce, bytes, choose_all_reduce("nccl:algo=nvlstree,channels=1"));
  const Time p = transfer_time(shard, nccl::wire_rate(pl.model));
  const Time d = transfer_time(shard, topo.links()[0].bandwidth);
  const Time H = pl.model.hop_inter;
  EXPECT_EQ(H, 14'000'000);           // hwLat[NET][NVLS_TREE][Simple]
  EXPECT_EQ(pl.model.base, 23'000'000);  // hwLat[NVLINK][NVLS_TREE][Simple]
  EXPECT_GT(2 * H, static_cast<Time>(n - 1) * p);
  EXPECT_EQ(r.makespan, pl.model.base + (n + 1) * p + 4 * d + 2 * H);
  EXPECT_EQ(r.collectives[0].algorithm, "nccl:nvlstree/simple");
}

// The same with NVLS's copy warps (`copy_bw`): each GPU first copies its
// round (the whole buffer: one round) into the NVLS buffer, C = bytes at the
// channel's copy rate, and after the last shard's total has come down copies
// it out, C again: base + 2C + (n+1) p + 4d + 2H. The copy rate is copy_bw
// over NCCL's 16 NVLS-tree channels, as the switch's pace is its share of
// NCCL's bandwidth: one forced channel copies a sixteenth.
TEST(NcclNvlsTree, ClosedFormTwoNodesWithCopies) {
  const std::uint32_t n = 4;
  const Topology topo = nccl_cluster(n, 2, "1000000000", "1000000000", "0", "0", true, false);
  const std::uint64_t shard = 32 * 1024, bytes = shard * n;
  const nccl::Params params = {{"algo", kNvlsTree}, {"channels", 1}, {"copy_bw", 16'000'000'000}};
  const nccl::Plan pl = all_reduce_plan(topo, bytes, params);
  ASSERT_EQ(pl.model.copy_rate, 1'000'000'000);
  const SimulationResult r = simulate_collective(topo, CollectiveType::kAllReduce, bytes,
                                                 choose_all_reduce("nccl:algo=nvlstree,channels=1,copy_bw=16GB/s"));
  const Time p = transfer_time(shard, nccl::wire_rate(pl.model));
  const Time d = transfer_time(shard, topo.links()[0].bandwidth);
  const Time C = transfer_time(bytes, pl.model.copy_rate);
  EXPECT_EQ(C, 131'072'000);
  EXPECT_EQ(r.makespan, pl.model.base + 2 * C + (n + 1) * p + 4 * d + 2 * pl.model.hop_inter);
  // A copy_bw below NCCL's 16 channels in B/s is a copy of 1 B/s, not none
  // (a rate truncated to 0 turned the copies off), and rounds: 24 B/s is 2 B/s a channel, not 1.
  for (const auto& [bw, rate] : {std::pair<std::uint64_t, BytesPerSecond>{15, 1}, {24, 2}}) {
    nccl::Params slow = params;
    slow["copy_bw"] = bw;
    EXPECT_EQ(all_reduce_plan(topo, bytes, slow).model.copy_rate, rate) << bw;
  }
}

// A platform's NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE set the
// shard (`nvls_chunk`, `nvlstree_max_chunk`): the same 128 KiB on 16 KiB
// shards is two rounds. Each GPU uploads round 0's n shards, then round 1's,
// one pace p' apart; the last owner (x = n - 1) of node 1 has round 1's node
// sum at base + (2n) p' + d, then up and down the tree (2d + 2H) and its
// multicast (p' + d; round 0's left its pacer long before, 2H >> p'):
// base + (2n + 1) p' + 4d + 2H.
//
// With NVLS's copies (`copy_bw`) slower than the switch, the scatter paces
// the uploads (round 0's copy ends at base + C, round 1's at base + 2C, each
// then followed by its n uploads, p' apart). Round 0's last total comes down
// at base + C + (n+1) p' + 4d + 2H and its copy out ends C later, just as
// round 1's last total comes down; round 1's copy out then ends the
// collective: base + 3C + (n+1) p' + 4d + 2H, C a round's copy.
TEST(NcclNvlsTree, ClosedFormTwoNodesPlatformChunk) {
  const std::uint32_t n = 4;
  const Topology topo = nccl_cluster(n, 2, "1000000000", "1000000000", "0", "0", true, false);
  const std::uint64_t shard = 16 * 1024, bytes = 32 * 1024 * n;
  const std::string chunks = "nccl:algo=nvlstree,channels=1,nvls_chunk=16KiB,nvlstree_max_chunk=16KiB";
  nccl::Params params = {{"algo", kNvlsTree}, {"channels", 1}, {"nvls_chunk", shard}, {"nvlstree_max_chunk", shard}};
  const nccl::Plan pl = all_reduce_plan(topo, bytes, params);
  ASSERT_EQ(pl.model.step_bytes, shard);
  const Time p = transfer_time(shard, nccl::wire_rate(pl.model));
  const Time d = transfer_time(shard, topo.links()[0].bandwidth);
  const Time H = pl.model.hop_inter;
  EXPECT_GT(2 * H, static_cast<Time>(2 * n) * p);
  const SimulationResult r = simulate_collective(topo, CollectiveType::kAllReduce, bytes, choose_all_reduce(chunks));
  EXPECT_EQ(r.makespan, pl.model.base + (2 * n + 1) * p + 4 * d + 2 * H);

  params["copy_bw"] = 16'000'000'000;
  const nccl::Plan copying = all_reduce_plan(topo, bytes, params);
  ASSERT_EQ(copying.model.copy_rate, 1'000'000'000);
  const Time C = transfer_time(shard * n, copying.model.copy_rate);
  EXPECT_GT(C, n * p);  // the copies set the pace
  const SimulationResult c =
      simulate_collective(topo, CollectiveType::kAllReduce, bytes, choose_all_reduce(chunks + ",copy_bw=16GB/s"));
  EXPECT_EQ(c.makespan, pl.model.base + 3 * C + (n + 1) * p + 4 * d + 2 * H);
}

// Two dgx-h100 at 4 GiB: NCCL's model gives NVLS-tree 8 x 40 GB/s x 5/6 =
// 266.7 GB/s of algorithm bandwidth, nccl-tests' busbw x 2 x 15/16 = 500 GB/s;
// the simulation streams within 2% of it (pipeline fill, 51 us latency), the
// NICs (an eighth of the buffer each way per GPU) never the bottleneck.
TEST(NcclNvlsTree, TwoDgxH100At4GiB) {
  const std::uint64_t bytes = std::uint64_t{4} << 30;
  for (const char* backend : {"analytical", "flow"}) {
    const SimulationResult r = simulate_collective(dgx_h100(2), CollectiveType::kAllReduce, bytes, choose_all_reduce("nccl", backend));
    EXPECT_EQ(r.collectives[0].algorithm, "nccl:nvlstree/simple") << backend;
    const double busbw = busbw_gbps(r.collectives[0]);
    EXPECT_NEAR(busbw, 500, 10) << backend << ": " << busbw;
    EXPECT_LT(busbw, 500) << backend;
  }
}

TEST(NcclNvlsTree, Errors) {
  // One node: NCCL runs NVLS there, not NVLS-tree.
  try {
    simulate_collective(parse_topology("shape: Switch\nnpus: 8\nbandwidth: 450GB/s\nlatency: 500ns\n"
                                       "in_network_reduction: true\n",
                                       "node"),
                        CollectiveType::kAllReduce, 1 << 20, choose_all_reduce("nccl:algo=nvlstree"));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nvlstree for ALL_REDUCE on 1 node is not simulated"), std::string::npos) << e.what();
  }
  try {
    simulate_collective(dgx_h100(2, false), CollectiveType::kAllReduce, 1 << 20, choose_all_reduce("nccl:algo=nvlstree"));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("in_network_reduction: true"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sim
