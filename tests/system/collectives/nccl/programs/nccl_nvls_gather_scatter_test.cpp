// NVLS all-gather and reduce-scatter inside one node (NCCL_ALGO_NVLS for
// ncclAllGather / ncclReduceScatter): each equals its closed form on a network
// too fast to matter, takes NCCL's modelled time on the dgx-h100 node, and
// NCCL's choice picks it exactly where NCCL's model says (between about 2 and
// 3.9 MB of nBytes on a dgx-h100: 23 us + S / 266.7 GB/s against the ring's
// LL and LL128).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/system/collectives/nccl/nccl_test_cluster.h"
#include "tests/system/test_util.h"
#include "report/report.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/nccl_protocol.h"

namespace sim {
namespace {

using namespace sim::testing;
using T = CollectiveType;

// dgx_h100_node() (nccl_test_cluster.h) is the dgx-h100 preset's node. On
// kFast links a 128 KiB shard crosses a link in 0 ps.

// One round of one channel: each GPU stores its shard to the switch (p, the
// channel's pace), the switch's port down to each GPU sends it the n copies
// one after another (n d, d a shard's time on a link).
TEST(NcclNvlsGatherScatter, AllGatherClosedForm) {
  const std::uint32_t n = 8;
  for (const char* bw : {kFast, "450GB/s"}) {
    SCOPED_TRACE(bw);
    const Topology topo = node(n, bw, "0ns", true);
    const std::uint64_t shard = 16384;  // sim's all-gather size: each rank's input; NCCL's chunk at 128 KiB of nBytes
    const nccl::Plan pl = plan_for(topo, T::kAllGather, shard, {{"algo", kNvls}, {"channels", 1}});
    ASSERT_EQ(pl.model.step_bytes, shard);  // one round
    const SimulationResult r = simulate_collective(topo, T::kAllGather, shard, choose(T::kAllGather, "nccl:algo=nvls,channels=1"));
    const Time p = transfer_time(shard, nccl::wire_rate(pl.model));
    const Time d = transfer_time(shard, topo.links()[0].bandwidth);
    EXPECT_EQ(r.makespan, pl.model.base + p + n * d);
    EXPECT_EQ(r.collectives[0].algorithm, "nccl:nvls/simple");
  }
}

// One round of one channel: each GPU uploads its copy of the n shards one
// after another (n p); the last shard's sum comes down to its owner (d).
TEST(NcclNvlsGatherScatter, ReduceScatterClosedForm) {
  const std::uint32_t n = 8;
  for (const char* bw : {kFast, "450GB/s"}) {
    SCOPED_TRACE(bw);
    const Topology topo = node(n, bw, "0ns", true);
    const std::uint64_t shard = 16384;
    const std::uint64_t bytes = shard * n;  // sim's reduce-scatter size: the whole input
    const nccl::Plan pl = plan_for(topo, T::kReduceScatter, bytes, {{"algo", kNvls}, {"channels", 1}});
    ASSERT_EQ(pl.model.step_bytes, shard);  // one round
    const SimulationResult r =
        simulate_collective(topo, T::kReduceScatter, bytes, choose(T::kReduceScatter, "nccl:algo=nvls,channels=1"));
    const Time p = transfer_time(shard, nccl::wire_rate(pl.model));
    const Time d = transfer_time(shard, topo.links()[0].bandwidth);
    EXPECT_EQ(r.makespan, pl.model.base + n * p + d);
    EXPECT_EQ(r.collectives[0].algorithm, "nccl:nvls/simple");
  }
}

// On the dgx-h100 node, forced NVLS takes NCCL's modelled time (23 us + nBytes
// / (8 x 40 x 5/6 GB/s)), to the pipeline's fill and the links' 500 ns, plus,
// for all-gather, its last round's burst: every channel of every GPU ends its
// paced store at the same instant and the switch's port down to a GPU then
// carries n x channels copies of a round's shard at 450 GB/s (the engine
// paces a switch operation, then the network carries it).
TEST(NcclNvlsGatherScatter, DgxH100TakesNcclsModelledTime) {
  const Topology topo = dgx_h100_node();
  for (const std::uint64_t n_bytes : {std::uint64_t{3} << 20, std::uint64_t{64} << 20, std::uint64_t{1} << 30}) {
    for (const T type : {T::kAllGather, T::kReduceScatter}) {
      SCOPED_TRACE(std::to_string(n_bytes) + (type == T::kAllGather ? " all-gather" : " reduce-scatter"));
      const std::uint64_t bytes = type == T::kAllGather ? n_bytes / 8 : n_bytes;
      const nccl::Plan pl = plan_for(topo, type, bytes, {{"algo", kNvls}});
      EXPECT_EQ(pl.channels, 8u);
      const double model_us = 23 + static_cast<double>(n_bytes) / (1000 * 8 * 40 * 5.0 / 6);
      EXPECT_NEAR(pl.predicted_us, model_us, 1e-6);
      const SimulationResult r = simulate_collective(topo, type, bytes, choose(type, "nccl:algo=nvls"));
      EXPECT_EQ(r.collectives[0].algorithm, "nccl:nvls/simple");
      const double us_ = static_cast<double>(r.makespan) / 1e6;
      double burst_us = 0;
      if (type == T::kAllGather) {
        const std::uint64_t share = bytes / 8;  // per channel
        const std::uint64_t chunk = nccl::nvls_chunk(n_bytes, 8 * 8);
        const std::uint64_t rounds = std::min<std::uint64_t>((share + chunk - 1) / chunk, 256);
        burst_us = 8.0 * 8 * static_cast<double>(share) / static_cast<double>(rounds) / 450e3;
      }
      EXPECT_GE(us_, model_us);
      EXPECT_NEAR(us_, model_us + burst_us, 0.015 * model_us + 1);
    }
  }
}

// NCCL's NVLS chunk by nBytes (src/enqueue.cc) on a dgx-h100: 8 channels x 8 heads = 64 concurrent ops.
TEST(NcclNvlsGatherScatter, ChunkFollowsNcclsThresholds) {
  EXPECT_EQ(nccl::nvls_chunk(3'000'000, 64), 16384u);
  EXPECT_EQ(nccl::nvls_chunk(std::uint64_t{4} << 20, 64), 32768u);  // 2 x 64 x 32 KiB
  EXPECT_EQ(nccl::nvls_chunk(std::uint64_t{16} << 20, 64), 32768u);
  EXPECT_EQ(nccl::nvls_chunk(std::uint64_t{32} << 20, 64), 65536u);  // 8 x 64 x 64 KiB
  EXPECT_EQ(nccl::nvls_chunk((std::uint64_t{512} << 20) - 1, 64), 65536u);
  EXPECT_EQ(nccl::nvls_chunk(std::uint64_t{512} << 20, 64), 131072u);  // 64 x 64 x 128 KiB
  const Topology topo = dgx_h100_node();
  EXPECT_EQ(plan_for(topo, T::kReduceScatter, 3'000'000, {{"algo", kNvls}}).model.step_bytes, 16384u);
  EXPECT_EQ(plan_for(topo, T::kAllGather, std::uint64_t{128} << 20, {{"algo", kNvls}}).model.step_bytes, 131072u);
}

// NCCL's choice on the dgx-h100 node, on nBytes: NVLS (23 us + S / 266.7 GB/s)
// beats the ring's LL (100.2 GB/s, 10.8 us) above about 2.0 MB and loses to
// its LL128 (0.92 x 360 x 8/7 = 378.5 GB/s, 27.3 us) above about 3.9 MB.
TEST(NcclNvlsGatherScatter, NcclChoosesNvlsBetweenItsCrossovers) {
  const Topology topo = dgx_h100_node();
  // NCCL's one-node ring on 12 x 30 GB/s, 7 steps (algBw = busBw x 8/7): LL min(llMaxBw 87.7, busBw / 3),
  // LL128 busBw x 0.92; latency baseLat + 7 hops.
  const double nvls_bw = 8 * 40 * 5.0 / 6, ll_bw = std::min(87.7, 360.0 / 3) * 8 / 7;
  const double ll128_bw = 0.92 * 360 * 8 / 7;
  const double ll_lat = 6.6 + 0.6 * 7, ll128_lat = 14 + 1.9 * 7;
  // Crossovers of NCCL's lines: lat_a + S / (1000 bw_a) = lat_b + S / (1000 bw_b).
  const double low = (23 - ll_lat) * 1000 / (1 / ll_bw - 1 / nvls_bw);
  const double high = (23 - ll128_lat) * 1000 / (1 / ll128_bw - 1 / nvls_bw);
  EXPECT_NEAR(low / 1e6, 2.0, 0.05);
  EXPECT_NEAR(high / 1e6, 3.9, 0.05);
  const struct {
    double n_bytes;
    const char* chosen;
  } cases[] = {{0.97 * low, "nccl:ring/ll"},
               {1.03 * low, "nccl:nvls/simple"},
               {0.97 * high, "nccl:nvls/simple"},
               {1.03 * high, "nccl:ring/ll128"}};
  for (const auto& c : cases) {
    const auto n_bytes = static_cast<std::uint64_t>(c.n_bytes) / 8 * 8;
    SCOPED_TRACE(n_bytes);
    for (const T type : {T::kAllGather, T::kReduceScatter}) {
      const std::uint64_t bytes = type == T::kAllGather ? n_bytes / 8 : n_bytes;
      const SimulationResult r = simulate_collective(topo, type, bytes, choose(type, "nccl"));
      EXPECT_EQ(r.collectives[0].algorithm, c.chosen) << (type == T::kAllGather ? "all-gather" : "reduce-scatter");
    }
  }
  // NCCL 2.21's tables: LL at min(141, 360 / 2) x 8/7 = 161.1 GB/s from 10.8
  // us and NVLS at 25 us, so LL runs until LL128 (27.3 us, 378.5 GB/s) is
  // faster, at 4.6 MB, and NCCL runs NVLS here only when asked.
  for (const T type : {T::kAllGather, T::kReduceScatter}) {
    const std::uint64_t bytes = type == T::kAllGather ? 3'000'000 / 8 : 3'000'000;
    const SimulationResult r = simulate_collective(topo, type, bytes, choose(type, "nccl:version=2.21"));
    EXPECT_EQ(r.collectives[0].algorithm, "nccl:ring/ll");
  }
}

// NVLS needs the node's switch to reduce (an all-gather too: the multicast
// object is the same NVLS buffer), and runs inside one node only.
TEST(NcclNvlsGatherScatter, NeedsAReducingSwitch) {
  for (const T type : {T::kAllGather, T::kReduceScatter}) {
    try {
      simulate_collective(node(8, "450GB/s", "500ns", false), type, 1 << 20, choose(type, "nccl:algo=nvls"));
      FAIL() << "expected an InputError";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("in_network_reduction: true"), std::string::npos) << e.what();
    }
    // Without reduction NCCL's choice keeps the ring where NVLS would win (3 MB of nBytes).
    const std::uint64_t bytes = type == T::kAllGather ? 3'000'000 / 8 : 3'000'000;
    EXPECT_EQ(simulate_collective(node(8, "450GB/s", "500ns", false), type, bytes, choose(type, "nccl"))
                  .collectives[0]
                  .algorithm.rfind("nccl:ring/", 0),
              0u);
  }
}

}  // namespace
}  // namespace sim
