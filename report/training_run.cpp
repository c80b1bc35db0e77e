#include "report/training_run.h"

#include "core/error.h"
#include "workload/et_io.h"
#include "workload/generators/model_flops.h"
#include "workload/generators/transformer_workload.h"

namespace sim {
namespace {

struct StopReading {};

// The first rank's global metadata (frame 0), without reading its nodes.
et::GlobalMetadata first_metadata(const std::string& path) {
  et::GlobalMetadata md;
  try {
    read_et_wire_nodes(path, md, [](const WireNode&) { throw StopReading{}; });
  } catch (const StopReading&) {
  }
  return md;
}

}  // namespace

TrainingRun::TrainingRun(const std::vector<JobInput>& jobs) {
  if (jobs.size() != 1) return;
  const std::string& workload = jobs[0].workload;
  if (gen::is_generated_workload(workload)) {
    const gen::TrainingSpec spec = gen::generated_workload_spec(workload);
    model_flops_ = gen::model_flops_per_iteration(spec);
    stages_ = spec.plan.pp;
    dtype_ = spec.fp8 ? "fp8" : "bf16";
    return;
  }
  // ETs the generator wrote say so in their metadata. Anything else (other
  // workload schemes, traces without it) is no training iteration; the
  // scenario, built before, has already reported unreadable inputs.
  et::GlobalMetadata md;
  try {
    const std::vector<std::string> files = resolve_rank_files(workload);
    if (files.empty()) return;
    md = first_metadata(files[0]);
  } catch (const InputError&) {
    return;
  }
  if (const auto flops = metadata_number(md, "model_flops"); flops && *flops > 0) {
    model_flops_ = *flops;
    stages_ = static_cast<std::uint32_t>(metadata_int(md, "pp").value_or(1));
    dtype_ = metadata_string(md, "dtype").value_or("bf16");  // ETs written before the key: bf16
  }
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
