// Direct collectives: every message goes straight to its destination, all at
// once (ASTRA-sim's `direct`), optionally at most `window` in flight per rank
// (ASTRA-sim's `directN`), generated on demand.
//
// Sizes (S = comm_size, N ranks, k chunks; root = group position 0):
//   ALL_TO_ALL      each rank sends S/N to every other rank (part c*N + dst of S)
//   REDUCE_SCATTER  rank sends piece j (S/N) to rank j; receives N-1 pieces of its own index, reduces each
//   ALL_GATHER      rank sends its input S to every other rank
//   ALL_REDUCE      direct reduce-scatter, then direct all-gather of the reduced piece (S/N)
//   GATHER          S per rank, each non-root sends its S to the root
//   SCATTER         root's buffer S, S/N to each rank
//   BROADCAST       root sends S to every rank
//   REDUCE          every non-root sends S to the root, which reduces each
//   BARRIER         every rank sends 1 byte to every other rank (k = 1 whatever is asked)
// With k chunks every message is cut into k parts, each chunk its own message.
// Rank `pos` sends to pos+1, pos+2, ... (mod N) in that order and receives
// from pos-1, pos-2, ...; with a window w, send i+w waits for send i to be
// delivered (per chunk and per phase). Receives are posted at the start.
#pragma once

#include <bit>

#include "system/program/collective_program.h"
#include "workload/rank_graph.h"

namespace sim {

class DirectProgram final : public CollectiveProgram {
 public:
  // window 0: unlimited.
  DirectProgram(CollectiveType type, std::uint32_t group_size, std::uint64_t bytes, std::uint32_t chunks,
                std::uint32_t window);
  static bool supports(CollectiveType type);

  std::uint32_t group_size() const override { return n_; }
  const std::string& name() const override { return name_; }
  std::uint64_t op_count(std::uint32_t pos) const override;
  void start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  CollectiveOp op(std::uint32_t pos, OpRef ref) const override;
  void finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  unsigned ref_bits() const override { return 40 + static_cast<unsigned>(std::bit_width(chunks_)); }
  void parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const override;
  std::uint64_t chunk_total() const override;
  ChunkRange chunk_range(std::uint32_t pos, OpRef ref) const override;
  std::string label(std::uint32_t pos, OpRef ref) const override;
  // Symmetric under rotation (rank p sends to p + i what rank 0 sends to i)
  // when every rank sends to every other and each (phase, chunk) has one
  // message size: all-gather and barrier always, the others when the buffer
  // divides into its N x k parts (near-equal parts differ by a byte otherwise).
  bool rank_symmetric() const override { return symmetric_; }
  std::uint32_t symmetric_peer(std::uint32_t pos, std::uint32_t origin_peer) const override {
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(pos) + origin_peer) % n_);
  }
  // The receive from pos - i takes that rank's send to its (pos - i) + i.
  OpRef matched_send(OpRef recv) const override { return recv & ~OpRef{3}; }

  // OpRef: chunk << 40 | phase << 38 | i << 2 | slot (0 send to pos+i, 1 recv
  // from pos-i, 2 reduce of that receive); ascending = issue order.
  static OpRef ref(std::uint32_t chunk, std::uint32_t phase, std::uint64_t i, std::uint32_t slot) {
    return static_cast<OpRef>(chunk) << 40 | static_cast<OpRef>(phase) << 38 | i << 2 | slot;
  }

 private:
  enum class Pattern { kAll, kFromRoot, kToRoot };
  bool sends(std::uint32_t pos, std::uint64_t i) const;
  bool recvs(std::uint32_t pos, std::uint64_t i) const;
  bool reduces(std::uint32_t phase) const;
  std::uint64_t part(std::uint32_t src, std::uint32_t dst, std::uint32_t phase, std::uint32_t chunk) const;
  std::uint64_t message_bytes(std::uint32_t src, std::uint32_t dst, std::uint32_t phase, std::uint32_t chunk) const;
  void push_sends(std::uint32_t pos, std::uint32_t chunk, std::uint32_t phase, std::vector<OpRef>& ready) const;

  CollectiveType type_;
  Pattern pattern_;
  std::uint32_t n_, chunks_, window_, phases_;
  std::uint64_t bytes_, buffer_;
  std::string name_;
  bool symmetric_ = false;
};

}  // namespace sim
