// In-network reduction and multicast on the ns3 backend: with transport roce
// or ib, single-link messages (Network::send_on_link: an NPU's upload to a
// reducing switch, the switch's copy down) are packets on that one link, as
// exact as a point-to-point message; tcp refuses a reducing topology.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "network/backend_registry.h"
#include "tests/network/delivery_recorder.h"
#include "tests/network/ns3/ns3_test_util.h"
#include "tests/network/ns3/skip_without_ns3.h"
#include "tests/network/topology_util.h"

namespace sim {
namespace {

using testing_support::link_between;
using testing_support::ns3;
using testing_support::Recorder;
using Options = std::map<std::string, OptionValue>;

Topology reducing_switch(std::uint32_t npus) {
  return parse_topology("shape: Switch\nnpus: " + std::to_string(npus) +
                            "\nbandwidth: 50GB/s\nlatency: 500ns\nin_network_reduction: true\n",
                        "nvswitch.yml");
}

// A message alone on one link: each packet serialized in turn (4096 B of
// payload and the transport's headers), the last one then crosses the cable.
Time one_hop(std::uint64_t bytes, std::uint32_t header, BytesPerSecond rate, Time latency) {
  const std::uint64_t full = bytes / 4096, rest = bytes % 4096;
  Time t = static_cast<Time>(full) * transfer_time(4096 + header, rate);
  if (rest > 0) t += transfer_time(rest + header, rate);
  return t + latency;
}

TEST(Ns3SwitchOps, UploadsAndCopiesAreExactOneHopMessages) {
  SKIP_WITHOUT_NS3();
  const Topology t = reducing_switch(4);
  const NodeId sw = 4;
  const std::uint64_t bytes = 1'000'000;  // 244 full packets and one of 576 B
  for (const auto& [transport, header] : {std::pair<std::string, std::uint32_t>{"roce", 62}, {"ib", 26}}) {
    SCOPED_TRACE(transport);
    EventQueue q;
    Recorder r(q);
    auto net = ns3(t, q, transport);
    ASSERT_TRUE(net->carries_switch_ops());
    // Every NPU uploads at once (each on its own link), then the switch sends
    // one copy down to NPU 0 and another to NPU 3 at the same time.
    for (NodeId n = 0; n < 4; ++n) net->send_on_link(link_between(t, n, sw), bytes, r.to(n));
    q.run();
    const Time up = one_hop(bytes, header, 50'000'000'000, 500 * kNanosecond);
    for (NodeId n = 0; n < 4; ++n) EXPECT_EQ(r.at[n], up) << "upload of npu " << n;
    net->send_on_link(link_between(t, sw, 0), bytes, r.to(10));
    net->send_on_link(link_between(t, sw, 3), 0, r.to(13));  // an empty message still arrives
    q.run();
    EXPECT_EQ(r.at[10], 2 * up);
    EXPECT_EQ(r.at[13], up + one_hop(1, header, 50'000'000'000, 500 * kNanosecond));
    const std::vector<LinkUsage> u = net->link_usage();
    EXPECT_EQ(u[link_between(t, 1, sw)].bytes, bytes);
    EXPECT_EQ(u[link_between(t, sw, 0)].bytes, bytes);
    EXPECT_EQ(u[link_between(t, sw, 1)].bytes, 0u);  // only its ACKs' way back
    EXPECT_GT(u[link_between(t, sw, 1)].packets, 0u);
    EXPECT_EQ(net->messages_sent(), 6u);
  }
}

// A copy down from the switch shares its port with traffic the switch
// forwards: the two take turns, so together they take the port's time for
// both (within 2%: PFC pauses the forwarded flow's sender now and then) and
// neither finishes as if alone.
TEST(Ns3SwitchOps, ASwitchsCopyTakesTurnsWithForwardedTraffic) {
  SKIP_WITHOUT_NS3();
  const Topology t = reducing_switch(4);
  const NodeId sw = 4;
  const std::uint64_t bytes = 4 << 20;
  for (const std::string transport : {"roce", "ib"}) {
    SCOPED_TRACE(transport);
    EventQueue q;
    Recorder r(q);
    // Without DCQCN: the forwarded queue's ECN marks would cut NPU 1's rate,
    // and the port then idles after the copy while that rate recovers (197.6
    // us here instead of 170.8), which is DCQCN's doing, not the port's.
    auto net = transport == "roce" ? ns3(t, q, transport, {{"dcqcn", {"false", "test"}}}) : ns3(t, q, transport);
    net->send(1, 0, bytes, r.to(1));
    net->send_on_link(link_between(t, sw, 0), bytes, r.to(2));
    q.run();
    const Time alone = one_hop(bytes, transport == "roce" ? 62 : 26, 50'000'000'000, 500 * kNanosecond);
    const Time both = std::max(r.at[1], r.at[2]);
    EXPECT_GE(both, 2 * alone - alone / 100);
    EXPECT_LE(both, 2 * alone + alone / 50);
    EXPECT_GT(std::min(r.at[1], r.at[2]), alone * 3 / 2);
    std::printf("[%s] %llu B forwarded and %llu B copied down one switch port: %.1f and %.1f us, alone %.1f us\n",
                transport.c_str(), static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(bytes),
                to_us(r.at[1]), to_us(r.at[2]), to_us(alone));
  }
}

TEST(Ns3SwitchOps, TcpRefusesAReducingSwitchAndSaysWhatDoesNot) {
  SKIP_WITHOUT_NS3();
  const Topology t = reducing_switch(4);
  EventQueue q;
  try {
    ns3(t, q, "tcp");
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("with transport tcp does not model reduction or multicast in switches"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("set network.transport to roce or ib"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sim
