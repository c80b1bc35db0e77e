// Test helper: an event handler that records when each message was delivered.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/event_queue.h"
#include "network/network.h"

namespace sim::testing_support {

struct Delivered {
  std::uint64_t token;
  Time at;
  bool operator==(const Delivered&) const = default;
};

class Recorder : public EventHandler {
 public:
  explicit Recorder(const EventQueue& q) : queue_(q) {}
  // The Delivery to pass to Network::send for message `token`.
  Delivery to(std::uint64_t token) { return Delivery{this, 0, token}; }
  void on_event(const Event& e) override {
    seen.push_back({e.payload, queue_.now()});
    at[e.payload] = queue_.now();
  }
  std::vector<Delivered> seen;          // in delivery order
  std::map<std::uint64_t, Time> at;     // token -> delivery time

 private:
  const EventQueue& queue_;
};

}  // namespace sim::testing_support
