// The flow backend's port loads (network/capabilities.h, PortLoads): traffic
// timed elsewhere put on an NPU's port as one flow at most its share of the
// port, against closed forms of max-min sharing, exactly in picoseconds (one
// switch, 50 GB/s links, 1 MiB in kBeta).
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "../../common/source_paths.h"
#include "../../common/sizes.h"
#include "network/flow/flow_network.h"
#include "tests/network/delivery_recorder.h"
#include "tests/network/topology_util.h"

namespace sim::port_load_test {
namespace {

using sim::testing::kConfigs;
using sim::testing::kMiB;
using testing_support::Delivered;
using testing_support::link_between;
using testing_support::Recorder;

constexpr Time kBeta = 20'971'520;  // 1 MiB at 50 GB/s
constexpr Time kHop = 500'000;      // one 500 ns link

class PortLoad : public ::testing::Test {
 protected:
  PortLoad() : topology(load_topology(kConfigs + "switch8.yml")), sink(queue), net(topology, queue) {}
  Topology topology;
  EventQueue queue;
  Recorder sink;
  FlowNetwork net;
};

TEST_F(PortLoad, AloneItTakesItsWorkWhateverItsShare) {
  PortLoads& ports = *net.port_loads();
  ports.add_port_load(0, 1, 4 * kBeta, 1.0, sink.to(1));
  ports.add_port_load(2, 3, 4 * kBeta, 0.5, sink.to(2));
  ports.add_port_load(4, 5, 4 * kBeta, 0.0, sink.to(3));  // no bytes: its time only
  queue.run();
  EXPECT_EQ(sink.at[1], 4 * kBeta);
  EXPECT_EQ(sink.at[2], 4 * kBeta);
  EXPECT_EQ(sink.at[3], 4 * kBeta);
  EXPECT_EQ(net.flows_in_flight(), 0u);
}

TEST_F(PortLoad, ItSharesThePortsEgressAndIngressLikeAFlow) {
  // A full-share load of 4 MiB's worth (4 kBeta) beside a 1 MiB message out
  // of the same port: each at B/2 until the message has left (2 kBeta), then
  // the load alone at B for its last 3 MiB: 5 kBeta, its work plus S/B.
  PortLoads& ports = *net.port_loads();
  ports.add_port_load(0, 1, 4 * kBeta, 1.0, sink.to(1));
  net.send(0, 2, kMiB, sink.to(2));
  queue.run();
  EXPECT_EQ(sink.at[2], 2 * kBeta + 2 * kHop);
  EXPECT_EQ(sink.at[1], 5 * kBeta);

  // The same with the message into the port.
  sink.seen.clear();
  const Time t0 = queue.now();
  ports.add_port_load(0, 1, 4 * kBeta, 1.0, sink.to(3));
  net.send(3, 0, kMiB, sink.to(4));
  queue.run();
  EXPECT_EQ(sink.at[4] - t0, 2 * kBeta + 2 * kHop);
  EXPECT_EQ(sink.at[3] - t0, 5 * kBeta);
}

TEST_F(PortLoad, AtHalfThePortAMessageBesideItSlowsNeither) {
  // Capped at B/2, the load takes what max-min leaves the message anyway.
  PortLoads& ports = *net.port_loads();
  ports.add_port_load(0, 1, 4 * kBeta, 0.5, sink.to(1));
  net.send(0, 2, kMiB, sink.to(2));
  queue.run();
  EXPECT_EQ(sink.at[2], 2 * kBeta + 2 * kHop);
  EXPECT_EQ(sink.at[1], 4 * kBeta);
}

// Cancels load `id` when its time comes and keeps what it carried.
struct CancelAt : EventHandler {
  PortLoads* ports = nullptr;
  std::uint32_t id = 0;
  double carried = -1;
  void on_event(const Event&) override { carried = ports->cancel_port_load(id); }
};

TEST_F(PortLoad, TakenBackItSaysHowMuchItCarriedAndIsNotDelivered) {
  PortLoads& ports = *net.port_loads();
  CancelAt alone, shared;
  alone.ports = shared.ports = &ports;
  alone.id = ports.add_port_load(0, 1, 4 * kBeta, 1.0, sink.to(1));
  queue.schedule(kBeta, &alone, 0, 0);
  // Beside a message for 2 kBeta: 1 MiB of its 4 carried by then.
  shared.id = ports.add_port_load(2, 3, 4 * kBeta, 1.0, sink.to(2));
  net.send(2, 4, kMiB, sink.to(3));
  queue.schedule(2 * kBeta, &shared, 0, 0);
  queue.run();
  EXPECT_DOUBLE_EQ(alone.carried, 0.25);
  EXPECT_DOUBLE_EQ(shared.carried, 0.25);
  EXPECT_EQ(sink.at.count(1), 0u);
  EXPECT_EQ(sink.at.count(2), 0u);
  EXPECT_EQ(sink.at[3], 2 * kBeta + 2 * kHop);
  EXPECT_EQ(net.flows_in_flight(), 0u);
  // Its links are free again: a new load alone takes its work, and the port's
  // figures hold what was carried (1 MiB, then 2 MiB), busy for as long.
  const Time t0 = queue.now();
  ports.add_port_load(0, 1, 2 * kBeta, 1.0, sink.to(4));
  queue.run();
  EXPECT_EQ(sink.at[4] - t0, 2 * kBeta);
  const auto usage = net.link_usage();
  for (const LinkId l : {link_between(topology, 0, 8), link_between(topology, 8, 0)}) {
    EXPECT_EQ(usage[l].bytes, 3 * kMiB) << l;
    EXPECT_EQ(usage[l].busy, 3 * kBeta) << l;
  }
  EXPECT_THROW(ports.cancel_port_load(alone.id + 100), std::logic_error);
}

TEST_F(PortLoad, ItNeedsTwoNpus) {
  EXPECT_THROW(net.port_loads()->add_port_load(0, 0, kBeta, 1.0, sink.to(1)), std::logic_error);
  EXPECT_THROW(net.port_loads()->add_port_load(0, 8, kBeta, 1.0, sink.to(1)), std::logic_error);
}

}  // namespace
}  // namespace sim::port_load_test
