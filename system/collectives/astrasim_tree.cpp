#include "system/collectives/astrasim_tree.h"

#include <algorithm>
#include <stdexcept>

namespace sim {

AstraSimTreeProgram::AstraSimTreeProgram(CollectiveType type, std::uint32_t group_size,
                                         std::vector<std::uint64_t> chunk_bytes, Time gate, std::uint32_t active,
                                         bool first_root_min)
    : n_(group_size),
      bytes_(std::move(chunk_bytes)),
      gate_(gate),
      active_(std::max<std::uint32_t>(active, 1)),
      first_(first_root_min ? 1 : 0) {
  if (type != CollectiveType::kAllReduce) throw std::invalid_argument("astrasimTree: all-reduce only");
  if (n_ == 0 || bytes_.empty()) throw std::invalid_argument("astrasimTree: empty group or zero chunks");
  if (gate_ < 0) throw std::invalid_argument("astrasimTree: negative gate");
}

AstraSimTreeProgram::AstraSimTreeProgram(CollectiveType type, std::uint32_t group_size, std::uint64_t bytes,
                                         std::uint32_t chunks)
    : AstraSimTreeProgram(type, group_size,
                          [&] {
                            std::vector<std::uint64_t> b(chunks);
                            for (std::uint32_t c = 0; c < chunks; ++c) b[c] = part_bytes(bytes, chunks, c);
                            return b;
                          }(),
                          0, 1) {}

AstraSimTreeProgram::Node AstraSimTreeProgram::tree_node(std::uint32_t n, std::uint32_t rank, bool root_min) {
  Node nd;
  if (n <= 1) return nd;
  const std::int64_t root = root_min ? 0 : n - 1;
  std::int64_t lo = root_min ? 1 : 0, hi = root_min ? n - 1 : static_cast<std::int64_t>(n) - 2;
  const auto mid = [](std::int64_t a, std::int64_t b) { return a + (b - a) / 2; };
  if (rank == root) {
    nd.child[0] = mid(lo, hi);  // the root has one child
    return nd;
  }
  std::int64_t parent = root;
  for (;;) {
    const std::int64_t m = mid(lo, hi);
    if (rank == m) {
      nd.parent = parent;
      if (lo <= m - 1) nd.child[0] = mid(lo, m - 1);
      if (m + 1 <= hi) nd.child[1] = mid(m + 1, hi);
      return nd;
    }
    parent = m;
    if (rank < m) hi = m - 1;
    else lo = m + 1;
  }
}

std::uint64_t AstraSimTreeProgram::op_count(std::uint32_t pos) const {
  if (n_ <= 1) return 0;
  std::uint64_t per[2];
  for (std::uint32_t t = 0; t < 2; ++t) {
    const Node nd = node(pos, t);
    const std::uint64_t kids = children(nd);
    if (nd.parent < 0) per[t] = 3 * kids + 1;         // receive + reduce + send per child, the gate
    else if (kids == 0) per[t] = 3;                   // send, receive, gate
    else per[t] = 3 * kids + 4;                       // + send up, receive down, process, gate
  }
  const std::uint64_t k = bytes_.size();
  return (k + 1) / 2 * per[0] + k / 2 * per[1];
}

void AstraSimTreeProgram::begin(std::uint32_t pos, std::uint32_t c, RankCursor& cursor,
                                std::vector<OpRef>& ready) const {
  const Node nd = node(pos, c);
  cursor.pending[c] = children(nd);
  if (nd.child[0] >= 0) ready.push_back(ref(c, 0));
  if (nd.child[1] >= 0) ready.push_back(ref(c, 2));
  if (children(nd) == 0) ready.push_back(ref(c, 4));  // a leaf sends its own data
}

void AstraSimTreeProgram::start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const {
  if (n_ <= 1) return;
  const auto k = static_cast<std::uint32_t>(bytes_.size());
  cursor.pending.assign(k, 0);
  for (std::uint32_t c = 0; c < std::min(active_, k); ++c) begin(pos, c, cursor, ready);
}

CollectiveOp AstraSimTreeProgram::op(std::uint32_t pos, OpRef r) const {
  const std::uint32_t slot = r & 15;
  const auto c = static_cast<std::uint32_t>(r >> 4);
  const Node nd = node(pos, c);
  CollectiveOp op;
  op.bytes = bytes_[c];
  switch (slot) {
    case 0: case 2: op.kind = OpKind::kRecv; op.peer = static_cast<std::uint32_t>(nd.child[slot / 2]); break;
    case 1: case 3: op.kind = OpKind::kCompute; op.peer = static_cast<std::uint32_t>(nd.child[slot / 2]); break;
    case 4: op.kind = OpKind::kSend; op.peer = static_cast<std::uint32_t>(nd.parent); break;
    case 5: op.kind = OpKind::kRecv; op.peer = static_cast<std::uint32_t>(nd.parent); break;
    case 6: op.kind = OpKind::kCompute; break;
    case 7: case 8: op.kind = OpKind::kSend; op.peer = static_cast<std::uint32_t>(nd.child[slot - 7]); break;
    default: op.kind = OpKind::kCompute; op.bytes = 0; op.duration = gate_;
  }
  const bool down = slot >= 5;
  op.tag = static_cast<std::uint64_t>(c) << 1 | (down ? 1 : 0);
  return op;
}

void AstraSimTreeProgram::downs(const Node& nd, std::uint32_t c, std::vector<OpRef>& out) const {
  if (nd.child[0] >= 0) out.push_back(ref(c, 7));
  if (nd.child[1] >= 0) out.push_back(ref(c, 8));
}

void AstraSimTreeProgram::reduces(const Node& nd, std::uint32_t c, std::vector<OpRef>& out) const {
  if (nd.child[0] >= 0) out.push_back(ref(c, 1));
  if (nd.child[1] >= 0) out.push_back(ref(c, 3));
}

void AstraSimTreeProgram::finish(std::uint32_t pos, OpRef r, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const std::uint32_t slot = r & 15;
  const auto c = static_cast<std::uint32_t>(r >> 4);
  switch (slot) {
    case 0: case 2:
      ready.push_back(r + 1);  // its reduce
      return;
    case 1: case 3:
      if (--cursor.pending[c] == 0) {
        const Node nd = node(pos, c);
        if (nd.parent >= 0) {
          ready.push_back(ref(c, 4));  // the subtree's sum goes up
        } else {
          downs(nd, c, ready);  // the root turns the sum around
          ready.push_back(ref(c, 9));
        }
      }
      return;
    case 4:
      ready.push_back(ref(c, 5));  // the result can only come after the parent has our data
      return;
    case 5:
      ready.push_back(children(node(pos, c)) > 0 ? ref(c, 6) : ref(c, 9));
      return;
    case 6:
      downs(node(pos, c), c, ready);
      ready.push_back(ref(c, 9));
      return;
    case 9:
      if (static_cast<std::uint64_t>(c) + active_ < bytes_.size()) begin(pos, c + active_, cursor, ready);
      return;
    default:
      return;
  }
}

void AstraSimTreeProgram::parents(std::uint32_t pos, OpRef r, std::vector<OpRef>& out) const {
  const std::uint32_t slot = r & 15;
  const auto c = static_cast<std::uint32_t>(r >> 4);
  const Node nd = node(pos, c);
  const bool leaf = children(nd) == 0;
  switch (slot) {
    case 0: case 2:
      if (c >= active_) out.push_back(ref(c - active_, 9));
      return;
    case 1: case 3:
      out.push_back(r - 1);
      return;
    case 4:
      if (!leaf) reduces(nd, c, out);
      else if (c >= active_) out.push_back(ref(c - active_, 9));
      return;
    case 5:
      out.push_back(ref(c, 4));
      return;
    case 6:
      // Two parents: the checker must not take it for the reduce of the
      // receive (the result overwrites, it is not merged).
      out.push_back(ref(c, 4));
      out.push_back(ref(c, 5));
      return;
    case 7: case 8:
      if (nd.parent < 0) reduces(nd, c, out);
      else out.push_back(ref(c, 6));
      return;
    default:  // the gate
      if (nd.parent < 0) {
        reduces(nd, c, out);
      } else if (leaf) {
        out.push_back(ref(c, 4));  // as for slot 6: not a reduce of the receive
        out.push_back(ref(c, 5));
      } else {
        out.push_back(ref(c, 6));
      }
      return;
  }
}

bool AstraSimTreeProgram::leaves(std::uint32_t, OpRef r) const {
  // With several chunks in flight the last chunk's leave need not be the last one.
  return (r & 15) == 9 && (r >> 4) + 1 == bytes_.size() && (active_ == 1 || bytes_.size() == 1);
}

ChunkRange AstraSimTreeProgram::chunk_range(std::uint32_t, OpRef r) const { return {r >> 4, 1}; }

std::string AstraSimTreeProgram::label(std::uint32_t pos, OpRef r) const {
  static const char* const kSlot[] = {"recv-up", "reduce", "recv-up", "reduce", "send-up",
                                      "recv-down", "process", "send-down", "send-down", "leave"};
  const std::uint32_t slot = r & 15;
  std::string s = name_ + "." + kSlot[slot] + " c" + std::to_string(r >> 4);
  if (slot != 6 && slot != 9) s += " peer " + std::to_string(op(pos, r).peer);
  return s;
}

}  // namespace sim
