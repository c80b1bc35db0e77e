#include "compute/compute_model.h"

#include <cmath>

namespace sim {

Time compute_seconds_to_time(double seconds, const std::string& what) {
  const double ps = std::ceil(seconds * 1e12);
  // 2^63 as a double: anything at or above it does not fit a Time.
  if (!(ps < 9223372036854775808.0)) {
    throw TimeLimitError(what + " is longer than the largest representable time, " + describe_time_limit());
  }
  return static_cast<Time>(ps);
}

}  // namespace sim
