#include "network/analytical/analytical_network.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../common/source_paths.h"
#include "../../common/sizes.h"
#include "core/error.h"
#include "tests/network/delivery_recorder.h"
#include "network/backend_registry.h"

namespace sim {
namespace {

using testing::kConfigs;
using testing::kMiB;

constexpr Time kOneMiBNeighbour = 21'471'520;  // 500 ns + 1048576 B / 50 GB/s
constexpr Time kOneMiBAt50GBps = 20'971'520;

using testing_support::Recorder;
using Delivered = testing_support::Delivered;

class AnalyticalTest : public ::testing::Test {
 protected:
  explicit AnalyticalTest(const std::string& config = "ring8.yml")
      : topology(load_topology(kConfigs + config)), sink(queue), net(topology, queue) {}
  Topology topology;
  EventQueue queue;
  Recorder sink;
  AnalyticalNetwork net;
};

using Ring8 = AnalyticalTest;

TEST_F(Ring8, OneMiBBetweenNeighbours) {
  net.send(0, 1, kMiB, sink.to(42));
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{42, kOneMiBNeighbour}}));
  EXPECT_EQ(net.messages_sent(), 1u);
  EXPECT_EQ(queue.processed(), 1u);  // one event per message
}

TEST_F(Ring8, SameEgressLinkSerializesInSendOrder) {
  net.send(0, 1, kMiB, sink.to(1));
  net.send(0, 1, kMiB, sink.to(2));
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, kOneMiBNeighbour}, {2, kOneMiBNeighbour + kOneMiBAt50GBps}}));
}

TEST(AnalyticalNetwork, EgressOverlapChargesEveryMessageAsIfAlone) {
  // ASTRA-sim's congestion-unaware model, through the registry as a config would ask.
  const Topology t = load_topology(kConfigs + "ring8.yml");
  EventQueue queue;
  Recorder sink(queue);
  NetworkConfig config;
  config.options["egress"] = OptionValue{"overlap", "test: network.egress"};
  const auto net = make_network(config, t, queue);
  net->send(0, 1, kMiB, sink.to(1));
  net->send(0, 1, kMiB, sink.to(2));
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, kOneMiBNeighbour}, {2, kOneMiBNeighbour}}));
  config.options["egress"] = OptionValue{"queue", "test: network.egress"};
  EXPECT_THROW(make_network(config, t, queue), InputError);
  config.backend = "flow";
  config.options["egress"] = OptionValue{"overlap", "test: network.egress"};
  EXPECT_THROW(make_network(config, t, queue), InputError);  // analytical only
}

// Two nodes of two NPUs: NVLink-like 400 GB/s inside a node, a 50 GB/s NIC per
// NPU across. NPU 0 -> NPU 3 goes through NPU 1's NIC (dimension 0 first): its
// bottleneck lies past NPU 0's port, so the port is held only for its own
// 2.62144 us, and the queue is NPU 1's NIC link.
// Two nodes of two NPUs: a 400 GB/s port inside the node, a 50 GB/s NIC each
// (NPU i's NIC on rail i); 1 MiB takes kAt400 and kAt50 on them.
Topology two_nodes_of_two() {
  return parse_topology(
      "topology: [Switch, Switch]\nnpus_count: [2, 2]\nbandwidth: [400GB/s, 50GB/s]\nlatency: [0ns, 0ns]\n", "test");
}
constexpr Time kAt400 = 2'621'440, kAt50 = 20'971'520;

TEST(AnalyticalNetwork, ABottleneckPastThePortQueuesThereNotAtThePort) {
  const Topology t = two_nodes_of_two();
  {
    EventQueue queue;
    Recorder sink(queue);
    AnalyticalNetwork net(t, queue);
    net.send(0, 3, kMiB, sink.to(1));  // across, through NPU 1's NIC
    net.send(0, 1, kMiB, sink.to(2));  // inside the node, the same port: waits 2.62144 us, not 20.97152
    queue.run();
    EXPECT_EQ(sink.seen, (std::vector<Delivered>{{2, 2 * kAt400}, {1, kAt50}}));
  }
  {
    EventQueue queue;
    Recorder sink(queue);
    AnalyticalNetwork net(t, queue);
    net.send(0, 3, kMiB, sink.to(1));
    net.send(1, 3, kMiB, sink.to(2));  // NPU 1's own NIC: queues behind the message passing through it
    queue.run();
    EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, kAt50}, {2, 2 * kAt50}}));
  }
  {
    // A message waiting at the NIC does not hold the port it has crossed:
    // NPU 0's next message inside the node goes once the port is through with
    // the first (2.62144 us), not after the NIC's queue (20.97152 us more).
    EventQueue queue;
    Recorder sink(queue);
    AnalyticalNetwork net(t, queue);
    net.send(1, 3, kMiB, sink.to(1));  // NPU 1's NIC busy until kAt50
    net.send(0, 3, kMiB, sink.to(2));  // through it: crosses NPU 0's port at once, waits at the NIC
    net.send(0, 1, kMiB, sink.to(3));
    queue.run();
    EXPECT_EQ(sink.seen, (std::vector<Delivered>{{3, 2 * kAt400}, {1, kAt50}, {2, 2 * kAt50}}));
  }
}

TEST(AnalyticalNetwork, ANicIdleBeforeARelayedMessageServesWhatIsReadyThere) {
  // NPU 0's message to NPU 3 crosses NPU 0's port after a message inside the
  // node (2.62144 us), so it is booked on NPU 1's NIC from then on; NPU 1's
  // own message, sent afterwards but ready at 0, starts at once in the NIC's
  // idle time and finishes its remaining bytes after the relayed one: the NIC
  // is busy from 0 to 2 x 20.97152 us, as the flow backend has it, not idle
  // for the first 2.62144 us.
  const Topology t = two_nodes_of_two();
  EventQueue queue;
  Recorder sink(queue);
  AnalyticalNetwork net(t, queue);
  net.send(0, 1, kMiB, sink.to(1));  // NPU 0's port until kAt400
  net.send(0, 3, kMiB, sink.to(2));  // through NPU 1's NIC from kAt400 to kAt400 + kAt50
  net.send(1, 3, kMiB, sink.to(3));  // the NIC's idle [0, kAt400), then the rest after message 2
  net.send(1, 3, kMiB, sink.to(4));  // no idle time left before the NIC's tail: after it
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, kAt400}, {2, kAt400 + kAt50}, {3, 2 * kAt50}, {4, 3 * kAt50}}));
}

TEST_F(Ring8, DifferentEgressLinksDoNotWait) {
  net.send(0, 1, kMiB, sink.to(1));
  net.send(0, 7, kMiB, sink.to(2));
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, kOneMiBNeighbour}, {2, kOneMiBNeighbour}}));
}

TEST_F(Ring8, RoutesSharingTheFirstLinkShareThePort) {
  // 0 -> 2 leaves on link 0 -> 1 as well: it waits for the first message's bytes.
  net.send(0, 1, kMiB, sink.to(1));
  net.send(0, 2, kMiB, sink.to(2));
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, kOneMiBNeighbour}, {2, 2 * kOneMiBAt50GBps + 1'000'000}}));
}

TEST_F(Ring8, NoContentionInsideTheNetwork) {
  // 0 -> 2 and 1 -> 2 share link 1 -> 2 but start on different ports.
  net.send(0, 2, kMiB, sink.to(1));
  net.send(1, 2, kMiB, sink.to(2));
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{2, kOneMiBNeighbour}, {1, kOneMiBAt50GBps + 1'000'000}}));
}

TEST_F(Ring8, LaterSendQueuesBehindBusyPort) {
  struct SendLater : EventHandler {
    AnalyticalNetwork* net;
    Recorder* sink;
    void on_event(const Event&) override { net->send(0, 1, 1000, sink->to(2)); }
  } later;
  later.net = &net;
  later.sink = &sink;
  net.send(0, 1, kMiB, sink.to(1));
  queue.schedule(10'000, &later, 0, 0);
  queue.run();
  // The port is busy until 20971520 ps; 1000 B then take 20000 ps, plus 500 ns.
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, kOneMiBNeighbour}, {2, kOneMiBAt50GBps + 20'000 + 500'000}}));
}

TEST_F(Ring8, IdlePortStartsAtNow) {
  struct SendLater : EventHandler {
    AnalyticalNetwork* net;
    Recorder* sink;
    void on_event(const Event&) override { net->send(3, 4, kMiB, sink->to(2)); }
  } later;
  later.net = &net;
  later.sink = &sink;
  net.send(3, 4, 1000, sink.to(1));
  queue.schedule(1'000'000'000, &later, 0, 0);
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, 520'000}, {2, 1'000'000'000 + kOneMiBNeighbour}}));
}

TEST_F(Ring8, SelfMessageIsDeliveredNow) {
  net.send(5, 5, kMiB, sink.to(9));
  EXPECT_EQ(queue.pending(), 1u);  // delivered as an event, not inline
  EXPECT_TRUE(sink.seen.empty());
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{9, 0}}));
  EXPECT_EQ(net.messages_sent(), 1u);
}

TEST_F(Ring8, ZeroBytesCostOnlyLatency) {
  net.send(0, 4, 0, sink.to(1));
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, 2'000'000}}));
}

TEST_F(Ring8, PathCost) {
  const auto cost = net.path_cost(0, 5);
  EXPECT_EQ(cost.latency_sum, 1'500'000);
  EXPECT_EQ(cost.min_bandwidth, 50'000'000'000u);
  EXPECT_EQ(cost.hops, 3u);
  EXPECT_EQ(topology.links()[cost.first_link].from, 0u);
  EXPECT_EQ(topology.links()[cost.first_link].to, 7u);
}

TEST_F(Ring8, OutOfRangeNodeIsInputError) { EXPECT_THROW(net.send(0, 8, 1, sink.to(1)), InputError); }

TEST(AnalyticalNetwork, BottleneckSetsTheRate) {
  const Topology t = load_topology(kConfigs + "graph_2switch.yml");
  EventQueue queue;
  Recorder sink(queue);
  AnalyticalNetwork net(t, queue);
  net.send(0, 7, kMiB, sink.to(1));  // 3 hops, 25 GB/s inter-switch link
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, 1'500'000 + 2 * kOneMiBAt50GBps}}));
}

TEST(AnalyticalNetwork, AstraSimGibibyteForm) {
  // 1 MiB at ASTRA-sim's "50 GB/s" = 50 * 2^30 B/s takes 19531250 ps exactly.
  const Topology ring = parse_topology(
      "bandwidth_unit: GiB/s\ntopology: [Ring]\nnpus_count: [8]\nbandwidth: [50]\nlatency: [500]\n", "t.yml");
  EventQueue queue;
  Recorder sink(queue);
  AnalyticalNetwork net(ring, queue);
  net.send(0, 1, kMiB, sink.to(1));
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, 500'000 + 19'531'250}}));

  // The shipped switch example: 20531.25 ns (ASTRA-sim's unit test truncates to 20531 ns).
  const Topology sw = load_topology(kConfigs + "astrasim/switch8_gib.yml");
  EventQueue q2;
  Recorder s2(q2);
  AnalyticalNetwork n2(sw, q2);
  n2.send(0, 1, kMiB, s2.to(1));
  q2.run();
  EXPECT_EQ(s2.seen, (std::vector<Delivered>{{1, 20'531'250}}));
}

TEST(AnalyticalNetwork, GibibyteRoundsUpToPicoseconds) {
  const Topology t = parse_topology(
      "bandwidth_unit: GiB/s\ntopology: [Ring]\nnpus_count: [4]\nbandwidth: [50]\nlatency: [500]\n", "t.yml");
  EventQueue queue;
  Recorder sink(queue);
  AnalyticalNetwork net(t, queue);
  net.send(0, 1, 1000, sink.to(1));  // 1000e12 / 53687091200 = 18626.45... ps
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, 500'000 + 18'627}}));
}

TEST(AnalyticalNetwork, MultiDimensionalRouteCrossesEveryDimension) {
  const Topology t = load_topology(kConfigs + "astrasim/ring4x4.yml");
  EventQueue queue;
  Recorder sink(queue);
  AnalyticalNetwork net(t, queue);
  net.send(0, 5, kMiB, sink.to(1));  // (0,0) -> (1,1): 500 ns + 700 ns, bottleneck 25 GB/s
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{1, 1'200'000 + 2 * kOneMiBAt50GBps}}));
}

TEST(MakeNetwork, KnowsAnalytical) {
  const Topology t = load_topology(kConfigs + "switch8.yml");
  EventQueue queue;
  Recorder sink(queue);
  const auto net = make_network(NetworkConfig{}, t, queue);
  EXPECT_EQ(net->name(), "analytical");
  EXPECT_EQ(&net->topology(), &t);
  net->send(0, 7, kMiB, sink.to(3));
  queue.run();
  EXPECT_EQ(sink.seen, (std::vector<Delivered>{{3, 1'000'000 + kOneMiBAt50GBps}}));
}

TEST(MakeNetwork, UnknownBackendIsInputError) {
  const Topology t = load_topology(kConfigs + "switch8.yml");
  EventQueue queue;
  Recorder sink(queue);
  try {
    make_network(NetworkConfig{"garnet", {}}, t, queue);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "unknown network backend 'garnet' (known: analytical, flow, ns3)");
  }
}

}  // namespace
}  // namespace sim
