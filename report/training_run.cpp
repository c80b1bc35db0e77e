#include "report/training_run.h"

#include "core/error.h"
#include "workload/source/workload_source.h"

namespace sim {

namespace {

// The one job's training facts; nullopt with several jobs.
std::optional<TrainingFacts> facts_of(const std::vector<JobInput>& jobs) {
  if (jobs.size() != 1) return std::nullopt;
  const std::string& workload = jobs[0].workload;
  if (is_generated(workload)) return open_workload(workload)->training_facts();  // a bad query is the user's error
  // Anything else (other schemes, traces that do not say so, traces that
  // cannot be read) is no training iteration; the scenario, built before, has
  // already reported unreadable inputs.
  try {
    return open_workload(workload)->training_facts();
  } catch (const InputError&) {
    return std::nullopt;
  }
}

}  // namespace

TrainingRun::TrainingRun(const std::vector<JobInput>& jobs) : TrainingRun(facts_of(jobs)) {}

TrainingRun::TrainingRun(const std::optional<TrainingFacts>& facts) {
  if (!facts) return;
  model_flops_ = facts->model_flops;
  stages_ = facts->stages;
  dtype_ = facts->dtype;
}

TimelineSink* TrainingRun::attach(TimelineSink* timeline, std::uint32_t world) {
  if (model_flops_ == 0) return timeline;
  breakdown_ = std::make_unique<TrainingBreakdown>(world, stages_, timeline);
  return breakdown_.get();
}

const TrainingSummary* TrainingRun::finish(const SimulationResult& result, const SystemConfig& config) {
  if (!breakdown_) return nullptr;
  breakdown_->finish(result);
  // MFU against the peak of the dtype the GEMMs run in (an fp8 iteration
  // against bf16's peak would print over 100%); the scalar peak when the
  // system gives no peak for that dtype.
  const auto peak = config.peak_flops_by_dtype.find(dtype_);
  const double peak_flops = peak != config.peak_flops_by_dtype.end() ? peak->second : config.peak_flops;
  summary_ = breakdown_->summary(model_flops_, peak_flops,
                                 static_cast<std::uint32_t>(result.ranks.size()) * result.folded_replicas);
  return &summary_;
}

}  // namespace sim
