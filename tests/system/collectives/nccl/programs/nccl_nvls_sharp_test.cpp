// NVLS across nodes with SHARP (NCCL's NCCL_ALGO_NVLS on several nodes, run
// where CollNet runs): each node's NVSwitch reduces the GPUs' copies of every
// shard into its owner, the owners upload their node's sum to their rail
// switch, which sums every node's and sends the total back (SHARP), and each
// owner multicasts it into its node. Checked against NCCL's tuning model
// (table and choice), its closed form, and NCCL's modelled bandwidth.
#include <gtest/gtest.h>

#include <string>

#include "tests/system/test_util.h"
#include "../nccl_test_cluster.h"
#include "report/report.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/nccl_protocol.h"
#include "system/collectives/nccl/model/nccl_tuner.h"

namespace sim {
namespace {

using namespace sim::testing;

// tuning.cc: NVLS's bandwidth min(bwIntra, bwInter) x channels x 5/6 = 8 x
// min(40, 48) x 5/6 = 266.7 GB/s on 2 and 4 nodes (NVLS-tree: the same on 2,
// bwInter / 2 = 24 on 4: 160 GB/s); latency hwLat NVLink 23 + hwLat net 18 =
// 41 us. Enabled only with CollNet.
TEST(NcclNvlsSharp, TunerTable) {
  for (const std::uint32_t nodes : {2u, 4u}) {
    const nccl::Plan pl = all_reduce_plan(dgx_h100(nodes, true, true), 1 << 20, {});
    EXPECT_TRUE(pl.system.collnet && pl.system.nvls);
    EXPECT_NEAR(pl.table.bandwidth[kNvls][kSimple], 8 * 40.0 * 5 / 6, 1e-9) << nodes;
    EXPECT_NEAR(pl.table.latency[kNvls][kSimple], 23 + 18.0, 1e-9) << nodes;
    EXPECT_NEAR(pl.table.bandwidth[kNvlsTree][kSimple], 8 * (nodes == 2 ? 40.0 : 24.0) * 5 / 6, 1e-9) << nodes;
    // Without SHARP NCCL disables NVLS across nodes.
    EXPECT_EQ(all_reduce_plan(dgx_h100(nodes, true, false), 1 << 20, {}).table.bandwidth[kNvls][kSimple], 0) << nodes;
  }
}

// NCCL's choice with both marks. Two nodes: tree/LL (6.8 + 2 (7 x 0.6 + 5)
// = 25.2 us; min(llMaxBw 39.0, 331.2 / 3.8) / 2 = 19.5 GB/s x the tree
// correction, 0.5 from 128 KiB) up to 156 KiB (25.2 + 159744 / 9750 = 41.58
// us against NVLS's 41.60), then NVLS (41 us + S / 266.7 GB/s) at every larger
// size: it beats NVLS-tree (51 us, the same bandwidth), CollNet direct (44 us
// + S / 157.6), the chain (69.2 us + S / 185.4) and rings (192 GB/s). Four
// nodes: tree/LL (35.2 us, llMaxBw 20.4 / 2 = 10.2 GB/s x 0.7) up to 41 KiB
// (41.08 us against 41.16), NVLS from 42 KiB (41.16 against 41.22); NVLS keeps
// 266.7 GB/s where NVLS-tree has 160 and rings 185.8.
TEST(NcclNvlsSharp, ChoicePerSize) {
  for (const std::uint32_t nodes : {2u, 4u}) {
    SCOPED_TRACE(nodes);
    const Topology topo = dgx_h100(nodes, true, true);
    const auto name = [&](std::uint64_t bytes) { return all_reduce_plan(topo, bytes, {}).name; };
    const std::uint64_t last_tree = nodes == 2 ? 156 << 10 : 41 << 10;
    EXPECT_EQ(name(4096), "nccl:tree/ll");
    EXPECT_EQ(name(last_tree), "nccl:tree/ll");
    EXPECT_EQ(name(last_tree + 1024), "nccl:nvls/simple");
    for (const std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{16} << 20, std::uint64_t{256} << 20,
                                      std::uint64_t{4} << 30}) {
      const nccl::Plan pl = all_reduce_plan(topo, bytes, {});
      EXPECT_EQ(pl.name, "nccl:nvls/simple") << bytes;
      EXPECT_NEAR(pl.predicted_us, 41 + static_cast<double>(bytes) / (1000 * 8 * 40.0 * 5 / 6), 1e-9) << bytes;
      // Each other algorithm's time in NCCL's model is larger.
      for (int a = 0; a < nccl::kAlgos; ++a) {
        if (a == kNvls) continue;
        for (int p = 0; p < nccl::kProtos; ++p) {
          const double t = nccl::algo_time(pl.input, pl.table, static_cast<nccl::Algo>(a), static_cast<nccl::Proto>(p), bytes);
          if (t >= 0) {
            EXPECT_GT(t, pl.predicted_us) << bytes << " " << a << "/" << p;
          }
        }
      }
    }
  }
}

// Two nodes of n = 4 GPUs, one channel, one round (16 KiB shards, NCCL's
// NVLS chunk there), a network too fast to matter (d: a shard's time on a
// link). GPU x uploads its n shards one pace p apart; its node's sum comes
// down at base + (x+1) p + d; its upload to the rail switch and the switch's
// sum down take 2d (both nodes' owners upload at once); the network hop H;
// its multicast p and d down. The last owner (x = n-1) ends the collective:
// base + (n+1) p + 4d + H, with base the NVLink hop (23 us) and H the
// network's (18 us): NCCL's 41 us. (NVLS-tree's is base + (n+1) p + 4d + 2H.)
TEST(NcclNvlsSharp, ClosedFormTwoNodes) {
  const std::uint32_t n = 4;
  const Topology topo = nccl_cluster(n, 2, "1000000000", "1000000000", "0", "0", true, true);
  const std::uint64_t shard = 16 * 1024;
  const std::uint64_t bytes = shard * n;
  const nccl::Plan pl = all_reduce_plan(topo, bytes, {{"algo", kNvls}, {"channels", 1}});
  ASSERT_EQ(pl.name, "nccl:nvls/simple");
  ASSERT_EQ(pl.model.step_bytes, shard);
  ASSERT_EQ(nccl::nvls_chunk(bytes, n, 2, pl.table.bandwidth[kNvls][kSimple]), shard);
  const SimulationResult r =
      simulate_collective(topo, CollectiveType::kAllReduce, bytes, choose_all_reduce("nccl:algo=nvls,channels=1"));
  const Time p = transfer_time(shard, nccl::wire_rate(pl.model));
  const Time d = transfer_time(shard, topo.links()[0].bandwidth);
  const Time H = pl.model.hop_inter;
  EXPECT_EQ(pl.model.base, 23'000'000);  // hwLat[NVLINK][NVLS][Simple]
  EXPECT_EQ(H, 18'000'000);              // hwLat[NET][NVLS][Simple]
  EXPECT_EQ(r.makespan, pl.model.base + (n + 1) * p + 4 * d + H);
  EXPECT_EQ(r.collectives[0].algorithm, "nccl:nvls/simple");
}

// Two and four dgx-h100 with SHARP at 4 GiB: NCCL's model 266.7 GB/s of
// algorithm bandwidth, nccl-tests' busbw x 2 (N-1)/N = 500 GB/s (2 nodes),
// 516.7 (4 nodes); the simulation streams within 2% under it. Each GPU's NIC
// carries an eighth of the buffer each way, 33 of its 50 GB/s.
TEST(NcclNvlsSharp, DgxH100At4GiB) {
  const std::uint64_t bytes = std::uint64_t{4} << 30;
  for (const std::uint32_t nodes : {2u, 4u}) {
    const double model = 8 * 40.0 * 5 / 6 * 2 * (8.0 * nodes - 1) / (8.0 * nodes);
    for (const char* backend : {"analytical", "flow"}) {
      const SimulationResult r = simulate_collective(dgx_h100(nodes, true, true), CollectiveType::kAllReduce, bytes,
                                                     choose_all_reduce("nccl", backend));
      EXPECT_EQ(r.collectives[0].algorithm, "nccl:nvls/simple") << backend;
      const double busbw = busbw_gbps(r.collectives[0]);
      EXPECT_NEAR(busbw, model, 0.02 * model) << nodes << " " << backend << ": " << busbw;
      EXPECT_LT(busbw, model) << nodes << " " << backend;
    }
  }
}

TEST(NcclNvlsSharp, Errors) {
  const auto message = [](const Topology& topo, CollectiveType type, const std::string& text) {
    SystemConfig c;
    c.algorithms[type] = text;
    try {
      simulate_collective(topo, type, 1 << 20, c);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // NVLS in the nodes, no SHARP: NCCL runs NVLS-tree across nodes, not NVLS.
  const std::string no_sharp = message(dgx_h100(2, true, false), CollectiveType::kAllReduce, "nccl:algo=nvls");
  EXPECT_NE(no_sharp.find("nccl:algo=nvls on 2 nodes needs the network to reduce"), std::string::npos) << no_sharp;
  EXPECT_NE(no_sharp.find("in_network_reduction: true"), std::string::npos) << no_sharp;
  // SHARP without NVLS in the nodes.
  const std::string no_nvls = message(dgx_h100(2, false, true), CollectiveType::kAllReduce, "nccl:algo=nvls");
  EXPECT_NE(no_nvls.find("nvls needs the group's switch to reduce and multicast"), std::string::npos) << no_nvls;
  // All-gather across nodes: NCCL 2.19 has single-node NVLS all-gather only.
  const std::string gather = message(dgx_h100(2, true, true), CollectiveType::kAllGather, "nccl:algo=nvls");
  EXPECT_NE(gather.find("nvls for ALL_GATHER on 2 nodes is not simulated"), std::string::npos) << gather;
}

}  // namespace
}  // namespace sim
