// NCCL's broadcast and reduce: ring pipelines (a chain along each channel's
// ring from the root), the protocol chosen per size by NCCL's tuning model
// (ring only, nccl-tests' busbw = algbw), each equal to its closed form.
#include <gtest/gtest.h>

#include <string>

#include "tests/system/collectives/nccl/nccl_test_cluster.h"
#include "tests/system/test_util.h"
#include "report/report.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/nccl_protocol.h"
#include "system/collectives/nccl/model/nccl_system.h"
#include "system/collectives/nccl/model/nccl_tuner.h"

namespace sim {
namespace {

using namespace sim::testing;

constexpr CollectiveType kBroadcast = CollectiveType::kBroadcast;
constexpr CollectiveType kReduce = CollectiveType::kReduce;

// kFast links (nccl_test_cluster.h), no latency: a 512 KiB message crosses a link in 1 ps.

std::string proto_text(std::uint64_t p) { return nccl::proto_name(static_cast<nccl::Proto>(p)); }

// One channel, k chunks of the protocol's step. The chain's head sends chunk
// j at its pace; every other rank receives it, waits the hop latency and
// forwards it, its pacer free by then (chunks arrive one pace apart). The
// last rank has chunk 0 after (n-1) (pace + hop) and the others one pace
// apart: base + (n-1)(pace + hop) + (k-1) pace. The network's 1 ps a message
// hides under the pace (a message is delivered when its pacer is through).
TEST(NcclChainClosedForm, OneChannelPipeline) {
  for (const CollectiveType type : {kBroadcast, kReduce}) {
    for (const std::uint64_t proto : {kSimple, kLL, kLL128}) {
      for (const std::uint64_t k : {1, 2, 5}) {
        const std::uint32_t n = 6;
        const Topology topo = node(n, kFast, "0ns");
        const std::uint64_t step = nccl::chain_step_payload(static_cast<nccl::Proto>(proto));
        const std::uint64_t bytes = step * k;
        const std::string text = "nccl:algo=ring,proto=" + proto_text(proto) + ",channels=1";
        const nccl::Plan pl = plan_for(topo, type, bytes, {{"proto", proto}, {"channels", 1}});
        const SimulationResult r = simulate_collective(topo, type, bytes, choose(type, text));
        const Time pace = transfer_time(nccl::wire_bytes(pl.proto, step), nccl::wire_rate(pl.model));
        const std::string at = std::string(collective_name(type)) + " " + text + " k=" + std::to_string(k);
        EXPECT_EQ(r.makespan, pl.model.base + (n - 1) * (pace + pl.model.hop_intra) +
                                  static_cast<Time>(k - 1) * pace)
            << at;
        EXPECT_EQ(r.collectives[0].algorithm, "nccl:ring/" + proto_text(proto)) << at;
        // NCCL's constants: ring base latency and NVLink hop of the protocol.
        EXPECT_EQ(pl.model.base, static_cast<Time>(std::llround(
                                     nccl::base_latency(nccl::Algo::kRing, static_cast<nccl::Proto>(proto), nccl::kDefaultTablesVersion) * 1e6)))
            << at;
      }
    }
  }
}

// Channels run side by side: 4 channels of one chunk each take what one does.
TEST(NcclChainClosedForm, ChannelsSideBySide) {
  const std::uint32_t n = 8;
  const Topology topo = node(n, kFast, "0ns");
  const std::uint64_t bytes = 4 * nccl::chain_step_payload(nccl::Proto::kSimple);
  const nccl::Plan pl = plan_for(topo, kBroadcast, bytes, {{"proto", kSimple}, {"channels", 4}});
  const SimulationResult r =
      simulate_collective(topo, kBroadcast, bytes, choose(kBroadcast, "nccl:proto=simple,channels=4"));
  const Time pace = transfer_time(bytes / 4, nccl::wire_rate(pl.model));
  EXPECT_EQ(r.makespan, pl.model.base + (n - 1) * (pace + pl.model.hop_intra));
}

// dgx-h100 node: 8 GPUs, 450 GB/s per GPU and direction, 500 ns links; its NVSwitch does not reduce.
Topology plain_dgx_h100_node() { return node(8, "450GB/s", "500ns"); }

// NCCL's pipeline on a real node: NCCL's ring search finds 12 channels of 30
// GB/s, its kernels run 24 CTAs (twice the search's), each at 15 GB/s, 64
// chunks of 512 KiB each. The network (1 us and 1.2 us of transfer a hop, 24
// channels' messages through one 450 GB/s port) stays under the 35 us pace of
// a chunk, so the closed form holds exactly here too.
TEST(NcclChainDgxH100, BroadcastPipelineClosedForm) {
  const std::uint64_t chunk = nccl::chain_step_payload(nccl::Proto::kSimple);
  const std::uint64_t bytes = 24 * 64 * chunk;  // 768 MiB
  const std::uint32_t n = 8;
  for (const CollectiveType type : {kBroadcast, kReduce}) {
    const nccl::Plan pl = plan_for(plain_dgx_h100_node(), type, bytes, {});
    ASSERT_EQ(pl.name, "nccl:ring/simple");
    ASSERT_EQ(pl.channels, 24u);
    EXPECT_EQ(pl.model.channel_rate, 15'000'000'000);  // NCCL's busBw 12 x 30 GB/s over 24 CTAs, algBw = busBw (n/n steps)
    const SimulationResult r = simulate_collective(plain_dgx_h100_node(), type, bytes, choose(type, "nccl"));
    const Time pace = transfer_time(chunk, nccl::wire_rate(pl.model));
    EXPECT_EQ(r.makespan, pl.model.base + (n - 1) * (pace + pl.model.hop_intra) + 63 * pace) << collective_name(type);
    // The collective's record times its first member, the root: a
    // broadcast's root is done when its last chunk has left (base + 64
    // paces), a reduce's when the last sum arrived (the makespan).
    const Time root_done = type == kBroadcast ? pl.model.base + 64 * pace : r.makespan;
    EXPECT_EQ(r.collectives[0].duration, root_done) << collective_name(type);
    // nccl-tests' busbw for broadcast and reduce is algbw (factor 1).
    EXPECT_NEAR(busbw_gbps(r.collectives[0]), algbw_gbps(r.collectives[0]), 1e-9);
    // The whole pipeline: 7 hops of fill (38.4 us each) against 2.2 ms of streaming.
    EXPECT_NEAR(static_cast<double>(bytes) / (static_cast<double>(r.makespan) / kSecond) / 1e9, 324.9, 0.1);
  }
  // The flow backend shares the port among the 24 channels' flows: within 1%.
  const SimulationResult f =
      simulate_collective(plain_dgx_h100_node(), kBroadcast, bytes, choose(kBroadcast, "nccl", "flow"));
  const SimulationResult a = simulate_collective(plain_dgx_h100_node(), kBroadcast, bytes, choose(kBroadcast, "nccl"));
  EXPECT_NEAR(static_cast<double>(f.makespan), static_cast<double>(a.makespan), 0.01 * static_cast<double>(a.makespan));
}

// Across nodes a channel's step between two GPUs of one node goes at NCCL's
// ceiling for one channel of the protocol (ring LL128: perChMaxRingLL128Bw,
// 36.7 GB/s on Hopper), a step to another node at the channel's share of the
// network (NCCL's modelled bandwidth per channel). Two nodes of two GPUs
// (NVLink 450 GB/s, a 12.5 GB/s NIC each, no latency): the broadcast's chain
// 0 -> 1 -> 2 -> 3 has two NVLink steps and one network step, each chunk
// after the first one slowest pace behind: base + 2 (NVLink pace + hop) +
// (network pace + hop) + (k - 1) network pace.
TEST(NcclChainClosedForm, NvlinkAndNetworkPacesAcrossNodes) {
  const Topology topo = nccl_cluster(2, 2, "450", "12.5", "0", "0", false, false);
  for (const std::uint64_t k : {1, 3}) {
    const std::uint64_t step = nccl::chain_step_payload(nccl::Proto::kLL128);
    const std::uint64_t bytes = k * step;
    const nccl::Params params = {{"proto", kLL128}, {"channels", 1}};
    const nccl::Plan pl = plan_for(topo, kBroadcast, bytes, params);
    ASSERT_EQ(pl.name, "nccl:ring/ll128");
    EXPECT_EQ(pl.model.intra_rate, 36'700'000'000);
    ASSERT_GT(pl.model.intra_rate, pl.model.channel_rate);
    const SimulationResult r =
        simulate_collective(topo, kBroadcast, bytes, choose(kBroadcast, "nccl:proto=ll128,channels=1"));
    const std::uint64_t wire = nccl::wire_bytes(nccl::Proto::kLL128, step);
    const Time nvlink = transfer_time(wire, nccl::intra_wire_rate(pl.model));
    const Time network = transfer_time(wire, nccl::wire_rate(pl.model));
    EXPECT_EQ(r.makespan, pl.model.base + 2 * (nvlink + pl.model.hop_intra) + network + pl.model.hop_inter +
                              static_cast<Time>(k - 1) * network)
        << "k=" << k;
  }
}

// Which plans take an NVLink pace: ring and tree across nodes with a protocol
// NCCL caps per channel (ring LL128; tree LL128 and Simple), at NCCL's cap for
// the node count; not ring Simple or LL, and nothing on one node.
TEST(NcclChainTuner, NvlinkPaceWhereNcclCapsAChannel) {
  const Topology two = dgx_h100(2), four = dgx_h100(4);
  const std::uint64_t bytes = std::uint64_t{256} << 20;
  const auto pace = [&](const Topology& topo, const std::string& algo, int proto) {
    const nccl::Params params = {{"algo", static_cast<std::uint64_t>(algo == "ring" ? nccl::Algo::kRing : nccl::Algo::kTree)},
                                 {"proto", static_cast<std::uint64_t>(proto)}};
    return plan_for(topo, CollectiveType::kAllReduce, bytes, params).model.intra_rate;
  };
  EXPECT_EQ(pace(two, "ring", kLL128), 36'700'000'000);
  EXPECT_EQ(pace(four, "ring", kLL128), 36'700'000'000);
  EXPECT_EQ(pace(two, "tree", kLL128), 36'700'000'000);
  EXPECT_EQ(pace(four, "tree", kLL128), 29'000'000'000);
  EXPECT_EQ(pace(four, "tree", kSimple), 36'000'000'000);
  EXPECT_EQ(pace(four, "ring", kSimple), 0);
  EXPECT_EQ(pace(four, "ring", kLL), 0);
  EXPECT_EQ(pace(dgx_h100_node(), "ring", kLL128), 0);
}

// NCCL's table for broadcast / reduce (tuning.cc): ring only; algBw = busBw
// (nsteps = nRanks); LL busBw / 3 for broadcast on one node, / 4 for reduce
// (2.20; from 2.21 on / 2 for both), capped at llMaxBw; latency = baseLat + one
// hop (sameChannels: one pipelined chain).
TEST(NcclChainTuner, TablesOnOneNode) {
  using nccl::Algo;
  const int ring = static_cast<int>(Algo::kRing);
  nccl::TuneInput in;
  in.version = 220;
  in.ranks = 8;
  in.nodes = 1;
  in.arch = nccl::Arch::kAmpere;
  // dgx-a100 node: 12 NVLink3 per GPU at NCCL's 20 GB/s = 240 GB/s: 12 x 20 GB/s rings.
  in.graphs = nccl::search_graphs(nccl::Arch::kAmpere, 8, 1, 240, 0, false, false);
  ASSERT_EQ(in.graphs[ring].channels, 12);
  ASSERT_DOUBLE_EQ(in.graphs[ring].bw_intra, 20.0);
  in.type = kBroadcast;
  const nccl::TuneTable b = nccl::tune(in);
  in.type = kReduce;
  const nccl::TuneTable r = nccl::tune(in);
  EXPECT_NEAR(b.bandwidth[ring][kLL], 80.0, 1e-9);  // min(87.7, 240 / 3)
  EXPECT_NEAR(r.bandwidth[ring][kLL], 60.0, 1e-9);  // min(87.7, 240 / 4)
  for (const nccl::TuneTable* t : {&b, &r}) {
    EXPECT_NEAR(t->bandwidth[ring][kLL128], 240 * 0.92, 1e-9);  // min(x 0.92, 12 x 20.0)
    EXPECT_NEAR(t->bandwidth[ring][kSimple], 240.0, 1e-9);
    EXPECT_NEAR(t->latency[ring][kLL], 6.6 + 0.6, 1e-9);
    EXPECT_NEAR(t->latency[ring][kLL128], 14.0 + 1.9, 1e-9);
    EXPECT_NEAR(t->latency[ring][kSimple], 8.4 + 3.4, 1e-9);
    for (int a = 0; a < nccl::kAlgos; ++a) {
      if (a == ring) continue;
      for (int p = 0; p < nccl::kProtos; ++p) EXPECT_EQ(t->bandwidth[a][p], 0) << a << "/" << p;
    }
  }
  // 2.21: LL at half the bus bandwidth, under Ampere's cap.
  in.version = 221;
  EXPECT_NEAR(nccl::tune(in).bandwidth[ring][kLL], 87.7, 1e-9);  // min(87.7, 240 / 2)
  in.type = kBroadcast;
  EXPECT_NEAR(nccl::tune(in).bandwidth[ring][kLL], 87.7, 1e-9);
}

// The choice per size on a dgx-h100 node under NCCL 2.20's tables: LL (7.2 us
// + S / 87.7 GB/s) until Simple (11.8 us + S / 360 GB/s) is faster, at 4.6 us
// = S (1/87.7 - 1/360) us/kB: S = 533.4 kB. LL128 (15.9 us, 331.2 GB/s) never wins.
// From 2.21 on LL runs at min(141, 360 / 2) GB/s: Simple from 4.6 / (1/141 -
// 1/360) = 1066.2 kB.
TEST(NcclChainTuner, DgxH100ChoicePerSize) {
  for (const CollectiveType type : {kBroadcast, kReduce}) {
    const auto later = [&](std::uint64_t bytes) {
      return plan_for(plain_dgx_h100_node(), type, bytes, {{"version", 221}}).name;
    };
    EXPECT_EQ(later(1041 << 10), "nccl:ring/ll") << collective_name(type);       // 1066.0 kB
    EXPECT_EQ(later(1042 << 10), "nccl:ring/simple") << collective_name(type);   // 1067.0 kB
    const auto name = [&](std::uint64_t bytes) {
      return plan_for(plain_dgx_h100_node(), type, bytes, {{"version", 220}}).name;
    };
    EXPECT_EQ(name(4 << 10), "nccl:ring/ll") << collective_name(type);
    EXPECT_EQ(name(512 << 10), "nccl:ring/ll") << collective_name(type);     // 13.18 us against 13.26
    EXPECT_EQ(name(520 << 10), "nccl:ring/ll") << collective_name(type);     // 13.2716 us against 13.2791
    EXPECT_EQ(name(530 << 10), "nccl:ring/simple") << collective_name(type); // 13.3076 us against 13.3884
    EXPECT_EQ(name(1 << 20), "nccl:ring/simple") << collective_name(type);   // 14.71 us against 19.16
    EXPECT_EQ(name(std::uint64_t{1} << 30), "nccl:ring/simple") << collective_name(type);
    const nccl::Plan pl = plan_for(plain_dgx_h100_node(), type, 512 << 10, {{"version", 220}});
    EXPECT_NEAR(pl.predicted_us, 7.2 + 524288 / (1000 * 87.7), 1e-9);
    EXPECT_NEAR(plan_for(plain_dgx_h100_node(), type, 512 << 10, {{"version", 221}}).predicted_us,
                7.2 + 524288 / (1000 * 141.0), 1e-9);
    EXPECT_EQ(plan_for(plain_dgx_h100_node(), type, 512 << 10, {}).predicted_us,
              pl.predicted_us);  // no release named: 2.20's tables
  }
  // The report names what ran.
  const SimulationResult r =
      simulate_collective(plain_dgx_h100_node(), kBroadcast, 64 << 10, choose(kBroadcast, "nccl"));
  EXPECT_EQ(r.collectives[0].algorithm, "nccl:ring/ll");
  const SimulationResult s = simulate_collective(plain_dgx_h100_node(), kReduce, 64 << 20, choose(kReduce, "nccl"));
  EXPECT_EQ(s.collectives[0].algorithm, "nccl:ring/simple");
}

TEST(NcclChainErrors, OnlyRing) {
  const Topology topo = plain_dgx_h100_node();
  for (const char* algo : {"tree", "nvls", "collnet"}) {
    try {
      simulate_collective(topo, kBroadcast, 1 << 20, choose(kBroadcast, std::string("nccl:algo=") + algo));
      FAIL() << algo << ": expected an InputError";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("BROADCAST"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace sim
