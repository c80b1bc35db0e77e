// The network interface every backend implements (analytical now; flow and
// ns-3 later): send `bytes` from one NPU to another, be told when delivered.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "core/event_queue.h"
#include "network/topology.h"

namespace sim {

// Receives deliveries. The token is whatever the sender passed to send().
class MessageSink {
 public:
  virtual void on_delivered(std::uint64_t token) = 0;

 protected:
  ~MessageSink() = default;
};

class Network {
 public:
  virtual ~Network() = default;
  virtual std::string_view name() const = 0;
  virtual const Topology& topology() const = 0;
  // Injects a message at the current simulated time. When its last byte has
  // arrived at `dst`, the sink's on_delivered(token) runs (as an event).
  // src == dst is delivered at once (zero time); bytes may be 0.
  virtual void send(NodeId src, NodeId dst, std::uint64_t bytes, std::uint64_t token) = 0;
  // Messages sent so far (for reports and benchmarks).
  virtual std::uint64_t messages_sent() const = 0;
};

// Backend by name ("analytical"). Throws InputError for an unknown name.
std::unique_ptr<Network> make_network(std::string_view backend, const Topology& topology,
                                      EventQueue& queue, MessageSink& sink);

}  // namespace sim
