#include "system/collectives/tree.h"

#include <stdexcept>

namespace sim {

bool TreeProgram::supports(CollectiveType type, bool double_tree) {
  if (double_tree) return type == CollectiveType::kAllReduce;
  return type == CollectiveType::kAllReduce || type == CollectiveType::kReduce || type == CollectiveType::kBroadcast;
}

TreeProgram::TreeProgram(CollectiveType type, std::uint32_t group_size, std::uint64_t bytes, std::uint32_t chunks,
                         bool double_tree)
    : n_(group_size), chunks_(chunks), trees_(double_tree ? 2 : 1), bytes_(bytes) {
  if (!supports(type, double_tree)) throw std::invalid_argument("tree: unsupported collective");
  if (n_ == 0 || chunks_ == 0) throw std::invalid_argument("tree: empty group or zero chunks");
  up_ = type != CollectiveType::kBroadcast;
  down_ = type != CollectiveType::kReduce;
  name_ = double_tree ? "doubleBinaryTree" : "binaryTree";
}

TreeProgram::Node TreeProgram::btree(std::uint32_t n, std::uint32_t rank) {
  // Transcribed from NCCL's ncclGetBtree (src/graph/trees.cc).
  Node nd;
  std::int64_t bit = 1;
  while (bit < n && !(bit & rank)) bit <<= 1;
  if (rank == 0) {
    if (n > 1) nd.child[1] = bit >> 1;  // the root has one child
    return nd;
  }
  std::int64_t up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  nd.parent = up;
  std::int64_t lowbit = bit >> 1;
  nd.child[0] = lowbit == 0 ? -1 : rank - lowbit;
  std::int64_t down1 = lowbit == 0 ? -1 : rank + lowbit;
  while (down1 >= n) {
    lowbit >>= 1;
    down1 = lowbit == 0 ? -1 : rank + lowbit;
  }
  nd.child[1] = down1;
  return nd;
}

TreeProgram::Node TreeProgram::dtree(std::uint32_t n, std::uint32_t rank, std::uint32_t t) {
  if (t == 0) return btree(n, rank);
  // ncclGetDtree: shift by one for odd n, mirror for even n.
  const bool odd = n % 2 == 1;
  const std::uint32_t in = odd ? (rank + n - 1) % n : n - 1 - rank;
  Node nd = btree(n, in);
  const auto back = [&](std::int64_t r) -> std::int64_t {
    if (r < 0) return -1;
    return odd ? (r + 1) % n : n - 1 - r;
  };
  nd.parent = back(nd.parent);
  nd.child[0] = back(nd.child[0]);
  nd.child[1] = back(nd.child[1]);
  return nd;
}

std::uint64_t TreeProgram::op_count(std::uint32_t pos) const {
  if (n_ <= 1) return 0;
  std::uint64_t total = 0;
  for (std::uint32_t t = 0; t < trees_; ++t) {
    const Node nd = node(pos, t);
    const std::uint64_t kids = children(nd), root = nd.parent < 0;
    if (up_) total += 2 * kids + (root ? 0 : 1);
    if (down_) total += kids + (root ? 0 : 1);
  }
  return total * chunks_;
}

void TreeProgram::push_down(const Node& nd, std::uint32_t c, std::uint32_t t, std::vector<OpRef>& ready) const {
  if (nd.child[0] >= 0) ready.push_back(ref(c, t, 6));
  if (nd.child[1] >= 0) ready.push_back(ref(c, t, 7));
}

void TreeProgram::reduces_of(const Node& nd, std::uint32_t c, std::uint32_t t, std::vector<OpRef>& out) const {
  if (nd.child[0] >= 0) out.push_back(ref(c, t, 1));
  if (nd.child[1] >= 0) out.push_back(ref(c, t, 3));
}

void TreeProgram::start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const {
  if (n_ <= 1) return;
  Node nodes[2];
  for (std::uint32_t t = 0; t < trees_; ++t) nodes[t] = node(pos, t);
  if (up_) {
    cursor.pending.resize(static_cast<std::size_t>(chunks_) * trees_);
    for (std::uint32_t c = 0; c < chunks_; ++c) {
      for (std::uint32_t t = 0; t < trees_; ++t) cursor.pending[c * trees_ + t] = children(nodes[t]);
    }
  }
  for (std::uint32_t c = 0; c < chunks_; ++c) {
    for (std::uint32_t t = 0; t < trees_; ++t) {
      const Node& nd = nodes[t];
      const bool root = nd.parent < 0;
      if (up_) {
        if (nd.child[0] >= 0) ready.push_back(ref(c, t, 0));
        if (nd.child[1] >= 0) ready.push_back(ref(c, t, 2));
        if (!root && children(nd) == 0) ready.push_back(ref(c, t, 4));  // a leaf sends its own data
      }
      if (down_) {
        if (!root) ready.push_back(ref(c, t, 5));
        else if (!up_) push_down(nd, c, t, ready);  // broadcast: the root starts
      }
    }
  }
}

CollectiveOp TreeProgram::op(std::uint32_t pos, OpRef r) const {
  const std::uint32_t slot = r & 7;
  const std::uint64_t ct = r >> 3;
  const auto t = static_cast<std::uint32_t>(ct % trees_), c = static_cast<std::uint32_t>(ct / trees_);
  const Node nd = node(pos, t);
  CollectiveOp op;
  switch (slot) {
    case 0: case 2: op.kind = OpKind::kRecv; op.peer = nd.child[slot / 2]; break;
    case 1: case 3: op.kind = OpKind::kCompute; op.peer = nd.child[slot / 2]; break;
    case 4: op.kind = OpKind::kSend; op.peer = nd.parent; break;
    case 5: op.kind = OpKind::kRecv; op.peer = nd.parent; break;
    default: op.kind = OpKind::kSend; op.peer = nd.child[slot - 6];
  }
  const bool down = slot >= 5;
  op.tag = ct << 1 | (down ? 1 : 0);
  op.bytes = parts_bytes(bytes_, chunk_total(), static_cast<std::uint64_t>(t) * chunks_ + c, 1);
  return op;
}

void TreeProgram::finish(std::uint32_t pos, OpRef r, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const std::uint32_t slot = r & 7;
  const std::uint64_t ct = r >> 3;
  const auto t = static_cast<std::uint32_t>(ct % trees_), c = static_cast<std::uint32_t>(ct / trees_);
  switch (slot) {
    case 0: case 2:
      ready.push_back(r + 1);  // its reduce
      return;
    case 1: case 3:
      if (--cursor.pending[ct] == 0) {
        // The subtree's contributions are all in: pass them up, or (the root) start down.
        const Node nd = node(pos, t);
        if (nd.parent >= 0) ready.push_back(ref(c, t, 4));
        else if (down_) push_down(nd, c, t, ready);
      }
      return;
    case 5:
      push_down(node(pos, t), c, t, ready);
      return;
    default:
      return;
  }
}

void TreeProgram::parents(std::uint32_t pos, OpRef r, std::vector<OpRef>& out) const {
  const std::uint32_t slot = r & 7;
  const std::uint64_t ct = r >> 3;
  const auto t = static_cast<std::uint32_t>(ct % trees_), c = static_cast<std::uint32_t>(ct / trees_);
  const Node nd = node(pos, t);
  switch (slot) {
    case 1: case 3: out.push_back(r - 1); return;
    case 4: reduces_of(nd, c, t, out); return;
    case 6: case 7:
      if (nd.parent >= 0) out.push_back(ref(c, t, 5));
      else if (up_) reduces_of(nd, c, t, out);
      return;
    default: return;
  }
}

ChunkRange TreeProgram::chunk_range(std::uint32_t, OpRef r) const {
  const std::uint64_t ct = r >> 3;
  return {(ct % trees_) * chunks_ + ct / trees_, 1};
}

std::string TreeProgram::label(std::uint32_t pos, OpRef r) const {
  static const char* const kSlot[] = {"recv-up", "reduce", "recv-up", "reduce", "send-up", "recv-down", "send-down", "send-down"};
  const std::uint64_t ct = r >> 3;
  return name_ + "." + kSlot[r & 7] + " c" + std::to_string(ct / trees_) + " t" + std::to_string(ct % trees_) +
         " peer " + std::to_string(op(pos, r).peer);
}

}  // namespace sim
