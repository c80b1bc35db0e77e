#include "system/program/message_matcher.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>
#include <vector>

#include "core/index_pool.h"

namespace sim {
namespace {

using Key = PeerTagKey<std::int64_t>;
using KeyHash = PeerTagKeyHash;
// Messages and receives are plain numbers here; the matcher never looks inside them.
using Matcher = MessageMatcher<Key, int, int, KeyHash>;

TEST(MessageMatcher, MessagesFirstMatchInArrivalOrder) {
  Matcher m;
  int got = -1;
  const Key k{0, 1, 7};
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(m.arrive(k, 100 + i, got));
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(m.queued_messages(), 5u);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(m.post(k, i, got));
    EXPECT_EQ(got, 100 + i);
  }
  EXPECT_EQ(m.size(), 0u);
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.queued_messages(), 0u);
}

TEST(MessageMatcher, ReceivesFirstMatchInPostingOrder) {
  Matcher m;
  int got = -1;
  const Key k{3, 2, -1};
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(m.post(k, 200 + i, got));
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(m.queued_receives(), 5u);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(m.arrive(k, i, got));
    EXPECT_EQ(got, 200 + i);
  }
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.queued_receives(), 0u);
}

TEST(MessageMatcher, KeysAreIndependent) {
  Matcher m;
  int got = -1;
  // Same pair, different tags; same tag, other directions.
  const Key keys[] = {{0, 1, 0}, {0, 1, 1}, {1, 0, 0}, {0, 2, 0}, {2, 1, 0}};
  for (int k = 0; k < 5; ++k) EXPECT_FALSE(m.arrive(keys[k], 10 * k, got));
  EXPECT_EQ(m.size(), 5u);
  // A receive on a key with nothing queued does not take another key's message.
  EXPECT_FALSE(m.post(Key{1, 2, 0}, 99, got));
  EXPECT_EQ(m.size(), 6u);
  for (int k = 4; k >= 0; --k) {
    ASSERT_TRUE(m.post(keys[k], k, got));
    EXPECT_EQ(got, 10 * k);
    EXPECT_EQ(m.size(), static_cast<std::size_t>(k) + 1);  // that key's entry is gone
  }
  ASSERT_TRUE(m.arrive(Key{1, 2, 0}, 5, got));
  EXPECT_EQ(got, 99);
  EXPECT_TRUE(m.empty());
}

TEST(MessageMatcher, EntryErasedWhenEmptyAndReusable) {
  Matcher m;
  int got = -1;
  const Key k{5, 6, 42};
  EXPECT_FALSE(m.arrive(k, 1, got));
  EXPECT_EQ(m.size(), 1u);
  EXPECT_TRUE(m.post(k, 2, got));
  EXPECT_EQ(m.size(), 0u);
  // The key comes back after being erased, from the other side this time.
  EXPECT_FALSE(m.post(k, 3, got));
  EXPECT_EQ(m.size(), 1u);
  EXPECT_TRUE(m.arrive(k, 4, got));
  EXPECT_EQ(got, 3);
  EXPECT_EQ(m.size(), 0u);
  int calls = 0;
  m.for_each_message([&](const Key&, int) { ++calls; });
  m.for_each_receive([&](const Key&, int) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(MessageMatcher, InterleavedPostAndArriveKeepFifo) {
  Matcher m;
  int got = -1;
  const Key k{0, 1, 0};
  // arrive a0, a1; post r0 (takes a0); arrive a2; post r1 (a1), r2 (a2), r3 (queued);
  // arrive a3 (takes r3); post r4, r5; arrive a4 (r4), a5 (r5).
  EXPECT_FALSE(m.arrive(k, 0, got));
  EXPECT_FALSE(m.arrive(k, 1, got));
  ASSERT_TRUE(m.post(k, 100, got));
  EXPECT_EQ(got, 0);
  EXPECT_FALSE(m.arrive(k, 2, got));
  ASSERT_TRUE(m.post(k, 101, got));
  EXPECT_EQ(got, 1);
  ASSERT_TRUE(m.post(k, 102, got));
  EXPECT_EQ(got, 2);
  EXPECT_EQ(m.size(), 0u);
  EXPECT_FALSE(m.post(k, 103, got));
  ASSERT_TRUE(m.arrive(k, 3, got));
  EXPECT_EQ(got, 103);
  EXPECT_FALSE(m.post(k, 104, got));
  EXPECT_FALSE(m.post(k, 105, got));
  EXPECT_EQ(m.queued_receives(), 2u);
  ASSERT_TRUE(m.arrive(k, 4, got));
  EXPECT_EQ(got, 104);
  ASSERT_TRUE(m.arrive(k, 5, got));
  EXPECT_EQ(got, 105);
  EXPECT_TRUE(m.empty());
}

TEST(MessageMatcher, ForEachListsQueuedItemsOldestFirstPerKey) {
  Matcher m;
  int got = -1;
  EXPECT_FALSE(m.arrive(Key{0, 1, 0}, 1, got));
  EXPECT_FALSE(m.arrive(Key{0, 2, 0}, 7, got));
  EXPECT_FALSE(m.arrive(Key{0, 1, 0}, 2, got));
  EXPECT_FALSE(m.post(Key{3, 1, 0}, 30, got));
  EXPECT_FALSE(m.post(Key{3, 1, 0}, 31, got));
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<int>> messages, receives;
  m.for_each_message([&](const Key& k, int v) { messages[{k.src, k.dst}].push_back(v); });
  m.for_each_receive([&](const Key& k, int v) { receives[{k.src, k.dst}].push_back(v); });
  EXPECT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[std::make_pair(0u, 1u)], (std::vector<int>{1, 2}));
  EXPECT_EQ(messages[std::make_pair(0u, 2u)], (std::vector<int>{7}));
  EXPECT_EQ(receives.size(), 1u);
  EXPECT_EQ(receives[std::make_pair(3u, 1u)], (std::vector<int>{30, 31}));
}

TEST(MessageMatcher, PoolsDoNotGrowAcrossRounds) {
  // 1,000 rounds of a 64-rank ring: every round's tag is new, as in a point-to-point
  // ring, so a matcher that kept keys or nodes would grow with every round.
  Matcher m;
  int got = -1;
  std::size_t msg_cap = 0, recv_cap = 0;
  for (std::int64_t round = 0; round < 1000; ++round) {
    for (std::uint32_t r = 0; r < 64; ++r) {
      const Key k{r, (r + 1) % 64, round};
      // Alternate which side comes first, so both pools are used.
      if ((r + round) % 2) {
        EXPECT_FALSE(m.arrive(k, static_cast<int>(r), got));
      } else {
        EXPECT_FALSE(m.post(k, static_cast<int>(r), got));
      }
    }
    EXPECT_EQ(m.size(), 64u);
    for (std::uint32_t r = 0; r < 64; ++r) {
      const Key k{r, (r + 1) % 64, round};
      if ((r + round) % 2) {
        ASSERT_TRUE(m.post(k, -1, got));
      } else {
        ASSERT_TRUE(m.arrive(k, -1, got));
      }
      EXPECT_EQ(got, static_cast<int>(r));
    }
    EXPECT_EQ(m.size(), 0u);
    if (round == 0) {
      msg_cap = m.message_capacity();
      recv_cap = m.receive_capacity();
      EXPECT_LE(msg_cap, 64u);
      EXPECT_LE(recv_cap, 64u);
    }
  }
  EXPECT_EQ(m.message_capacity(), msg_cap);
  EXPECT_EQ(m.receive_capacity(), recv_cap);
  EXPECT_EQ(m.queued_messages(), 0u);
  EXPECT_EQ(m.queued_receives(), 0u);
}

TEST(MessageMatcher, RandomInterleavingsMatchAReferenceModel) {
  // Against per-key std::vector FIFOs: same matches, same order.
  std::mt19937 rng(12345);
  Matcher m;
  std::map<std::int64_t, std::pair<std::vector<int>, std::vector<int>>> model;  // tag -> (messages, receives)
  int got = -1;
  for (int step = 0; step < 20000; ++step) {
    const std::int64_t tag = static_cast<std::int64_t>(rng() % 8);
    const Key k{1, 2, tag};
    auto& [msgs, recvs] = model[tag];
    if (rng() % 2) {
      const bool matched = m.arrive(k, step, got);
      ASSERT_EQ(matched, !recvs.empty());
      if (matched) {
        EXPECT_EQ(got, recvs.front());
        recvs.erase(recvs.begin());
      } else {
        msgs.push_back(step);
      }
    } else {
      const bool matched = m.post(k, step, got);
      ASSERT_EQ(matched, !msgs.empty());
      if (matched) {
        EXPECT_EQ(got, msgs.front());
        msgs.erase(msgs.begin());
      } else {
        recvs.push_back(step);
      }
    }
    std::size_t keys = 0, queued = 0;
    for (const auto& [t, q] : model) {
      keys += !q.first.empty() || !q.second.empty();
      queued += q.first.size() + q.second.size();
    }
    ASSERT_EQ(m.size(), keys);
    ASSERT_EQ(m.queued_messages() + m.queued_receives(), queued);
  }
}

TEST(IndexPool, ReusesFreedSlots) {
  IndexPool<int> pool;
  const std::uint32_t a = pool.alloc(1), b = pool.alloc(2);
  EXPECT_EQ(pool.live(), 2u);
  pool.free(a);
  EXPECT_EQ(pool.live(), 1u);
  const std::uint32_t c = pool.alloc(3);
  EXPECT_EQ(c, a);
  EXPECT_EQ(pool[c], 3);
  EXPECT_EQ(pool[b], 2);
  EXPECT_EQ(pool.capacity(), 2u);
}

}  // namespace
}  // namespace sim
