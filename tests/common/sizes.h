// Message sizes the tests write in whole MiB.
#pragma once

#include <cstdint>

namespace sim::testing {

inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

}  // namespace sim::testing
