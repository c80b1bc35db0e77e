// The network interface every backend implements: send `bytes` from one NPU to
// another, and be told (by an event) when the last byte has arrived.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/event_queue.h"
#include "network/topology.h"

namespace sim {

class ClosedFormRoutes;  // network/capabilities.h
class SoloFlows;
class PortLoads;

// Where a delivery is reported: the backend schedules `handler->on_event`
// with this kind and payload at the delivery time. Each send names its own
// target, so point-to-point traffic, collectives and tests need no shared
// sink that sorts messages out again.
struct Delivery {
  EventHandler* handler = nullptr;
  std::uint32_t kind = 0;
  std::uint64_t payload = 0;
};

// Which of an NPU pair's connections carries a message. NCCL opens one
// connection per channel to each peer (and network.qps_per_connection RDMA
// queue pairs per connection, NCCL_IB_QPS_PER_CONNECTION), and a multi-path
// fabric hashes each queue pair onto its own path, so ECMP collisions depend
// on connections, not on NPU pairs (docs/network.md, "Multi-path routing").
// 0 is the pair's first connection: point-to-point messages and collectives
// without channels use it.
//
// The service level is the sending job's (InfiniBand's SL, a RoCE priority;
// sim --service-level): on a fabric with several traffic classes
// (Network::traffic_classes()) it picks the class that carries the message,
// with its own queues and flow control at every port; 0 by default.
//
// The communicator is the collective's group plus one. NCCL opens every
// communicator's connections apart, so one communicator's messages to a peer
// never wait behind another's (a tensor-parallel all-reduce and an expert
// all-to-all on different streams share the port, each in its own order).
// 0 is the pair's own: point-to-point messages, whose matching relies on
// their order, and collectives sent without a group.
struct Connection {
  std::uint32_t index = 0;
  std::uint8_t service_level = 0;
  std::uint32_t communicator = 0;
};

// What one directed link saw over a run.
struct LinkUsage {
  std::uint64_t bytes = 0;       // payload bytes that crossed it
  Time busy = 0;                 // time it carried at least one message (0 if the backend cannot tell)
  std::uint32_t peak_flows = 0;  // most messages on it at once (0 if the backend cannot tell)
  // Packet-level backends only (Network::carries_packets()):
  std::uint64_t wire_bytes = 0;        // frames as sent: headers, ACKs and retransmissions included
  std::uint64_t packets = 0;           // frames sent
  std::uint64_t drops = 0;             // frames dropped at its full transmit queue
  std::uint64_t peak_queue_bytes = 0;  // most bytes waiting in its transmit queue
  // Lossless packet-level transports (ns3 with transport: roce), 0 elsewhere:
  std::uint64_t pauses_sent = 0;      // PFC PAUSE frames its sender sent on it (stopping the far end's traffic back)
  std::uint64_t pauses_received = 0;  // PAUSE frames that stopped its sender
  Time paused = 0;                    // time its sender spent paused
  std::uint64_t ecn_marks = 0;        // packets ECN-marked in its transmit queue
  std::uint64_t cnps = 0;             // congestion notification packets it carried
};

class Network {
 public:
  virtual ~Network() = default;
  virtual std::string_view name() const = 0;
  virtual const Topology& topology() const = 0;
  // Injects a message at the current simulated time; `to` is told when its
  // last byte has arrived at `dst`. src == dst is delivered at once (zero
  // time); bytes may be 0. Throws InputError for an NPU outside the topology.
  virtual void send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to) = 0;
  // The same on connection `connection` of the pair; send() is connection 0.
  // A backend that routes every connection of a pair alike keeps this
  // default (analytical, ns3); flow routes each queue pair (network.routing).
  virtual void send_on(Connection connection, NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to) {
    (void)connection;
    send(src, dst, bytes, to);
  }
  // Traffic classes the backend keeps apart (queues and flow control per
  // class at every port): 1 where every message shares them alike.
  virtual std::uint32_t traffic_classes() const { return 1; }
  // Messages sent so far (for reports and benchmarks).
  std::uint64_t messages_sent() const { return messages_sent_; }
  // Per link, indexed by LinkId.
  virtual std::vector<LinkUsage> link_usage() const = 0;
  // Whether link_usage() has busy time and peak flows (a contention model), or bytes only.
  virtual bool measures_link_time() const = 0;
  // Whether link_usage() has the packet-level fields (packets, drops, queues).
  virtual bool carries_packets() const { return false; }
  // In-network reduction and multicast (docs/network.md): whether the backend
  // carries messages on one given link (an NPU's upload to its switch, a
  // switch's message down to an NPU), which the collective engine joins into
  // switch reductions and multicasts at switches marked in_network_reduction.
  virtual bool carries_switch_ops() const { return false; }
  // Sends `bytes` over link `link` alone (one hop, NPU to switch or switch to
  // NPU). Only when carries_switch_ops(); throws std::logic_error otherwise.
  virtual void send_on_link(LinkId link, std::uint64_t bytes, const Delivery& to);
  // Capabilities the engine asks for instead of knowing backends by type
  // (network/capabilities.h); nullptr when the backend does not offer one.
  virtual ClosedFormRoutes* closed_form_routes() { return nullptr; }
  virtual SoloFlows* solo_flows() { return nullptr; }
  virtual PortLoads* port_loads() { return nullptr; }
  // Backend-specific counters for benchmarks and reports, e.g. {"rate recomputations", n}.
  virtual std::vector<std::pair<std::string, std::uint64_t>> counters() const { return {}; }

 protected:
  // What every send() does first: checks the NPUs (InputError), counts the
  // message, and delivers a message to itself at once. Returns whether the
  // backend still has to carry it.
  bool admit(NodeId src, NodeId dst, const Delivery& to, EventQueue& queue);
  // Messages counted without admit(): exact step aggregation (AnalyticalNetwork::record_batch, unsend).
  void recount_messages(std::uint64_t added, std::uint64_t removed) { messages_sent_ = messages_sent_ + added - removed; }

 private:
  std::uint64_t messages_sent_ = 0;
};

}  // namespace sim
