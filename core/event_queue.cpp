#include "core/event_queue.h"

#include <stdexcept>
#include <string>

namespace sim {

namespace {
constexpr std::size_t kArity = 4;  // 4-ary: shallower than binary, same cache line for siblings
}

void EventQueue::schedule(Time at, EventHandler* handler, std::uint32_t kind, std::uint64_t payload) {
  if (at < now_) {
    throw std::logic_error("event scheduled in the past: at " + std::to_string(at) + " ps, now " +
                           std::to_string(now_) + " ps");
  }
  heap_.push_back(Event{at, next_seq_++, handler, payload, kind});
  sift_up(heap_.size() - 1);
}

bool EventQueue::step() {
  if (heap_.empty()) return false;
  const Event ev = heap_.front();
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
  now_ = ev.time;
  ++processed_;
  ev.handler->on_event(ev);
  return true;
}

void EventQueue::sift_up(std::size_t i) {
  const Event ev = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!before(ev, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = ev;
}

void EventQueue::sift_down(std::size_t i) {
  const std::size_t n = heap_.size();
  const Event ev = heap_[i];
  for (;;) {
    const std::size_t first = i * kArity + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t last = first + kArity < n ? first + kArity : n;
    for (std::size_t c = first + 1; c < last; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], ev)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = ev;
}

}  // namespace sim
