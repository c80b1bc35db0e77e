// The simulation kernel: one global queue of plain events.
//
// Events are small structs kept by value and dispatched through one virtual
// call to their handler. Simulated time never goes back, so the queue is a
// radix heap: bucket i holds events whose time first differs from the current
// time in bit i-1, pushes are O(1), and each event moves down a bucket at most
// 64 times (usually once or twice). Buckets are vectors, so nothing is
// allocated per event once they have grown. Events of equal time leave in
// scheduling order, so a run is deterministic. There is no global state:
// several simulations may live in one process.
#pragma once

#include <cstdint>
#include <climits>
#include <vector>

#include "core/huge_pages.h"
#include "core/time.h"

namespace sim {

struct Event;

// Anything that receives events: a network backend, the system layer, ...
class EventHandler {
 public:
  virtual void on_event(const Event& event) = 0;

 protected:
  ~EventHandler() = default;
};

// Another simulator whose clock advances with this queue (the ns-3 backend's
// packet simulator). Before each of our events, the queue lets the peer run
// its own events up to that event's time, so the two interleave exactly.
class ClockPeer {
 public:
  static constexpr Time kNoLimit = INT64_MAX;
  // Runs the peer's events at times <= `limit`. Must return early, right after
  // an event of the peer that scheduled one of ours, and may return when it
  // has nothing left. With kNoLimit (our queue is empty) it runs until either.
  virtual void run_until(Time limit) = 0;

 protected:
  ~ClockPeer() = default;
};

// 32 bytes: every event is moved down the buckets once or twice, so its size
// is the queue's memory traffic. Events of equal time need no sequence number:
// the buckets keep them in scheduling order.
struct Event {
  Time time;
  EventHandler* handler;
  std::uint64_t payload;  // handler-defined (an index into the handler's pool)
  std::uint32_t kind;     // handler-defined
};
static_assert(sizeof(Event) == 32);

class EventQueue {
 public:
  Time now() const { return now_; }
  bool empty() const { return size_ == 0; }
  std::size_t pending() const { return size_; }
  std::uint64_t processed() const { return processed_; }

  // Schedules `handler->on_event` at absolute time `at` (>= now).
  void schedule(Time at, EventHandler* handler, std::uint32_t kind, std::uint64_t payload);
  // Throws TimeLimitError when now + delay would pass kMaxTime.
  void schedule_in(Time delay, EventHandler* handler, std::uint32_t kind, std::uint64_t payload) {
    schedule(add_time(now_, delay, "its end time"), handler, kind, payload);
  }

  // Time of the earliest pending event; ClockPeer::kNoLimit when empty.
  Time next_time() const;
  // Keeps `peer` in step with this queue (nullptr: none). One peer at a time.
  void set_peer(ClockPeer* peer) { peer_ = peer; }

  // Pops and dispatches the earliest event (after letting the peer catch up
  // to it); false when neither has anything left.
  bool step();
  // Runs until no event is left.
  void run() {
    while (step()) {
    }
  }

 private:
  static constexpr int kBuckets = 65;
  static int bucket_of(Time at, Time base) {
    const auto diff = static_cast<std::uint64_t>(at ^ base);
    return diff == 0 ? 0 : 64 - __builtin_clzll(diff);
  }
  // Moves the smallest non-empty bucket's events down so bucket 0 holds the next time.
  void refill();

  std::vector<Event, HugePageAllocator<Event>> buckets_[kBuckets];
  std::size_t head_ = 0;  // bucket 0 is consumed front to back
  std::size_t size_ = 0;
  Time now_ = 0;
  std::uint64_t processed_ = 0;
  ClockPeer* peer_ = nullptr;
};

}  // namespace sim
