// CollNet chain: all-reduce across nodes whose NICs' switches reduce
// (InfiniBand SHARP). Each chunk is reduced up a chain through the node's GPUs
// to the channel's head, the head's rail switch sums every node's copy and
// sends the total down to every head, and the heads broadcast it back down
// their chains. Checked against NCCL's tuning model and its closed form.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/system/test_util.h"
#include "../nccl_test_cluster.h"
#include "report/report.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/nccl_protocol.h"
#include "system/collectives/nccl/model/nccl_system.h"
#include "system/collectives/nccl/model/nccl_tuner.h"
#include "system/collectives/nccl/model/sharp_tree.h"

namespace sim {
namespace {

using namespace sim::testing;

constexpr int kChain = static_cast<int>(nccl::Algo::kCollNetChain);
constexpr int kDirect = static_cast<int>(nccl::Algo::kCollNetDirect);

// tuning.cc on two dgx-h100 whose rail switches reduce: CollNet's graph is
// one channel per NIC-attached GPU at min(NIC 50, NVLink 370.8 / 8) = 46.35
// GB/s; chain: busBw 8 x 46.35 = 370.8, algBw / 2 = 185.4 GB/s; latency
// 2 (8 - 1) x hwLat NVLink 2.8 + hwLat net 30 = 69.2 us.
TEST(NcclCollNet, TunerTable) {
  const nccl::Plan pl = all_reduce_plan(dgx_h100(2, false, true), 1 << 20, {});
  EXPECT_TRUE(pl.system.collnet);
  EXPECT_NEAR(pl.table.bandwidth[kChain][kSimple], 8 * (18 * 20.6 / 8) / 2, 1e-9);
  EXPECT_NEAR(pl.table.latency[kChain][kSimple], 2 * 7 * 2.8 + 30, 1e-9);
  EXPECT_EQ(pl.table.bandwidth[kChain][0], 0);  // Simple only
  // No reduction above the nodes: no CollNet.
  EXPECT_FALSE(all_reduce_plan(dgx_h100(2, false, false), 1 << 20, {}).system.collnet);
}

// NCCL's choice with SHARP (rail switches reduce), node switches without
// NVLS: tree below about 192 KiB, CollNet direct (44 us + S / 157.6 GB/s)
// until CollNet chain (69.2 us + S / 185.4 GB/s) wins at 26.5 MB, chain until
// rings (1.4 x 152.8 us + S / 192 GB/s) win at 780.6 MB and above. With NVLS
// in the nodes too, NVLS with SHARP (41 us + S / 266.7 GB/s) beats NVLS-tree
// (51 us + S / 266.7 GB/s) at every size (nccl_nvls_sharp_test.cpp).
TEST(NcclCollNet, ChoicePerSize) {
  const Topology sharp = dgx_h100(2, false, true);
  const auto name = [&](std::uint64_t bytes) { return all_reduce_plan(sharp, bytes, {}).name; };
  EXPECT_EQ(name(64 << 10), "nccl:tree/ll");
  EXPECT_EQ(name(1 << 20), "nccl:collnetdirect/simple");   // 50.65 us against tree/ll128 59.76
  EXPECT_EQ(name(16 << 20), "nccl:collnetdirect/simple");  // 150.46 us against chain 159.69
  EXPECT_EQ(name(25 << 20), "nccl:collnetdirect/simple");  // 26.2 MB
  EXPECT_EQ(name(26 << 20), "nccl:collnetchain/simple");   // 27.3 MB
  EXPECT_EQ(name(std::uint64_t{700} << 20), "nccl:collnetchain/simple");  // 734 MB
  EXPECT_EQ(name(std::uint64_t{800} << 20), "nccl:ring/simple");          // 839 MB
  const double direct_bw = 8 * (18 * 20.6 / 8) * 0.85 / 2;
  EXPECT_NEAR(all_reduce_plan(sharp, 16 << 20, {}).predicted_us, 2 * (3.7 + 7 * 0.4) + 31 + 16777216 / (1000 * direct_bw),
              1e-9);
  EXPECT_NEAR(all_reduce_plan(sharp, 32 << 20, {}).predicted_us, 69.2 + 33554432 / (1000 * 185.4), 1e-9);
  EXPECT_EQ(all_reduce_plan(dgx_h100(2, true, true), 256 << 20, {}).name, "nccl:nvls/simple");
  // Forced: `collnet` is whichever CollNet NCCL's model prefers.
  const nccl::Params collnet = {{"algo", nccl::param_value("algo", "collnet")}};
  EXPECT_EQ(all_reduce_plan(sharp, std::uint64_t{4} << 30, collnet).name, "nccl:collnetchain/simple");
  EXPECT_EQ(all_reduce_plan(sharp, 1 << 20, collnet).name, "nccl:collnetdirect/simple");
}

// Two nodes of n = 4 GPUs, one channel, one 512 KiB chunk, on a network too
// fast to matter (d: the chunk's time on a link, 1 ps). Channel 0's chain in
// each node runs rails 1, 2, 3, 0 (rail 0 heads it): the chunk reaches the
// head after (n-1) (pace + hop); the head's upload and the switch's sum each
// take d (both heads upload at once); the sum waits the network hop H, then
// goes down the chain (n-1) (pace + hop): 2 (n-1)(pace + hop) + 2d + H (NCCL's
// base latency for CollNet is 0).
TEST(NcclCollNet, ClosedFormChain) {
  const std::uint32_t n = 4;
  const Topology topo = nccl_cluster(n, 2, "1000000000", "1000000000", "0", "0", false, true);
  const std::uint64_t bytes = nccl::chain_step_payload(nccl::Proto::kSimple);
  const nccl::Plan pl = all_reduce_plan(topo, bytes, {{"algo", kChain}, {"channels", 1}});
  const SimulationResult r =
      simulate_collective(topo, CollectiveType::kAllReduce, bytes, choose_all_reduce("nccl:algo=collnetchain,channels=1"));
  const Time p = transfer_time(bytes, nccl::wire_rate(pl.model));
  const Time d = transfer_time(bytes, topo.links()[0].bandwidth);
  EXPECT_EQ(pl.model.base, 0);
  EXPECT_EQ(pl.model.hop_intra, 2'800'000);   // hwLat[NVLINK][COLLNET_CHAIN][Simple]
  EXPECT_EQ(pl.model.hop_inter, 30'000'000);  // hwLat[NET][COLLNET_CHAIN][Simple]
  EXPECT_EQ(r.makespan, 2 * (n - 1) * (p + pl.model.hop_intra) + 2 * d + pl.model.hop_inter);
  EXPECT_EQ(r.collectives[0].algorithm, "nccl:collnetchain/simple");
}

// Two dgx-h100 with SHARP at 1 GiB, CollNet chain forced: NCCL's model 185.4
// GB/s of algorithm bandwidth (busbw x 2 x 15/16 = 347.6 GB/s); the 8 channels
// pace at 46.35 GB/s each, every head's NIC carrying its channel both ways
// (under its 50 GB/s): within 3% of it, the fill of two 8-GPU chains.
TEST(NcclCollNet, TwoDgxH100At1GiB) {
  const std::uint64_t bytes = std::uint64_t{1} << 30;
  for (const char* backend : {"analytical", "flow"}) {
    const SimulationResult r = simulate_collective(dgx_h100(2, false, true), CollectiveType::kAllReduce, bytes,
                                                   choose_all_reduce("nccl:algo=collnet", backend));
    EXPECT_EQ(r.collectives[0].algorithm, "nccl:collnetchain/simple") << backend;
    const double busbw = busbw_gbps(r.collectives[0]);
    EXPECT_NEAR(busbw, 347.6, 0.03 * 347.6) << backend << ": " << busbw;
    EXPECT_LT(busbw, 347.6) << backend;
  }
}

TEST(NcclCollNet, Errors) {
  try {
    simulate_collective(dgx_h100(2, true, false), CollectiveType::kAllReduce, 1 << 20, choose_all_reduce("nccl:algo=collnet"));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("in_network_reduction: true"), std::string::npos) << e.what();
  }
  // Direct needs SHARP too.
  try {
    simulate_collective(dgx_h100(2, true, false), CollectiveType::kAllReduce, 1 << 20,
                        choose_all_reduce("nccl:algo=collnetdirect"));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("collnetdirect needs the switch above each node"), std::string::npos) << e.what();
  }
}

// CollNet direct, two nodes of n = 4 GPUs, one channel, one loop (n shards of
// 128 KiB, NCCL's smallest chunk per head), a network too fast to matter: each GPU's scatter of the n-1 other
// shards goes through its pacer one after another ((n-1) p), the last one
// reaching its head one hop later; the head's upload and the switch's sum (2d),
// the network hop H, and the head's n-1 copies down, one pace apart, each
// waiting a hop: base + 2(n-1) p + 2 hop + 2d + H, base = NCCL's 0.4 us per
// peer of the fan, twice. With memory bandwidth the head's read of its own
// addend holds its upload instead of d.
TEST(NcclCollNet, ClosedFormDirect) {
  const std::uint32_t n = 4;
  const Topology topo = nccl_cluster(n, 2, "1000000000", "1000000000", "0", "0", false, true);
  const std::uint64_t shard = 128 << 10;
  const std::uint64_t bytes = n * shard;
  const nccl::Plan pl = all_reduce_plan(topo, bytes, {{"algo", kDirect}, {"channels", 1}});
  ASSERT_EQ(pl.name, "nccl:collnetdirect/simple");
  const char* const text = "nccl:algo=collnetdirect,channels=1";
  const SimulationResult r = simulate_collective(topo, CollectiveType::kAllReduce, bytes, choose_all_reduce(text));
  const Time p = transfer_time(shard, nccl::wire_rate(pl.model));
  const Time d = transfer_time(shard, topo.links()[0].bandwidth);
  EXPECT_EQ(pl.model.base, 2 * (n - 1) * 400'000);  // 0.4 us per peer of the fan, in and out
  EXPECT_EQ(pl.model.hop_intra, 3'700'000);          // hwLat[NVLINK][COLLNET_DIRECT][Simple]
  EXPECT_EQ(pl.model.hop_inter, 31'000'000);         // hwLat[NET][COLLNET_DIRECT][Simple]
  const Time free_form = pl.model.base + 2 * (n - 1) * p + 2 * pl.model.hop_intra + 2 * d + pl.model.hop_inter;
  EXPECT_EQ(r.makespan, free_form);
  EXPECT_EQ(r.collectives[0].algorithm, "nccl:collnetdirect/simple");
  // NCCL's modelled latency is the deepest path's fixed part.
  EXPECT_NEAR(pl.table.latency[kDirect][kSimple] * 1e6,
              static_cast<double>(pl.model.base + 2 * pl.model.hop_intra + pl.model.hop_inter), 1.0);
  // The head's read of its addend (1 TB/s, one channel) holds its SHARP upload.
  SystemConfig with_hbm = choose_all_reduce(text);
  with_hbm.compute_memory_bandwidth = 1'000'000'000'000;
  with_hbm.compute_l2_bytes = bytes - 1;
  const SimulationResult costed = simulate_collective(topo, CollectiveType::kAllReduce, bytes, with_hbm);
  EXPECT_EQ(costed.makespan, free_form - d + transfer_time(shard, 1'000'000'000'000));
  with_hbm.compute_l2_bytes = bytes;  // inside the L2: free
  EXPECT_EQ(simulate_collective(topo, CollectiveType::kAllReduce, bytes, with_hbm).makespan, free_form);
}

// One GPU per node (a data-parallel line: GPU 0 of each of 4 nodes, their
// rail switch reducing): no scatter and no broadcast, every GPU uploads each
// loop's buffer to the rail switch and receives the total, nothing on NVLink.
TEST(NcclCollNet, DirectWithOneGpuPerNode) {
  const Topology topo = nccl_cluster(2, 4, "450", "50", "500", "1000", false, true);
  auto members = std::make_shared<std::vector<std::uint32_t>>(std::vector<std::uint32_t>{0, 2, 4, 6});
  const std::uint64_t bytes = 2 << 20;  // NCCL's chunk halves to 128 KiB (fewer than 64 loops): 16 loops
  const auto ctx = make_algorithm_context(members, &topo);
  const nccl::Params params = {{"algo", kDirect}, {"channels", 1}};
  const auto prog = nccl::make_program(CollectiveType::kAllReduce, bytes, params, *ctx);
  EXPECT_EQ(prog->name(), "nccl:collnetdirect/simple");
  const nccl::SharpTree fabric = nccl::sharp_tree(*ctx);
  ASSERT_EQ(fabric.depth(), 1u);
  const NodeId rail = fabric.levels[0][0];
  for (std::uint32_t p = 0; p < 4; ++p) {
    std::map<OpKind, int> kinds;
    for_each_op(*prog, p, [&](OpRef, const CollectiveOp& o) {
      ++kinds[o.kind];
      if (o.kind == OpKind::kSwitchReduce) {
        EXPECT_EQ(o.node, rail);
        EXPECT_EQ(o.peer, kSwitchPeer);
        EXPECT_EQ(o.rate, 0);  // no addend read without a scatter: NCCL's plain send to the network
      }
      return true;
    });
    EXPECT_EQ(kinds[OpKind::kSend], 0) << p;
    EXPECT_EQ(kinds[OpKind::kSwitchReduce], 16) << p;
    EXPECT_EQ(kinds[OpKind::kRecv], 16) << p;
  }
}

// Two dgx-h100 with SHARP at 1 GiB, CollNet direct forced: NCCL's model 8 x
// 46.35 GB/s x 0.85 (Hopper) x 1/2 = 157.6 GB/s of algorithm bandwidth (busbw
// x 2 x 15/16 = 295.5 GB/s); each GPU's 8 channels pace its scatter and
// broadcast (2 x 7/8 of the buffer over NVLink) to that, its NIC carries 1/8
// up and down: within 3% of NCCL's model, under it (the pipeline's fill).
TEST(NcclCollNet, TwoDgxH100DirectAt1GiB) {
  const std::uint64_t bytes = std::uint64_t{1} << 30;
  const nccl::Plan pl = all_reduce_plan(dgx_h100(2, false, true), bytes, {{"algo", kDirect}});
  EXPECT_NEAR(pl.table.bandwidth[kDirect][kSimple], 8 * (18 * 20.6 / 8) * 0.85 / 2, 1e-9);
  EXPECT_NEAR(pl.table.latency[kDirect][kSimple], 2 * (3.7 + 7 * 0.4) + 31, 1e-9);
  for (const char* backend : {"analytical", "flow"}) {
    const SimulationResult r = simulate_collective(dgx_h100(2, false, true), CollectiveType::kAllReduce, bytes,
                                                   choose_all_reduce("nccl:algo=collnetdirect", backend));
    EXPECT_EQ(r.collectives[0].algorithm, "nccl:collnetdirect/simple") << backend;
    const double busbw = busbw_gbps(r.collectives[0]);
    EXPECT_NEAR(busbw, 295.5, 0.03 * 295.5) << backend << ": " << busbw;
    EXPECT_LT(busbw, 295.5) << backend;
  }
  // At 16 MiB, where `nccl` chooses it: NCCL's predicted 150.46 us within 2%
  // (NCCL's 128 KiB chunks: 2 loops per channel; simulated 149.44 us).
  const std::uint64_t mid = 16 << 20;
  const nccl::Plan at_mid = all_reduce_plan(dgx_h100(2, false, true), mid, {});
  ASSERT_EQ(at_mid.name, "nccl:collnetdirect/simple");
  const SimulationResult r =
      simulate_collective(dgx_h100(2, false, true), CollectiveType::kAllReduce, mid, choose_all_reduce("nccl"));
  EXPECT_NEAR(static_cast<double>(r.makespan) / 1e6, at_mid.predicted_us, 0.02 * at_mid.predicted_us);
}

}  // namespace
}  // namespace sim
