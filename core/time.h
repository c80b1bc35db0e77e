// Simulated time: an exact integer count of picoseconds.
//
// Integer time keeps sums exact (no drift over millions of events) and makes
// results byte-identical run to run. int64 picoseconds cover 106 days.
#pragma once

#include <cstdint>
#include <string>

namespace sim {

using Time = std::int64_t;  // picoseconds

// Exact intermediate for bytes * 1e12 and similar products.
__extension__ typedef unsigned __int128 uint128;

inline constexpr Time kPicosecond = 1;
inline constexpr Time kNanosecond = 1'000;
inline constexpr Time kMicrosecond = 1'000'000;
inline constexpr Time kMillisecond = 1'000'000'000;
inline constexpr Time kSecond = 1'000'000'000'000;

// Bandwidth in bytes per second (GB/s means 1e9 B/s).
using BytesPerSecond = std::uint64_t;

// Time to push `bytes` through a link of `bandwidth` B/s, rounded up to the
// next picosecond (exact whenever bytes * 1e12 is a multiple of bandwidth,
// e.g. any power-of-two size at 50 GB/s).
Time transfer_time(std::uint64_t bytes, BytesPerSecond bandwidth);

inline double to_ns(Time t) { return static_cast<double>(t) / kNanosecond; }
inline double to_us(Time t) { return static_cast<double>(t) / kMicrosecond; }

// Exact decimal rendering in nanoseconds, e.g. 21471520 ps -> "21471.52".
std::string format_ns(Time t);
// Human rendering with a unit picked by magnitude, e.g. "21.47152 us".
std::string format_time(Time t);

}  // namespace sim
