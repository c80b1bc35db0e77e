// A per-node column of 32-bit values kept in 2 bytes per node while every
// value fits, and widened to 4 bytes (once, by copying) at the first value
// that does not.
//
// Why: the per-node numbers of a graph (tags, name suffixes) are usually
// round or layer numbers, small next to 2^16, and at millions of nodes each
// byte per node is megabytes (docs/benchmarks.md, "Compact graphs").
#pragma once

#include <cstdint>
#include <vector>

namespace sim {

class NarrowColumn {
 public:
  bool empty() const { return narrow_.empty() && wide_.empty(); }
  std::size_t size() const { return wide_mode_ ? wide_.size() : narrow_.size(); }
  bool wide() const { return wide_mode_; }

  std::uint32_t operator[](std::size_t i) const { return wide_mode_ ? wide_[i] : narrow_[i]; }

  void push_back(std::uint32_t v) {
    if (!wide_mode_ && v > 0xffffu) widen();
    if (wide_mode_) {
      wide_.push_back(v);
    } else {
      narrow_.push_back(static_cast<std::uint16_t>(v));
    }
  }
  // Grows to n entries, the new ones `v` (only ever called with a narrow v).
  void resize(std::size_t n, std::uint32_t v) {
    if (!wide_mode_ && v > 0xffffu) widen();
    if (wide_mode_) {
      wide_.resize(n, v);
    } else {
      narrow_.resize(n, static_cast<std::uint16_t>(v));
    }
  }
  // Room for n entries (kept when the column widens).
  void reserve(std::size_t n) {
    if (wide_mode_) {
      wide_.reserve(n);
    } else {
      narrow_.reserve(n);
    }
  }
  void shrink_to_fit() {
    narrow_.shrink_to_fit();
    wide_.shrink_to_fit();
  }
  std::size_t memory_bytes() const { return narrow_.capacity() * 2 + wide_.capacity() * 4; }

 private:
  void widen() {
    wide_.reserve(narrow_.capacity());
    wide_.assign(narrow_.begin(), narrow_.end());
    narrow_ = {};
    wide_mode_ = true;
  }

  std::vector<std::uint16_t> narrow_;
  std::vector<std::uint32_t> wide_;
  bool wide_mode_ = false;
};

}  // namespace sim
