// What a training iteration achieved: iteration time, model FLOPs, model
// TFLOP/s per GPU and MFU, exposed communication per parallel dimension, and
// the pipeline bubble (docs/generators.md, "Reports").
//
// Measured from the node runs of a sample of ranks (every rank up to 1,024;
// beyond, the first 8 ranks of each pipeline stage, which under Megatron's rank
// order are one tensor-parallel group per stage). A node's dimension comes
// from its name, as the transformer generator writes them: the first
// dot-separated part equal to tp, pp, dp, cp, ep, edp or embd, or starting with
// one of them and '_' ("layer3.attn.tp_allreduce.fwd mb2" is TP,
// "dp.grad_reduce_scatter bucket0" DP; edp counts as DP, embd as PP).
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "report/json_stream.h"
#include "system/runner/simulation.h"

namespace sim {

enum class TrainingDim : std::uint8_t { kTp, kPp, kDp, kCp, kEp, kOther };
constexpr std::size_t kTrainingDims = 6;
const char* training_dim_name(TrainingDim d);  // "tp", ..., "other"
// The dimension a communication node's name says, kOther when none.
TrainingDim training_dim_of(std::string_view node_name);

struct TrainingSummary {
  Time iteration_time = 0;
  std::uint32_t world = 0;
  double model_flops = 0;           // per iteration; 0: unknown
  double model_tflops_per_gpu = 0;  // model_flops / (world x iteration time) / 1e12
  double peak_tflops_per_gpu = 0;   // 0: unknown (no compute section)
  double mfu = 0;                   // model_tflops_per_gpu / peak
  // Mean over the sampled ranks of the time some communication of that
  // dimension ran while no compute did (dimensions overlapping count in each);
  // index TrainingDim. exposed_total: any communication, no compute.
  std::array<double, kTrainingDims> exposed_ns{};
  double exposed_total_ns = 0;
  // Max over sampled ranks of (time without compute or non-pipeline
  // communication before the rank's last forward/backward pass ends) over
  // (time in forward/backward passes): the schedule's (p-1)/m when stages are
  // equal and communication is free.
  double pipeline_bubble = 0;
  std::uint32_t pipeline_bubble_rank = 0;
  std::uint32_t ranks_sampled = 0;
  // Whether a COMP node of a sampled rank took any time: without, the
  // iteration is its communication alone (a generated workload, whose nodes
  // carry no duration, run without a compute model).
  bool compute_timed = false;
};

// Collects the sampled ranks' node runs during a simulation; passes every
// slice on to `next` (a timeline writer) when it wants it.
class TrainingBreakdown final : public TimelineSink {
 public:
  TrainingBreakdown(std::uint32_t world, std::uint32_t pipeline_stages, TimelineSink* next = nullptr);
  void set_next(TimelineSink* next) { next_ = next; }
  bool wants(std::uint32_t rank, Time start, Time end) const override;
  void slice(const TimelineSlice& s) override;
  void ranks(std::uint32_t count) override {
    if (next_) next_->ranks(count);
  }
  // After the run.
  void finish(const SimulationResult& result);
  // model_flops: per iteration (0: unknown); peak_flops: per GPU in FLOP/s (0: unknown).
  // `gpus`: the GPUs the iteration runs on, when more than the ranks simulated
  // (folded replicas); 0: the world given at construction.
  TrainingSummary summary(double model_flops, double peak_flops, std::uint32_t gpus = 0) const;

 private:
  struct Interval {
    Time start, end;
    std::uint8_t cls;  // 0 forward/backward pass, 1 other compute, 2 + TrainingDim communication
  };
  std::uint32_t world_;
  std::vector<std::int32_t> slot_;  // per rank: index into runs_, or -1 (not sampled)
  std::vector<std::uint32_t> sampled_;
  std::vector<std::vector<Interval>> runs_;
  TimelineSink* next_;
  Time makespan_ = 0;
};

// The "training" object of the JSON report (its key and value) and the summary's lines.
void write_training_json(JsonStream& j, const TrainingSummary& s);
void print_training_summary(std::ostream& out, const TrainingSummary& s);

}  // namespace sim
