// What a rank's run adds up to, and the resources it takes turns on: shared by
// the simulation (system/runner/simulation.h) and its per-rank run state
// (system/runner/simulation_run.h) without either including the other.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/time.h"

namespace sim {

struct RankStats {
  Time finish = 0;
  Time compute = 0;        // some COMP node running (CPU or GPU)
  Time gpu_busy = 0;       // some COMP node without is_cpu_op running (a kernel, copy, or any COMP of a GPU-only trace)
  Time cpu_busy = 0;       // some COMP node with is_cpu_op running (a host operator)
  Time exposed_comm = 0;   // communication running and no compute
  Time memory = 0;         // only memory ops running
  Time idle = 0;           // nothing running
  Time comm = 0;           // some communication running (overlapped or not)
  std::uint64_t nodes = 0;
};

// GPU compute, CPU and memory: the resources a rank runs one node at a time on.
inline constexpr std::size_t kLimitedResources = 3;

}  // namespace sim
