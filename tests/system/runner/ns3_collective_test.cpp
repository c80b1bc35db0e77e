// Whole collectives on the ns3 backend (real packets: TCP, RoCE, InfiniBand)
// against the flow backend: deliveries reach the collective engine as from
// any backend, and in-network reduction's uploads and copies too.
// Skipped with a message when ns-3 was not found at configure time.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/network/ns3/victim_topology.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;

// 64 MiB is in docs/network.md's table (scripts/docs/tables/network.py ns3-ring): too slow for a unit test.
TEST(Ns3Collective, RingAllReduceWithinTenPercentOfFlow) {
#ifndef SIM_HAVE_NS3
  GTEST_SKIP() << "ns-3 not found at configure time: the ns3 backend is not built";
#endif
  for (const std::string name : {"ring8.yml", "switch8.yml"}) {
    const Topology t = load_topology(source_dir() + "/configs/" + name);
    for (const std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{16} << 20}) {
      SCOPED_TRACE(name + " " + std::to_string(bytes) + " B");
      const SimulationResult flow = simulate_collective(t, CollectiveType::kAllReduce, bytes, on("flow"));
      const SimulationResult ns3 = simulate_collective(t, CollectiveType::kAllReduce, bytes, on("ns3"));
      ASSERT_EQ(ns3.collectives.size(), t.npu_count());
      EXPECT_NEAR(static_cast<double>(ns3.makespan), static_cast<double>(flow.makespan),
                  0.10 * static_cast<double>(flow.makespan));
      ASSERT_TRUE(ns3.packet_level);
      std::uint64_t drops = 0;
      for (const LinkRecord& l : ns3.links) drops += l.usage.drops;
      EXPECT_EQ(drops, 0u);  // one flow per link: the default queues never fill
      std::printf("[ns3] all-reduce %s %llu B: flow %.1f ns, ns3 %.1f ns (%+.2f%%)\n", name.c_str(),
                  static_cast<unsigned long long>(bytes), to_ns(flow.makespan), to_ns(ns3.makespan),
                  100.0 * (static_cast<double>(ns3.makespan) / static_cast<double>(flow.makespan) - 1));
    }
  }
}

// NCCL's NVLS all-reduce on one NVSwitch node that reduces: every GPU uploads
// its part, the switch sums and multicasts it down, all as packets with roce
// and ib; flow carries the same one-hop messages as flows. The packet
// headers (62 B roce, 26 B ib per 4 KiB of payload) make ns3 a little slower
// (+0.5% and +0.2% here).
TEST(Ns3Collective, NvlsAllReduceOnAReducingSwitchWithinThreePercentOfFlow) {
#ifndef SIM_HAVE_NS3
  GTEST_SKIP() << "ns-3 not found at configure time: the ns3 backend is not built";
#endif
  const Topology t = parse_topology(
      "shape: Switch\nnpus: 8\nbandwidth: 450GB/s\nlatency: 500ns\nin_network_reduction: true\n", "dgx-h100");
  const std::uint64_t bytes = std::uint64_t{16} << 20;
  SystemConfig flow = on("flow");
  flow.algorithms[CollectiveType::kAllReduce] = "nccl:algo=nvls";
  const SimulationResult f = simulate_collective(t, CollectiveType::kAllReduce, bytes, flow);
  for (const std::string transport : {"roce", "ib"}) {
    SCOPED_TRACE(transport);
    SystemConfig c = flow;
    c.network.backend = "ns3";
    c.network.options["transport"] = {transport, "test"};
    const SimulationResult n = simulate_collective(t, CollectiveType::kAllReduce, bytes, c);
    ASSERT_EQ(n.collectives.size(), t.npu_count());
    EXPECT_GE(n.makespan, f.makespan);
    EXPECT_LE(static_cast<double>(n.makespan), 1.03 * static_cast<double>(f.makespan));
    // The same bytes on every link, up to the switch (node 8) and down.
    ASSERT_EQ(n.links.size(), f.links.size());
    std::uint64_t drops = 0, up = 0;
    for (std::size_t l = 0; l < n.links.size(); ++l) {
      drops += n.links[l].usage.drops;
      EXPECT_EQ(n.links[l].usage.bytes, f.links[l].usage.bytes) << n.links[l].from << " -> " << n.links[l].to;
      if (n.links[l].to == 8) up += n.links[l].usage.bytes;
    }
    EXPECT_EQ(drops, 0u);
    EXPECT_GE(up, bytes);
    std::printf("[ns3 %s] NVLS all-reduce of 16 MiB on a reducing 8-GPU switch: flow %.3f us, ns3 %.3f us (%+.2f%%)\n",
                transport.c_str(), to_us(f.makespan), to_us(n.makespan),
                100.0 * (static_cast<double>(n.makespan) / static_cast<double>(f.makespan) - 1));
  }
}

// Two jobs on one InfiniBand fabric with two virtual lanes: job "incast"
// (ranks 0-2 send 16 MiB each to rank 3, on NPUs 0, 1, 2 -> 4) and job
// "victim" (16 MiB from NPU 3 to NPU 5) cross the same switch-to-switch link.
// On one service level the victim waits behind the incast's full lane; on
// its own (--service-level victim=1) it runs as if alone (within 0.1%). On a backend with
// one traffic class the levels change nothing and a warning says so.
TEST(Ns3Collective, AJobOnItsOwnServiceLevelIsNotBlockedByAnother) {
#ifndef SIM_HAVE_NS3
  GTEST_SKIP() << "ns-3 not found at configure time: the ns3 backend is not built";
#endif
  const Topology t = testing_support::victim_topology();
  const std::uint64_t bytes = 16 << 20;
  auto incast = make_traces(4, [&](int r) {
    if (r < 3) return std::vector<et::Node>{p2p_node(1, true, 3, bytes)};
    return std::vector<et::Node>{p2p_node(1, false, 0, bytes), p2p_node(2, false, 1, bytes),
                                 p2p_node(3, false, 2, bytes)};
  });
  const auto victim = make_traces(2, [&](int r) { return std::vector<et::Node>{p2p_node(1, r == 0, 1 - r, bytes)}; });
  std::vector<EtTrace> both = incast;
  both.insert(both.end(), victim.begin(), victim.end());
  SystemConfig ib = on("ns3");
  ib.network.options["transport"] = {"ib", "test"};
  ib.network.options["traffic_classes"] = {"2", "test"};
  ib.network.options["buffer_size"] = {"4MB", "test"};
  const auto run = [&](const std::vector<EtTrace>& traces, std::vector<JobSpec> jobs, std::vector<std::uint32_t> npus,
                       const SystemConfig& c) {
    SimulationOptions o;
    o.jobs = std::move(jobs);
    o.npu_of = std::move(npus);
    return simulate(traces, t, c, o);
  };
  SimulationOptions alone_opts;
  alone_opts.npu_of = {3, 5};
  const Time alone = simulate(victim, t, ib, alone_opts).makespan;
  const std::vector<std::uint32_t> npus = {0, 1, 2, 4, 3, 5};
  const SimulationResult shared =
      run(both, {JobSpec{"incast", 4, {}, ""}, JobSpec{"victim", 2, {}, ""}}, npus, ib);
  const SimulationResult own =
      run(both, {JobSpec{"incast", 4, {}, ""}, JobSpec{"victim", 2, {}, "", 1}}, npus, ib);
  ASSERT_EQ(own.jobs.size(), 2u);
  EXPECT_EQ(own.jobs[1].service_level, 1);
  EXPECT_GT(shared.jobs[1].makespan, 2 * alone);
  // Within 0.1% (20 ns here): the incast's ACKs still share the victim's ports with its data.
  EXPECT_NEAR(static_cast<double>(own.jobs[1].makespan), static_cast<double>(alone), 1e-3 * static_cast<double>(alone));
  EXPECT_TRUE(own.warnings.empty());
  std::printf("[ns3 ib, 2 lanes] victim job alone %.1f us; beside the incast job on one service level %.1f us, on "
              "its own %.1f us\n", to_us(alone), to_us(shared.jobs[1].makespan), to_us(own.jobs[1].makespan));
  const SimulationResult flow =
      run(both, {JobSpec{"incast", 4, {}, ""}, JobSpec{"victim", 2, {}, "", 1}}, npus, on("flow"));
  ASSERT_EQ(flow.warnings.size(), 1u);
  EXPECT_NE(flow.warnings[0].find("--service-level changes nothing here: the flow network carries one traffic class"),
            std::string::npos)
      << flow.warnings[0];
}

// Ping-pong between ranks 0 and 1 with compute in between: deliveries reach
// point-to-point matching, and compute and network events interleave on one
// clock, so the run is four one-way message times plus the compute.
TEST(Ns3Collective, PingPongWithComputeIsMessagesPlusCompute) {
#ifndef SIM_HAVE_NS3
  GTEST_SKIP() << "ns-3 not found at configure time: the ns3 backend is not built";
#endif
  const Topology t = load_topology(source_dir() + "/configs/switch8.yml");
  const std::uint64_t bytes = 64 << 10;  // 8 segments: inside the initial window, so every message costs the same
  const auto one_way = make_traces(8, [&](int r) {
    if (r == 0) return std::vector<et::Node>{p2p_node(1, true, 1, bytes)};
    if (r == 1) return std::vector<et::Node>{p2p_node(1, false, 0, bytes)};
    return std::vector<et::Node>{};
  });
  const auto ping_pong = make_traces(8, [&](int r) {
    if (r == 0) {
      return std::vector<et::Node>{p2p_node(1, true, 1, bytes, 0), p2p_node(2, false, 1, bytes, 1, {1}),
                                   comp_node(3, 3, {2}), p2p_node(4, true, 1, bytes, 2, {3}),
                                   p2p_node(5, false, 1, bytes, 3, {4})};
    }
    if (r == 1) {
      return std::vector<et::Node>{p2p_node(1, false, 0, bytes, 0), comp_node(2, 3, {1}),
                                   p2p_node(3, true, 0, bytes, 1, {2}), p2p_node(4, false, 0, bytes, 2, {3}),
                                   p2p_node(5, true, 0, bytes, 3, {4})};
    }
    return std::vector<et::Node>{};
  });
  const Time message = simulate(one_way, t, on("ns3")).makespan;
  const Time total = simulate(ping_pong, t, on("ns3")).makespan;
  const Time expected = 4 * message + 6 * kMicrosecond;
  // Up to a few ns: an ACK leaving at the instant a reply starts goes first.
  EXPECT_NEAR(static_cast<double>(total), static_cast<double>(expected), 5.0 * kNanosecond);
  std::printf("[ns3] ping-pong: one message %.3f ns, total %.3f ns, 4 x message + 6 us = %.3f ns\n", to_ns(message),
              to_ns(total), to_ns(expected));
}

}  // namespace
}  // namespace sim
