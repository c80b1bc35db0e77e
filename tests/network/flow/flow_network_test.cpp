// The flow backend against closed forms of max-min fair sharing, exactly in
// picoseconds (50 GB/s divides every size used here evenly).
#include "network/flow/flow_network.h"

#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../common/source_paths.h"
#include "../../common/sizes.h"
#include "core/error.h"
#include "tests/network/delivery_recorder.h"
#include "tests/network/topology_util.h"
#include "network/backend_registry.h"

namespace sim {
namespace {

using testing::kConfigs;
using testing::kMiB;
using testing_support::link_between;
using testing_support::Recorder;
using Delivered = testing_support::Delivered;

constexpr BytesPerSecond kLinkRate = 50'000'000'000;
constexpr Time kBeta = 20'971'520;  // 1 MiB at 50 GB/s
constexpr Time kHop = 500'000;      // one 500 ns link

// Sends `bytes` from `src` to `dst` when its time comes.
struct SendAt : EventHandler {
  Network* net;
  Recorder* sink;
  NodeId src, dst;
  std::uint64_t bytes, token;
  void on_event(const Event&) override { net->send(src, dst, bytes, sink->to(token)); }
};

class FlowTest : public ::testing::Test {
 protected:
  explicit FlowTest(const std::string& config = "ring8.yml", FlowNetwork::Options o = {})
      : topology(load_topology(kConfigs + config)), sink(queue), net(topology, queue, o) {}
  Topology topology;
  EventQueue queue;
  Recorder sink;
  FlowNetwork net;
};

using FlowRing8 = FlowTest;

TEST_F(FlowRing8, AloneCostsWhatTheAnalyticalBackendCharges) {
  net.send(0, 1, kMiB, sink.to(1));
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, kHop + kBeta}}));
  EXPECT_EQ(net.counters()[0].second, 0u);  // no rate recomputation for a lone flow
}

TEST_F(FlowRing8, TwoFlowsStartingTogetherShareTheLinkEqually) {
  net.send(0, 1, kMiB, sink.to(1));
  net.send(0, 2, kMiB, sink.to(2));  // over 0->1 and 1->2
  queue.run();
  // Both at B/2 for the whole time: latency + 2S/B.
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, kHop + 2 * kBeta}, {2, 2 * kHop + 2 * kBeta}}));
}

TEST_F(FlowRing8, MessagesOfOnePairLeaveOneAfterAnother) {
  net.send(0, 1, kMiB, sink.to(1));
  net.send(0, 1, kMiB / 2, sink.to(2));
  net.send(0, 1, 0, sink.to(3));  // even an empty one keeps its place
  net.send(0, 2, kMiB, sink.to(4));  // another pair shares 0->1 with whichever is sending
  queue.run();
  // 1 and 4 share 0->1 at B/2 and both finish at 2S/B; only then does 2 (S/2)
  // leave, alone, done at 5S/2B; the empty message 3 leaves after it.
  EXPECT_EQ(sink.at[1], kHop + 2 * kBeta);
  EXPECT_EQ(sink.at[4], 2 * kHop + 2 * kBeta);
  EXPECT_EQ(sink.at[2], kHop + 5 * kBeta / 2);
  EXPECT_EQ(sink.at[3], kHop + 5 * kBeta / 2);
  // Delivery order within the pair is send order.
  std::vector<std::uint64_t> order;
  for (const Delivered& d : sink.seen) {
    if (d.token != 4) order.push_back(d.token);
  }
  EXPECT_EQ(order, (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST_F(FlowRing8, EachCommunicatorOfAPairHasItsOwnQueue) {
  // Communicator 1 sends S then S/2 to the same peer; the pair's own
  // connection (point-to-point, 0) sends S/2 at once.
  net.send_on(Connection{0, 0, 1}, 0, 1, kMiB, sink.to(1));
  net.send_on(Connection{0, 0, 1}, 0, 1, kMiB / 2, sink.to(2));
  net.send(0, 1, kMiB / 2, sink.to(3));
  queue.run();
  // 1 and 3 share 0->1 at B/2: 3 is through at S/B, then 1 alone sends its
  // last S/2 by 3S/2B; 2 waits for it in its queue and is alone to 2S/B.
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{3, kHop + kBeta}, {1, kHop + 3 * kBeta / 2}, {2, kHop + 2 * kBeta}}));
}

TEST_F(FlowRing8, ACommunicatorsMessageTakenBackLeavesTheOthersQueued) {
  net.send_on(Connection{0, 0, 1}, 0, 1, kMiB, sink.to(1));
  net.send_on(Connection{0, 0, 2}, 0, 1, kMiB, sink.to(2));
  net.send_on(Connection{0, 0, 2}, 0, 1, kMiB / 2, sink.to(3));
  net.take_back(0, 1, 2, kMiB / 2);  // the last one of communicator 2: queued
  EXPECT_THROW(net.take_back(0, 1, 3, kMiB), std::logic_error);  // no such lane
  EXPECT_EQ(net.messages_in_network(), 2u);
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, kHop + 2 * kBeta}, {2, kHop + 2 * kBeta}}));
}

TEST(FlowPairOrder, SharedLetsOnePairsMessagesShare) {
  const Topology t = load_topology(kConfigs + "ring8.yml");
  EventQueue queue;
  Recorder sink(queue);
  FlowNetwork::Options o;
  o.pair_fifo = false;
  FlowNetwork net(t, queue, o);
  net.send(0, 1, kMiB, sink.to(1));
  net.send(0, 1, kMiB / 2, sink.to(2));
  queue.run();
  // Both at B/2: the smaller one arrives first.
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{2, kHop + kBeta}, {1, kHop + kBeta + kBeta / 2}}));
}

TEST_F(FlowRing8, FlowJoiningHalfwayHalvesTheRestOfTheFirst) {
  SendAt later{};
  later.net = &net;
  later.sink = &sink;
  later.src = 0;
  later.dst = 2;
  later.bytes = kMiB;
  later.token = 2;
  net.send(0, 1, kMiB, sink.to(1));
  queue.schedule(kBeta / 2, &later, 0, 0);
  queue.run();
  // Flow 1: S/2 alone, then S/2 at B/2 (takes S/B): done at 3S/2B.
  // Flow 2: S/2 at B/2 alongside, then S/2 alone: done at 2S/B.
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, kHop + kBeta / 2 + kBeta}, {2, 2 * kHop + 2 * kBeta}}));
}

TEST_F(FlowRing8, AFlowThatHasSentEverythingNoLongerSharesItsLinks) {
  // The first message's last byte left at kBeta; it is still in flight (latency)
  // when the second starts, but the link is free: full rate for the second.
  SendAt later{};
  later.net = &net;
  later.sink = &sink;
  later.src = 0;
  later.dst = 1;
  later.bytes = kMiB;
  later.token = 2;
  net.send(0, 1, kMiB, sink.to(1));
  queue.schedule(kBeta + kHop / 2, &later, 0, 0);
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, kHop + kBeta}, {2, kBeta + kHop / 2 + kBeta + kHop}}));
  const LinkUsage u = net.link_usage()[link_between(topology, 0, 1)];
  EXPECT_EQ(u.busy, 2 * kBeta);
  EXPECT_EQ(u.peak_flows, 1u);
  EXPECT_EQ(queue.processed(), 3u);  // one event per lone message, plus the scheduled send
}

// Records a link's busy time when its time comes.
struct BusyProbe : EventHandler {
  const FlowNetwork* net;
  LinkId link;
  std::vector<Time> seen;
  void on_event(const Event&) override { seen.push_back(net->link_usage()[link].busy); }
};

TEST_F(FlowRing8, LinkBusyTimeIsExactWhileASoloFlowSendsAndAfterItSharesALink) {
  // A alone on 0->1 from 0; B (0->2) joins 0->1 at kBeta/2, making A an
  // ordinary flow. 0->1 carries 2 MiB at full rate without a gap: busy 2 kBeta.
  // Probes: while A is solo, once it shares, and during the last latency.
  const LinkId l01 = link_between(topology, 0, 1);
  BusyProbe probe{};
  probe.net = &net;
  probe.link = l01;
  SendAt join{};
  join.net = &net;
  join.sink = &sink;
  join.src = 0;
  join.dst = 2;
  join.bytes = kMiB;
  join.token = 2;
  net.send(0, 1, kMiB, sink.to(1));
  queue.schedule(kBeta / 4, &probe, 0, 0);
  queue.schedule(kBeta / 2, &join, 0, 0);
  queue.schedule(kBeta, &probe, 0, 0);
  queue.schedule(2 * kBeta + kHop / 2, &probe, 0, 0);
  queue.run();
  EXPECT_EQ(probe.seen, (std::vector<Time>{kBeta / 4, kBeta, 2 * kBeta}));
  EXPECT_EQ(net.link_usage()[l01].busy, 2 * kBeta);
  EXPECT_EQ(net.link_usage()[link_between(topology, 1, 2)].busy, 2 * kBeta - kBeta / 2);  // B alone: kBeta / 2 to 2 kBeta
}

TEST_F(FlowRing8, FlowsOnDisjointLinksDoNotAffectEachOther) {
  net.send(0, 1, kMiB, sink.to(1));
  net.send(1, 0, kMiB, sink.to(2));  // the other direction is another link
  net.send(2, 3, kMiB, sink.to(3));
  net.send(5, 7, kMiB, sink.to(4));
  queue.run();
  EXPECT_EQ(sink.at[1], kHop + kBeta);
  EXPECT_EQ(sink.at[2], kHop + kBeta);
  EXPECT_EQ(sink.at[3], kHop + kBeta);
  EXPECT_EQ(sink.at[4], 2 * kHop + kBeta);
  EXPECT_EQ(net.counters()[0].second, 0u);
}

TEST_F(FlowRing8, BottleneckElsewhereGivesTheMaxMinShareNotTheEqualShare) {
  // Link 0->1 carries flows A (0->2) and B (0->1); link 1->2 carries A, C (1->2)
  // and D (1->3). Link 1->2 is the bottleneck: A, C, D get B/3 each; B then gets
  // the rest of 0->1, 2B/3, not the equal share B/2.
  net.send(0, 2, kMiB, sink.to(1));
  net.send(0, 1, kMiB, sink.to(2));
  net.send(1, 2, kMiB, sink.to(3));
  net.send(1, 3, kMiB, sink.to(4));
  ASSERT_TRUE(queue.step());  // the one recompute of this instant
  const BytesPerSecond third = kLinkRate / 3;
  std::vector<BytesPerSecond> r01 = net.rates_on(link_between(topology, 0, 1));
  std::vector<BytesPerSecond> r12 = net.rates_on(link_between(topology, 1, 2));
  std::sort(r01.begin(), r01.end());
  EXPECT_EQ(r01, (std::vector<BytesPerSecond>{third, kLinkRate - third}));
  EXPECT_EQ(r12, (std::vector<BytesPerSecond>{third, third, third}));
  EXPECT_LE(std::accumulate(r12.begin(), r12.end(), BytesPerSecond{0}), kLinkRate);  // never above capacity
  queue.run();
  EXPECT_EQ(net.flows_in_flight(), 0u);
}

class FlowSwitch8 : public FlowTest {
 protected:
  FlowSwitch8() : FlowTest("switch8.yml") {}
};

TEST_F(FlowSwitch8, IncastIntoOneNpuFinishesAtNSOverB) {
  for (NodeId s = 1; s <= 4; ++s) net.send(s, 0, kMiB, sink.to(s));
  queue.run();
  // Four flows share switch->NPU 0 at B/4 each: all done at 4S/B, plus two link latencies.
  ASSERT_EQ(sink.seen.size(), 4u);
  for (const Delivered& d : sink.seen) EXPECT_EQ(d.at, 2 * kHop + 4 * kBeta) << d.token;
  const auto usage = net.link_usage();
  const LinkUsage& down = usage[link_between(topology, 8, 0)];
  EXPECT_EQ(down.bytes, 4 * kMiB);
  EXPECT_EQ(down.busy, 4 * kBeta);
  EXPECT_EQ(down.peak_flows, 4u);
  EXPECT_EQ(usage[link_between(topology, 1, 8)].bytes, kMiB);
  EXPECT_EQ(usage[link_between(topology, 1, 8)].busy, 4 * kBeta);  // held back by the shared downlink
}

TEST_F(FlowSwitch8, UnevenSharesRoundRatesDown) {
  // B/7 is not a whole number of B/s: each flow gets floor(B/7), so the link
  // never exceeds B, and the seven finish at most 1 ps after 7S/B.
  for (NodeId s = 1; s < 8; ++s) net.send(s, 0, kMiB, sink.to(s));
  queue.run();
  ASSERT_EQ(sink.seen.size(), 7u);
  for (const Delivered& d : sink.seen) {
    EXPECT_GE(d.at, 2 * kHop + 7 * kBeta);
    EXPECT_LE(d.at, 2 * kHop + 7 * kBeta + 1);
  }
}

TEST_F(FlowSwitch8, NoLinkCarriesMoreThanItsBandwidth) {
  // All-to-all: every link's bytes fit in its busy time at its bandwidth.
  std::uint64_t token = 0;
  for (NodeId s = 0; s < 8; ++s) {
    for (NodeId d = 0; d < 8; ++d) {
      if (s != d) net.send(s, d, kMiB + 17 * s + d, sink.to(++token));
    }
  }
  queue.run();
  const auto usage = net.link_usage();
  for (LinkId i = 0; i < usage.size(); ++i) {
    const auto max_bytes = static_cast<uint128>(topology.links()[i].bandwidth) * usage[i].busy / 1'000'000'000'000ull;
    EXPECT_LE(usage[i].bytes, max_bytes) << "link " << i;
    EXPECT_GT(usage[i].bytes, 0u);
  }
}

TEST(FlowOptions, NicBandwidthCapsAllTrafficOutOfAnNpu) {
  const Topology t = load_topology(kConfigs + "switch8.yml");
  EventQueue queue;
  Recorder sink(queue);
  FlowNetwork::Options o;
  o.nic_bandwidth = kLinkRate / 2;  // the NIC, not the 50 GB/s port, is the limit
  FlowNetwork net(t, queue, o);
  net.send(0, 1, kMiB, sink.to(1));
  queue.run();
  EXPECT_EQ(sink.at[1], 2 * kHop + 2 * kBeta);
}

TEST(FlowOptions, NicBandwidthIsSharedAcrossLinks) {
  // Fully connected: 0->1 and 0->2 use different links, but one NIC.
  const Topology t = parse_topology("shape: FullyConnected\nnpus: 4\nbandwidth: 50GB/s\nlatency: 500ns\n", "fc4");
  EventQueue queue;
  Recorder sink(queue);
  FlowNetwork::Options o;
  o.nic_bandwidth = kLinkRate;
  FlowNetwork net(t, queue, o);
  net.send(0, 1, kMiB, sink.to(1));
  net.send(0, 2, kMiB, sink.to(2));
  queue.run();
  EXPECT_EQ(sink.at[1], kHop + 2 * kBeta);
  EXPECT_EQ(sink.at[2], kHop + 2 * kBeta);
}

TEST(FlowOptions, LinkEfficiencyAndMessageLatency) {
  const Topology t = load_topology(kConfigs + "ring8.yml");
  EventQueue queue;
  Recorder sink(queue);
  FlowNetwork::Options o;
  o.links.link_efficiency = 0.5;
  o.links.message_latency = 2'000'000;
  FlowNetwork net(t, queue, o);
  net.send(0, 1, kMiB, sink.to(1));
  queue.run();
  EXPECT_EQ(sink.at[1], kHop + 2'000'000 + 2 * kBeta);
}

TEST(FlowOptions, FromTheRegistryWithWrittenUnits) {
  const Topology t = load_topology(kConfigs + "switch8.yml");
  EventQueue queue;
  Recorder sink(queue);
  NetworkConfig c{"flow", {{"nic_bandwidth", {"200Gbps", "sys.yml:3: network.nic_bandwidth"}}}};
  const auto net = make_network(c, t, queue);
  EXPECT_EQ(net->name(), "flow");
  net->send(0, 1, kMiB, sink.to(1));
  queue.run();
  EXPECT_EQ(sink.at[1], 2 * kHop + 2 * kBeta);  // 200 Gb/s = 25 GB/s
}

TEST(FlowOptions, BadOptionsNameTheirPlace) {
  const Topology t = load_topology(kConfigs + "switch8.yml");
  EventQueue queue;
  auto message = [&](NetworkConfig c) {
    try {
      make_network(c, t, queue);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({"analytical", {{"nic_bandwidth", {"1", "s.yml:4: network.nic_bandwidth"}}}}),
            "s.yml:4: network.nic_bandwidth: backend 'analytical' has no option 'nic_bandwidth' (its options: "
            "link_efficiency, message_latency, egress, routing, qps_per_connection, ecmp_seed)");
  EXPECT_NE(message({"flow", {{"nic_bandwidth", {"fast", "s.yml:4: network.nic_bandwidth"}}}}).find("s.yml:4"),
            std::string::npos);
  EXPECT_NE(message({"flow", {{"link_efficiency", {"1.5", "s.yml:5: x"}}}}).find("(0, 1]"), std::string::npos);
  EXPECT_EQ(message({"ns2", {}}), "unknown network backend 'ns2' (known: analytical, flow, ns3)");
}

TEST(FlowDeterminism, SameInputsSameTimes) {
  auto run = [] {
    const Topology t = load_topology(kConfigs + "mesh8x8.yml");
    EventQueue queue;
    Recorder sink(queue);
    FlowNetwork net(t, queue);
    std::uint64_t token = 0;
    for (NodeId s = 0; s < 64; s += 3) {
      for (NodeId d = 0; d < 64; d += 5) {
        if (s != d) net.send(s, d, 1000 * (s + 1) + d, sink.to(++token));
      }
    }
    queue.run();
    return sink.seen;
  };
  EXPECT_EQ(run(), run());
}

}  // namespace
}  // namespace sim
