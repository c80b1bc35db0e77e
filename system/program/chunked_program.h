// ASTRA-sim's dataset splits, for any collective program.
//
// A collective of S bytes is cut into k chunks (collective.dataset_splits),
// each run by its own program on its share of S. On each rank at most
// `active` chunks are in flight (collective.active_chunks): chunk i + active
// starts on a rank when that rank has finished chunk i, so active = 1 runs the
// chunks one after another, as ASTRA-sim does with active-chunks-per-dimension
// 1 on a 1-D topology. Every chunk ends, on every rank, with a compute op of
// fixed duration `tail` (the endpoint delay of ASTRA-sim's last hand-back of a
// chunk to the NPU). The first `free_reductions` reductions of each chunk on
// each rank cost nothing (ASTRA-sim's halvingDoubling sends its first packet
// unprocessed and charges log2(n) - 1 reductions per phase, not log2(n)).
//
// With `block` > 0 (ASTRA-sim's all-to-all, which moves one block of
// chunk / n bytes per message), a message of j blocks becomes j messages of
// one block, each sent (received) when the previous one is delivered
// (received).
//
// The wrapper renumbers tags (tag * k + chunk) so chunks never match each
// other's messages, and op refs ((((inner + 1) * k + chunk) * n + segment) << 1
// | free; the chunk's tail op is chunk << 1).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "system/program/collective_program.h"

namespace sim {

class ChunkedProgram final : public CollectiveProgram {
 public:
  // `chunks[i]` runs chunk i (entries may share one program); all on the same group.
  ChunkedProgram(std::vector<std::shared_ptr<const CollectiveProgram>> chunks, std::uint32_t active, Time tail,
                 std::uint32_t free_reductions, std::vector<std::uint64_t> block = {});

  std::uint32_t group_size() const override { return chunks_.front()->group_size(); }
  const std::string& name() const override { return name_; }
  std::uint64_t op_count(std::uint32_t pos) const override;
  void start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  CollectiveOp op(std::uint32_t pos, OpRef ref) const override;
  void finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  void parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const override;
  std::string label(std::uint32_t pos, OpRef ref) const override;

  std::uint32_t chunk_count() const { return static_cast<std::uint32_t>(chunks_.size()); }
  unsigned ref_bits() const override;
  // Rank-symmetric (exact step aggregation) when every chunk's program is,
  // with one origin, and messages are not cut into blocks.
  bool rank_symmetric() const override { return symmetric_; }
  std::uint32_t symmetric_origin() const override { return chunks_.front()->symmetric_origin(); }
  std::uint32_t symmetric_peer(std::uint32_t pos, std::uint32_t origin_peer) const override {
    return chunks_.front()->symmetric_peer(pos, origin_peer);
  }
  OpRef matched_send(OpRef recv) const override {
    const Decoded d = decode(recv);
    return outer(d.chunk, chunks_[d.chunk]->matched_send(d.inner), false, d.segment);
  }

 private:
  // cursor.pending: [2 words of remaining ops per chunk][freed reductions per chunk][next chunk to start]
  void start_chunk(std::uint32_t pos, std::uint32_t c, RankCursor& cursor, std::vector<OpRef>& ready) const;
  void map_ready(std::uint32_t pos, std::uint32_t c, RankCursor& cursor, std::vector<OpRef>& ready) const;
  OpRef outer(std::uint32_t c, OpRef inner, bool free, std::uint64_t segment = 0) const;
  struct Decoded {
    bool tail;
    std::uint32_t chunk;
    OpRef inner;
    std::uint64_t segment;
  };
  Decoded decode(OpRef ref) const;
  std::uint64_t segments(std::uint32_t c, const CollectiveOp& op) const;

  std::vector<std::shared_ptr<const CollectiveProgram>> chunks_;
  std::uint32_t active_;
  Time tail_;
  std::uint32_t free_reductions_;
  std::vector<std::uint64_t> block_;  // per chunk; empty: messages as the chunk program writes them
  std::uint64_t n_;
  mutable std::vector<std::int64_t> extra_ops_;  // per rank: segment ops beyond the programs' own (-1: not counted yet)
  std::string name_;
  bool symmetric_ = false;
  mutable std::vector<OpRef> scratch_;  // inner ready lists (the engine is single-threaded)
};

}  // namespace sim
