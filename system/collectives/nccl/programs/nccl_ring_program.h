// NCCL's ring (all-reduce, reduce-scatter, all-gather) as a program whose
// ops are computed when asked for (collective_program.h), from the channels'
// rings and a few numbers per channel and rank: no op is stored.
//
// The program is the one make_ring_dag_program (nccl_programs.h) builds op
// by op, to the op: on each rank the same OpRefs (NCCL's base delay first,
// then per channel c, chunk j and step s: the send, the receive, then the
// hop's delay after the receive when it lasts), the same ops, parents and
// ready lists in the same order, and the same answers on rank symmetry.
//
// Dependencies on a rank: the first send of chunk j follows the base delay
// and the first send of chunk j - window (the steps in flight); the send of
// step s > 0 follows step s - 1's receive and its delay; receives are posted
// at the start. A send that waits on both the base and its window's
// predecessor is freed by the predecessor, which itself follows the base: so
// a rank's progress needs no per-op state, and the cursor stays empty.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/programs/nccl_program_parts.h"
#include "system/collectives/nccl/programs/nccl_programs.h"
#include "system/program/collective_program.h"

namespace sim::nccl {

class NcclRingProgram final : public CollectiveProgram {
 public:
  // Throws std::invalid_argument for a collective other than all-reduce, reduce-scatter and all-gather.
  NcclRingProgram(std::string name, CollectiveType type, std::uint64_t bytes, const AlgorithmContext& ctx,
                  const StepModel& m);

  std::uint32_t group_size() const override { return n_; }
  const std::string& name() const override { return name_; }
  std::uint64_t op_count(std::uint32_t pos) const override;
  void start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  CollectiveOp op(std::uint32_t pos, OpRef ref) const override;
  void finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  unsigned ref_bits() const override { return 32; }
  void parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const override;

  // Rank symmetry, as NcclDagProgram finds it on the same ring (nccl_dag.h):
  // every rank's ops equal rank 0's but for their peers (bytes, rates and
  // hop delays alike at every step, whichever piece and link the rank's
  // ring position gives it), and each rank's neighbours in every channel's
  // ring a one-to-one renaming of rank 0's.
  bool rank_symmetric() const override { return symmetric_; }
  std::uint32_t symmetric_peer(std::uint32_t pos, std::uint32_t origin_peer) const override;
  OpRef matched_send(OpRef recv) const override;

 private:
  enum class Part : std::uint8_t { kBase, kSend, kRecv, kDelay };
  struct Step {  // one op of a rank, decoded from its OpRef
    Part part = Part::kBase;
    std::uint32_t c = 0;
    std::uint64_t j = 0;
    std::uint32_t s = 0;
  };
  // Per channel and rank.
  struct Lane {
    std::uint32_t per_chunk = 0;   // ops of a chunk but its last step's delay
    std::uint64_t last_delay = 0;  // bit j: chunk j's last step has a delay
    // When every chunk has as many ops (no last step delayed, or all):
    // reciprocal(those ops), so that decode divides by a multiply; else 0.
    std::uint64_t chunk_reciprocal = 0;
  };

  const Lane& lane(std::uint32_t pos, std::uint32_t c) const { return lanes_[std::size_t{pos} * channels_ + c]; }
  std::uint32_t ring_at(std::uint32_t c, std::uint32_t q) const { return ring_[std::size_t{c} * n_ + q]; }
  std::uint32_t index_of(std::uint32_t c, std::uint32_t pos) const { return index_[std::size_t{c} * n_ + pos]; }
  std::uint32_t next(std::uint32_t c, std::uint32_t pos) const { return ring_at(c, (index_of(c, pos) + 1) % n_); }
  std::uint32_t prev(std::uint32_t c, std::uint32_t pos) const { return ring_at(c, (index_of(c, pos) + n_ - 1) % n_); }
  bool same_node(std::uint32_t a, std::uint32_t b) const;  // positions a and b on one node
  Time hop(std::uint32_t c, std::uint32_t pos) const;
  // Whether the hop into `pos` in channel c has a delay: read from a table
  // (the event loop asks for every op; the ring lookup takes a division).
  bool hop_delays(std::uint32_t c, std::uint32_t pos) const { return delays_[std::size_t{pos} * channels_ + c] != 0; }
  std::uint64_t chunk_bytes(std::uint32_t c, std::uint64_t j) const;
  // Payload ring index q sends at step s of chunk j.
  std::uint64_t piece_bytes(std::uint32_t c, std::uint64_t j, std::int64_t q, std::uint32_t s) const;
  // Duration of the delay after the receive of step s (no op when <= 0).
  Time delay_of(std::uint32_t c, std::uint32_t pos, std::uint64_t j, std::uint32_t s) const;
  // OpRef of chunk j's first op of rank pos in channel c.
  std::uint64_t chunk_first(std::uint32_t pos, std::uint32_t c, std::uint64_t j) const;
  std::uint64_t ref_of(std::uint32_t pos, Part part, std::uint32_t c, std::uint64_t j, std::uint32_t s) const;
  Step decode(std::uint32_t pos, OpRef ref) const;
  // The op step s's send waits for: the receive of step s - 1, or the delay after it.
  std::uint64_t before_send(std::uint32_t pos, std::uint32_t c, std::uint64_t j, std::uint32_t s) const;
  bool find_symmetry();

  std::string name_;
  std::uint32_t n_ = 0;
  std::uint32_t channels_ = 0;
  std::uint32_t steps_ = 0;          // per chunk: n - 1, all-reduce 2 (n - 1); 0 when n < 2
  std::uint32_t reduced_steps_ = 0;  // steps whose received piece is added in (reduce-scatter half)
  std::uint32_t window_ = 1;
  bool gather_ = false;
  bool even_ = false;      // every chunk a multiple of n bytes (reduce-scatter, all-reduce)
  bool reduces_ = false;   // sends of sums paced for their addend's read
  bool last_sum_ = false;  // reduce-scatter's last step reads its addend with no send to pace it
  bool has_base_ = false;
  Proto proto_ = Proto::kSimple;
  BytesPerSecond rate_ = 0;        // a step to another node
  BytesPerSecond intra_rate_ = 0;  // a step to a GPU of the same node (StepModel::intra_rate)
  Time base_ = 0, hop_intra_ = 0, hop_inter_ = 0;
  AddendReads reads_;
  std::uint32_t proxy_ns_ = 0;
  std::uint64_t step_wire_ = 1;
  NetWrites writes_;  // the network device's cost per write across nodes
  // The bytes a message of `wire` from position a to b carries for the network device's writes.
  std::uint64_t device_extra(std::uint32_t a, std::uint32_t b, std::uint64_t wire) const;
  std::vector<std::uint32_t> domain_of_;
  std::vector<std::uint64_t> share_, chunks_;  // per channel: bytes, chunks (k)
  std::vector<std::uint32_t> ring_, index_;    // per channel: ring order of positions, and each position's index
  std::vector<Lane> lanes_;
  std::vector<std::uint8_t> delays_;  // per rank and channel, as lanes_: hop(c, pos) > 0
  // OpRef of each channel's first op on a rank, per rank and channel as
  // lanes_; apart from them, so that decode's search over a rank's channels
  // reads one cache line, not the four of its lanes.
  std::vector<std::uint32_t> firsts_;                    // [pos * channels + c]
  // Per rank, when its channels' first ops are evenly spaced (as they are
  // when the channels carry equal shares): reciprocal(the spacing); else 0.
  std::vector<std::uint64_t> channel_reciprocal_;
  std::uint64_t n_reciprocal_ = 0;  // reciprocal(n) for the pieces' arithmetic (0: divide)
  // Per channel, when all its chunks are one size: that size, and the
  // bytes of every piece a rank sends of them (0 where they differ).
  std::vector<std::uint64_t> uniform_chunk_, uniform_piece_;
  std::vector<std::uint32_t> op_count_;        // per rank
  bool symmetric_ = false;
  // Rank 0's peers, ascending, each with the channel and side (0 next, 1
  // previous) where rank 0 first meets it: rank p's is that channel's
  // neighbour of p on the same side.
  std::vector<std::uint32_t> origin_peers_;
  std::vector<std::uint32_t> origin_lane_;  // channel << 1 | side
};

}  // namespace sim::nccl
