#include "core/time.h"

#include <cstdio>
#include <stdexcept>

namespace sim {

Time transfer_time(std::uint64_t bytes, BytesPerSecond bandwidth) {
  if (bandwidth == 0) throw std::invalid_argument("transfer_time: zero bandwidth");
  constexpr std::uint64_t kPsPerSecond = 1'000'000'000'000ULL;
  if (bytes <= (UINT64_MAX - bandwidth) / kPsPerSecond) {  // up to ~18 MB: 64-bit is exact and fast
    return static_cast<Time>((bytes * kPsPerSecond + bandwidth - 1) / bandwidth);
  }
  // 128-bit intermediate: 1 TiB * 1e12 overflows 64 bits.
  const uint128 num = static_cast<uint128>(bytes) * kPsPerSecond;
  const uint128 t = (num + bandwidth - 1) / bandwidth;
  if (t > static_cast<uint128>(kMaxTime)) {
    throw TimeLimitError("sending " + std::to_string(bytes) + " B at " + std::to_string(bandwidth) +
                         " B/s takes longer than the largest representable time, " + describe_time_limit());
  }
  return static_cast<Time>(t);
}

std::string describe_time_limit() {
  return std::to_string(kMaxTime) + " ps (about 106.75 days of simulated time)";
}

void TimeLimitError::rethrow_with(const std::string& context, bool locates) const {
  if (located_) throw *this;
  throw TimeLimitError(context + ": " + what(), locates);
}

Time add_time(Time a, Time b, const char* what) {
  Time sum;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &sum)) {
    throw TimeLimitError(std::string(what) + " would pass the largest representable time, " + describe_time_limit() +
                         " (" + std::to_string(a) + " ps + " + std::to_string(b) + " ps)");
  }
  return sum;
}

Time scale_time(std::uint64_t count, Time unit, const char* what) {
  Time product;
  if (unit < 0 || count > static_cast<std::uint64_t>(kMaxTime) ||
      __builtin_mul_overflow(static_cast<Time>(count), unit, &product)) {
    throw TimeLimitError(std::string(what) + " of " + std::to_string(count) + " x " + std::to_string(unit) +
                         " ps is longer than the largest representable time, " + describe_time_limit());
  }
  return product;
}

std::uint64_t add_bytes(std::uint64_t a, std::uint64_t b, const char* what) {
  std::uint64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) {
    throw TimeLimitError(std::string(what) + " would pass 2^64 - 1 B (" + std::to_string(a) + " B + " +
                         std::to_string(b) + " B)");
  }
  return sum;
}

std::string format_ns(Time t) {
  const bool neg = t < 0;
  const std::uint64_t a = neg ? static_cast<std::uint64_t>(-t) : static_cast<std::uint64_t>(t);
  char buf[64];
  const std::uint64_t whole = a / 1000, frac = a % 1000;
  if (frac == 0) {
    std::snprintf(buf, sizeof buf, "%s%llu", neg ? "-" : "", static_cast<unsigned long long>(whole));
  } else {
    std::snprintf(buf, sizeof buf, "%s%llu.%03llu", neg ? "-" : "",
                  static_cast<unsigned long long>(whole), static_cast<unsigned long long>(frac));
    std::string s(buf);
    while (s.back() == '0') s.pop_back();
    return s;
  }
  return buf;
}

std::string format_time(Time t) {
  char buf[64];
  const double v = static_cast<double>(t);
  if (t < kNanosecond) std::snprintf(buf, sizeof buf, "%lld ps", static_cast<long long>(t));
  else if (t < kMicrosecond) std::snprintf(buf, sizeof buf, "%.6g ns", v / kNanosecond);
  else if (t < kMillisecond) std::snprintf(buf, sizeof buf, "%.7g us", v / kMicrosecond);
  else if (t < kSecond) std::snprintf(buf, sizeof buf, "%.7g ms", v / kMillisecond);
  else std::snprintf(buf, sizeof buf, "%.7g s", v / kSecond);
  return buf;
}

}  // namespace sim
