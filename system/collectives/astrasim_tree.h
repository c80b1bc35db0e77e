// ASTRA-sim's doubleBinaryTree all-reduce, as ASTRA-sim times it.
//
// ASTRA-sim's "double binary tree" (DoubleBinaryTreeAllReduce over its
// BinaryTree logical topology) is not NCCL's: every chunk runs on ONE tree
// and carries the whole chunk; consecutive chunks alternate between two trees
// (RootMax for chunks 0, 2, ..., RootMin for 1, 3, ...). Each tree is a root
// with a single child, under which hangs a complete binary tree numbered in
// order (left subtree, node, right subtree): RootMax is rooted at n-1 over
// [0, n-2], RootMin at 0 over [1, n-1]. ASTRA-sim only builds it for n a power
// of two; here the subtree over any range is the balanced in-order tree
// (node = the range's middle, lo + (hi - lo) / 2), which is the same tree for
// powers of two and gives some interior nodes a single child otherwise.
//
// Per chunk, per rank (ops of the program, in ASTRA-sim's terms):
//   leaf      send the chunk to the parent; receive the result from it.
//   interior  receive from each child and reduce it; send the sum to the
//             parent; receive the result, "process" it (ASTRA-sim charges a
//             reduction on the way down too), send it to each child.
//   root      receive from its child and reduce; send the result down.
// A rank leaves a chunk once its sends are ISSUED (ASTRA-sim's exit()), not
// delivered: a `gate` compute op of the endpoint delay, parallel to the sends
// (which wait the same delay before entering the network), ends the chunk and
// starts the rank's chunk c + active. So chunks run one after another per rank
// (active = 1), but a rank that is interior in chunk c's tree starts chunk
// c+1 (where it is often a leaf) while its children are still receiving.
// Closed form and fit against ASTRA-sim: docs/collectives.md.
#pragma once

#include <bit>
#include <vector>

#include "system/program/collective_program.h"
#include "workload/rank_graph.h"

namespace sim {

class AstraSimTreeProgram final : public CollectiveProgram {
 public:
  // `chunk_bytes[c]`: bytes of chunk c (each message of chunk c carries all of
  // it); `gate`: the time a rank takes to leave a chunk after issuing its last
  // sends (ASTRA-sim: the endpoint delay); `active`: chunks in flight per rank;
  // `first_root_min`: chunk 0 runs on RootMin (then RootMax, ...) instead of
  // RootMax (ASTRA-sim hands the trees out in turn per dimension, so a phase
  // of a multi-dimensional collective may start on either).
  AstraSimTreeProgram(CollectiveType type, std::uint32_t group_size, std::vector<std::uint64_t> chunk_bytes,
                      Time gate, std::uint32_t active, bool first_root_min = false);
  // k chunks of S cut evenly, no gate delay, one chunk at a time.
  AstraSimTreeProgram(CollectiveType type, std::uint32_t group_size, std::uint64_t bytes, std::uint32_t chunks);

  struct Node {
    std::int64_t parent = -1, child[2] = {-1, -1};
  };
  // Rank `rank` of ASTRA-sim's BinaryTree over n ranks: RootMin (root 0) or RootMax (root n-1).
  static Node tree_node(std::uint32_t n, std::uint32_t rank, bool root_min);

  std::uint32_t group_size() const override { return n_; }
  const std::string& name() const override { return name_; }
  std::uint64_t op_count(std::uint32_t pos) const override;
  void start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  CollectiveOp op(std::uint32_t pos, OpRef ref) const override;
  void finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  unsigned ref_bits() const override { return 4 + static_cast<unsigned>(std::bit_width(bytes_.size())); }
  void parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const override;
  std::uint64_t chunk_total() const override { return bytes_.size(); }
  ChunkRange chunk_range(std::uint32_t pos, OpRef ref) const override;
  std::string label(std::uint32_t pos, OpRef ref) const override;
  // The last chunk's `leave` op (one chunk in flight): the rank is through
  // once its last sends are issued.
  bool leaves(std::uint32_t pos, OpRef ref) const override;

  // Slots per chunk: 0/2 receive from child 0/1 (up), 1/3 its reduce, 4 send
  // to the parent, 5 receive from the parent (down), 6 process it (interior
  // ranks), 7/8 send to child 0/1 (down), 9 the gate. OpRef: chunk << 4 | slot.
  static OpRef ref(std::uint32_t chunk, std::uint32_t slot) { return static_cast<OpRef>(chunk) << 4 | slot; }

 private:
  Node node(std::uint32_t pos, std::uint32_t chunk) const { return tree_node(n_, pos, (chunk + first_) % 2 == 1); }
  static std::uint32_t children(const Node& nd) { return (nd.child[0] >= 0) + (nd.child[1] >= 0); }
  void begin(std::uint32_t pos, std::uint32_t chunk, RankCursor& cursor, std::vector<OpRef>& ready) const;
  void downs(const Node& nd, std::uint32_t chunk, std::vector<OpRef>& out) const;
  void reduces(const Node& nd, std::uint32_t chunk, std::vector<OpRef>& out) const;

  std::uint32_t n_;
  std::vector<std::uint64_t> bytes_;  // per chunk
  Time gate_;
  std::uint32_t active_;
  std::uint32_t first_;  // 1: chunk 0 on RootMin
  std::string name_ = "astrasimTree";
};

}  // namespace sim
