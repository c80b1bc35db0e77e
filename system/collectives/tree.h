// Binary-tree collectives (NCCL's trees), generated on demand.
//
// The tree is NCCL's ncclGetBtree over group positions: rank 0 is the root,
// with one child (the largest power of two below N); rank r's parent and
// children follow from its lowest set bit. The double binary tree adds
// NCCL's second tree (ncclGetDtree): the first mirrored (r -> N-1-r) when N
// is even, shifted by one (r -> r+1) when N is odd, so that most ranks are
// interior in one tree and leaves in the other.
//
//   ALL_REDUCE (doubleBinaryTree)  S = buffer; each tree carries half (the
//       first tree [0, S/2), the second the rest), cut into k chunks; per
//       chunk, reduce up the tree (receive from each child, reduce, send to
//       the parent), then the root's result is broadcast down.
//   ALL_REDUCE (binaryTree)  the same on one tree carrying all of S.
//   REDUCE     (binaryTree)  S = buffer, the up phase only: the root (group
//       position 0) ends with every rank's contribution.
//   BROADCAST  (binaryTree)  S = buffer, the down phase only, from position 0.
// Chunks pipeline: a rank forwards chunk c as soon as chunk c is complete.
#pragma once

#include <bit>

#include "system/program/collective_program.h"
#include "workload/rank_graph.h"

namespace sim {

class TreeProgram final : public CollectiveProgram {
 public:
  TreeProgram(CollectiveType type, std::uint32_t group_size, std::uint64_t bytes, std::uint32_t chunks,
              bool double_tree);
  static bool supports(CollectiveType type, bool double_tree);

  struct Node {
    std::int64_t parent = -1, child[2] = {-1, -1};
  };
  // NCCL's ncclGetBtree for one rank of n.
  static Node btree(std::uint32_t n, std::uint32_t rank);
  // Tree t (0 or 1) of the double binary tree.
  static Node dtree(std::uint32_t n, std::uint32_t rank, std::uint32_t t);

  std::uint32_t group_size() const override { return n_; }
  const std::string& name() const override { return name_; }
  std::uint64_t op_count(std::uint32_t pos) const override;
  void start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  CollectiveOp op(std::uint32_t pos, OpRef ref) const override;
  void finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  unsigned ref_bits() const override { return 3 + static_cast<unsigned>(std::bit_width(static_cast<std::uint64_t>(chunks_) * trees_)); }
  void parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const override;
  std::uint64_t chunk_total() const override { return static_cast<std::uint64_t>(trees_) * chunks_; }
  ChunkRange chunk_range(std::uint32_t pos, OpRef ref) const override;
  std::string label(std::uint32_t pos, OpRef ref) const override;

  // Slots per (chunk, tree): 0/2 receive from child 0/1 (up), 1/3 its reduce,
  // 4 send to the parent, 5 receive from the parent (down), 6/7 send to child 0/1.
  // OpRef: (chunk * trees + tree) << 3 | slot.
  OpRef ref(std::uint32_t chunk, std::uint32_t tree, std::uint32_t slot) const {
    return (static_cast<OpRef>(chunk) * trees_ + tree) << 3 | slot;
  }

 private:
  Node node(std::uint32_t pos, std::uint32_t tree) const { return dtree(n_, pos, tree); }
  std::uint32_t children(const Node& nd) const { return (nd.child[0] >= 0) + (nd.child[1] >= 0); }
  void push_down(const Node& nd, std::uint32_t chunk, std::uint32_t tree, std::vector<OpRef>& ready) const;
  void reduces_of(const Node& nd, std::uint32_t chunk, std::uint32_t tree, std::vector<OpRef>& out) const;

  std::uint32_t n_, chunks_, trees_;
  bool up_, down_;
  std::uint64_t bytes_;
  std::string name_;
};

}  // namespace sim
