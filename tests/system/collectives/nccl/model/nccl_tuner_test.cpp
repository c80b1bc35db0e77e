// NCCL's tuning model: the search's graphs and the table of latencies and
// bandwidths on documented cases, worked out by hand from NCCL's constants
// (docs/nccl.md), and the choice per size.
#include <gtest/gtest.h>

#include "system/collectives/nccl/model/nccl_system.h"
#include "system/collectives/nccl/model/nccl_tuner.h"
#include "tests/system/collectives/nccl/nccl_indices.h"

namespace sim::nccl {
namespace {

using testing::kLL;
using testing::kLL128;
using testing::kNvls;
using testing::kRing;
using testing::kSimple;
using testing::kTree;

// 8 H100 on NVSwitch: 18 NVLink4 per GPU, NCCL counts 20.6 GB/s each = 370.8 GB/s.
// NCCL 2.20's tables unless `version` says otherwise.
TuneInput dgx_h100_input(bool nvls, int version = 220) {
  TuneInput in;
  in.version = version;
  in.type = CollectiveType::kAllReduce;
  in.ranks = 8;
  in.nodes = 1;
  in.arch = Arch::kHopper;
  in.graphs = search_graphs(Arch::kHopper, 8, 1, 18 * 20.6, 0, nvls, false);
  return in;
}

TEST(NcclSearch, DgxH100Graphs) {
  const auto g = search_graphs(Arch::kHopper, 8, 1, 18 * 20.6, 0, true, false);
  // Ring: 60 GB/s is the first speed <= 370.8; 6 channels fit (360); >= 25 GB/s
  // channels are doubled at half speed: 12 x 30.
  EXPECT_EQ(g[kRing].channels, 12);
  EXPECT_DOUBLE_EQ(g[kRing].bw_intra, 30.0);
  EXPECT_EQ(g[kTree].channels, 12);
  EXPECT_DOUBLE_EQ(g[kTree].bw_intra, 30.0);
  // NVLS: one channel per GPU, each taking speed x (8 + 1) of a GPU's 370.8: 40 GB/s.
  EXPECT_EQ(g[kNvls].channels, 8);
  EXPECT_DOUBLE_EQ(g[kNvls].bw_intra, 40.0);
  EXPECT_EQ(g[static_cast<int>(Algo::kNvlsTree)].channels, 0);  // one node
}

TEST(NcclSearch, TwoDgxH100Rings) {
  // 16 GPUs, 400 Gb/s (50 GB/s) NIC per GPU: the inter-node speeds; 45 GB/s
  // fills 8 NICs and 8 x 45 = 360 of the NVLink. Hopper keeps more than 4
  // channels below 50 GB/s as found (ncclTopoDupChannels): 8 x 45, which
  // NCCL's kernels run on 16 CTAs.
  const auto g = search_graphs(Arch::kHopper, 16, 2, 18 * 20.6, 50, false, false);
  EXPECT_EQ(g[kRing].channels, 8);
  EXPECT_DOUBLE_EQ(g[kRing].bw_intra, 45);
  EXPECT_EQ(run_channels(g, Arch::kHopper, 16, 2), 16);
  // Ampere (12 NVLinks of 20 GB/s to NCCL) splits any graph of 25 GB/s or
  // more: 5 x 48 found (8 x 30 is no more), run as 10 x 24 on 20 CTAs.
  const auto a = search_graphs(Arch::kAmpere, 16, 2, 12 * 20.0, 50, false, false);
  EXPECT_EQ(a[kRing].channels, 10);
  EXPECT_DOUBLE_EQ(a[kRing].bw_intra, 24);
  EXPECT_EQ(run_channels(a, Arch::kAmpere, 16, 2), 20);
}

// The CTAs a ring or tree runs on (connect.cc, ncclTopoPostset): twice the
// fewer of the ring's and the tree's search channels, at most 64; on Hopper
// across nodes twice again while below 16 if the ring runs above 45 GB/s.
TEST(NcclSearch, RunChannelsFromTheGraphs) {
  std::array<Graph, kAlgos> g{};
  g[kRing].channels = 12;
  g[kRing].bw_intra = 30;
  g[kTree].channels = 12;
  EXPECT_EQ(run_channels(g, Arch::kHopper, 8, 1), 24);  // one dgx-h100: 12 x 30 found
  g[kTree].channels = 6;
  EXPECT_EQ(run_channels(g, Arch::kHopper, 8, 1), 12);  // the fewer of the two
  g[kRing].channels = g[kTree].channels = 4;
  g[kRing].bw_intra = 48;
  EXPECT_EQ(run_channels(g, Arch::kHopper, 16, 2), 16);  // 8, doubled again across nodes
  EXPECT_EQ(run_channels(g, Arch::kHopper, 8, 1), 8);    // not on one node
  EXPECT_EQ(run_channels(g, Arch::kAmpere, 16, 2), 8);   // nor before Hopper
  g[kRing].bw_intra = 45;
  EXPECT_EQ(run_channels(g, Arch::kHopper, 16, 2), 8);   // nor at 45 GB/s
  g[kRing].channels = g[kTree].channels = 32;
  EXPECT_EQ(run_channels(g, Arch::kAmpere, 8, 1), 64);   // MAXCHANNELS
}

TEST(NcclTuner, DgxH100AllReduceTable) {
  const TuneInput in = dgx_h100_input(true);
  const TuneTable t = tune(in);
  // Ring: busBw 12 x 30 = 360, to algBw x 8/14; LL min(87.7, 360/4); LL128 x 0.92.
  EXPECT_NEAR(t.bandwidth[kRing][kLL], 87.7 * 8 / 14, 1e-9);
  EXPECT_NEAR(t.bandwidth[kRing][kLL128], 360 * 0.92 * 8 / 14, 1e-9);
  EXPECT_NEAR(t.bandwidth[kRing][kSimple], 360.0 * 8 / 14, 1e-9);
  // Latencies: base + 14 steps x NVLink hop.
  EXPECT_NEAR(t.latency[kRing][kLL], 6.6 + 14 * 0.6, 1e-9);
  EXPECT_NEAR(t.latency[kRing][kLL128], 14.0 + 14 * 1.9, 1e-9);
  EXPECT_NEAR(t.latency[kRing][kSimple], 8.4 + 14 * 3.4, 1e-9);
  // Tree: min(360 x .92, 12 x 38.7) = 331.2; LL / 3.8; LL128 x 7/9; algBw x 1/2.
  EXPECT_NEAR(t.bandwidth[kTree][kLL], 331.2 / 3.8 / 2, 1e-9);
  EXPECT_NEAR(t.bandwidth[kTree][kLL128], 331.2 * 7 / 9 / 2, 1e-9);
  EXPECT_NEAR(t.bandwidth[kTree][kSimple], 331.2 / 2, 1e-9);
  EXPECT_NEAR(t.latency[kTree][kSimple], 2 * 7 * 28.0, 1e-9);
  // NVLS: 8 x 40 x 5/6, 23 us, Simple only.
  EXPECT_NEAR(t.bandwidth[kNvls][kSimple], 320.0 * 5 / 6, 1e-9);
  EXPECT_NEAR(t.latency[kNvls][kSimple], 23.0, 1e-9);
  EXPECT_EQ(t.bandwidth[kNvls][kLL], 0);
}

std::string chosen(const TuneInput& in, std::uint64_t bytes) {
  const TuneTable t = tune(in);
  std::array<bool, kAlgos> all;
  all.fill(true);
  const Choice c = choose(in, t, bytes, all);
  return std::string(algo_name(c.algo)) + "/" + proto_name(c.proto);
}

TEST(NcclTuner, DgxH100ChoicePerSize) {
  const TuneInput in = dgx_h100_input(true);
  // 64 KiB: ring LL 15.0 + 65536 / 50114 = 16.31 us beats tree LL (x .6
  // correction: 17.7 us) and NVLS (23.25 us).
  EXPECT_EQ(chosen(in, 1024), "ring/ll");
  EXPECT_EQ(chosen(in, 64 << 10), "ring/ll");
  // 1 MiB: NVLS 23 + 3.93 = 26.9 us; ring LL 35.9 us.
  EXPECT_EQ(chosen(in, 1 << 20), "nvls/simple");
  EXPECT_EQ(chosen(in, std::uint64_t{4} << 30), "nvls/simple");
}

TEST(NcclTuner, DgxH100WithoutNvlsChoicePerSize) {
  const TuneInput in = dgx_h100_input(false);
  EXPECT_EQ(chosen(in, 1 << 20), "ring/ll");      // 35.9 us; tree LL128 45.1, ring LL128 46.1
  EXPECT_EQ(chosen(in, 16 << 20), "ring/ll128");  // 129.3 us; Simple 137.6
  // LL128 and Simple cross where 15.4 us = S (1/189.257 - 1/205.714) / 1000: 36.4 MB.
  EXPECT_EQ(chosen(in, 32 << 20), "ring/ll128");
  EXPECT_EQ(chosen(in, 64 << 20), "ring/simple");
  EXPECT_NEAR(algo_time(in, tune(in), Algo::kRing, Proto::kSimple, 256 << 20), 56.0 + 268435456 / (1000 * 360.0 * 8 / 14),
              1e-6);
}

TEST(NcclTuner, OtherCollectivesRunRingOrNvls) {
  TuneInput in = dgx_h100_input(true);
  in.type = CollectiveType::kAllGather;
  const TuneTable t = tune(in);
  EXPECT_EQ(t.bandwidth[kTree][kSimple], 0);
  // All-gather ring: 7 steps, algBw = busBw x 8/7; LL not / 4 but / 3 on one node.
  EXPECT_NEAR(t.bandwidth[kRing][kSimple], 360.0 * 8 / 7, 1e-9);
  EXPECT_NEAR(t.bandwidth[kRing][kLL], std::min(87.7, 360.0 / 3) * 8 / 7, 1e-9);
  EXPECT_NEAR(t.latency[kRing][kSimple], 8.4 + 7 * 3.4, 1e-9);
}

// What NCCL 2.21 changed (tuning.cc of 2.21.5): ring LL at half the bus
// bandwidth under Hopper's one-node cap of 141 GB/s, and NVLS's NVLink hop 25 us.
TEST(NcclTuner, Release221RingLlAndNvlsLatency) {
  const TuneTable t = tune(dgx_h100_input(true, 221));
  EXPECT_NEAR(t.bandwidth[kRing][kLL], 141.0 * 8 / 14, 1e-9);  // min(141, 360 / 2)
  EXPECT_NEAR(t.latency[kNvls][kSimple], 25.0, 1e-9);
  EXPECT_NEAR(t.latency[kTree][kSimple], 2 * 7 * 28.0, 1e-9);  // 2.23's change, not yet
  // 1 MiB now runs ring LL: 15.0 + 1048576 / 80571 = 28.0 us against NVLS's
  // 25 + 3.9 = 28.9 (2.20: NVLS, 26.9 us against ring LL's 35.9).
  EXPECT_EQ(chosen(dgx_h100_input(true, 221), 1 << 20), "ring/ll");
  EXPECT_EQ(chosen(dgx_h100_input(true, 220), 1 << 20), "nvls/simple");
}

// What NCCL 2.23 changed (2.23.4), kept through 2.27: tree/Simple's latencies
// (8.4 us base, 4 us an NVLink hop, 14 us a network hop), and a ring
// all-reduce's steps across the network counted as 2 (nodes - 1).
// An all-reduce over `nodes` H100 nodes of `ranks / nodes` GPUs, 50 GB/s NICs, without NVLS.
TuneInput across_nodes(int ranks, int nodes, int version) {
  TuneInput in;
  in.version = version;
  in.type = CollectiveType::kAllReduce;
  in.ranks = ranks;
  in.nodes = nodes;
  in.graphs = search_graphs(Arch::kHopper, ranks, nodes, 18 * 20.6, 50, false, false);
  return in;
}

TEST(NcclTuner, Release223TreeSimpleAndRingNetworkSteps) {
  const TuneTable old = tune(across_nodes(16, 2, 220));
  const TuneTable now = tune(across_nodes(16, 2, 227));
  // Ring/Simple: 30 steps, max(3.4, 3 x 1.0 net overhead) inside a node, 14 across.
  EXPECT_NEAR(old.latency[kRing][kSimple], 8.4 + 26 * 3.4 + 4 * 14.0, 1e-9);
  EXPECT_NEAR(now.latency[kRing][kSimple], 8.4 + 28 * 3.4 + 2 * 14.0, 1e-9);
  // Tree/Simple: the chain of 8 GPUs and one network level, up and down.
  EXPECT_NEAR(old.latency[kTree][kSimple], 2 * (7 * 28.0 + 28.0), 1e-9);
  EXPECT_NEAR(now.latency[kTree][kSimple], 8.4 + 2 * (7 * 4.0 + 14.0), 1e-9);
  EXPECT_DOUBLE_EQ(now.bandwidth[kTree][kSimple], old.bandwidth[kTree][kSimple]);
}

// One GPU per node (2.23): ring LL128 at 0.92 of the bus bandwidth (2.20: 0.7),
// and every algorithm's network hop is the tree's.
TEST(NcclTuner, Release223OneGpuPerNode) {
  const TuneInput in = across_nodes(4, 4, 223);
  const TuneTable old = tune(across_nodes(4, 4, 220));
  const TuneTable now = tune(in);
  const Graph& ring = in.graphs[kRing];
  ASSERT_GT(ring.channels, 0);
  const double bus = ring.channels * ring.bw_inter;
  EXPECT_NEAR(old.bandwidth[kRing][kLL128], std::min(bus * 0.7, ring.channels * 36.7) * 4 / 6, 1e-9);
  EXPECT_NEAR(now.bandwidth[kRing][kLL128], std::min(bus * 0.92, ring.channels * 36.7) * 4 / 6, 1e-9);
  // 6 steps, all across the network, at the tree's LL128 network hop (8.5 us).
  EXPECT_NEAR(now.latency[kRing][kLL128], 14.0 + 6 * 8.5, 1e-9);
}

}  // namespace
}  // namespace sim::nccl
