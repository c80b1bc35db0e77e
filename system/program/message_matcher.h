// First-in-first-out matching of messages and receives, per match key.
//
// Used by the collective engine (key: instance, src, dst, tag), by the
// simulation's point-to-point path (key: src rank, dst rank, tag) and by the
// collective checker (key: src, dst, tag). For each
// key the matcher keeps two FIFOs: messages that came with no receive to take
// them, and receives posted with no message to take. A message is matched to
// the oldest posted receive of its key, a receive to the oldest queued message;
// at most one of the two FIFOs of a key is ever non-empty.
//
// Memory follows the traffic in flight, not the traffic ever sent: queued
// items live in pooled nodes (IndexPool) linked into per-key singly linked
// lists, and a key's entry leaves the FlatMap as soon as both its FIFOs are
// empty. In steady state a match allocates nothing.
//
// Key: cheap to copy, with operator==; Hash: must mix the low bits well (the
// FlatMap indexes with them). Message and Receive: cheap to copy.
#pragma once

#include <cstdint>

#include "core/flat_map.h"
#include "core/index_pool.h"

namespace sim {

// The usual match key: source, destination and tag (the tag's type is the
// caller's: signed for traces, unsigned for injected programs).
template <typename Tag>
struct PeerTagKey {
  std::uint32_t src, dst;
  Tag tag;
  bool operator==(const PeerTagKey&) const = default;
};
struct PeerTagKeyHash {
  template <typename Tag>
  std::size_t operator()(const PeerTagKey<Tag>& k) const noexcept {
    return mix64(static_cast<std::uint64_t>(k.tag) * 0x9e3779b97f4a7c15ull ^ (std::uint64_t{k.src} << 32 | k.dst));
  }
};

template <typename Key, typename Message, typename Receive, typename Hash>
class MessageMatcher {
 public:
  // A message for `key` comes in. If a receive is posted for `key`, the oldest
  // one is taken off into `matched` and true is returned; otherwise the
  // message is queued behind earlier messages of `key` and false is returned.
  bool arrive(const Key& key, const Message& message, Receive& matched) {
    Queues& q = queues_.find_or_insert(key);
    if (q.posted_head != kNone) {
      take(receives_, q.posted_head, q.posted_tail, matched);
      if (q.posted_head == kNone) queues_.erase_at(&q);  // the other FIFO is empty: no message waited
      return true;
    }
    put(messages_, q.arrived_head, q.arrived_tail, message);
    return false;
  }

  // A receive for `key` is posted. If a message of `key` is queued, the oldest
  // one is taken off into `matched` and true is returned; otherwise the
  // receive is queued behind earlier receives of `key` and false is returned.
  bool post(const Key& key, const Receive& receive, Message& matched) {
    Queues& q = queues_.find_or_insert(key);
    if (q.arrived_head != kNone) {
      take(messages_, q.arrived_head, q.arrived_tail, matched);
      if (q.arrived_head == kNone) queues_.erase_at(&q);
      return true;
    }
    put(receives_, q.posted_head, q.posted_tail, receive);
    return false;
  }

  // Takes the oldest queued message of `key` into `out` if there is one;
  // never queues anything.
  bool take_message(const Key& key, Message& out) { return take_oldest(messages_, key, true, out); }
  // The same for the oldest posted receive.
  bool take_receive(const Key& key, Receive& out) { return take_oldest(receives_, key, false, out); }

  // Keys with a queued message or receive.
  std::size_t size() const { return queues_.size(); }
  bool empty() const { return queues_.empty(); }
  std::size_t queued_messages() const { return messages_.live(); }
  std::size_t queued_receives() const { return receives_.live(); }
  // Pool slots ever needed (the most items queued at once), for tests.
  std::size_t message_capacity() const { return messages_.capacity(); }
  std::size_t receive_capacity() const { return receives_.capacity(); }

  // f(key, message) for every queued message: keys in table order, each
  // key's messages oldest first.
  template <typename F>
  void for_each_message(F&& f) const {
    queues_.for_each([&](const Key& k, const Queues& q) {
      for (std::uint32_t i = q.arrived_head; i != kNone; i = messages_[i].next) f(k, messages_[i].value);
    });
  }
  // f(key, receive) for every posted receive, likewise.
  template <typename F>
  void for_each_receive(F&& f) const {
    queues_.for_each([&](const Key& k, const Queues& q) {
      for (std::uint32_t i = q.posted_head; i != kNone; i = receives_[i].next) f(k, receives_[i].value);
    });
  }

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  template <typename T>
  struct Node {
    T value;
    std::uint32_t next;
  };
  struct Queues {  // head and tail of each FIFO, as pool indices
    std::uint32_t arrived_head = kNone, arrived_tail = kNone;
    std::uint32_t posted_head = kNone, posted_tail = kNone;
  };

  template <typename T>
  static void put(IndexPool<Node<T>>& pool, std::uint32_t& head, std::uint32_t& tail, const T& value) {
    const std::uint32_t i = pool.alloc(Node<T>{value, kNone});
    if (tail == kNone) head = i; else pool[tail].next = i;
    tail = i;
  }
  template <typename T>
  static void take(IndexPool<Node<T>>& pool, std::uint32_t& head, std::uint32_t& tail, T& out) {
    const std::uint32_t i = head;
    out = pool[i].value;
    head = pool[i].next;
    if (head == kNone) tail = kNone;
    pool.free(i);
  }

  template <typename T>
  bool take_oldest(IndexPool<Node<T>>& pool, const Key& key, bool messages, T& out) {
    Queues* q = queues_.find(key);
    if (q == nullptr) return false;
    std::uint32_t& head = messages ? q->arrived_head : q->posted_head;
    std::uint32_t& tail = messages ? q->arrived_tail : q->posted_tail;
    if (head == kNone) return false;
    take(pool, head, tail, out);
    if (q->arrived_head == kNone && q->posted_head == kNone) queues_.erase_at(q);
    return true;
  }

  FlatMap<Key, Queues, Hash> queues_;
  IndexPool<Node<Message>> messages_;
  IndexPool<Node<Receive>> receives_;
};

}  // namespace sim
