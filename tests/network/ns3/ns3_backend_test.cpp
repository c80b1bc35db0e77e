// The ns3 backend (real packets, TCP) against the closed form and the flow
// backend. Skipped with a message when ns-3 was not found at configure time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../../common/source_paths.h"
#include "../../common/sizes.h"
#include "core/error.h"
#include "tests/network/delivery_recorder.h"
#include "network/backend_registry.h"
#include "tests/network/ns3/skip_without_ns3.h"

namespace sim {
namespace {

using testing::kConfigs;
using testing::kMiB;
using testing_support::Recorder;

std::unique_ptr<Network> backend(const std::string& name, const Topology& t, EventQueue& q,
                                 std::map<std::string, OptionValue> options = {}) {
  NetworkConfig c;
  c.backend = name;
  c.options = std::move(options);
  return make_network(c, t, q);
}

Topology one_link() {
  return parse_topology("npus: 2\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n  - {src: npu0, dst: npu1}\n",
                        "one_link.yml");
}

// One message at time 0 from `src` to `dst` on `backend`; its delivery time.
Time one_message(const std::string& name, const Topology& t, NodeId src, NodeId dst, std::uint64_t bytes,
                 std::map<std::string, OptionValue> options = {}) {
  EventQueue q;
  Recorder r(q);
  auto net = backend(name, t, q, std::move(options));
  net->send(src, dst, bytes, r.to(1));
  q.run();
  EXPECT_EQ(r.seen.size(), 1u);
  return r.at[1];
}

// Built or not, the backend is listed; its module is found (as sim finds it,
// core/plugin.h) when built, else --help says so and choosing it is an error
// saying what to install.
TEST(Ns3Backend, HelpSaysWhetherItsModuleIsFound) {
  const std::string help = describe_backends();
  ASSERT_NE(help.find("  ns3: packet-level"), std::string::npos);
#ifdef SIM_HAVE_NS3
  EXPECT_EQ(help.find("module not found"), std::string::npos) << help;
  EXPECT_NE(backend_module_path("ns3"), "");
#else
  EXPECT_NE(help.find("routes as ours (module not found: libsim_ns3.so"), std::string::npos) << help;
  EXPECT_EQ(backend_module_path("ns3"), "");
  EventQueue q;
  try {
    backend("ns3", one_link(), q);
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("network backend 'ns3': module libsim_ns3.so not found (looked in "),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("install libns3-dev"), std::string::npos) << e.what();
  }
#endif
  EXPECT_EQ(backend_module_path("flow"), "");  // built in
}

TEST(Ns3Backend, PointToPointMatchesTheClosedFormWithHeaders) {
  SKIP_WITHOUT_NS3();
  // Closed form: the segments leave back to back and the last arrives one
  // latency after it was serialized. Each full segment (MTU 9000) carries
  // 8948 B of payload and 54 B of headers: PPP 2 + IPv4 20 + TCP 20 + the
  // timestamp option 12.
  const std::uint64_t bytes = kMiB;
  const std::uint64_t segments = (bytes + 8947) / 8948;
  const double wire = static_cast<double>(bytes + segments * 54);
  const double closed_form_ps = wire / 50e9 * 1e12 + 500e3;
  const Time t = one_message("ns3", one_link(), 0, 1, bytes);
  EXPECT_NEAR(static_cast<double>(t), closed_form_ps, 0.03 * closed_form_ps);
  // And against the headerless alpha-beta form the other backends use.
  const Time analytical = one_message("analytical", one_link(), 0, 1, bytes);
  EXPECT_NEAR(static_cast<double>(t), static_cast<double>(analytical), 0.03 * static_cast<double>(analytical));
  std::printf("[ns3] 1 MiB over one link: ns3 %.1f ns, closed form with headers %.1f ns, analytical %.1f ns\n",
              to_ns(t), closed_form_ps / 1e3, to_ns(analytical));
}

// A message_latency that carries a delivery past the largest time is the
// other backends' exit 3 (TimeLimitError), not a wrapped clock (a sanitizer
// report, or "event scheduled in the past", exit 1).
TEST(Ns3Backend, ADeliveryPastTheLargestTimeIsATimeLimitError) {
  SKIP_WITHOUT_NS3();
  for (const std::string name : {"ns3", "flow", "analytical"}) {
    EXPECT_THROW(one_message(name, one_link(), 0, 1, kMiB,
                             {{"message_latency", OptionValue{"9223372036854775000ps", "sys.yml:2: network.message_latency"}}}),
                 TimeLimitError)
        << name;
  }
}

// TCP's warm-up waits for the longest route's round trip too (a fixed wait
// gave up on 50 ms hops: "internal error", exit 1), and handshakes that run
// out of retries on a link of 1 B/s are a run that cannot start (exit 3).
TEST(Ns3Backend, TcpWarmsUpOnLongLinksAndSaysWhenItCannot) {
  SKIP_WITHOUT_NS3();
  const Topology far = parse_topology("npus: 2\nbandwidth: 50GB/s\nlatency: 50ms\nlinks:\n  - {src: npu0, dst: npu1}\n",
                                      "far.yml");
  // 1 MiB in TCP's slow start: the window doubles each 100 ms round trip (10,
  // 20, 40, 80 segments of 8,948 B), 4 round trips and the last hop.
  const Time t = one_message("ns3", far, 0, 1, kMiB);
  EXPECT_GT(t, 400 * kMillisecond);
  EXPECT_LT(t, 500 * kMillisecond);
  const Topology slow = parse_topology("npus: 2\nbandwidth: 1B/s\nlatency: 500ns\nlinks:\n  - {src: npu0, dst: npu1}\n",
                                       "slow.yml");
  EXPECT_THROW(one_message("ns3", slow, 0, 1, 1), IncompleteError);
}

TEST(Ns3Backend, ThroughASwitchOneFullPacketMoreIsSerialized) {
  SKIP_WITHOUT_NS3();
  // Store-and-forward per packet on two equal links: the switch is busy with
  // one full packet after the sender's last byte, so the closed form gains one
  // full packet's serialization (9,002 B: 180.04 ns at 50 GB/s).
  const Topology t = load_topology(kConfigs + "switch8.yml");
  auto closed_form_ps = [](std::uint64_t bytes) {
    const std::uint64_t segments = (bytes + 8947) / 8948;
    return static_cast<double>(bytes + segments * 54 + 9002) / 50e9 * 1e12 + 1000e3;
  };
  // 64 KiB is 8 segments, inside the initial window: nothing else can differ.
  const std::uint64_t small = 64 << 10;
  EXPECT_NEAR(static_cast<double>(one_message("ns3", t, 3, 6, small)), closed_form_ps(small), 2.0);
  // 1 MiB: with the default initial window (10 segments) slow start stalls the
  // sender for part of the first round trips; with a window above the
  // bandwidth-delay product it does not.
  const Time slow_start = one_message("ns3", t, 3, 6, kMiB);
  const Time line_rate = one_message("ns3", t, 3, 6, kMiB, {{"initial_cwnd", {"64", "test"}}});
  EXPECT_NEAR(static_cast<double>(line_rate), closed_form_ps(kMiB), 0.001 * closed_form_ps(kMiB));
  EXPECT_GT(slow_start, line_rate);
  EXPECT_NEAR(static_cast<double>(slow_start), closed_form_ps(kMiB), 0.05 * closed_form_ps(kMiB));
  std::printf("[ns3] through a switch: 64 KiB %.1f ns (closed form %.1f); 1 MiB %.1f ns, initial window 64: %.1f ns "
              "(closed form %.1f)\n", to_ns(one_message("ns3", t, 3, 6, small)), closed_form_ps(small) / 1e3,
              to_ns(slow_start), to_ns(line_rate), closed_form_ps(kMiB) / 1e3);
}

TEST(Ns3Backend, LinkStatisticsCountPayloadHeadersAndQueues) {
  SKIP_WITHOUT_NS3();
  EventQueue q;
  Recorder r(q);
  const Topology t = one_link();
  auto net = backend("ns3", t, q);
  net->send(0, 1, kMiB, r.to(1));
  q.run();
  ASSERT_TRUE(net->carries_packets());
  const std::vector<LinkUsage> u = net->link_usage();
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].bytes, kMiB);  // the TCP payload that crossed, no retransmission
  EXPECT_EQ(u[0].drops, 0u);
  EXPECT_GE(u[0].packets, (kMiB + 8947) / 8948);
  EXPECT_EQ(u[0].wire_bytes, kMiB + u[0].packets * 54);
  EXPECT_GT(u[0].peak_queue_bytes, 0u);  // the window outruns the link
  EXPECT_GT(u[1].packets, 0u);           // ACKs
  EXPECT_EQ(u[1].bytes, 0u);
}

TEST(Ns3Backend, PacketsTakeOurRoutesOnEveryForm) {
  SKIP_WITHOUT_NS3();
  // Payload crosses exactly the links our router picks (ACKs carry none):
  // ECMP on the fat tree, dimension order on the torus, fewest hops on a graph.
  for (const std::string name : {"fattree64.yml", "torus4x4x4.yml", "graph_2switch.yml"}) {
    SCOPED_TRACE(name);
    const Topology t = load_topology(kConfigs + name);
    EventQueue q;
    Recorder r(q);
    auto net = backend("ns3", t, q, {{"connect", {"on_first_send", "test"}}});
    const std::vector<std::pair<NodeId, NodeId>> pairs = {{0, t.npu_count() - 1}, {5, 2}, {t.npu_count() - 2, 1}};
    for (std::size_t i = 0; i < pairs.size(); ++i) net->send(pairs[i].first, pairs[i].second, 20'000 + i, r.to(i));
    q.run();
    ASSERT_EQ(r.seen.size(), pairs.size());
    std::vector<std::uint64_t> expected(t.links().size(), 0);
    std::vector<LinkId> route;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      route.clear();
      t.route(pairs[i].first, pairs[i].second, route);
      for (LinkId l : route) expected[l] += 20'000 + i;
    }
    const std::vector<LinkUsage> u = net->link_usage();
    for (LinkId l = 0; l < u.size(); ++l) EXPECT_EQ(u[l].bytes, expected[l]) << "link " << l;
  }
}

TEST(Ns3Backend, MessagesOfOnePairArriveInOrderAndZeroBytesStillArrive) {
  SKIP_WITHOUT_NS3();
  EventQueue q;
  Recorder r(q);
  const Topology t = load_topology(kConfigs + "switch8.yml");
  auto net = backend("ns3", t, q);
  net->send(2, 5, 100'000, r.to(1));
  net->send(2, 5, 0, r.to(2));
  net->send(2, 5, 3000, r.to(3));
  net->send(4, 4, 10, r.to(4));  // to itself: at once
  q.run();
  ASSERT_EQ(r.seen.size(), 4u);
  EXPECT_EQ(r.seen[0].token, 4u);
  EXPECT_EQ(r.seen[0].at, 0);
  // One stream: in the order sent (the last two may share the last segment).
  EXPECT_EQ(r.seen[1].token, 1u);
  EXPECT_EQ(r.seen[2].token, 2u);
  EXPECT_EQ(r.seen[3].token, 3u);
  EXPECT_GT(r.at[1], 0);
  EXPECT_LE(r.at[1], r.at[2]);
  EXPECT_LE(r.at[2], r.at[3]);
}

TEST(Ns3Backend, IncastSharesTheSwitchPortFairlyLikeFlow) {
  SKIP_WITHOUT_NS3();
  const Topology t = load_topology(kConfigs + "switch8.yml");
  const std::uint64_t bytes = 2 * kMiB;
  std::map<std::string, std::vector<Time>> done;
  std::uint64_t drops = 0;
  for (const std::string name : {"flow", "ns3"}) {
    EventQueue q;
    Recorder r(q);
    auto net = backend(name, t, q);
    for (NodeId s = 1; s < 8; ++s) net->send(s, 0, bytes, r.to(s));
    q.run();
    ASSERT_EQ(r.seen.size(), 7u) << name;
    for (NodeId s = 1; s < 8; ++s) done[name].push_back(r.at[s]);
    if (net->carries_packets()) {
      for (const LinkUsage& u : net->link_usage()) drops += u.drops;
    }
  }
  // Flow: every sender gets 50/7 GB/s of the port into NPU 0. Each ns3
  // sender's mean rate (bytes / its finish) is its share.
  const Time flow_finish = done["flow"][0];
  for (std::size_t i = 0; i < 7; ++i) {
    SCOPED_TRACE("sender " + std::to_string(i + 1));
    EXPECT_EQ(done["flow"][i], flow_finish);
    EXPECT_NEAR(static_cast<double>(done["ns3"][i]), static_cast<double>(flow_finish), 0.15 * static_cast<double>(flow_finish));
  }
  const auto [lo, hi] = std::minmax_element(done["ns3"].begin(), done["ns3"].end());
  std::printf("[ns3] 7-to-1 incast of 2 MiB: flow %.1f ns each; ns3 first %.1f ns, last %.1f ns, %llu drops\n",
              to_ns(flow_finish), to_ns(*lo), to_ns(*hi), static_cast<unsigned long long>(drops));
}

TEST(Ns3Backend, EveryLossIsACountedDrop) {
  // Every NPU sends 2 MiB to each of the 7 others at once through 256 KiB
  // queues: seven windows per uplink overflow it, packets are lost and resent.
  // Each uplink that resent payload must show drops (with ns-3's flow control
  // on, the traffic-control layer dropped them where no counter saw them).
  SKIP_WITHOUT_NS3();
  const Topology t = load_topology(kConfigs + "switch8.yml");
  const std::uint64_t bytes = 2 * kMiB;
  EventQueue q;
  Recorder r(q);
  auto net = backend("ns3", t, q, {{"queue_size", {"256KiB", "test"}}});
  for (NodeId s = 0; s < 8; ++s) {
    for (NodeId d = 0; d < 8; ++d) {
      if (s != d) net->send(s, d, bytes, r.to(s * 8 + d));
    }
  }
  q.run();
  ASSERT_EQ(r.seen.size(), 56u);
  const std::vector<LinkUsage> u = net->link_usage();
  std::size_t resent = 0;
  for (LinkId l = 0; l < u.size(); ++l) {
    if (t.links()[l].from >= 8) continue;  // NPU uplinks only
    EXPECT_GE(u[l].bytes, 7 * bytes);
    EXPECT_LE(u[l].peak_queue_bytes, 256u * 1024);
    if (u[l].bytes > 7 * bytes) {
      ++resent;
      EXPECT_GT(u[l].drops, 0u) << "link " << l << " resent " << u[l].bytes - 7 * bytes << " B but counted no drop";
    }
  }
  EXPECT_GT(resent, 0u) << "the case should lose packets; make the queue smaller";
}

TEST(Ns3Backend, SameSeedSameTimes) {
  SKIP_WITHOUT_NS3();
  const Topology t = load_topology(kConfigs + "fattree64.yml");
  auto run = [&] {
    EventQueue q;
    Recorder r(q);
    auto net = backend("ns3", t, q, {{"connect", {"on_first_send", "test"}}});
    for (NodeId s = 0; s < 16; ++s) net->send(s, (s * 37 + 11) % 64, 200'000, r.to(s));
    q.run();
    return r.seen;
  };
  const auto a = run();
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(run(), a);
}

TEST(Ns3Backend, OnlyOneAtATimeAndBadOptionsAreErrors) {
  SKIP_WITHOUT_NS3();
  const Topology t = one_link();
  EventQueue q;
  auto net = backend("ns3", t, q);
  EventQueue q2;
  EXPECT_THROW(backend("ns3", t, q2), std::logic_error);
  EXPECT_THROW(backend("ns3", t, q2, {{"mtu", {"100", "sys.yml:3: network.mtu"}}}), InputError);
  EXPECT_THROW(backend("ns3", t, q2, {{"congestion", {"bbr", "sys.yml:3: network.congestion"}}}), InputError);
  net.reset();
  // Connecting every pair up front is for small topologies only.
  const Topology shape256 = parse_topology("shape: Switch\nnpus: 256\nbandwidth: 50GB/s\nlatency: 500ns\n", "s256.yml");
  try {
    backend("ns3", shape256, q2);
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("65280 TCP connections for 256 NPUs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("connect: on_first_send"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(backend("ns3", shape256, q2, {{"connect", {"on_first_send", "test"}}}));
}

// A drop-tail queue smaller than one frame (mtu + the 2-B PPP header) dropped
// every full segment: "only 0 of 2 TCP connections were established" (exit 1)
// or a run that drained its events with nodes unfinished (exit 3).
TEST(Ns3Backend, AQueueSmallerThanOneFrameIsAnError) {
  SKIP_WITHOUT_NS3();
  const Topology t = one_link();
  auto expect_error = [&](std::map<std::string, OptionValue> o, const std::string& part) {
    EventQueue q;
    try {
      backend("ns3", t, q, std::move(o));
      ADD_FAILURE() << "expected InputError containing: " << part;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error({{"queue_size", {"1B", "sys.yml:3: network.queue_size"}}},
               "sys.yml:3: network.queue_size: 1 B cannot hold one packet: a link sends mtu (9000 B) plus a 2 B PPP "
               "header, 9002 B, so it would drop every full segment; give at least 9002 B (or a smaller mtu)");
  expect_error({{"queue_size", {"9001B", "sys.yml:3: network.queue_size"}}}, "give at least 9002 B");
  expect_error({{"mtu", {"1500", "t"}}, {"queue_size", {"1000B", "sys.yml:4: network.queue_size"}}},
               "sys.yml:4: network.queue_size: 1000 B cannot hold one packet: a link sends mtu (1500 B)");
  // One frame is enough to deliver, slowly.
  EXPECT_GT(one_message("ns3", t, 0, 1, 64 * 1024, {{"mtu", {"1500", "t"}}, {"queue_size", {"1502B", "t"}}}), 0);
}

// A sweep runs points on threads: ns3 networks on two threads take turns
// (ns-3's simulator is one per process) and each gets the time it gets alone.
TEST(Ns3Backend, NetworksOnTwoThreadsTakeTurns) {
  SKIP_WITHOUT_NS3();
  const Topology t = one_link();
  const Time alone = one_message("ns3", t, 0, 1, kMiB);
  Time at[4] = {0, 0, 0, 0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) threads.emplace_back([&t, &at, k] { at[k] = one_message("ns3", t, 0, 1, kMiB); });
  for (std::thread& th : threads) th.join();
  for (const Time a : at) EXPECT_EQ(a, alone);
}

}  // namespace
}  // namespace sim
