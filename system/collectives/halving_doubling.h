// Recursive halving-doubling (Rabenseifner), generated on demand.
//
// On a power-of-two group of N = 2^m ranks (S = comm_size, k chunks):
//   REDUCE_SCATTER  m halving steps: step s exchanges with the rank at
//                   distance N/2^(s+1), sending the half of the current range
//                   the partner keeps (S/2, S/4, ..., S/N) and reducing the
//                   half received; rank j ends with piece j
//   ALL_GATHER      m doubling steps: step s exchanges with the rank at
//                   distance 2^s, sending all it holds (S, 2S, ..., S*N/2)
//   ALL_REDUCE      the reduce-scatter, then the all-gather of the pieces:
//                   2m steps of S/2, S/4, ..., S/N, S/N, ..., S/2
// Other sizes (Rabenseifner/Thakur, "reduce to a power of two"): with
// 2^m <= N < 2^(m+1) and r = N - 2^m, the first 2r ranks pair up. In a pre
// step each odd rank 2i+1 sends its whole buffer (all-gather: its input) to
// 2i, which reduces it (all-gather: stores it); the 2^m core ranks (2i for
// i < r, then r.., i.e. core index i is rank 2i for i < r and i + r after)
// run the steps above; in a post step 2i sends 2i+1 the result (all-reduce,
// all-gather: everything; reduce-scatter: piece 2i+1). The ranges a core rank
// handles are those of the ranks it stands for, so reduce-scatter and
// all-gather keep N pieces (S/N each) and every rank ends with its own.
// All-reduce cuts the buffer into 2^m pieces instead (exact S/2^(s+1) steps).
//
// Order (`order=nearest`, ALL_REDUCE only; ASTRA-sim's HalvingDoubling):
// the halving steps go nearest partner first (distance 1, 2, ..., N/2, the
// largest piece over the shortest path) and the doubling steps farthest
// first. Ranges stay contiguous: after halving steps with distances 1..2^(g-1)
// core rank i holds piece bitreverse_g(i mod 2^g) of 2^g. Reduce-scatter and
// all-gather cannot take this order: the first split must separate ranks i
// and i^1, which one contiguous range per message cannot describe.
//
// Each chunk runs its own chain of steps, like the ring: step g+1's ops wait
// for step g's last op (its reduce, else its receive, else its send).
// ALL_GATHER uses the strided layout: chunk c of rank j's input is part
// c*N + j of the S*N output (so a range of ranks is one contiguous range).
#pragma once

#include <bit>

#include "system/program/collective_program.h"
#include "workload/rank_graph.h"

namespace sim {

class HalvingDoublingProgram final : public CollectiveProgram {
 public:
  HalvingDoublingProgram(CollectiveType type, std::uint32_t group_size, std::uint64_t bytes, std::uint32_t chunks,
                         bool nearest_first = false);
  static bool supports(CollectiveType type);

  std::uint32_t group_size() const override { return n_; }
  const std::string& name() const override { return name_; }
  std::uint64_t op_count(std::uint32_t pos) const override;
  void start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  CollectiveOp op(std::uint32_t pos, OpRef ref) const override;
  void finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  unsigned ref_bits() const override { return 34 + static_cast<unsigned>(std::bit_width(chunks_)); }
  void parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const override;
  std::uint64_t chunk_total() const override { return static_cast<std::uint64_t>(units_) * chunks_; }
  ChunkRange chunk_range(std::uint32_t pos, OpRef ref) const override;
  bool strided_blocks() const override { return type_ == CollectiveType::kAllGather; }
  std::string label(std::uint32_t pos, OpRef ref) const override;
  // Symmetric under XOR (rank p's partner at a step is p ^ d where rank 0's
  // is d) on a power-of-two group whose pieces all have one size: the buffer
  // divides into chunk_total() parts (near-equal parts differ by a byte
  // otherwise). With extra ranks (N not a power of two) the paired ranks do more.
  bool rank_symmetric() const override {
    return n_ >= 2 && r_ == 0 && buffer_ % chunk_total() == 0;
  }
  std::uint32_t symmetric_peer(std::uint32_t pos, std::uint32_t origin_peer) const override {
    return pos ^ origin_peer;
  }
  // The receive of a step takes the partner's send of that step.
  OpRef matched_send(OpRef recv) const override { return recv & ~OpRef{3}; }

  // OpRef: chunk << 34 | global step << 2 | slot (0 send, 1 recv, 2 reduce).
  // Global steps: 0 pre, 1.. halving steps, then doubling steps, last post.
  static OpRef ref(std::uint32_t chunk, std::uint32_t step, std::uint32_t slot) {
    return static_cast<OpRef>(chunk) << 34 | static_cast<OpRef>(step) << 2 | slot;
  }

 private:
  struct Step {
    bool send = false, recv = false, reduce = false;
    std::uint32_t peer = 0;
  };
  struct Units {
    std::uint32_t first = 0, count = 0;
  };
  bool extra(std::uint32_t pos) const { return pos < 2 * r_ && pos % 2 == 1; }
  bool paired(std::uint32_t pos) const { return pos < 2 * r_; }
  std::uint32_t core_index(std::uint32_t pos) const { return pos < 2 * r_ ? pos / 2 : pos - r_; }
  std::uint32_t core_rank(std::uint32_t i) const { return i < r_ ? 2 * i : i + r_; }
  std::uint32_t unit_of(std::uint32_t core) const;  // first unit core index `core` stands for
  bool has_step(std::uint32_t pos, std::uint32_t g) const;
  std::uint32_t first_step(std::uint32_t pos) const;
  // The next / previous step of pos after / before g, or kNoStep.
  std::uint32_t next_step(std::uint32_t pos, std::uint32_t g) const;
  std::uint32_t prev_step(std::uint32_t pos, std::uint32_t g) const;
  Step step(std::uint32_t pos, std::uint32_t g) const;
  Units sent(std::uint32_t pos, std::uint32_t g) const;  // units pos sends at g
  std::uint32_t distance(std::uint32_t g) const;         // core distance of exchange step g
  Units held_nearest(std::uint32_t ci, std::uint32_t level) const;  // after `level` nearest-first halvings
  std::uint32_t terminal_slot(const Step& s) const { return s.reduce ? 2 : s.recv ? 1 : 0; }
  void push_step(std::uint32_t pos, std::uint32_t chunk, std::uint32_t g, std::vector<OpRef>& ready) const;
  ChunkRange range(std::uint32_t chunk, Units u) const { return {static_cast<std::uint64_t>(chunk) * units_ + u.first, u.count}; }
  static constexpr std::uint32_t kNoStep = 0xffffffffu;

  CollectiveType type_;
  std::uint32_t n_, chunks_;
  std::uint64_t bytes_, buffer_;
  std::uint32_t m_ = 0, core_ = 1, r_ = 0;
  std::uint32_t halving_ = 0, doubling_ = 0, steps_ = 0;  // global steps = 2 + halving + doubling
  std::uint32_t units_ = 1;                                // pieces per chunk
  bool nearest_ = false;
  std::string name_ = "halvingDoubling";
};

}  // namespace sim
