// What both command lines (ours and ASTRA-sim's) do around a simulation:
// time the event loop, add the physical-bound warnings, log every warning,
// and describe the run for the reports.
#pragma once

#include <chrono>
#include <string>

#include "network/topology.h"
#include "report/report.h"
#include "system/runner/simulation.h"

namespace sim {

struct TimedRun {
  SimulationResult result;
  RunInfo info;
  std::size_t implausible = 0;  // physical-bound warnings among result.warnings
};

// `wall_start` is when the command began (loading included).
TimedRun run_timed(Simulation& simulation, const Topology& topology, const std::string& workload,
                   const std::string& backend, std::chrono::steady_clock::time_point wall_start);

}  // namespace sim
