// Progress of a sweep and of one long simulation, on stderr.
//
// On a terminal: one bar rewritten in place (done/total, failures, ETA).
// Otherwise (logs, CI, Slurm): a plain line every `interval` seconds and one
// at the end, so a log shows the sweep advancing without flooding.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <ostream>

#include "system/runner/simulation.h"

namespace sim::workflows {

class SweepProgress {
 public:
  // `total`: points this run computes; `reused`: points taken from the cache.
  SweepProgress(std::ostream& out, bool terminal, std::size_t total, std::size_t reused, double interval_seconds);
  void point_done(bool failed);  // thread-safe
  void finish();

 private:
  void print(bool final_line);
  std::ostream& out_;
  bool terminal_;
  std::size_t total_, reused_, done_ = 0, failed_ = 0;
  double interval_;
  std::chrono::steady_clock::time_point start_, last_;
  std::mutex mutex_;
};

// For SimulationOptions::progress: after `after_seconds` of wall time, a line
// every `every_seconds` with the simulated time reached, events and nodes done.
std::function<void(const SimulationProgress&)> long_run_progress(std::ostream& out, double after_seconds = 2,
                                                                  double every_seconds = 2);

// Whether stderr is a terminal (progress bars) or a log (periodic lines).
bool stderr_is_terminal();

}  // namespace sim::workflows
