// A collective program given explicitly: per rank, a list of ops with their
// data dependencies and chunk ranges, as a producer (the synthesizer) builds
// it. Ops are numbered in list order (their OpRef), so the ET writer
// (program_ets) gives them those node ids, and the engine issues ready ops in
// that order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "system/program/collective_program.h"

namespace sim {

struct DagProgramOp {
  CollectiveOp op;
  ChunkRange range;                   // parts of the buffer the message (or reduce) covers
  std::vector<std::uint32_t> parents;  // indices of earlier or later ops of the same rank
};

class DagProgram final : public CollectiveProgram {
 public:
  // `chunk_total`: parts the buffer is cut into (0: ranges not given).
  // Throws std::logic_error for a parent index out of range.
  DagProgram(std::string name, std::vector<std::vector<DagProgramOp>> ranks, std::uint64_t chunk_total);

  std::uint32_t group_size() const override { return static_cast<std::uint32_t>(ranks_.size()); }
  const std::string& name() const override { return name_; }
  std::uint64_t op_count(std::uint32_t pos) const override { return ranks_[pos].ops.size(); }
  void start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  CollectiveOp op(std::uint32_t pos, OpRef ref) const override { return ranks_[pos].ops[ref].op; }
  void finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  unsigned ref_bits() const override { return 32; }
  void parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const override;
  std::uint64_t chunk_total() const override { return chunk_total_; }
  ChunkRange chunk_range(std::uint32_t pos, OpRef ref) const override { return ranks_[pos].ops[ref].range; }
  // ET node name from the op itself ("synth.send c5 to 3", "synth.reduce c5 from 2"):
  // not stored, a large synthesis has millions of ops.
  std::string label(std::uint32_t pos, OpRef ref) const override;

 private:
  struct Rank {
    std::vector<DagProgramOp> ops;
    std::vector<std::uint32_t> child_begin, children;  // children of op i: children[child_begin[i] ..)
    std::vector<std::uint32_t> roots;
  };
  std::string name_;
  std::vector<Rank> ranks_;
  std::uint64_t chunk_total_;
};

}  // namespace sim
