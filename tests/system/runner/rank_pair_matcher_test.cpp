#include "system/runner/rank_pair_matcher.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <tuple>
#include <vector>

namespace sim {
namespace {

TEST(RankPairMatcher, MessagesFirstMatchInArrivalOrder) {
  RankPairMatcher m(4);
  std::uint32_t got = 0;
  // More than the inline slots hold: the rest goes to the overflow, still FIFO.
  for (std::uint32_t i = 0; i < 6; ++i) EXPECT_FALSE(m.arrive(0, 1, 7, 100 + i, got));
  EXPECT_EQ(m.queued_messages(), 6u);
  EXPECT_EQ(m.overflowed(), 5u);  // one slot item per key; its followers wait behind it
  for (std::uint32_t i = 0; i < 6; ++i) {
    ASSERT_TRUE(m.post(0, 1, 7, i, got));
    EXPECT_EQ(got, 100 + i);
  }
  EXPECT_TRUE(m.empty());
}

TEST(RankPairMatcher, ReceivesFirstMatchInPostingOrder) {
  RankPairMatcher m(4);
  std::uint32_t got = 0;
  for (std::uint32_t i = 0; i < 5; ++i) EXPECT_FALSE(m.post(3, 2, -1, 200 + i, got));
  EXPECT_EQ(m.queued_receives(), 5u);
  for (std::uint32_t i = 0; i < 5; ++i) {
    ASSERT_TRUE(m.arrive(3, 2, -1, i, got));
    EXPECT_EQ(got, 200 + i);
  }
  EXPECT_TRUE(m.empty());
}

TEST(RankPairMatcher, KeysAreIndependent) {
  RankPairMatcher m(3);
  std::uint32_t got = 0;
  // Same receiver, different tags or senders; and other receivers.
  EXPECT_FALSE(m.arrive(0, 1, 0, 10, got));
  EXPECT_FALSE(m.arrive(0, 1, 1, 11, got));
  EXPECT_FALSE(m.arrive(2, 1, 0, 12, got));
  EXPECT_FALSE(m.arrive(1, 0, 0, 13, got));
  EXPECT_FALSE(m.post(0, 2, 0, 99, got));  // takes nobody else's message
  ASSERT_TRUE(m.post(2, 1, 0, 1, got));
  EXPECT_EQ(got, 12u);
  ASSERT_TRUE(m.post(0, 1, 1, 1, got));
  EXPECT_EQ(got, 11u);
  ASSERT_TRUE(m.post(0, 1, 0, 1, got));
  EXPECT_EQ(got, 10u);
  ASSERT_TRUE(m.post(1, 0, 0, 1, got));
  EXPECT_EQ(got, 13u);
  ASSERT_TRUE(m.arrive(0, 2, 0, 5, got));
  EXPECT_EQ(got, 99u);
  EXPECT_TRUE(m.empty());
}

TEST(RankPairMatcher, ARingOfNewTagsStaysInTheSlots) {
  // The point-to-point ring of benchmark (p): every round a new tag, at most
  // a message and a receive in flight per receiver. Nothing overflows.
  RankPairMatcher m(64);
  std::uint32_t got = 0;
  for (std::int64_t round = 0; round < 500; ++round) {
    for (std::uint32_t r = 0; r < 64; ++r) {
      const std::uint32_t dst = (r + 1) % 64;
      if ((r + static_cast<std::uint32_t>(round)) % 2) EXPECT_FALSE(m.arrive(r, dst, round, r, got));
      else EXPECT_FALSE(m.post(r, dst, round, r, got));
    }
    for (std::uint32_t r = 0; r < 64; ++r) {
      const std::uint32_t dst = (r + 1) % 64;
      const bool matched = (r + static_cast<std::uint32_t>(round)) % 2 ? m.post(r, dst, round, 0, got)
                                                                       : m.arrive(r, dst, round, 0, got);
      ASSERT_TRUE(matched);
      EXPECT_EQ(got, r);
    }
    EXPECT_TRUE(m.empty());
  }
  EXPECT_EQ(m.overflowed(), 0u);
}

TEST(RankPairMatcher, ForEachListsEachKeysItemsOldestFirst) {
  RankPairMatcher m(4);
  std::uint32_t got = 0;
  // Fill rank 1's slots with other keys so key (0, 1, 5) starts in the overflow,
  // then free a slot: later items of that key must still follow the overflow's.
  EXPECT_FALSE(m.arrive(2, 1, 0, 1, got));
  EXPECT_FALSE(m.arrive(2, 1, 1, 2, got));
  EXPECT_FALSE(m.arrive(2, 1, 2, 3, got));
  EXPECT_FALSE(m.arrive(0, 1, 5, 40, got));
  ASSERT_TRUE(m.post(2, 1, 0, 0, got));
  EXPECT_FALSE(m.arrive(0, 1, 5, 41, got));
  EXPECT_FALSE(m.post(3, 0, 9, 70, got));
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::int64_t>, std::vector<std::uint32_t>> messages, receives;
  m.for_each_message([&](std::uint32_t s, std::uint32_t d, std::int64_t t, std::uint32_t v) { messages[{s, d, t}].push_back(v); });
  m.for_each_receive([&](std::uint32_t s, std::uint32_t d, std::int64_t t, std::uint32_t v) { receives[{s, d, t}].push_back(v); });
  EXPECT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[std::make_tuple(0u, 1u, std::int64_t{5})], (std::vector<std::uint32_t>{40, 41}));
  EXPECT_EQ(receives.size(), 1u);
  EXPECT_EQ(receives[std::make_tuple(3u, 0u, std::int64_t{9})], (std::vector<std::uint32_t>{70}));
  ASSERT_TRUE(m.post(0, 1, 5, 0, got));
  EXPECT_EQ(got, 40u);
  ASSERT_TRUE(m.post(0, 1, 5, 0, got));
  EXPECT_EQ(got, 41u);
}

TEST(RankPairMatcher, RandomInterleavingsMatchAReferenceModel) {
  // Against per-key std::deque FIFOs: same matches, same order, whatever the
  // mix of slots and overflow (few receivers and senders, so keys collide).
  std::mt19937 rng(2026);
  RankPairMatcher m(3);
  using Key = std::tuple<std::uint32_t, std::uint32_t, std::int64_t>;
  std::map<Key, std::pair<std::deque<std::uint32_t>, std::deque<std::uint32_t>>> model;  // (messages, receives)
  std::size_t messages = 0, receives = 0;
  std::uint32_t got = 0;
  for (std::uint32_t step = 0; step < 50000; ++step) {
    const Key k{rng() % 3, rng() % 3, static_cast<std::int64_t>(rng() % 4)};
    auto& [msgs, recvs] = model[k];
    const auto [src, dst, tag] = k;
    if (rng() % 2) {
      const bool matched = m.arrive(src, dst, tag, step, got);
      ASSERT_EQ(matched, !recvs.empty()) << "step " << step;
      if (matched) {
        EXPECT_EQ(got, recvs.front());
        recvs.pop_front();
        --receives;
      } else {
        msgs.push_back(step);
        ++messages;
      }
    } else {
      const bool matched = m.post(src, dst, tag, step, got);
      ASSERT_EQ(matched, !msgs.empty()) << "step " << step;
      if (matched) {
        EXPECT_EQ(got, msgs.front());
        msgs.pop_front();
        --messages;
      } else {
        recvs.push_back(step);
        ++receives;
      }
    }
    ASSERT_EQ(m.queued_messages(), messages);
    ASSERT_EQ(m.queued_receives(), receives);
  }
  EXPECT_GT(m.overflowed(), 0u);  // the overflow path was exercised
  // What is left, listed per key oldest first, is the model's queues.
  std::map<Key, std::vector<std::uint32_t>> left;
  m.for_each_message([&](std::uint32_t s, std::uint32_t d, std::int64_t t, std::uint32_t v) { left[{s, d, t}].push_back(v); });
  for (const auto& [k, q] : model) {
    const std::vector<std::uint32_t> want(q.first.begin(), q.first.end());
    EXPECT_EQ(left[k], want);
  }
}

}  // namespace
}  // namespace sim
