// One clock for two simulators: our event queue drives ns-3's.
//
// Before our next event at time t, ns-3 runs its events up to t, and stops
// right after any ns-3 event that delivered a message into our queue, so a
// delivery at t' < t is handled by the collective engine before anything
// later happens in either simulator. ns-3 time = our time + the offset (a
// transport's warm-up before our time 0); both count picoseconds.
#pragma once

#include <cstdint>
#include <optional>

#include "core/event_queue.h"
#include "core/time.h"
#include "network/ns3/transport.h"
#include "ns3/event-id.h"

namespace sim {

// ns-3's simulator is a process-wide singleton, so one ns3 network lives at a
// time: a sweep running ns3 points on several threads takes turns here (the
// other backends still run in parallel). A second network on the thread that
// holds the turn could never get it: that is a programming error
// (std::logic_error).
class SimulatorTurn {
 public:
  SimulatorTurn();
  ~SimulatorTurn();
  SimulatorTurn(const SimulatorTurn&) = delete;
  SimulatorTurn& operator=(const SimulatorTurn&) = delete;
  // Destroys the simulator's state now (once; the destructor does it otherwise).
  void destroy_simulator();

 private:
  bool destroyed_ = false;
};

// Events ns-3 has run so far in this process's simulator.
std::uint64_t ns3_event_count();

class ClockBridge final : public ClockPeer, public MessageSink {
 public:
  // `message_latency` is added to every delivery (LinkModel).
  ClockBridge(EventQueue& queue, Time message_latency) : queue_(queue), message_latency_(message_latency) {}
  ~ClockBridge() { queue_.set_peer(nullptr); }
  ClockBridge(const ClockBridge&) = delete;
  ClockBridge& operator=(const ClockBridge&) = delete;

  // Our time 0 is ns-3's now; from here on our queue drives ns-3.
  void start();
  // ns-3's time (ps) at our queue's current time.
  Time ns3_now_of_ours() const { return queue_.now() + offset_; }
  // Schedules the delivery in our queue at ns-3's now and hands the clock back.
  void delivered(const Delivery& to) override;
  void run_until(Time limit) override;

 private:
  EventQueue& queue_;
  Time message_latency_;
  // A delivery past the largest time, found inside ns-3's event loop: thrown
  // once the loop has returned (an exception through ns-3's loop leaves its
  // events' packets behind).
  std::optional<TimeLimitError> late_;
  Time offset_ = 0;  // ns-3 time at our time 0
  ns3::EventId stopper_;
  Time stopper_at_ = -1;
};

}  // namespace sim
