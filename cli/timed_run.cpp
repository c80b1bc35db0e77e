#include "timed_run.h"

#include <spdlog/spdlog.h>

#include "report/physical_bounds.h"

namespace sim {

TimedRun run_timed(Simulation& simulation, const Topology& topology, const std::string& workload,
                   const std::string& backend, std::chrono::steady_clock::time_point wall_start) {
  using clock = std::chrono::steady_clock;
  const auto run_start = clock::now();
  TimedRun t{simulation.run(), {}};
  const double run_seconds = std::chrono::duration<double>(clock::now() - run_start).count();
  for (const std::string& w : physical_bound_warnings(t.result, topology)) {
    t.result.warnings.push_back(w);
    ++t.implausible;
  }
  for (const std::string& w : t.result.warnings) spdlog::warn("{}", w);
  t.info = RunInfo{workload, topology.description(), backend,
                   std::chrono::duration<double>(clock::now() - wall_start).count(), run_seconds};
  return t;
}

}  // namespace sim
