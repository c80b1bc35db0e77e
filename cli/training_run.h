// What `sim` adds to a run of a training iteration: the workload generated in
// memory (--workload 'gen:transformer?...') or read from files, and, when the
// workload says it is a training iteration (the generator's model_flops in
// its metadata), the training report (report/training_report.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "report/training_report.h"
#include "system/config/system_config.h"
#include "workload/rank_graph.h"

namespace sim {

class TrainingRun {
 public:
  // A job's graphs: generated for gen:..., else its rank files (workload_loader.h).
  std::vector<RankGraph> load(const std::string& workload, const GraphOptions& options);
  // The sink for SimulationOptions::timeline: `timeline` itself, or the
  // training breakdown passing slices on to it when the workload is a training
  // iteration. Call once, with the run's rank count, after every load (one job only).
  TimelineSink* attach(TimelineSink* timeline, std::uint32_t world);
  // After the run: the summary (null when the workload is not a training iteration).
  const TrainingSummary* finish(const SimulationResult& result, const SystemConfig& config);

 private:
  std::uint64_t model_flops_ = 0;  // 0: not a training iteration
  std::uint32_t stages_ = 1;
  std::size_t jobs_ = 0;
  std::unique_ptr<TrainingBreakdown> breakdown_;
  TrainingSummary summary_;
};

}  // namespace sim
