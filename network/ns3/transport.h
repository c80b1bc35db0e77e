// What carries messages inside the ns3 backend: TCP (tcp/) or RoCEv2 (roce/).
//
// A transport builds its own nodes and links on ns-3's simulator from the
// topology, takes messages at a given ns-3 time, tells the sink when a
// message's last byte has arrived, and keeps per-link statistics. The clock
// bridge and the Network around it are the same for every transport
// (ns3_network.cpp). Internal to the module; C++17, no ns-3 headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "network/network.h"
#include "network/ns3/ns3_options.h"

namespace sim {

// Told, inside an ns-3 event, that a message has fully arrived.
class MessageSink {
 public:
  virtual void delivered(const Delivery& to) = 0;

 protected:
  ~MessageSink() = default;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // A message injected at ns-3 time `at` (picoseconds, >= ns-3's now); src !=
  // dst. `connection` (Network::send_on: NCCL's channel, the job's service
  // level) picks its queue pairs and traffic class where the transport has them.
  virtual void send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to, Time at,
                    Connection connection) = 0;
  // Traffic classes kept apart (Network::traffic_classes()).
  virtual std::uint32_t traffic_classes() const { return 1; }
  // Whether send_on_link carries one-hop messages to and from switches (the
  // uploads and copies of in-network reduction and multicast,
  // Network::send_on_link); a transport without them keeps these defaults.
  virtual bool carries_switch_ops() const { return false; }
  // A message over link `link` alone, from its sending end (an NPU or a
  // switch) to its receiving end, injected at ns-3 time `at`.
  virtual void send_on_link(LinkId link, std::uint64_t bytes, const Delivery& to, Time at);
  // Per link, indexed by LinkId, counted from our time 0 (after any warm-up).
  virtual std::vector<LinkUsage> link_usage() const = 0;
  // Transport-specific counters, e.g. {"TCP connections", 56}.
  virtual std::vector<std::pair<std::string, std::uint64_t>> counters() const = 0;
  // Drops what must go before ns-3's simulator is destroyed (sockets); the
  // transport itself is destroyed after it, with its nodes and devices.
  virtual void close() {}
};

// The transports, each defined in its folder (network.transport picks one):
// a new transport adds a folder and a line here and in ns3_network.cpp.
//
// tcp/: every NPU and switch an ns-3 node with an IPv4 stack, every directed
// link a point-to-point channel with a drop-tail queue, every ordered NPU pair
// one TCP connection whose byte stream carries its messages back to back.
std::unique_ptr<Transport> make_tcp_transport(const Topology& topology, const Ns3Options& options, MessageSink& sink);
// roce/: RoCEv2 over a lossless (or lossy) Ethernet fabric, with our own
// ports, switches and NICs on ns-3's simulator (no IP stack): every NPU pair's
// messages on one queue pair, MTU-sized packets, PFC at switch ingress, ECN
// marking at switch egress, DCQCN at the NICs, go-back-N when a packet is lost.
std::unique_ptr<Transport> make_roce_transport(const Topology& topology, const Ns3Options& options, MessageSink& sink);
// roce/ too: InfiniBand's credit-based link flow control on the same ports.
std::unique_ptr<Transport> make_ib_transport(const Topology& topology, const Ns3Options& options, MessageSink& sink);

}  // namespace sim
