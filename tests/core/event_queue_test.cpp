#include "core/event_queue.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>
#include <vector>

namespace sim {
namespace {

// Records (time, payload) of every event it receives.
class Recorder : public EventHandler {
 public:
  explicit Recorder(EventQueue& q) : queue(q) {}
  void on_event(const Event& e) override {
    EXPECT_EQ(queue.now(), e.time);
    seen.emplace_back(e.time, e.payload);
  }
  EventQueue& queue;
  std::vector<std::pair<Time, std::uint64_t>> seen;
};

using Seen = std::vector<std::pair<Time, std::uint64_t>>;

TEST(EventQueue, RunsInTimeOrder) {
  EventQueue q;
  Recorder r(q);
  q.schedule(30, &r, 0, 3);
  q.schedule(10, &r, 0, 1);
  q.schedule(20, &r, 0, 2);
  q.run();
  EXPECT_EQ(r.seen, (Seen{{10, 1}, {20, 2}, {30, 3}}));
  EXPECT_EQ(q.now(), 30);
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, TiesRunInSchedulingOrder) {
  EventQueue q;
  Recorder r(q);
  for (std::uint64_t i = 0; i < 100; ++i) q.schedule(i % 2 == 0 ? 5 : 7, &r, 0, i);
  q.run();
  ASSERT_EQ(r.seen.size(), 100u);
  for (std::size_t i = 0; i < 50; ++i) EXPECT_EQ(r.seen[i], (std::pair<Time, std::uint64_t>{5, 2 * i}));
  for (std::size_t i = 0; i < 50; ++i) EXPECT_EQ(r.seen[50 + i], (std::pair<Time, std::uint64_t>{7, 2 * i + 1}));
}

TEST(EventQueue, PassesKindAndPayload) {
  struct Check : EventHandler {
    void on_event(const Event& e) override {
      kind = e.kind;
      payload = e.payload;
    }
    std::uint32_t kind = 0;
    std::uint64_t payload = 0;
  } check;
  EventQueue q;
  q.schedule(1, &check, 7, 0xdeadbeefcafeULL);
  q.run();
  EXPECT_EQ(check.kind, 7u);
  EXPECT_EQ(check.payload, 0xdeadbeefcafeULL);
}

TEST(EventQueue, SchedulingInThePastThrows) {
  EventQueue q;
  Recorder r(q);
  q.schedule(100, &r, 0, 0);
  ASSERT_TRUE(q.step());
  EXPECT_THROW(q.schedule(99, &r, 0, 0), std::logic_error);
  q.schedule(100, &r, 0, 1);  // now itself is fine
  q.schedule_in(5, &r, 0, 2);
  q.run();
  EXPECT_EQ(r.seen, (Seen{{100, 0}, {100, 1}, {105, 2}}));
}

TEST(EventQueue, CountsProcessedEvents) {
  EventQueue q;
  Recorder r(q);
  EXPECT_EQ(q.processed(), 0u);
  EXPECT_FALSE(q.step());
  for (int i = 0; i < 1000; ++i) q.schedule((i * 7919) % 1013, &r, 0, static_cast<std::uint64_t>(i));
  EXPECT_EQ(q.pending(), 1000u);
  q.run();
  EXPECT_EQ(q.processed(), 1000u);
  EXPECT_EQ(q.pending(), 0u);
  for (std::size_t i = 1; i < r.seen.size(); ++i) {
    ASSERT_LE(r.seen[i - 1].first, r.seen[i].first);
    if (r.seen[i - 1].first == r.seen[i].first) {
      ASSERT_LT(r.seen[i - 1].second, r.seen[i].second);
    }
  }
}

TEST(EventQueue, HandlersMayScheduleMore) {
  EventQueue q;
  struct Chain : EventHandler {
    explicit Chain(EventQueue& q) : queue(q) {}
    void on_event(const Event& e) override {
      times.push_back(e.time);
      if (e.payload > 0) queue.schedule_in(10, this, 0, e.payload - 1);
    }
    EventQueue& queue;
    std::vector<Time> times;
  } chain(q);
  q.schedule(0, &chain, 0, 3);
  q.run();
  EXPECT_EQ(chain.times, (std::vector<Time>{0, 10, 20, 30}));
  EXPECT_EQ(q.processed(), 4u);
}

TEST(EventQueue, NextTimeIsTheEarliestPendingWithoutAdvancing) {
  EventQueue q;
  Recorder r(q);
  EXPECT_EQ(q.next_time(), ClockPeer::kNoLimit);
  q.schedule(70, &r, 0, 1);
  q.schedule(30, &r, 0, 2);
  EXPECT_EQ(q.next_time(), 30);
  EXPECT_EQ(q.now(), 0);
  q.step();
  EXPECT_EQ(q.next_time(), 70);
}

// A peer with its own timetable: at each of its times it schedules an event
// in our queue (at that same time), as a packet simulator delivers a message.
class FakePeer : public ClockPeer {
 public:
  FakePeer(EventQueue& q, Recorder& r, std::vector<Time> times) : queue_(q), recorder_(r), times_(std::move(times)) {}
  void run_until(Time limit) override {
    limits.push_back(limit);
    while (next_ < times_.size() && times_[next_] <= limit) {
      queue_.schedule(times_[next_], &recorder_, 0, 100 + next_);
      ++next_;
      return;  // one of ours was scheduled: hand the clock back
    }
  }
  std::vector<Time> limits;

 private:
  EventQueue& queue_;
  Recorder& recorder_;
  std::vector<Time> times_;
  std::size_t next_ = 0;
};

TEST(EventQueue, PeerEventsInterleaveWithOursAndRunAfterOurQueueEmpties) {
  EventQueue q;
  Recorder r(q);
  FakePeer peer(q, r, {5, 20, 20, 90});
  q.set_peer(&peer);
  q.schedule(10, &r, 0, 1);
  q.schedule(20, &r, 0, 2);
  q.run();
  // What the peer schedules at 20 joins our queue behind the event already
  // there (scheduling order), as a delivery from any backend would.
  EXPECT_EQ(r.seen, (Seen{{5, 100}, {10, 1}, {20, 2}, {20, 101}, {20, 102}, {90, 103}}));
  EXPECT_EQ(peer.limits.front(), 10);
  EXPECT_EQ(peer.limits.back(), ClockPeer::kNoLimit);
}

}  // namespace
}  // namespace sim
