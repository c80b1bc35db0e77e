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
  return static_cast<Time>((num + bandwidth - 1) / bandwidth);
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
