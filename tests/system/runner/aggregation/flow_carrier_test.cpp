// The representative run's flow rule (system/runner/aggregation/flow_carrier.h)
// against the flow backend itself: random sends from one NPU to peers on
// links of their own (a fully connected topology: every flow alone on its
// link), each pair's messages queued one after another. Every message must be
// delivered at the picosecond the backend delivers it, and each peer's busy
// time must be its link's.
#include "system/runner/aggregation/flow_carrier.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "network/flow/flow_network.h"
#include "system/collectives/ring.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

struct Send {
  Time at;
  std::uint32_t peer;  // NPU
  std::uint64_t bytes;
};

// Delivery times per message, through FlowNetwork.
struct BackendRun final : EventHandler {
  explicit BackendRun(const Topology& topo) : net(topo, queue) {}
  void on_event(const Event& e) override {
    if (e.kind == 1) {  // a send is due
      const Send& s = sends->at(e.payload);
      net.send(0, s.peer, s.bytes, Delivery{this, 2, e.payload});
    } else {
      delivered[e.payload] = e.time;
    }
  }
  EventQueue queue;
  FlowNetwork net;
  const std::vector<Send>* sends = nullptr;
  std::map<std::uint64_t, Time> delivered;
};

// The same through FlowCarrier, as the representative run drives it.
struct CarrierRun final : EventHandler, CarrierHost {
  void on_event(const Event& e) override {
    if (e.kind == 1) {
      const Send& s = sends->at(e.payload);
      carrier.send(static_cast<std::uint32_t>(e.payload), s.peer - 1, costs.at(s.peer - 1), s.bytes);
    } else {
      carrier.delivered(static_cast<std::uint32_t>(e.payload));
      delivered[e.payload] = e.time;
    }
  }
  EventQueue& carrier_queue() override { return queue; }
  void deliver_at(std::uint32_t message, Time at) override { queue.schedule(at, this, 2, message); }
  void carrier_activity(Time) override {}
  void carrier_refuse(const char* why) override { refused = why; }
  EventQueue queue;
  FlowCarrier carrier;
  std::vector<SymmetricPeerCost> costs;
  const std::vector<Send>* sends = nullptr;
  std::map<std::uint64_t, Time> delivered;
  std::string refused;
};

TEST(FlowCarrier, DeliversEveryMessageWhenTheFlowBackendDoes) {
  std::mt19937_64 rng(25);
  static const char* kLat[] = {"500ns", "1us", "3ns"};
  static const char* kBw[] = {"50GB/s", "7GB/s", "100GB/s"};
  for (int c = 0; c < 200; ++c) {
    SCOPED_TRACE(c);
    const std::uint32_t npus = 2 + static_cast<std::uint32_t>(rng() % 4);
    const Topology topo = testing::shape("FullyConnected", npus, kBw[rng() % 3], kLat[rng() % 3]);
    std::vector<Send> sends;
    Time t = 0;
    const int n = 1 + static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) {
      if (rng() % 3 == 0) t += static_cast<Time>(rng() % 40'000);  // often several at one instant
      static const std::uint64_t kBytes[] = {0, 1, 96, 4096, 1 << 20, 1000003};
      sends.push_back(Send{t, 1 + static_cast<std::uint32_t>(rng() % (npus - 1)), kBytes[rng() % 6]});
    }
    BackendRun backend(topo);
    CarrierRun carrier;
    backend.sends = carrier.sends = &sends;
    carrier.carrier.bind(carrier);
    for (std::uint32_t p = 1; p < npus; ++p) {
      const FlowNetwork::SoloRoute r = backend.net.solo_route(0, p, 0);
      carrier.costs.push_back(SymmetricPeerCost{r.latency, r.bottleneck, 0});
    }
    for (std::size_t i = 0; i < sends.size(); ++i) {
      backend.queue.schedule(sends[i].at, &backend, 1, i);
      carrier.queue.schedule(sends[i].at, &carrier, 1, i);
    }
    backend.queue.run();
    carrier.queue.run();
    ASSERT_EQ(carrier.refused, "");
    EXPECT_EQ(carrier.delivered, backend.delivered);
    const auto usage = backend.net.link_usage();
    for (std::uint32_t p = 1; p < npus; ++p) {
      const LinkId l = backend.net.solo_route(0, p, 0).links.at(0);
      EXPECT_EQ(carrier.carrier.busy(p - 1), usage[l].busy) << "peer " << p;
    }
    // Messages to different peers use different links; to one peer, one after another.
    const auto overlap = carrier.carrier.overlaps();
    for (std::size_t p = 0; p < overlap.size(); ++p) EXPECT_FALSE(overlap[p][p]);
  }
}

// Two messages to two peers sending at the same time are seen to overlap
// (the plan then requires their images to share no link); back to back, as
// the backend frees a link at its flow's finish, they do not.
std::vector<std::vector<bool>> overlaps_of(const std::vector<Send>& sends) {
  CarrierRun run;
  run.carrier.bind(run);
  run.costs = {SymmetricPeerCost{1000, 1'000'000'000'000, 0}, SymmetricPeerCost{1000, 1'000'000'000'000, 0}};
  run.sends = &sends;
  for (std::size_t i = 0; i < sends.size(); ++i) run.queue.schedule(sends[i].at, &run, 1, i);
  run.queue.run();
  return run.carrier.overlaps();
}

TEST(FlowCarrier, OverlapIsHalfOpen) {  // 100 B at 1e12 B/s: 100 ps each
  EXPECT_FALSE(overlaps_of({{0, 1, 100}, {100, 2, 100}})[0][1]);              // [0, 100), [100, 200)
  EXPECT_TRUE(overlaps_of({{0, 1, 100}, {99, 2, 100}})[0][1]);                // [0, 100), [99, 199)
  const auto queued = overlaps_of({{0, 1, 100}, {0, 1, 100}, {0, 2, 1}});     // peer 1 twice: queued
  EXPECT_FALSE(queued[0][0]);
  EXPECT_TRUE(queued[0][1]);
}

// The plan reads each communicator's own routes: on a leaf-spine a
// communicator's queue pairs hash onto spines of their own, so a ring
// 0 -> 2 -> 1 -> 3 -> 0 over two leaves of two NPUs is exact only where its two
// messages each way between the leaves take different spines under that
// communicator's hash.
TEST(FlowCarrier, ThePlanProvesACommunicatorsFlowsAloneOnItsOwnPaths) {
  const Topology t = parse_topology(
      "shape: FatTree\nleaves: 2\nnpus_per_leaf: 2\nspines: 2\nbandwidth: 50GB/s\nlatency: 500ns\n", "t.yml");
  EventQueue queue;
  FlowNetwork net(t, queue);
  const std::vector<std::uint32_t> members = {0, 2, 1, 3};
  const RingProgram ring(CollectiveType::kAllReduce, 4, 1 << 20, 1);
  const SystemConfig config;
  int exact = 0, refused = 0;
  for (std::uint32_t communicator = 1; communicator <= 32; ++communicator) {
    const auto spine = [&](NodeId s, NodeId d) { return t.ecmp_path(s, d, 0, 0, communicator); };
    const bool apart = spine(0, 2) != spine(1, 3) && spine(2, 1) != spine(3, 0);
    const FlowPlan plan = plan_on_flow(ring, members, communicator, config, net);
    EXPECT_EQ(plan.exact, apart) << "communicator " << communicator << ": " << plan.why;
    (plan.exact ? exact : refused) += 1;
  }
  EXPECT_GT(exact, 0);    // both cases occur
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace sim
