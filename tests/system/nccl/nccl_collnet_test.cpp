// CollNet chain: all-reduce across nodes whose NICs' switches reduce
// (InfiniBand SHARP). Each chunk is reduced up a chain through the node's GPUs
// to the channel's head, the head's rail switch sums every node's copy and
// sends the total down to every head, and the heads broadcast it back down
// their chains. Checked against NCCL's tuning model and its closed form.
#include <gtest/gtest.h>

#include <string>

#include "../test_util.h"
#include "nccl_test_cluster.h"
#include "report/report.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/nccl_protocol.h"
#include "system/collectives/nccl/nccl_system.h"
#include "system/collectives/nccl/nccl_tuner.h"

namespace sim {
namespace {

using namespace sim::testing;

Topology dgx_h100(std::uint32_t nodes, bool node_reduces, bool rail_reduces) {
  return nccl_cluster(8, nodes, "450", "50", "500", "1000", node_reduces, rail_reduces);
}

constexpr int kChain = static_cast<int>(nccl::Algo::kCollNetChain);
constexpr int kSimple = static_cast<int>(nccl::Proto::kSimple);

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
// NVLS: tree below 16 MiB, CollNet chain (69.2 us + S / 185.4 GB/s) from 16
// MiB until rings (1.4 x 152.8 us + S / 192 GB/s) win at 780.6 MB and above.
// With NVLS in the nodes too, NVLS-tree (51 us + S / 266.7 GB/s) wins above 1 MiB.
TEST(NcclCollNet, ChoicePerSize) {
  const Topology sharp = dgx_h100(2, false, true);
  const auto name = [&](std::uint64_t bytes) { return all_reduce_plan(sharp, bytes, {}).name; };
  EXPECT_EQ(name(1 << 20), "nccl:tree/ll128");
  EXPECT_EQ(name(16 << 20), "nccl:collnetchain/simple");
  EXPECT_EQ(name(std::uint64_t{700} << 20), "nccl:collnetchain/simple");  // 734 MB
  EXPECT_EQ(name(std::uint64_t{800} << 20), "nccl:ring/simple");          // 839 MB
  EXPECT_NEAR(all_reduce_plan(sharp, 16 << 20, {}).predicted_us, 69.2 + 16777216 / (1000 * 185.4), 1e-9);
  EXPECT_EQ(all_reduce_plan(dgx_h100(2, true, true), 256 << 20, {}).name, "nccl:nvlstree/simple");
  // Forced: `collnet` is whichever CollNet NCCL's model prefers (chain: direct is not simulated).
  EXPECT_EQ(all_reduce_plan(sharp, std::uint64_t{4} << 30, {{"algo", nccl::param_value("algo", "collnet")}}).name,
            "nccl:collnetchain/simple");
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
  // Direct is tuned, not simulated.
  EXPECT_THROW(simulate_collective(dgx_h100(2, false, true), CollectiveType::kAllReduce, 1 << 20,
                                   choose_all_reduce("nccl:algo=collnetdirect")),
               InputError);
}

}  // namespace
}  // namespace sim
