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
  // A message injected at ns-3 time `at` (picoseconds, >= ns-3's now); src != dst.
  virtual void send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to, Time at) = 0;
  // Per link, indexed by LinkId, counted from our time 0 (after any warm-up).
  virtual std::vector<LinkUsage> link_usage() const = 0;
  // Transport-specific counters, e.g. {"TCP connections", 56}.
  virtual std::vector<std::pair<std::string, std::uint64_t>> counters() const = 0;
  // Drops what must go before ns-3's simulator is destroyed (sockets); the
  // transport itself is destroyed after it, with its nodes and devices.
  virtual void close() {}
};

}  // namespace sim
