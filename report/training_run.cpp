#include "report/training_run.h"

namespace sim {

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
