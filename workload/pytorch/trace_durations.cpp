#include "workload/pytorch/trace_durations.h"

#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "core/time.h"

namespace sim::pytorch {

std::uint64_t checked_micros(double us, const std::string& where) {
  char value[48];
  std::snprintf(value, sizeof value, "%.17g", us);
  if (!(us >= 0)) throw InputError(where + ": field 'dur' is " + value + " us, not a non-negative number");
  // Past 9e18 µs rounding to an integer could not be represented (and the
  // limit, about 9.2e12 µs, is long passed); below it scale_time decides.
  constexpr double kBeyond = 9e18;
  const std::string too_long = where + ": field 'dur' is " + value + " us, longer than the largest simulated time, " +
                               describe_time_limit();
  if (!(us < kBeyond)) throw InputError(too_long);
  const auto micros = static_cast<std::uint64_t>(std::llround(us));
  try {
    (void)scale_time(micros, kMicrosecond, "a duration");
  } catch (const TimeLimitError&) {
    throw InputError(too_long);
  }
  return micros;
}

}  // namespace sim::pytorch
