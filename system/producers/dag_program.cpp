#include "system/producers/dag_program.h"

#include <stdexcept>

namespace sim {

DagProgram::DagProgram(std::string name, std::vector<std::vector<DagProgramOp>> ranks, std::uint64_t chunk_total)
    : name_(std::move(name)), ranks_(ranks.size()), chunk_total_(chunk_total) {
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    Rank& rank = ranks_[r];
    rank.ops = std::move(ranks[r]);
    const auto count = static_cast<std::uint32_t>(rank.ops.size());
    // Children in ascending index: counted, then placed (CSR).
    std::vector<std::uint32_t> kids(count + 1, 0);
    for (std::uint32_t k = 0; k < count; ++k) {
      for (std::uint32_t p : rank.ops[k].parents) {
        if (p >= count || p == k) throw std::logic_error(name_ + ": rank " + std::to_string(r) + " op " +
                                                         std::to_string(k) + " has a bad parent");
        ++kids[p + 1];
      }
      if (rank.ops[k].parents.empty()) rank.roots.push_back(k);
    }
    for (std::uint32_t k = 0; k < count; ++k) kids[k + 1] += kids[k];
    rank.child_begin = kids;
    rank.children.resize(kids[count]);
    for (std::uint32_t k = 0; k < count; ++k) {
      for (std::uint32_t p : rank.ops[k].parents) rank.children[kids[p]++] = k;
    }
  }
}

void DagProgram::start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const Rank& rank = ranks_[pos];
  cursor.pending.resize(rank.ops.size());
  for (std::size_t k = 0; k < rank.ops.size(); ++k) {
    cursor.pending[k] = static_cast<std::uint32_t>(rank.ops[k].parents.size());
  }
  ready.insert(ready.end(), rank.roots.begin(), rank.roots.end());
}

void DagProgram::finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const Rank& rank = ranks_[pos];
  for (std::uint32_t c = rank.child_begin[ref]; c < rank.child_begin[ref + 1]; ++c) {
    const std::uint32_t child = rank.children[c];
    if (--cursor.pending[child] == 0) ready.push_back(child);
  }
}

std::string DagProgram::label(std::uint32_t pos, OpRef ref) const {
  const DagProgramOp& o = ranks_[pos].ops[ref];
  const std::string prefix = name_.substr(0, name_.find('('));
  const std::string chunk = o.range.count > 0 ? " c" + std::to_string(o.range.first) : std::string();
  switch (o.op.kind) {
    case OpKind::kSend: return prefix + ".send" + chunk + " to " + std::to_string(o.op.peer);
    case OpKind::kRecv: return prefix + ".recv" + chunk + " from " + std::to_string(o.op.peer);
    case OpKind::kSwitchReduce:
      return prefix + ".switch_reduce" + chunk +
             (o.op.peer == kSwitchPeer      ? std::string(" to all")
              : o.op.peer == kSwitchScatter ? std::string(" scattered")
                                            : " to " + std::to_string(o.op.peer));
    case OpKind::kMulticast: return prefix + (o.op.peer == kSwitchGather ? ".gather" : ".multicast") + chunk;
    case OpKind::kCompute: break;
  }
  return prefix + (o.op.duration >= 0 ? ".wait" : ".reduce") + chunk;
}

void DagProgram::parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const {
  for (std::uint32_t p : ranks_[pos].ops[ref].parents) out.push_back(p);
}

}  // namespace sim
