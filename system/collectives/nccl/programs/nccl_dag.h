// A collective program given as explicit per-rank DAGs, compactly: NCCL's
// programs are built op by op (nccl_programs.cpp) and run as this.
//
// Ops are numbered per rank in the order added (their OpRef); parents are
// indices of the same rank's ops. Ready ops are listed in ascending OpRef
// order of the parent that freed them, so the engine issues a rank's ops in
// the order they were added when they become ready together.
//
// The ops and their dependencies are kept apart from the switches the switch
// ops name (an op holds an index into switches()): groups of one shape on
// different switches (each data-parallel group of a large run, under its
// own rail's leaves) run one set of ops (with_switches).
//
// A rank's ops are stored as runs of one block repeated (NCCL's loops: the
// same ops each loop, the tags a loop further on, the parents and children
// as many ops further on), so a pipeline of thousands of loops holds one
// loop's ops and the engine reads a few kilobytes where it read every op.
// A rank whose ops do not repeat keeps them one by one.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "network/topology.h"
#include "system/program/collective_program.h"

namespace sim::nccl {

class DagBuilder;

class NcclDagProgram final : public CollectiveProgram {
 public:
  std::uint32_t group_size() const override { return static_cast<std::uint32_t>(body_->ranks.size()); }
  const std::string& name() const override { return body_->name; }
  std::uint64_t op_count(std::uint32_t pos) const override { return body_->ranks[pos].count; }
  void start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  CollectiveOp op(std::uint32_t pos, OpRef ref) const override {
    CollectiveOp o = body_->ranks[pos].op(ref);
    if (o.kind == OpKind::kSwitchReduce || o.kind == OpKind::kMulticast) o.node = switches_[o.node];
    return o;
  }
  void finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  unsigned ref_bits() const override { return 32; }
  void parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const override;

  // Rank symmetry (collective_program.h), found when the program is built:
  // every rank's ops and dependencies are rank 0's with the peers renamed,
  // consistently per rank, and every receive's message is its peer's send of
  // the same tag addressed back to it. A ring (one node, or one GPU per node)
  // is; trees, switch operations, and rings whose channels leave nodes
  // through different GPUs are not.
  bool rank_symmetric() const override { return body_->symmetric; }
  std::uint32_t symmetric_peer(std::uint32_t pos, std::uint32_t origin_peer) const override;
  OpRef matched_send(OpRef recv) const override { return body_->matched_send[recv]; }

  // The switches the program's switch ops name, in the order first named.
  const std::vector<NodeId>& switches() const { return switches_; }
  // The same ops on other switches: switches[i] where this program names
  // switches()[i] (as many). The ops are shared, not copied.
  std::shared_ptr<const NcclDagProgram> with_switches(std::vector<NodeId> switches) const;
  // Ops held in memory: each rank's op count, or its runs' blocks when packed.
  std::uint64_t stored_ops() const;
  // Whether `other` runs this program's ops (one built, the other moved by with_switches).
  bool same_ops(const NcclDagProgram& other) const { return body_ == other.body_; }

 private:
  friend class DagBuilder;
  // Op start + j * period + s of a run is its block's op s as of the j-th
  // repeat: the template op first + s with its tag j * tag_step further, its
  // parents and children as below.
  struct Run {
    std::uint32_t start = 0, period = 1, first = 0;
  };
  // A template op's parent: an op index (fixed), or `back` ops before it.
  struct ParentCode {
    std::uint32_t value = 0;
    bool back = false;
  };
  struct Rank {
    std::uint64_t count = 0;        // ops
    std::vector<std::uint32_t> roots;
    // One by one (runs empty): op i, its parents and its children (CSR).
    std::vector<CollectiveOp> ops;  // a switch op's node: its index in switches_
    std::vector<std::uint32_t> parent_begin, parent_list;
    std::vector<std::uint32_t> child_begin, children;
    // In runs: run_start ascending (and `count` last), the template ops,
    // their parents (CSR of codes) and children (CSR of distances ahead).
    std::vector<std::uint32_t> run_start;
    std::vector<Run> runs;
    std::vector<CollectiveOp> block;
    std::vector<std::uint64_t> tag_step;
    std::vector<std::uint32_t> block_parent_begin, block_child_begin, block_children;
    std::vector<ParentCode> block_parents;

    // The template op of `ref` and how many repeats in it is.
    std::uint32_t locate(OpRef ref, std::uint64_t& repeat) const;
    CollectiveOp op(OpRef ref) const;
    // Replaces the one-by-one form with runs when they hold far fewer ops.
    void compress();
  };
  struct Body {
    std::string name;
    std::vector<Rank> ranks;
    bool symmetric = false;
    std::vector<std::uint32_t> origin_peers;  // rank 0's peers, ascending
    std::vector<std::uint32_t> peer_map;      // [pos * origin_peers.size() + i]: rank pos's origin_peers[i]
    std::vector<std::uint32_t> matched_send;  // rank 0's receive -> its send of the same tag
    void find_symmetry();
  };
  std::shared_ptr<const Body> body_;
  std::vector<NodeId> switches_;
};

// While one lives, DagBuilders made on this thread without a `pack` keep
// their ops one by one: tests build NCCL's programs both ways and compare.
class DagPackingOff {
 public:
  DagPackingOff();
  ~DagPackingOff();
  DagPackingOff(const DagPackingOff&) = delete;
  DagPackingOff& operator=(const DagPackingOff&) = delete;

 private:
  bool was_;
};

// Builds an NcclDagProgram op by op.
class DagBuilder {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  // `pack`: store repeated blocks once (NcclDagProgram); false keeps every
  // op one by one (what the packed store is tested against). Without it:
  // packed, unless a DagPackingOff is alive on this thread.
  explicit DagBuilder(std::uint32_t ranks);
  DagBuilder(std::uint32_t ranks, bool pack);
  // Adds `op` on `rank` after `parents` (kNone entries are skipped); returns its index.
  std::uint32_t add(std::uint32_t rank, const CollectiveOp& op, std::initializer_list<std::uint32_t> parents);
  std::uint32_t add(std::uint32_t rank, const CollectiveOp& op, const std::vector<std::uint32_t>& parents);
  // Room for `ops` ops with `parents` parent entries in all on `rank`, so
  // that a large program's arrays are written once, not copied as they
  // double (an upper bound costs only address space: untouched pages are
  // never mapped).
  void reserve(std::uint32_t rank, std::uint64_t ops, std::uint64_t parents);
  // `rank` has all its ops: its store may shrink now rather than at build
  // (a program built rank after rank then never holds every rank's ops one
  // by one). Nothing may be added to it after.
  void seal(std::uint32_t rank);
  std::shared_ptr<const CollectiveProgram> build(std::string name);

 private:
  template <class Parents>
  std::uint32_t add_after(std::uint32_t rank, const CollectiveOp& op, const Parents& parents);
  // Children, roots and switch indices of `rank`'s ops (once).
  void prepare(std::uint32_t rank);
  std::vector<NcclDagProgram::Rank> ranks_;
  std::vector<bool> prepared_, compressed_;
  std::vector<NodeId> switches_;
  std::unordered_map<NodeId, std::uint32_t> switch_index_;
  bool switch_ops_ = false;
  bool pack_ = true;
};

}  // namespace sim::nccl
