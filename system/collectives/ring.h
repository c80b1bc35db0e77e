// Native ring algorithms, generated on demand (nothing per step is stored).
//
// Sizes follow ASTRA-sim's meanings of comm_size S on a group of N ranks:
//   ALL_REDUCE      S = buffer; reduce-scatter then all-gather, 2(N-1) steps of S/N
//   REDUCE_SCATTER  S = input buffer; N-1 steps of S/N, each received piece reduced
//   ALL_GATHER      S = per-rank input (output S*N); N-1 steps of S
//   ALL_TO_ALL      S = buffer, S/N per destination; N-1 store-and-forward steps,
//                   step k carries the N-1-k blocks still travelling (sizes shrink)
// With k chunks every piece is cut into k parts, and each chunk runs its own
// chain of steps; the network's egress serialization pipelines them.
// Every part is ceil(B / P) bytes, for the P = N*k parts of the buffer B
// (all-gather: the k parts of each rank's input): when P does not divide B
// the parts are padded, at most P-1 bytes in all, rather than cut a byte
// apart. So every rank moves the same sizes at every step, and the ring stays
// rank-symmetric (folds, system/runner/aggregation/) at any size. A real
// ring's steps are paced by its largest piece (NCCL's chunks are ceil-sized
// too, the last one short), so its time is that of equal ceil-sized parts.
//
// Per rank, chunk c and step s there are up to three ops: SEND to the right
// neighbour, RECV from the left one, and (for reducing steps) a COMPUTE reduce
// of the received bytes. Step s+1's send and receive wait for step s's
// receive (and its reduce). The first step's send and receive are ready at
// the start. This is exactly the DAG that `sim collective gen ring` writes.
#pragma once

#include <bit>

#include <vector>

#include "system/program/collective_program.h"
#include "workload/et/et_io.h"
#include "workload/rank_graph.h"

namespace sim {

class RingProgram final : public CollectiveProgram {
 public:
  RingProgram(CollectiveType type, std::uint32_t group_size, std::uint64_t bytes, std::uint32_t chunks);

  static bool supports(CollectiveType type);

  std::uint32_t group_size() const override { return n_; }
  const std::string& name() const override { return name_; }
  std::uint64_t op_count(std::uint32_t pos) const override;
  void start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  CollectiveOp op(std::uint32_t pos, OpRef ref) const override;
  void finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  unsigned ref_bits() const override { return 34 + static_cast<unsigned>(std::bit_width(chunks_)); }
  void parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const override;
  // All-to-all blocks wrap modulo N within a chunk, which a chunk range cannot say: none.
  std::uint64_t chunk_total() const override {
    return type_ == CollectiveType::kAllToAll ? 0 : static_cast<std::uint64_t>(n_) * chunks_;
  }
  ChunkRange chunk_range(std::uint32_t pos, OpRef ref) const override;
  bool equal_parts() const override { return true; }
  std::string label(std::uint32_t pos, OpRef ref) const override;
  // Symmetric under rotation: every part of the buffer has the same size.
  bool rank_symmetric() const override { return n_ >= 2; }
  std::uint32_t symmetric_peer(std::uint32_t pos, std::uint32_t origin_peer) const override {
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(pos) + origin_peer) % n_);
  }
  OpRef matched_send(OpRef recv) const override { return ref(chunk_of(recv), step_of(recv), 0); }

  std::uint32_t steps() const { return steps_; }
  std::uint32_t chunks() const { return chunks_; }
  // Whether step `s` reduces what it receives.
  bool reduces(std::uint32_t s) const;
  // Bytes a rank at `pos` sends at (chunk, step); the left neighbour's send is what it receives.
  std::uint64_t send_bytes(std::uint32_t pos, std::uint32_t chunk, std::uint32_t step) const;
  // Match tag of (chunk, step).
  std::uint64_t tag(std::uint32_t chunk, std::uint32_t step) const {
    return static_cast<std::uint64_t>(chunk) * steps_ + step;
  }

  // OpRef layout: chunk << 34 | step << 2 | slot (slot 0 send, 1 recv, 2 reduce):
  // bit fields, so the hot path decodes an op without a division.
  static OpRef ref(std::uint32_t chunk, std::uint32_t step, std::uint32_t slot) {
    return static_cast<OpRef>(chunk) << 34 | static_cast<OpRef>(step) << 2 | slot;
  }
  static std::uint32_t chunk_of(OpRef r) { return static_cast<std::uint32_t>(r >> 34); }
  static std::uint32_t step_of(OpRef r) { return static_cast<std::uint32_t>(r >> 2) & 0xffffffffu; }
  static std::uint32_t slot_of(OpRef r) { return static_cast<std::uint32_t>(r & 3); }
  // Dense numbering (chunk * steps + step) * 3 + slot, for tools that index arrays by op.
  std::uint64_t dense(OpRef r) const {
    return (static_cast<std::uint64_t>(chunk_of(r)) * steps_ + step_of(r)) * 3 + slot_of(r);
  }
  OpRef from_dense(std::uint64_t d) const {
    return ref(static_cast<std::uint32_t>(d / 3 / steps_), static_cast<std::uint32_t>(d / 3 % steps_),
               static_cast<std::uint32_t>(d % 3));
  }

 private:
  CollectiveType type_;
  std::uint32_t n_;
  std::uint64_t bytes_;
  std::uint32_t chunks_;
  std::uint32_t steps_;
  std::string name_ = "ring";
  std::uint64_t op_count_ = 0;
  std::uint64_t part_ = 0;  // bytes of every part (equal_part_bytes)
  std::uint64_t range_bytes(std::uint64_t count) const { return part_ * count; }
};

// One trace per ring position, written for collective size `bytes`. Chunk
// attributes make any other size split exactly as the native ring does
// (all-to-all excepted: it rescales comm_size by the recorded collective_size).
std::vector<EtTrace> ring_algorithm_ets(CollectiveType type, std::uint32_t npus, std::uint32_t chunks,
                                        std::uint64_t bytes);

}  // namespace sim
