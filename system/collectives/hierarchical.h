// Hierarchical (multi-dimensional) collectives, ASTRA-sim style, composed
// lazily from one per-dimension program per phase (nothing per step stored).
//
// The group is a grid over the dimensions along which its members' topology
// coordinates vary (its "dimensions", fastest first, sizes n_0..n_{D-1}).
// The buffer is cut into k pipelined chunks; each chunk runs a list of
// phases, each phase being a per-dimension algorithm (ring, direct, ...) run
// by every line of the grid along that dimension (the ranks that differ only
// in that coordinate, with their real group positions for messages):
//
//   ALL_REDUCE localBWAware  reduce-scatter on dims 0..D-2 (the data shrinks
//       by n_i each time: x, x/n_0, x/(n_0 n_1), ...), all-reduce on dim D-1,
//       then all-gather back down D-2..0. A dimension whose algorithm has no
//       reduce-scatter/all-gather (doubleBinaryTree) all-reduces its current
//       data in place instead (it does not shrink it); with
//       `gather_by_allreduce` (ASTRA-sim's tree, which ignores the phase's
//       type) it all-reduces it again in the all-gather phase.
//   ALL_REDUCE baseline      an all-reduce of the whole chunk on each dim in turn.
//   REDUCE_SCATTER           reduce-scatter on dims 0..D-1 (shrinking).
//   ALL_GATHER               all-gather on dims D-1..0 (growing: the input x,
//                            then x n_{D-1}, ...), ASTRA-sim's reverse walk.
//   ALL_TO_ALL               a full all-to-all of the chunk on each dim 0..D-1.
//
// A phase is over on a rank when all its ops have finished there, or when an
// op the phase program says the rank `leaves()` at has (ASTRA-sim's tree
// leaves once its last sends are issued): what follows may start then.
// Chunk c's phase p starts on a rank once its phase p-1 is over there and,
// with `active` = a > 0, once chunk c-a's phase p finished there (at most a
// chunks in one phase of one dimension at a time, started in chunk order; a
// = 1 is ASTRA-sim's active-chunks-per-dimension 1). a = 0: no limit.
// With `dimension_queue`, the window is per dimension instead of per phase:
// each dimension serves all its phases (a localBWAware reduce-scatter and
// all-gather alike, of every chunk) in one fixed sequence, the same on every
// rank (so it cannot deadlock): the arrival order of an estimated run of the
// schedule (ASTRA-sim's FIFO per dimension on a symmetric run). The item at
// index i of a dimension's sequence also waits for the item at i - a.
//
// OpRef: (chunk << phase bits | phase) << bits | the phase program's OpRef.
// Tags: (chunk * phases + phase) << 32 | the phase program's tag; when some
// phase program's tags do not fit 32 bits (NCCL's carry the channel and the
// chunk above bit 24), its tag's index among all phase programs' tags instead.
// Switch operations of a phase program keep kSwitchPeer as their peer and
// take their switch from the dimension's switch_of_line.
// Message sizes: when every piece is a whole part of a common grid (per-dim
// programs with one inner chunk; all-reduce and reduce-scatter), every op's
// bytes are its exact share of the buffer cut into chunk_total() parts (so
// the ETs written from it replay it exactly); otherwise the phase programs'
// own sizes (of the chunk's first region; exact when sizes divide evenly).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "system/program/collective_program.h"
#include "workload/rank_graph.h"

namespace sim {

enum class HierarchicalOptimization : std::uint8_t { kBaseline, kLocalBWAware };

struct HierarchicalDimension {
  std::uint32_t size = 2;  // n_i, ranks per line
  // The per-dimension program for (type, size, bytes, variant); throws
  // InputError when the algorithm lacks the type.
  std::function<std::shared_ptr<const CollectiveProgram>(CollectiveType, std::uint32_t, std::uint64_t, std::uint32_t)>
      make;
  // Programs a phase of this dimension can take, in turn: the dimension's
  // phases, in the order ASTRA-sim creates them (chunk by chunk, phase by
  // phase), take variants 0, 1, .., variants-1, 0, ... (ASTRA-sim's tree
  // alternates RootMax and RootMin per dimension: 2).
  std::uint32_t variants = 1;
  // localBWAware, no reduce-scatter: the all-gather phase all-reduces again.
  bool gather_by_allreduce = false;
  std::function<bool(CollectiveType)> supports;
  // After its reduce-scatter, line position j holds piece (j + rs_shift) mod n
  // (the ring: 1; direct, halvingDoubling: 0).
  std::uint32_t rs_shift = 0;
  std::string name;  // for name()
  // Estimates for the dimension_queue order only (per message): latency and time per byte.
  double latency_ns = 500, ns_per_byte = 0.02;
  // Programs that address switches (NCCL's NVLS, CollNet) are built for one
  // line, the one through grid index 0; the switch another line uses instead:
  // (its line base, i.e. the grid index of its coordinate-0 rank; the
  // reference line's switch) -> its own. Null: no switch operations here.
  std::function<std::uint32_t(std::uint32_t line_base, std::uint32_t node)> switch_of_line;
};

class HierarchicalProgram final : public CollectiveProgram {
 public:
  // `grid[pos]`: the grid index of group position pos (mixed radix over the
  // dims' sizes, dim 0 fastest), a permutation of 0..N-1.
  HierarchicalProgram(CollectiveType type, std::uint64_t bytes, std::uint32_t chunks, std::uint32_t active,
                      HierarchicalOptimization optimization, std::vector<HierarchicalDimension> dims,
                      std::vector<std::uint32_t> grid, bool dimension_queue = false);
  static bool supports(CollectiveType type);

  std::uint32_t group_size() const override { return n_; }
  const std::string& name() const override { return name_; }
  std::uint64_t op_count(std::uint32_t pos) const override;
  void start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  CollectiveOp op(std::uint32_t pos, OpRef ref) const override;
  void finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  void parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const override;
  std::uint64_t chunk_total() const override { return ranged_ ? static_cast<std::uint64_t>(chunks_) * units_ : 0; }
  ChunkRange chunk_range(std::uint32_t pos, OpRef ref) const override;
  bool equal_parts() const override { return equal_; }
  std::string label(std::uint32_t pos, OpRef ref) const override;
  // Symmetric under translations of the grid (see the constructor).
  bool rank_symmetric() const override { return symmetric_; }
  std::uint32_t symmetric_origin() const override { return pos_of_grid_[0]; }
  std::uint32_t symmetric_peer(std::uint32_t pos, std::uint32_t origin_peer) const override;
  OpRef matched_send(OpRef recv) const override;

  struct PhaseInfo {
    std::uint32_t dim;
    CollectiveType type;
  };
  std::vector<PhaseInfo> phase_list() const;
  std::uint32_t chunks() const { return chunks_; }
  // dimension_queue: each dimension's sequence of (chunk, phase) pairs.
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> dimension_sequences() const;

 private:
  struct Phase {
    std::uint32_t dim = 0;
    CollectiveType type = CollectiveType::kAllReduce;
    bool relabel = false;  // line position = (coordinate + rs_shift) mod n (an all-gather after a ring RS)
    std::shared_ptr<const CollectiveProgram> prog[2][2];  // by chunk size class, variant
    std::uint64_t mult = 1;                               // global parts per phase-program part
    std::uint32_t ordinal = 0;                            // index among its dimension's phases of a chunk
  };
  static constexpr std::uint32_t kNotStarted = 0xffffffffu;

  std::uint32_t klass(std::uint32_t chunk) const { return uniform_ || chunk_bytes(chunk) == small_ ? 0 : 1; }
  std::uint32_t variant(std::uint32_t chunk, std::uint32_t phase) const {
    const Phase& ph = phase_[phase];
    const std::uint32_t v = dims_[ph.dim].variants;
    return v <= 1 ? 0 : static_cast<std::uint32_t>((static_cast<std::uint64_t>(chunk) * per_chunk_[ph.dim] + ph.ordinal) % v);
  }
  const CollectiveProgram& prog(std::uint32_t chunk, std::uint32_t phase) const {
    return *phase_[phase].prog[klass(chunk)][variant(chunk, phase)];
  }
  // OpRef fields: chunk, phase, the phase program's ref.
  std::uint32_t chunk_of(OpRef r) const { return static_cast<std::uint32_t>(r >> (bits_ + pbits_)); }
  std::uint32_t phase_of(OpRef r) const { return static_cast<std::uint32_t>(r >> bits_) & ((1u << pbits_) - 1); }
  OpRef prefix(std::uint32_t chunk, std::uint32_t phase) const {
    return (static_cast<OpRef>(chunk) << pbits_ | phase) << bits_;
  }
  std::uint64_t parts(std::uint64_t first, std::uint64_t count) const {
    if (equal_) return equal_part_ * count;
    return cuts_.empty() ? parts_bytes(bytes_, static_cast<std::uint64_t>(chunks_) * units_, first, count)
                         : cuts_[first + count] - cuts_[first];
  }
  std::uint64_t chunk_bytes(std::uint32_t chunk) const { return part_bytes(bytes_, chunks_, chunk); }
  void begin(std::uint32_t pos, std::uint32_t chunk, std::uint32_t phase, RankCursor& cursor,
             std::vector<OpRef>& ready) const;
  // The phase is over on this rank (all its ops finished, or it left): cursor.pending's second half.
  bool done(const RankCursor& cursor, std::uint32_t chunk, std::uint32_t phase) const {
    return released(cursor, chunk * phases_ + phase);
  }
  bool released(const RankCursor& cursor, std::uint32_t idx) const {
    return cursor.pending[static_cast<std::size_t>(chunks_) * phases_ + idx] != 0;
  }
  void release(std::uint32_t pos, std::uint32_t chunk, std::uint32_t phase, RankCursor& cursor,
               std::vector<OpRef>& ready) const;
  // The phase program's position of `pos` and the group position of its peer `q`.
  std::uint32_t line_pos(std::uint32_t pos, std::uint32_t phase) const { return line_pos_[pos * phases_ + phase]; }
  std::uint32_t peer_pos(std::uint32_t pos, std::uint32_t phase, std::uint32_t q) const;
  void try_begin(std::uint32_t pos, std::uint32_t chunk, std::uint32_t phase, RankCursor& cursor,
                 std::vector<OpRef>& ready) const;
  void build_sequences();
  const std::vector<OpRef>& terminals(std::uint32_t chunk, std::uint32_t phase, std::uint32_t lpos) const;

  CollectiveType type_;
  std::uint64_t bytes_, small_ = 0;
  std::uint32_t chunks_, active_, n_ = 1, phases_ = 0;
  unsigned bits_ = 0, pbits_ = 0;
  bool uniform_ = true;               // every chunk has the same size
  std::vector<std::uint64_t> cuts_;   // bytes before each part (ranged, when not huge)
  OpRef mask_ = 0;
  HierarchicalOptimization optimization_;
  std::vector<HierarchicalDimension> dims_;
  std::vector<std::uint32_t> stride_;  // grid stride of each dim
  std::vector<std::uint32_t> per_chunk_;  // phases of a chunk on each dim
  std::vector<Phase> phase_;
  std::vector<std::uint32_t> grid_, pos_of_grid_;
  std::vector<std::uint32_t> line_pos_;   // per (pos, phase)
  std::vector<std::uint32_t> line_base_;  // per (pos, phase): grid index of the line's coordinate-0 rank
  std::vector<std::uint64_t> base_;       // per (pos, phase): first part of its region within a chunk
  bool ranged_ = false;
  // Ranged, and every phase program cuts its data into equal parts (rings):
  // the grid's parts are equal too, each equal_part_ bytes.
  bool equal_ = false;
  std::uint64_t equal_part_ = 0;
  bool queue_ = false;                                // dimension_queue
  std::vector<std::vector<std::uint32_t>> seq_;       // per dim: chunk * phases + phase, in service order
  std::vector<std::uint32_t> seq_index_;              // per chunk * phases + phase: its index in seq_[dim]
  std::uint64_t units_ = 0;  // parts per chunk when ranged
  std::unordered_map<std::uint64_t, std::uint32_t> dense_tag_;  // wide phase tags -> index (empty: tags fit 32 bits)
  std::string name_;
  bool symmetric_ = false;
  // Tools only: the ops no other op of a phase program waits for (or the one
  // it leaves at), per (phase, class, variant, line position).
  mutable std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, std::vector<OpRef>> terminals_;
};

}  // namespace sim
