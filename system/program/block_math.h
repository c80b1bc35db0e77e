// Small helpers shared by the native collective generators.
#pragma once

#include <cstdint>

#include "workload/rank_graph.h"

namespace sim::collectives {

// v mod n for any v.
inline std::uint32_t wrap(std::int64_t v, std::uint32_t n) {
  const std::int64_t r = v % static_cast<std::int64_t>(n);
  return static_cast<std::uint32_t>(r < 0 ? r + n : r);
}

// The buffer chunk ranges index: the S*N output for ALL_GATHER and GATHER
// (rank j's input is block j), S otherwise.
inline std::uint64_t buffer_bytes(CollectiveType type, std::uint64_t bytes, std::uint32_t n) {
  return type == CollectiveType::kAllGather || type == CollectiveType::kGather ? bytes * n : bytes;
}

}  // namespace sim::collectives
