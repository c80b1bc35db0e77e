// Traffic classes on the ns3 backend (network.traffic_classes, roce and ib):
// each class has its own queues and flow control at every port (PFC per
// priority, credits per InfiniBand data virtual lane), served in turn, and a
// message's class is its connection's service level mod the count. A flow on
// a class of its own is not blocked behind another class's congestion.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "../../common/sizes.h"
#include "core/error.h"
#include "network/backend_registry.h"
#include "tests/network/delivery_recorder.h"
#include "tests/network/ns3/ns3_test_util.h"
#include "tests/network/ns3/skip_without_ns3.h"
#include "tests/network/ns3/victim_topology.h"

namespace sim {
namespace {

using testing::kMiB;
using testing_support::ns3;
using testing_support::Recorder;
using Options = std::map<std::string, OptionValue>;

// NPUs 0-2 send 16 MiB each to NPU 4 (an incast behind the link sw0 -> sw1);
// NPU 3 sends 16 MiB to the idle NPU 5 across the same link, on service level
// `victim_sl`. Returns the victim's time; `alone`: the victim without the incast.
Time victim(const std::string& transport, std::uint32_t classes, std::uint8_t victim_sl, bool alone = false) {
  const Topology t = testing_support::victim_topology();
  EventQueue q;
  Recorder r(q);
  Options o = {{"buffer_size", {"4MB", "test"}}, {"traffic_classes", {std::to_string(classes), "test"}}};
  if (transport == "roce") o["dcqcn"] = {"false", "test"};  // PFC alone: the blocking case
  auto net = ns3(t, q, transport, std::move(o));
  EXPECT_EQ(net->traffic_classes(), classes);
  if (!alone) {
    for (NodeId s = 0; s < 3; ++s) net->send_on(Connection{0, 0}, s, 4, 16 * kMiB, r.to(s));
  }
  net->send_on(Connection{0, victim_sl}, 3, 5, 16 * kMiB, r.to(3));
  q.run();
  EXPECT_EQ(r.seen.size(), alone ? 1u : 4u);
  std::uint64_t drops = 0;
  for (const LinkUsage& u : net->link_usage()) drops += u.drops;
  EXPECT_EQ(drops, 0u);
  return r.at[3];
}

TEST(Ns3TrafficClasses, AVictimOnAClassOfItsOwnIsNotBlockedBehindTheIncast) {
  SKIP_WITHOUT_NS3();
  for (const std::string transport : {"roce", "ib"}) {
    SCOPED_TRACE(transport);
    const Time alone = victim(transport, 2, 1, true);
    const Time shared = victim(transport, 2, 0);  // the incast's class: blocked as with one class
    const Time own = victim(transport, 2, 1);
    const Time wrapped = victim(transport, 2, 3);  // service level 3 on 2 classes: class 1
    EXPECT_GT(shared, alone * 2);
    EXPECT_LT(own, alone * 6 / 5);
    EXPECT_EQ(wrapped, own);
    std::printf("[%s] victim flow of 16 MiB beside a 3-to-1 incast, 2 traffic classes (4 MB buffers): alone %.1f "
                "us; on the incast's class %.1f us (x%.2f); on its own class %.1f us (x%.2f)\n",
                transport.c_str(), to_us(alone), to_us(shared), static_cast<double>(shared) / static_cast<double>(alone),
                to_us(own), static_cast<double>(own) / static_cast<double>(alone));
  }
}

// Two senders into one port, each on its own class: the port serves the
// classes one packet each, so both end together, at twice the time alone.
TEST(Ns3TrafficClasses, ClassesShareAPortInTurn) {
  SKIP_WITHOUT_NS3();
  const Topology t = parse_topology("shape: Switch\nnpus: 3\nbandwidth: 50GB/s\nlatency: 500ns\n", "switch.yml");
  for (const std::string transport : {"roce", "ib"}) {
    SCOPED_TRACE(transport);
    Options o = {{"traffic_classes", {"2", "test"}}};
    if (transport == "roce") o["dcqcn"] = {"false", "test"};
    Time one_ps = 0;
    {
      EventQueue q1;
      Recorder alone(q1);
      auto net = ns3(t, q1, transport, o);
      net->send_on(Connection{0, 1}, 0, 2, 4 * kMiB, alone.to(0));
      q1.run();
      one_ps = alone.at[0];
    }
    EventQueue q;
    Recorder r(q);
    auto net = ns3(t, q, transport, o);
    net->send_on(Connection{0, 0}, 0, 2, 4 * kMiB, r.to(0));
    net->send_on(Connection{0, 1}, 1, 2, 4 * kMiB, r.to(1));
    q.run();
    const double one = static_cast<double>(one_ps);
    ASSERT_GT(one, 0);
    for (const NodeId s : {0u, 1u}) {
      EXPECT_NEAR(static_cast<double>(r.at[s]), 2 * one, 0.02 * 2 * one) << "sender " << s;
    }
    EXPECT_NEAR(static_cast<double>(r.at[0]), static_cast<double>(r.at[1]), 0.01 * one);
  }
}

// PFC per priority keeps headroom per port and priority: an incast on both
// priorities at once (7 senders, 2 MiB on each) into a 2 MB buffer stays
// lossless (XOFF per priority 66,620 B; one XOFF per port for both, 191,240
// B, would let 7 x 2 x 191,240 B in and drop).
TEST(Ns3TrafficClasses, PfcPerPriorityStaysLosslessWhenEveryPriorityCongests) {
  SKIP_WITHOUT_NS3();
  const Topology t = parse_topology("shape: Switch\nnpus: 8\nbandwidth: 50GB/s\nlatency: 500ns\n", "switch.yml");
  EventQueue q;
  Recorder r(q);
  auto net = ns3(t, q, "roce", {{"traffic_classes", {"2", "test"}}, {"buffer_size", {"2MB", "test"}},
                                {"dcqcn", {"false", "test"}}});
  for (NodeId s = 1; s < 8; ++s) {
    net->send_on(Connection{0, 0}, s, 0, 2 * kMiB, r.to(2 * s));
    net->send_on(Connection{0, 1}, s, 0, 2 * kMiB, r.to(2 * s + 1));
  }
  q.run();
  ASSERT_EQ(r.seen.size(), 14u);
  std::uint64_t drops = 0, pauses = 0;
  for (const LinkUsage& u : net->link_usage()) {
    drops += u.drops;
    pauses += u.pauses_received;
  }
  EXPECT_EQ(drops, 0u);
  EXPECT_GT(pauses, 0u);
}

TEST(Ns3TrafficClasses, CountsOutsideTheTransportsRangeAreErrors) {
  SKIP_WITHOUT_NS3();
  const Topology t = parse_topology("shape: Switch\nnpus: 4\nbandwidth: 50GB/s\nlatency: 500ns\n", "switch.yml");
  const auto error = [&](const std::string& transport, const std::string& count, const std::string& buffer = "") {
    EventQueue q;
    Options o = {{"traffic_classes", {count, "sys.yml:3: network.traffic_classes"}}};
    if (!buffer.empty()) o["buffer_size"] = {buffer, "sys.yml:4: network.buffer_size"};
    try {
      ns3(t, q, transport, std::move(o));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("tcp", "2").find("sys.yml:3: network.traffic_classes: option 'traffic_classes' is for transport: "
                                   "roce or ib only (this network's transport is tcp)"),
            std::string::npos);
  EXPECT_NE(error("roce", "0").find("sys.yml:3: network.traffic_classes"), std::string::npos);
  EXPECT_NE(error("roce", "9").find("sys.yml:3: network.traffic_classes"), std::string::npos);
  EXPECT_EQ(error("ib", "15"), "no error");
  EXPECT_NE(error("ib", "16").find("sys.yml:3: network.traffic_classes"), std::string::npos);
  EXPECT_NE(error("ib", "8", "100KB").find("sys.yml:4: network.buffer_size: 100000 B shared by the 4 input ports of "
                                           "node 4 and 8 virtual lanes leaves each less than one 4122 B packet of "
                                           "credits"),
            std::string::npos);
}

}  // namespace
}  // namespace sim
