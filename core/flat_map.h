// An open-addressing hash map for hot paths (message matching).
//
// Linear probing over a power-of-two table of plain slots, with backward-shift
// deletion (no tombstones), so inserts and erases allocate nothing once the
// table has grown. Keys and values must be cheap to copy. Iteration order is
// the table order: deterministic for a given sequence of operations.
#pragma once

#include <cstddef>  // offsetof
#include <cstdint>
#include <utility>
#include <vector>

#include "core/huge_pages.h"

namespace sim {

// splitmix64's finalizer: every input bit reaches the low bits, which FlatMap
// indexes with (keys of message matching differ mostly in their high bits).
inline std::size_t mix64(std::uint64_t h) {
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return static_cast<std::size_t>(h ^ (h >> 31));
}
// FlatMap's Hash for 64-bit integer keys.
struct Mix64Hash {
  std::size_t operator()(std::uint64_t k) const noexcept { return mix64(k); }
};

template <typename Key, typename Value, typename Hash>
class FlatMap {
 public:
  explicit FlatMap(std::size_t capacity = 64) { rehash(capacity < 8 ? 8 : capacity); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  Value* find(const Key& key) {
    const std::size_t h = hash_of(key);
    std::size_t i = h & mask_;
    while (slots_[i].hash != 0) {
      if (slots_[i].hash == h && slots_[i].key == key) return &slots_[i].value;
      i = (i + 1) & mask_;
    }
    return nullptr;
  }

  static constexpr std::size_t kSmallTable = std::size_t{1} << 14;

  // The value for `key`, default-constructed if absent.
  Value& operator[](const Key& key) {
    // Load <= 1/2 while the table is small (2^14 slots, 768 KiB of 48-byte
    // slots, about a core's L2): probe runs and the backward shift of an
    // erase stay short, the usual case. Above, <= 3/4: the table's size in
    // the caches then costs more than its probes, and a table of millions of
    // keys (every posted receive of a direct all-to-all) is half the size it
    // would be at 1/2.
    const std::size_t cap = slots_.size();
    if (cap < kSmallTable ? (size_ + 1) * 2 > cap : (size_ + 1) * 4 > cap * 3) rehash(cap * 2);
    const std::size_t h = hash_of(key);
    std::size_t i = h & mask_;
    while (slots_[i].hash != 0) {
      if (slots_[i].hash == h && slots_[i].key == key) return slots_[i].value;
      i = (i + 1) & mask_;
    }
    slots_[i].hash = h;
    slots_[i].key = key;
    slots_[i].value = Value{};
    ++size_;
    return slots_[i].value;
  }

  // The value for `key`, default-constructed if absent, in one probe.
  Value& find_or_insert(const Key& key) { return (*this)[key]; }

  // Erases the entry whose value `v` points at (from find or operator[]),
  // without hashing or probing again.
  void erase_at(Value* v) {
    const std::size_t i = static_cast<std::size_t>(
        reinterpret_cast<Slot*>(reinterpret_cast<char*>(v) - offsetof(Slot, value)) - slots_.data());
    erase_slot(i);
  }

  bool erase(const Key& key) {
    const std::size_t h = hash_of(key);
    std::size_t i = h & mask_;
    while (slots_[i].hash != 0) {
      if (slots_[i].hash == h && slots_[i].key == key) {
        erase_slot(i);
        return true;
      }
      i = (i + 1) & mask_;
    }
    return false;
  }

  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.hash != 0) f(s.key, s.value);
    }
  }

 private:
  struct Slot {
    Key key{};
    Value value{};
    std::size_t hash = 0;  // kept so probing and deletion never rehash a key; 0: empty
  };
  // The key's hash, never 0 (which marks an empty slot).
  static std::size_t hash_of(const Key& key) {
    const std::size_t h = Hash()(key);
    return h != 0 ? h : 1;
  }

  void erase_slot(std::size_t i) {
    // Shift later members of the probe run back so no search stops early.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask_; slots_[j].hash != 0; j = (j + 1) & mask_) {
      const std::size_t home = slots_[j].hash & mask_;
      if (((j - home) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].hash = 0;
    --size_;
  }

  void rehash(std::size_t capacity) {
    std::size_t cap = 8;
    while (cap < capacity) cap *= 2;
    Slots old = std::move(slots_);
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    // Keys are distinct and their hashes kept: each goes to the first free
    // slot from its home, in the old table's order (as inserting them would).
    for (const Slot& s : old) {
      if (s.hash == 0) continue;
      std::size_t i = s.hash & mask_;
      while (slots_[i].hash != 0) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  using Slots = std::vector<Slot, HugePageAllocator<Slot>>;
  Slots slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace sim
