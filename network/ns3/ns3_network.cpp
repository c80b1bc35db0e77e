// The ns3 backend as a Network: the simulator's turn, the clock bridge and
// the chosen transport (tcp/ or roce/). Includes no ns-3 header itself.
#include "network/ns3/ns3_network.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "network/ns3/clock_bridge.h"
#include "network/ns3/transport.h"

namespace sim {
namespace {

class Ns3Network final : public Network {
 public:
  Ns3Network(const Topology& topology, EventQueue& queue, const Ns3Options& options)
      : topology_(topology), queue_(queue), bridge_(queue, options.links.message_latency) {
    try {
      switch (options.transport) {
        case Ns3Transport::kRoce: transport_ = make_roce_transport(topology, options, bridge_); break;
        case Ns3Transport::kIb: transport_ = make_ib_transport(topology, options, bridge_); break;
        case Ns3Transport::kTcp: transport_ = make_tcp_transport(topology, options, bridge_); break;
      }
    } catch (...) {
      if (transport_) transport_->close();
      turn_.destroy_simulator();
      throw;
    }
    events_at_start_ = ns3_event_count();
    bridge_.start();
  }
  ~Ns3Network() override {
    queue_.set_peer(nullptr);
    transport_->close();
    turn_.destroy_simulator();
  }

  std::string_view name() const override { return "ns3"; }
  const Topology& topology() const override { return topology_; }
  void send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to) override {
    send_on(Connection{}, src, dst, bytes, to);
  }
  void send_on(Connection connection, NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to) override {
    if (!admit(src, dst, to, queue_)) return;
    transport_->send(src, dst, bytes, to, bridge_.ns3_now_of_ours(), connection);
  }
  // In-network reduction and multicast: the transport carries the uploads
  // and copies; the collective engine joins them at the switch.
  bool carries_switch_ops() const override { return transport_->carries_switch_ops(); }
  std::uint32_t traffic_classes() const override { return transport_->traffic_classes(); }
  void send_on_link(LinkId link, std::uint64_t bytes, const Delivery& to) override {
    recount_messages(1, 0);
    transport_->send_on_link(link, bytes, to, bridge_.ns3_now_of_ours());
  }
  std::vector<LinkUsage> link_usage() const override { return transport_->link_usage(); }
  bool measures_link_time() const override { return true; }
  bool carries_packets() const override { return true; }
  std::vector<std::pair<std::string, std::uint64_t>> counters() const override;

 private:
  const Topology& topology_;
  EventQueue& queue_;
  SimulatorTurn turn_;  // first: taken before anything touches ns-3, given back last
  ClockBridge bridge_;
  std::unique_ptr<Transport> transport_;
  std::uint64_t events_at_start_ = 0;
};

std::vector<std::pair<std::string, std::uint64_t>> Ns3Network::counters() const {
  std::uint64_t packets = 0, drops = 0;
  for (const LinkUsage& u : link_usage()) {
    packets += u.packets;
    drops += u.drops;
  }
  std::vector<std::pair<std::string, std::uint64_t>> out = {{"packet transmissions (all hops)", packets},
                                                            {"packets dropped", drops}};
  for (auto& c : transport_->counters()) out.push_back(std::move(c));
  out.emplace_back("ns-3 events", ns3_event_count() - events_at_start_);
  return out;
}

}  // namespace

void Transport::send_on_link(LinkId /*link*/, std::uint64_t /*bytes*/, const Delivery& /*to*/, Time /*at*/) {
  throw std::logic_error("this ns3 transport carries no single-link messages (carries_switch_ops() is false)");
}

}  // namespace sim

extern "C" sim::Network* sim_ns3_make_network(const sim::Topology& topology, sim::EventQueue& queue,
                                              const sim::Ns3Options& options) {
  return new sim::Ns3Network(topology, queue, options);
}
