// A Megatron-style parallel plan: how a training job's ranks split the model
// and the batch, and which ranks talk to which.
//
// Rank order is Megatron-LM's default ("tp-cp-ep-dp-pp"): tensor-parallel
// ranks are adjacent (one node's NVLink domain), then context-parallel, then
// data-parallel replicas, pipeline stages outermost:
//   rank = tp_rank + tp * (cp_rank + cp * (dp_rank + dp * pp_rank)).
// Expert parallelism takes its ranks from tensor x data parallelism: over
// the flat (tp, dp) positions of one (cp, stage), expert-tensor-parallel
// groups are etp consecutive positions, expert-parallel groups take one of
// each of ep consecutive such groups, expert-data-parallel the rest
// (Megatron-core's "tp-ep-dp" order for experts; etp 1 by default: experts whole).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sim::gen {

struct ParallelPlan {
  std::uint32_t tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
  std::uint32_t etp = 1;  // expert tensor parallelism: each expert's MLP split etp ways
  bool sp = false;  // sequence parallelism (with tp): reduce-scatter/all-gather instead of all-reduce

  std::uint32_t world() const { return tp * cp * dp * pp; }
  std::string describe() const;  // "tp=8,pp=16,dp=128,sp"
};

// "tp=8,pp=16,dp=128[,cp=2,ep=4,etp=2,sp]": every key at most once, values >= 1;
// absent keys are 1. Throws InputError naming the option and the bad item;
// `given` is the option as written ("--parallel 'tp=8'", "parallel=tp=8"),
// empty for "--parallel '<text>'".
ParallelPlan parse_parallel_plan(const std::string& text, const std::string& given = "");

struct RankCoords {
  std::uint32_t tp = 0, cp = 0, dp = 0, pp = 0;
};
RankCoords coords_of(const ParallelPlan& plan, std::uint32_t rank);
std::uint32_t rank_of(const ParallelPlan& plan, const RankCoords& c);

// The communicators one rank is in. Names say the dimension ("tp:3", "dp:0",
// "cp:1", "ep:2", "edp:5", "embd:0") so reports can attribute time to it;
// the number tells groups of one dimension apart.
enum class Dim : std::uint8_t { kTp, kCp, kDp, kEp, kExpertTp, kExpertDp, kEmbedding };
struct GroupRef {
  std::string name;
  std::vector<std::uint32_t> ranks;  // ascending
};
// The group of `dim` that `rank` belongs to ("etp:<i>" for kExpertTp). kDp is data x context
// parallelism (the ranks holding the same parameters); kEmbedding pairs the
// first and last stage (tied embeddings).
GroupRef group_of(const ParallelPlan& plan, Dim dim, std::uint32_t rank);

}  // namespace sim::gen
