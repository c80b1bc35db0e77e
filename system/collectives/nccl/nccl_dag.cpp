#include "system/collectives/nccl/nccl_dag.h"

#include <memory>

namespace sim::nccl {

void NcclDagProgram::start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const Rank& r = ranks_[pos];
  cursor.pending.resize(r.ops.size());
  for (std::size_t k = 0; k < r.ops.size(); ++k) cursor.pending[k] = r.parent_begin[k + 1] - r.parent_begin[k];
  ready.insert(ready.end(), r.roots.begin(), r.roots.end());
}

void NcclDagProgram::finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const Rank& r = ranks_[pos];
  for (std::uint32_t c = r.child_begin[ref]; c < r.child_begin[ref + 1]; ++c) {
    const std::uint32_t child = r.children[c];
    if (--cursor.pending[child] == 0) ready.push_back(child);
  }
}

void NcclDagProgram::parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const {
  const Rank& r = ranks_[pos];
  for (std::uint32_t p = r.parent_begin[ref]; p < r.parent_begin[ref + 1]; ++p) out.push_back(r.parent_list[p]);
}

DagBuilder::DagBuilder(std::uint32_t ranks) : ranks_(ranks) {
  for (auto& r : ranks_) r.parent_begin.push_back(0);
}

std::uint32_t DagBuilder::add(std::uint32_t rank, const CollectiveOp& op, std::initializer_list<std::uint32_t> parents) {
  NcclDagProgram::Rank& r = ranks_[rank];
  for (const std::uint32_t p : parents) {
    if (p != kNone) r.parent_list.push_back(p);
  }
  r.parent_begin.push_back(static_cast<std::uint32_t>(r.parent_list.size()));
  r.ops.push_back(op);
  return static_cast<std::uint32_t>(r.ops.size() - 1);
}

std::uint32_t DagBuilder::add(std::uint32_t rank, const CollectiveOp& op, const std::vector<std::uint32_t>& parents) {
  NcclDagProgram::Rank& r = ranks_[rank];
  for (const std::uint32_t p : parents) {
    if (p != kNone) r.parent_list.push_back(p);
  }
  r.parent_begin.push_back(static_cast<std::uint32_t>(r.parent_list.size()));
  r.ops.push_back(op);
  return static_cast<std::uint32_t>(r.ops.size() - 1);
}

std::shared_ptr<const CollectiveProgram> DagBuilder::build(std::string name) {
  auto prog = std::shared_ptr<NcclDagProgram>(new NcclDagProgram());
  prog->name_ = std::move(name);
  for (NcclDagProgram::Rank& r : ranks_) {
    const auto count = static_cast<std::uint32_t>(r.ops.size());
    std::vector<std::uint32_t> begin(count + 1, 0);
    for (const std::uint32_t p : r.parent_list) ++begin[p + 1];
    for (std::uint32_t k = 0; k < count; ++k) begin[k + 1] += begin[k];
    r.child_begin = begin;
    r.children.resize(r.parent_list.size());
    for (std::uint32_t k = 0; k < count; ++k) {
      if (r.parent_begin[k] == r.parent_begin[k + 1]) r.roots.push_back(k);
      for (std::uint32_t i = r.parent_begin[k]; i < r.parent_begin[k + 1]; ++i) r.children[begin[r.parent_list[i]]++] = k;
    }
  }
  prog->ranks_ = std::move(ranks_);
  return prog;
}

}  // namespace sim::nccl
