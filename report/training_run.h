// What `sim` adds to a run of a training iteration: when the one job's
// workload says it is one (WorkloadSource::training_facts: a generated
// iteration, or ETs carrying the generator's model_flops), the training
// report (report/training_report.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "report/training_report.h"
#include "system/config/system_config.h"
#include "workload/source/workload_source.h"

namespace sim {

class TrainingRun {
 public:
  // From the facts the workload gives (WorkloadSource::training_facts); nullopt: not a training iteration.
  explicit TrainingRun(const std::optional<TrainingFacts>& facts);
  // The sink for SimulationOptions::timeline: `timeline` itself, or the
  // training breakdown passing slices on to it when the run is a training iteration.
  TimelineSink* attach(TimelineSink* timeline, std::uint32_t world);
  // After the run: the summary (null when the workload is not a training iteration).
  const TrainingSummary* finish(const SimulationResult& result, const SystemConfig& config);

 private:
  double model_flops_ = 0;  // per iteration; 0: not a training iteration
  std::uint32_t stages_ = 1;
  std::string dtype_ = "bf16";  // the GEMMs' dtype, whose peak MFU divides by
  std::unique_ptr<TrainingBreakdown> breakdown_;
  TrainingSummary summary_;
};

}  // namespace sim
