#include "core/event_queue.h"

#include <stdexcept>
#include <string>

namespace sim {

void EventQueue::schedule(Time at, EventHandler* handler, std::uint32_t kind, std::uint64_t payload) {
  if (at < now_) {
    throw std::logic_error("event scheduled in the past: at " + std::to_string(at) + " ps, now " +
                           std::to_string(now_) + " ps");
  }
  buckets_[bucket_of(at, now_)].push_back(Event{at, handler, payload, kind});
  ++size_;
}

void EventQueue::refill() {
  auto& zero = buckets_[0];
  zero.clear();
  head_ = 0;
  int i = 1;
  while (buckets_[i].empty()) ++i;
  auto& from = buckets_[i];
  Time least = from.front().time;
  for (const Event& e : from) least = e.time < least ? e.time : least;
  now_ = least;
  // In order, so events of equal time keep their scheduling order.
  for (const Event& e : from) buckets_[bucket_of(e.time, least)].push_back(e);
  from.clear();
}

Time EventQueue::next_time() const {
  if (size_ == 0) return ClockPeer::kNoLimit;
  if (head_ < buckets_[0].size()) return now_;  // bucket 0 holds events at now_
  int i = 1;
  while (buckets_[i].empty()) ++i;
  Time least = buckets_[i].front().time;
  for (const Event& e : buckets_[i]) least = e.time < least ? e.time : least;
  return least;
}

bool EventQueue::step() {
  // The peer first: its events at our next event's time run before ours, and
  // it stops early when one of its events scheduled something here.
  if (peer_) peer_->run_until(next_time());
  if (size_ == 0) return false;
  if (head_ == buckets_[0].size()) refill();
  const Event ev = buckets_[0][head_++];
  --size_;
  now_ = ev.time;
  ++processed_;
  ev.handler->on_event(ev);
  return true;
}

}  // namespace sim
