// Simulated time: an exact integer count of picoseconds.
//
// Integer time keeps sums exact (no drift over millions of events) and makes
// results byte-identical run to run. int64 picoseconds cover 106 days.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "core/error.h"

namespace sim {

using Time = std::int64_t;  // picoseconds

// The largest representable simulated time: 2^63 - 1 ps, about 106.75 days.
inline constexpr Time kMaxTime = std::numeric_limits<Time>::max();
// "9223372036854775807 ps (about 106.75 days)", for messages.
std::string describe_time_limit();

// A simulated time (or a sum or product of sizes) that would pass the largest
// representable value. Exit 3: the simulation cannot complete within the
// limit. Callers that know the node or message catch it and rethrow with it
// named (TimeLimitError::with_context), so the user sees the culprit.
class TimeLimitError : public SimError {
 public:
  explicit TimeLimitError(const std::string& what, bool located = false)
      : SimError(kExitIncomplete, what), located_(located) {}
  // The same error with `context` in front ("collective 'ring' #0, rank 3"),
  // unless a node was already named: an outer node's issue must not claim the
  // inner node's overflow. `locates`: the context names the node at fault.
  [[noreturn]] void rethrow_with(const std::string& context, bool locates) const;

 private:
  bool located_;
};

// a + b for non-negative times, or TimeLimitError naming `what` ("the end of
// COMP", "delivery") and the limit. Never wraps.
Time add_time(Time a, Time b, const char* what = "simulated time");
// count * unit (e.g. duration_micros * kMicrosecond), or TimeLimitError.
Time scale_time(std::uint64_t count, Time unit, const char* what = "a duration");
// a + b for byte counts, or TimeLimitError.
std::uint64_t add_bytes(std::uint64_t a, std::uint64_t b, const char* what = "a byte count");

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
// e.g. any power-of-two size at 50 GB/s). Throws TimeLimitError when the
// result passes kMaxTime (1e14 B at 1 B/s).
Time transfer_time(std::uint64_t bytes, BytesPerSecond bandwidth);

inline double to_ns(Time t) { return static_cast<double>(t) / kNanosecond; }
inline double to_us(Time t) { return static_cast<double>(t) / kMicrosecond; }

// Exact decimal rendering in nanoseconds, e.g. 21471520 ps -> "21471.52".
std::string format_ns(Time t);
// Human rendering with a unit picked by magnitude, e.g. "21.47152 us".
std::string format_time(Time t);

}  // namespace sim
