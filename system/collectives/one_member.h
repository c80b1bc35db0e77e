// A collective on a group of one rank (a 1-GPU job, a 1-rank process group).
//
// NCCL returns at once when nRanks is 1 (src/enqueue.cc): nothing crosses a
// link; an out-of-place call copies its send buffer into its receive buffer
// with cudaMemcpyAsync, device to device. The workload does not say whether
// a call was in place, so the rule is PyTorch's (torch.distributed): the
// calls that take one tensor (all_reduce, broadcast, reduce) and barrier are
// in place and cost nothing; all_gather_into_tensor, reduce_scatter_tensor,
// all_to_all_single, gather and scatter write another tensor and cost a copy
// of the collective's bytes: they are read and written once each in the GPU's
// memory, 2 x bytes at its bandwidth (the system's compute.memory_bandwidth;
// none given: free). Every native algorithm (ring, direct, tree,
// halvingDoubling, hierarchical, nccl) runs a one-member group this way.
#pragma once

#include <string>

#include "core/time.h"
#include "system/program/collective_program.h"
#include "workload/rank_graph.h"

namespace sim {

// The time above: 0 in place, else 2 x bytes at `memory_bandwidth` (0: free).
Time one_member_time(CollectiveType type, std::uint64_t bytes, BytesPerSecond memory_bandwidth);

// One compute op of one_member_time(); named "<algorithm> (one rank)".
class OneMemberProgram final : public CollectiveProgram {
 public:
  OneMemberProgram(const std::string& algorithm, CollectiveType type, std::uint64_t bytes,
                   BytesPerSecond memory_bandwidth);

  std::uint32_t group_size() const override { return 1; }
  const std::string& name() const override { return name_; }
  std::uint64_t op_count(std::uint32_t) const override { return 1; }
  void start(std::uint32_t, RankCursor&, std::vector<OpRef>& ready) const override { ready.push_back(0); }
  CollectiveOp op(std::uint32_t, OpRef) const override;
  void finish(std::uint32_t, OpRef, RankCursor&, std::vector<OpRef>&) const override {}
  unsigned ref_bits() const override { return 1; }
  bool rank_symmetric() const override { return true; }
  void parents(std::uint32_t, OpRef, std::vector<OpRef>&) const override {}
  std::string label(std::uint32_t, OpRef) const override { return name_ + ".copy"; }

 private:
  std::string name_;
  std::uint64_t bytes_;
  Time duration_;
};

}  // namespace sim
