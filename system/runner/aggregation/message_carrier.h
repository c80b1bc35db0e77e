// How the representative run of exact step aggregation (symmetric_run.h)
// carries the origin's messages across the network, when the backend's rule
// is more than the analytical closed form the run applies by itself: a
// carrier prices each message and schedules its delivery on the run's
// private event queue, with events of its own where the backend has them
// (the flow backend's per-pair queue: flow_carrier.h).
#pragma once

#include <cstdint>

#include "core/event_queue.h"
#include "core/time.h"

namespace sim {

struct SymmetricPeerCost;

// What the representative run offers its carrier.
class CarrierHost {
 public:
  virtual EventQueue& carrier_queue() = 0;
  // Message `message` reaches its peer at `at` (>= now); the delivery is scheduled now.
  virtual void deliver_at(std::uint32_t message, Time at) = 0;
  // An event of the carrier's, scheduled by the origin at `scheduled`, did
  // something at the current time (it ties with other ranks' events: symmetric_run.h).
  virtual void carrier_activity(Time scheduled) = 0;
  // The run cannot be certified exact.
  virtual void carrier_refuse(const char* why) = 0;

 protected:
  ~CarrierHost() = default;
};

class MessageCarrier {
 public:
  virtual ~MessageCarrier() = default;
  // Called once, before the run's first event.
  virtual void bind(CarrierHost& host) = 0;
  // The origin's message `message` of `bytes` to its peer number `peer` (in
  // order of first use), whose route costs `cost`, enters the network now.
  virtual void send(std::uint32_t message, std::uint32_t peer, const SymmetricPeerCost& cost,
                    std::uint64_t bytes) = 0;
  // The delivery of `message` is being handled (before the run acts on it).
  virtual void delivered(std::uint32_t message) = 0;
};

}  // namespace sim
