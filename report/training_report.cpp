#include "report/training_report.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace sim {
namespace {

constexpr const char* kDimNames[kTrainingDims] = {"tp", "pp", "dp", "cp", "ep", "other"};

bool names_dim(std::string_view part, std::string_view dim) {
  return part == dim || (part.size() > dim.size() && part.substr(0, dim.size()) == dim && part[dim.size()] == '_');
}

}  // namespace

const char* training_dim_name(TrainingDim d) { return kDimNames[static_cast<std::size_t>(d)]; }

TrainingDim training_dim_of(std::string_view name) {
  name = name.substr(0, name.find(' '));
  while (!name.empty()) {
    const std::size_t dot = name.find('.');
    const std::string_view part = name.substr(0, dot);
    if (names_dim(part, "tp")) return TrainingDim::kTp;
    if (names_dim(part, "pp") || names_dim(part, "embd")) return TrainingDim::kPp;
    if (names_dim(part, "dp") || names_dim(part, "edp")) return TrainingDim::kDp;
    if (names_dim(part, "cp")) return TrainingDim::kCp;
    if (names_dim(part, "ep")) return TrainingDim::kEp;
    if (dot == std::string_view::npos) break;
    name.remove_prefix(dot + 1);
  }
  return TrainingDim::kOther;
}

TrainingBreakdown::TrainingBreakdown(std::uint32_t world, std::uint32_t stages, TimelineSink* next)
    : world_(world), slot_(world, -1), next_(next) {
  if (stages == 0 || world % stages != 0) stages = 1;
  const std::uint32_t per_stage = world / stages;
  for (std::uint32_t s = 0; s < stages; ++s) {
    for (std::uint32_t j = 0; j < (world <= 1024 ? per_stage : std::min(per_stage, 8u)); ++j) {
      const std::uint32_t r = s * per_stage + j;
      slot_[r] = static_cast<std::int32_t>(sampled_.size());
      sampled_.push_back(r);
    }
  }
  runs_.resize(sampled_.size());
}

bool TrainingBreakdown::wants(std::uint32_t rank, Time start, Time end) const {
  return (rank < world_ && slot_[rank] >= 0) || (next_ && next_->wants(rank, start, end));
}

void TrainingBreakdown::slice(const TimelineSlice& s) {
  if (s.rank < world_ && slot_[s.rank] >= 0 && s.end > s.start) {
    std::uint8_t cls = 255;
    if (s.kind == NodeKind::kComp) {
      cls = std::string_view(s.name).rfind("optimizer", 0) == 0 ? 1 : 0;
    } else if (s.kind == NodeKind::kCommColl || s.kind == NodeKind::kCommSend || s.kind == NodeKind::kCommRecv) {
      cls = static_cast<std::uint8_t>(2 + static_cast<int>(training_dim_of(s.name)));
    }
    if (cls != 255) runs_[slot_[s.rank]].push_back({s.start, s.end, cls});
  }
  if (next_ && next_->wants(s.rank, s.start, s.end)) next_->slice(s);
}

void TrainingBreakdown::finish(const SimulationResult& result) { makespan_ = result.makespan; }

TrainingSummary TrainingBreakdown::summary(double model_flops, double peak_flops, std::uint32_t gpus) const {
  TrainingSummary out;
  out.iteration_time = makespan_;
  out.world = gpus ? gpus : world_;
  out.model_flops = model_flops;
  const double seconds = static_cast<double>(makespan_) * 1e-12;
  if (model_flops > 0 && seconds > 0) out.model_tflops_per_gpu = model_flops / (out.world * seconds) / 1e12;
  out.peak_tflops_per_gpu = peak_flops / 1e12;
  if (peak_flops > 0) out.mfu = out.model_tflops_per_gpu * 1e12 / peak_flops;
  // Ranks without slices (the copies of a folded run, which run nothing) are not sampled.
  std::size_t sampled = 0;
  for (const auto& run : runs_) sampled += run.empty() ? 0 : 1;
  out.ranks_sampled = static_cast<std::uint32_t>(sampled);
  double worst = -1;
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    if (runs_[i].empty()) continue;
    // Sweep the rank's intervals: +1 at start, -1 at end, per class.
    std::vector<std::pair<Time, int>> events;  // (time, +-(cls + 1))
    Time last_pass_end = 0;
    for (const Interval& v : runs_[i]) {
      if (v.cls <= 1) out.compute_timed = true;
      events.push_back({v.start, v.cls + 1});
      events.push_back({v.end, -(v.cls + 1)});
      if (v.cls == 0) last_pass_end = std::max(last_pass_end, v.end);
    }
    std::sort(events.begin(), events.end());
    int active[2 + kTrainingDims] = {};
    Time now = 0, bubble = 0, busy = 0;
    std::array<Time, kTrainingDims> exposed{};
    Time exposed_total = 0;
    for (const auto& [t, delta] : events) {
      const Time dt = t - now;
      if (dt > 0) {
        const bool computing = active[0] > 0 || active[1] > 0;
        bool comm = false, other_comm = false;
        for (std::size_t d = 0; d < kTrainingDims; ++d) {
          if (active[2 + d] > 0) {
            comm = true;
            if (d != static_cast<std::size_t>(TrainingDim::kPp)) other_comm = true;
            if (!computing) exposed[d] += dt;
          }
        }
        if (active[0] > 0) busy += dt;
        if (comm && !computing) exposed_total += dt;
        if (!computing && !other_comm && t <= last_pass_end) bubble += dt;
      }
      now = t;
      active[std::abs(delta) - 1] += delta > 0 ? 1 : -1;
    }
    // Idle from the rank's last event to its last pass's end cannot happen (the pass is an event);
    // idle before its first event counts from 0.
    for (std::size_t d = 0; d < kTrainingDims; ++d) out.exposed_ns[d] += static_cast<double>(exposed[d]) / 1000.0;
    out.exposed_total_ns += static_cast<double>(exposed_total) / 1000.0;
    if (busy > 0) {
      const double b = static_cast<double>(bubble) / static_cast<double>(busy);
      if (b > worst) {
        worst = b;
        out.pipeline_bubble = b;
        out.pipeline_bubble_rank = sampled_[i];
      }
    }
  }
  if (sampled > 0) {
    for (double& e : out.exposed_ns) e /= static_cast<double>(sampled);
    out.exposed_total_ns /= static_cast<double>(sampled);
  }
  return out;
}

void write_training_json(JsonStream& j, const TrainingSummary& s) {
  j.key("training").begin_object();
  j.field("iteration_time_ns", static_cast<double>(s.iteration_time) / 1000.0).field("world_size", s.world);
  j.field("model_flops", s.model_flops).field("model_tflops_per_gpu", s.model_tflops_per_gpu);
  j.field("peak_tflops_per_gpu", s.peak_tflops_per_gpu).field("mfu", s.mfu);
  j.key("exposed_comm_ns").begin_object();
  for (std::size_t d = 0; d < kTrainingDims; ++d) j.field(kDimNames[d], s.exposed_ns[d]);
  j.field("total", s.exposed_total_ns).end_object();
  j.field("pipeline_bubble", s.pipeline_bubble).field("pipeline_bubble_rank", s.pipeline_bubble_rank);
  j.field("ranks_sampled", s.ranks_sampled).end_object();
}

void print_training_summary(std::ostream& out, const TrainingSummary& s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(3);
  o << "training iteration: " << static_cast<double>(s.iteration_time) / 1e9 << " ms on " << s.world << " GPUs";
  if (s.model_flops > 0) {
    o << ", model " << s.model_flops / 1e15 << " PFLOP, " << s.model_tflops_per_gpu << " TFLOP/s per GPU";
    if (s.mfu > 0) o << ", MFU " << 100 * s.mfu << " % of " << s.peak_tflops_per_gpu << " TFLOP/s";
  }
  o << "\n  exposed communication (mean of " << s.ranks_sampled << " ranks):";
  for (std::size_t d = 0; d < kTrainingDims; ++d) {
    if (s.exposed_ns[d] > 0) o << " " << kDimNames[d] << " " << s.exposed_ns[d] / 1e6 << " ms";
  }
  o << " (any: " << s.exposed_total_ns / 1e6 << " ms)\n  pipeline bubble: " << 100 * s.pipeline_bubble
    << " % of forward/backward time (rank " << s.pipeline_bubble_rank << ")\n";
  out << o.str();
}

}  // namespace sim
