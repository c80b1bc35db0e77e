// A pool of T addressed by 32-bit indices, with a free list.
//
// alloc() reuses the most recently freed slot, else appends; free() puts a
// slot back. Storage only grows, to the most slots ever live at once, so a
// steady stream of alloc/free pairs allocates nothing. Indices stay valid
// until freed (references do not: alloc may grow the vector). T must be cheap
// to copy; a freed slot's value is left as it was.
#pragma once

#include <cstdint>
#include <vector>

#include "core/huge_pages.h"

namespace sim {

template <typename T>
class IndexPool {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;

  std::uint32_t alloc(const T& value) {
    std::uint32_t i;
    if (free_ != kNone) {
      i = free_;
      free_ = slots_[i].next_free;
      slots_[i].value = value;
    } else {
      i = static_cast<std::uint32_t>(slots_.size());
      slots_.push_back(Slot{value, kNone});
    }
    ++live_;
    return i;
  }

  void free(std::uint32_t i) {
    slots_[i].next_free = free_;
    free_ = i;
    --live_;
  }

  T& operator[](std::uint32_t i) { return slots_[i].value; }
  const T& operator[](std::uint32_t i) const { return slots_[i].value; }

  std::size_t live() const { return live_; }             // allocated and not freed
  std::size_t capacity() const { return slots_.size(); }  // most ever live at once

 private:
  struct Slot {
    T value;
    std::uint32_t next_free;
  };
  std::vector<Slot, HugePageAllocator<Slot>> slots_;
  std::uint32_t free_ = kNone;
  std::size_t live_ = 0;
};

}  // namespace sim
