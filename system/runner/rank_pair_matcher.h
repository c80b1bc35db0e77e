// Point-to-point matching of sends and receives, kept per receiving rank.
//
// Same semantics as MessageMatcher keyed by (src, dst, tag): a message is
// matched to the oldest posted receive of its key, a receive to the oldest
// queued message, FIFO per key. What differs is where the queue lives. A
// point-to-point program rarely has more than one or two messages in flight
// per receiving rank, and every round brings a new tag, so a global hash map
// would insert and erase one key per message, each at a random place in a
// large table. Here each receiving rank keeps a few inline slots, one cache
// line, and only the rare excess goes to a MessageMatcher ("overflow").
//
// Invariant that keeps FIFO order: when a key has an item in a slot, that
// item is the key's oldest; newer items of that key go to the overflow, and
// when the slot's item is taken the key's oldest overflow item (if any) moves
// up into the slot. A key with no slot item but with overflow items has all of
// them in the overflow, and while a rank has any overflow item, items of keys
// without a slot go to the overflow too.
//
// Messages and receives are 32-bit values the caller chooses (an index into
// its own pool, a node index); the matcher never looks inside them.
#pragma once

#include <cstdint>
#include <vector>

#include "system/program/message_matcher.h"

namespace sim {

class RankPairMatcher {
 public:
  explicit RankPairMatcher(std::uint32_t ranks = 0) : ranks_(ranks) {}

  // A message from `src` to `dst` with `tag`. If a receive is posted for it,
  // the oldest is taken into `receive` and true is returned; otherwise the
  // message is queued and false is returned.
  bool arrive(std::uint32_t src, std::uint32_t dst, std::int64_t tag, std::uint32_t message, std::uint32_t& receive) {
    return match(src, dst, tag, false, message, receive);
  }
  // A receive at `dst` from `src` with `tag`: likewise, the oldest queued message into `message`.
  bool post(std::uint32_t src, std::uint32_t dst, std::int64_t tag, std::uint32_t receive, std::uint32_t& message) {
    return match(src, dst, tag, true, receive, message);
  }

  std::size_t queued_messages() const { return queued_[0]; }
  std::size_t queued_receives() const { return queued_[1]; }
  bool empty() const { return queued_[0] == 0 && queued_[1] == 0; }
  // Items that went to the overflow (for tests: the common case should not).
  std::uint64_t overflowed() const { return overflowed_; }

  // f(src, dst, tag, message) for every queued message, each key's oldest first.
  template <typename F>
  void for_each_message(F&& f) const {
    for_each(false, f);
  }
  // f(src, dst, tag, receive) for every posted receive, likewise.
  template <typename F>
  void for_each_receive(F&& f) const {
    for_each(true, f);
  }

 private:
  static constexpr int kSlots = 3;
  using Key = PeerTagKey<std::int64_t>;
  using KeyHash = PeerTagKeyHash;
  struct Slot {
    std::int64_t tag;
    std::uint32_t src;
    std::uint32_t value;
  };
  // One receiving rank: 3 x 16 B of slots and their bookkeeping in one cache line.
  struct alignas(64) Rank {
    Slot slot[kSlots];
    std::uint32_t overflow = 0;  // its items in the overflow
    std::uint8_t used = 0;       // bit i: slot i holds an item
    std::uint8_t receives = 0;   // bit i: that item is a receive (else a message)
  };
  using Overflow = MessageMatcher<Key, std::uint32_t, std::uint32_t, KeyHash>;

  bool match(std::uint32_t src, std::uint32_t dst, std::int64_t tag, bool is_receive, std::uint32_t value,
             std::uint32_t& out) {
    if (dst >= ranks_.size()) ranks_.resize(dst + 1);
    Rank& r = ranks_[dst];
    for (int i = 0; i < kSlots; ++i) {
      const std::uint8_t bit = static_cast<std::uint8_t>(1u << i);
      if (!(r.used & bit) || r.slot[i].src != src || r.slot[i].tag != tag) continue;
      const bool slot_is_receive = (r.receives & bit) != 0;
      if (slot_is_receive == is_receive) break;  // same side: queue behind it, in the overflow
      out = r.slot[i].value;
      --queued_[slot_is_receive];
      // The key's next oldest item, if the overflow has one, takes the slot.
      const Key key{src, dst, tag};
      if (r.overflow > 0 && (slot_is_receive ? overflow_.take_receive(key, r.slot[i].value)
                                             : overflow_.take_message(key, r.slot[i].value))) {
        --r.overflow;
      } else {
        r.used = static_cast<std::uint8_t>(r.used & ~bit);
      }
      return true;
    }
    const Key key{src, dst, tag};
    if (r.overflow == 0 && !has_slot_item(r, src, tag)) {
      // Nothing of this rank in the overflow: a free slot takes the item.
      for (int i = 0; i < kSlots; ++i) {
        const std::uint8_t bit = static_cast<std::uint8_t>(1u << i);
        if (r.used & bit) continue;
        r.slot[i] = Slot{tag, src, value};
        r.used = static_cast<std::uint8_t>(r.used | bit);
        r.receives = static_cast<std::uint8_t>(is_receive ? r.receives | bit : r.receives & ~bit);
        ++queued_[is_receive];
        return false;
      }
    }
    const bool matched = is_receive ? overflow_.post(key, value, out) : overflow_.arrive(key, value, out);
    if (matched) {
      --r.overflow;
      --queued_[!is_receive];
    } else {
      ++r.overflow;
      ++overflowed_;
      ++queued_[is_receive];
    }
    return matched;
  }

  static bool has_slot_item(const Rank& r, std::uint32_t src, std::int64_t tag) {
    for (int i = 0; i < kSlots; ++i) {
      if ((r.used >> i & 1u) && r.slot[i].src == src && r.slot[i].tag == tag) return true;
    }
    return false;
  }

  template <typename F>
  void for_each(bool receives, F& f) const {
    for (std::uint32_t dst = 0; dst < ranks_.size(); ++dst) {
      const Rank& r = ranks_[dst];
      for (int i = 0; i < kSlots; ++i) {
        if ((r.used >> i & 1u) && ((r.receives >> i & 1u) != 0) == receives) f(r.slot[i].src, dst, r.slot[i].tag, r.slot[i].value);
      }
    }
    // A slot item is its key's oldest, so the overflow's items of that key come after it.
    auto g = [&](const Key& k, std::uint32_t v) { f(k.src, k.dst, k.tag, v); };
    if (receives) overflow_.for_each_receive(g); else overflow_.for_each_message(g);
  }

  std::vector<Rank> ranks_;
  Overflow overflow_;
  std::size_t queued_[2] = {0, 0};  // [0] messages, [1] receives
  std::uint64_t overflowed_ = 0;
};

}  // namespace sim
