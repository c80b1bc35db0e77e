// Checked arithmetic on counts derived from user input (FLOPs, bytes,
// elements, tags): a value that remembers whether any step of the
// expression that made it passed 2^64 - 1, so a long product is written as
// plainly as unchecked code and tested once, where it is stored.
//
//   const CheckedCount flops = CheckedCount(2) * batch * m * n * k;
//   if (!flops.fits(kMaxTraceInt)) throw InputError(...);
//
// Division keeps an overflow an overflow (a wrapped product divided is no
// smaller in truth). Subtraction is not offered: counts here only grow.
#pragma once

#include <cstdint>
#include <limits>

namespace sim {

// The largest integer a Chakra trace attribute keeps (int64; num_ops,
// tensor_size, comm_size and comm_tag are read back as 0..2^63 - 1).
inline constexpr std::uint64_t kMaxTraceInt = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

class CheckedCount {
 public:
  constexpr CheckedCount() = default;
  constexpr CheckedCount(std::uint64_t v) : value_(v) {}  // NOLINT: implicit, so that plain counts mix in

  // Whether no step overflowed and the value is at most `limit`.
  constexpr bool fits(std::uint64_t limit = std::numeric_limits<std::uint64_t>::max()) const {
    return !overflow_ && value_ <= limit;
  }
  constexpr bool overflowed() const { return overflow_; }
  // The value; meaningful only when fits().
  constexpr std::uint64_t value() const { return value_; }

  friend constexpr CheckedCount operator*(CheckedCount a, CheckedCount b) {
    CheckedCount r;
    r.overflow_ = a.overflow_ || b.overflow_ || __builtin_mul_overflow(a.value_, b.value_, &r.value_);
    return r;
  }
  friend constexpr CheckedCount operator+(CheckedCount a, CheckedCount b) {
    CheckedCount r;
    r.overflow_ = a.overflow_ || b.overflow_ || __builtin_add_overflow(a.value_, b.value_, &r.value_);
    return r;
  }
  // b must not be 0.
  friend constexpr CheckedCount operator/(CheckedCount a, CheckedCount b) {
    CheckedCount r;
    r.overflow_ = a.overflow_ || b.overflow_;
    r.value_ = r.overflow_ ? 0 : a.value_ / b.value_;
    return r;
  }
  CheckedCount& operator*=(CheckedCount b) { return *this = *this * b; }
  CheckedCount& operator+=(CheckedCount b) { return *this = *this + b; }

 private:
  std::uint64_t value_ = 0;
  bool overflow_ = false;
};

}  // namespace sim
