// One simulation from start to finish, as every front end runs it: the
// native command line, each sweep point, ASTRA-sim's command line and each
// calibration point call `run` with a ScenarioSpec.
//
//   RunOutcome out = run(spec, hooks);   // folds, simulates, reports
//
// It builds the scenario along the fold plan (system/scenario/fold_plan.h:
// the most folded way the run accepts, every rank at worst), simulates it
// once, adds the physical-bound warnings (report/physical_bounds.h) and,
// for a training iteration, the training summary and its MFU bound.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "report/report.h"
#include "report/training_run.h"
#include "system/runner/simulation.h"
#include "system/scenario/scenario.h"

namespace sim {

struct RunHooks {
  // Every rank's timeline slices, or null. A fold refused once slices were
  // written cannot be run again: the run then fails with the reason.
  TimelineSink* timeline = nullptr;
  std::function<void(const SimulationProgress&)> progress;
  // Hears why the run gave up a fold for the next (fold_plan.h); null: nobody.
  std::function<void(const std::string&)> note;
  // Each warning to the log (spdlog) once the run is over.
  bool log_warnings = false;
  // When the command began: RunInfo::wall_seconds counts loading too.
  std::chrono::steady_clock::time_point wall_start = std::chrono::steady_clock::now();
};

struct RunOutcome {
  // The physical-bound and MFU warnings added to its warnings.
  SimulationResult result;
  // What the run simulated: the config and topology after --collective and
  // --backend, the graphs of the ranks simulated.
  Scenario scenario;
  // For the reports; `info.training` points into `training`.
  RunInfo info;
  std::unique_ptr<TrainingRun> training;
  std::size_t implausible = 0;  // physical-bound warnings among result.warnings
  std::size_t impossible_mfu = 0;  // training warnings: MFU above 100 %
};

// Throws InputError for bad inputs, IncompleteError when the run cannot finish.
RunOutcome run(const ScenarioSpec& spec, const RunHooks& hooks = {});

}  // namespace sim
