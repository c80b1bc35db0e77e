#include "system/collectives/nccl/programs/nccl_dag.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace sim::nccl {

void NcclDagProgram::start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const Rank& r = body_->ranks[pos];
  cursor.pending.resize(r.ops.size());
  for (std::size_t k = 0; k < r.ops.size(); ++k) cursor.pending[k] = r.parent_begin[k + 1] - r.parent_begin[k];
  ready.insert(ready.end(), r.roots.begin(), r.roots.end());
}

void NcclDagProgram::finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const Rank& r = body_->ranks[pos];
  for (std::uint32_t c = r.child_begin[ref]; c < r.child_begin[ref + 1]; ++c) {
    const std::uint32_t child = r.children[c];
    if (--cursor.pending[child] == 0) ready.push_back(child);
  }
}

void NcclDagProgram::parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const {
  const Rank& r = body_->ranks[pos];
  for (std::uint32_t p = r.parent_begin[ref]; p < r.parent_begin[ref + 1]; ++p) out.push_back(r.parent_list[p]);
}

std::uint32_t NcclDagProgram::symmetric_peer(std::uint32_t pos, std::uint32_t origin_peer) const {
  const std::vector<std::uint32_t>& peers = body_->origin_peers;
  const auto it = std::lower_bound(peers.begin(), peers.end(), origin_peer);
  if (it == peers.end() || *it != origin_peer) return origin_peer;  // not a peer of the origin
  return body_->peer_map[std::size_t{pos} * peers.size() + static_cast<std::size_t>(it - peers.begin())];
}

std::shared_ptr<const NcclDagProgram> NcclDagProgram::with_switches(std::vector<NodeId> switches) const {
  if (switches.size() != switches_.size()) {
    throw std::invalid_argument("nccl dag: " + std::to_string(switches.size()) + " switches for a program on " +
                                std::to_string(switches_.size()));
  }
  auto prog = std::shared_ptr<NcclDagProgram>(new NcclDagProgram());
  prog->body_ = body_;
  prog->switches_ = std::move(switches);
  return prog;
}

void NcclDagProgram::Body::find_symmetry() {
  symmetric = false;
  const auto n = static_cast<std::uint32_t>(ranks.size());
  if (n < 2) return;
  const Rank& o = ranks[0];
  if (o.ops.empty()) return;
  // Rank 0's peers, and each receive's matching send (by tag: sends' tags
  // must be unique, or FIFO order would matter).
  std::unordered_map<std::uint64_t, std::uint32_t> send_of_tag;
  for (std::uint32_t i = 0; i < o.ops.size(); ++i) {
    const CollectiveOp& op = o.ops[i];
    if (op.kind == OpKind::kSwitchReduce || op.kind == OpKind::kMulticast) return;
    if (op.kind != OpKind::kSend && op.kind != OpKind::kRecv) continue;
    if (op.peer >= n || op.peer == 0) return;
    origin_peers.push_back(op.peer);
    if (op.kind == OpKind::kSend && !send_of_tag.emplace(op.tag, i).second) return;
  }
  std::sort(origin_peers.begin(), origin_peers.end());
  origin_peers.erase(std::unique(origin_peers.begin(), origin_peers.end()), origin_peers.end());
  const std::size_t np = origin_peers.size();
  const auto index = [&](std::uint32_t peer) {
    return static_cast<std::size_t>(std::lower_bound(origin_peers.begin(), origin_peers.end(), peer) -
                                    origin_peers.begin());
  };
  matched_send.assign(o.ops.size(), ~std::uint32_t{0});
  for (std::uint32_t i = 0; i < o.ops.size(); ++i) {
    if (o.ops[i].kind != OpKind::kRecv) continue;
    const auto s = send_of_tag.find(o.ops[i].tag);
    if (s == send_of_tag.end() || o.ops[s->second].bytes != o.ops[i].bytes) return;
    matched_send[i] = s->second;
  }
  // Every rank: rank 0's ops and dependencies, peers renamed one to one.
  constexpr std::uint32_t kUnset = ~std::uint32_t{0};
  peer_map.assign(std::size_t{n} * np, kUnset);
  std::vector<std::uint32_t> used(n, kUnset);  // rank p's peer -> the rank it was seen for (one to one)
  for (std::uint32_t p = 0; p < n; ++p) {
    const Rank& r = ranks[p];
    if (r.ops.size() != o.ops.size() || r.parent_begin != o.parent_begin || r.parent_list != o.parent_list) return;
    std::uint32_t* map = &peer_map[std::size_t{p} * np];
    for (std::uint32_t i = 0; i < o.ops.size(); ++i) {
      const CollectiveOp& a = o.ops[i];
      const CollectiveOp& b = r.ops[i];
      if (a.kind != b.kind || a.bytes != b.bytes || a.tag != b.tag || a.duration != b.duration ||
          a.channel != b.channel || a.rate != b.rate || a.proxy_ns != b.proxy_ns) {
        return;
      }
      if (a.kind != OpKind::kSend && a.kind != OpKind::kRecv) continue;
      std::uint32_t& m = map[index(a.peer)];
      if (m == kUnset) {
        if (b.peer >= n || b.peer == p || used[b.peer] == p) return;
        used[b.peer] = p;
        m = b.peer;
      } else if (m != b.peer) {
        return;
      }
    }
  }
  // Rank p's receive from q takes q's send of the same tag: it must be addressed to p.
  for (std::uint32_t p = 0; p < n; ++p) {
    for (std::uint32_t i = 0; i < o.ops.size(); ++i) {
      if (o.ops[i].kind != OpKind::kRecv) continue;
      const std::uint32_t q = peer_map[std::size_t{p} * np + index(o.ops[i].peer)];
      const std::uint32_t to = o.ops[matched_send[i]].peer;
      if (peer_map[std::size_t{q} * np + index(to)] != p) return;
    }
  }
  symmetric = true;
}

DagBuilder::DagBuilder(std::uint32_t ranks) : ranks_(ranks) {
  for (auto& r : ranks_) r.parent_begin.push_back(0);
}

template <class Parents>
std::uint32_t DagBuilder::add_after(std::uint32_t rank, const CollectiveOp& op, const Parents& parents) {
  NcclDagProgram::Rank& r = ranks_[rank];
  for (const std::uint32_t p : parents) {
    if (p != kNone) r.parent_list.push_back(p);
  }
  r.parent_begin.push_back(static_cast<std::uint32_t>(r.parent_list.size()));
  r.ops.push_back(op);
  return static_cast<std::uint32_t>(r.ops.size() - 1);
}

std::uint32_t DagBuilder::add(std::uint32_t rank, const CollectiveOp& op, std::initializer_list<std::uint32_t> parents) {
  return add_after(rank, op, parents);
}

std::uint32_t DagBuilder::add(std::uint32_t rank, const CollectiveOp& op, const std::vector<std::uint32_t>& parents) {
  return add_after(rank, op, parents);
}

void DagBuilder::reserve(std::uint32_t rank, std::uint64_t ops, std::uint64_t parents) {
  NcclDagProgram::Rank& r = ranks_[rank];
  r.ops.reserve(ops);
  r.parent_begin.reserve(ops);
  r.parent_list.reserve(parents);
}

std::shared_ptr<const CollectiveProgram> DagBuilder::build(std::string name) {
  auto body = std::make_shared<NcclDagProgram::Body>();
  body->name = std::move(name);
  std::vector<NodeId> switches;
  std::unordered_map<NodeId, std::uint32_t> switch_index;
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
    for (CollectiveOp& op : r.ops) {
      if (op.kind != OpKind::kSwitchReduce && op.kind != OpKind::kMulticast) continue;
      const auto [it, fresh] = switch_index.emplace(op.node, static_cast<std::uint32_t>(switches.size()));
      if (fresh) switches.push_back(op.node);
      op.node = it->second;
    }
  }
  body->ranks = std::move(ranks_);
  body->find_symmetry();
  auto prog = std::shared_ptr<NcclDagProgram>(new NcclDagProgram());
  prog->body_ = std::move(body);
  prog->switches_ = std::move(switches);
  return prog;
}

}  // namespace sim::nccl
