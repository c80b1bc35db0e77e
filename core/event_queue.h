// The simulation kernel: one global queue of plain events.
//
// Events are small structs kept by value in a 4-ary heap (a vector, so no
// allocation per event once it has grown) and dispatched through one virtual
// call to their handler. Ties in time are broken by scheduling order, so a run
// is deterministic. There is no global state: several simulations may live in
// one process.
#pragma once

#include <cstdint>
#include <vector>

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

struct Event {
  Time time;
  std::uint64_t seq;  // scheduling order; breaks ties in time deterministically
  EventHandler* handler;
  std::uint64_t payload;  // handler-defined (an index into the handler's pool)
  std::uint32_t kind;     // handler-defined
};

class EventQueue {
 public:
  Time now() const { return now_; }
  bool empty() const { return heap_.empty(); }
  std::size_t pending() const { return heap_.size(); }
  std::uint64_t processed() const { return processed_; }

  // Schedules `handler->on_event` at absolute time `at` (>= now).
  void schedule(Time at, EventHandler* handler, std::uint32_t kind, std::uint64_t payload);
  void schedule_in(Time delay, EventHandler* handler, std::uint32_t kind, std::uint64_t payload) {
    schedule(now_ + delay, handler, kind, payload);
  }

  // Pops and dispatches the earliest event; false when the queue is empty.
  bool step();
  // Runs until no event is left.
  void run() {
    while (step()) {
    }
  }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);

  std::vector<Event> heap_;
  Time now_ = 0;
  std::uint64_t next_seq_ = 0;
  std::uint64_t processed_ = 0;
};

}  // namespace sim
