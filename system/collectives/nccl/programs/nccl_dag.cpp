#include "system/collectives/nccl/programs/nccl_dag.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace sim::nccl {

std::uint32_t NcclDagProgram::Rank::locate(OpRef ref, std::uint64_t& repeat) const {
  const auto it = std::upper_bound(run_start.begin(), run_start.end(), static_cast<std::uint32_t>(ref));
  const Run& run = runs[static_cast<std::size_t>(it - run_start.begin()) - 1];
  const std::uint32_t offset = static_cast<std::uint32_t>(ref) - run.start;
  repeat = offset / run.period;
  return run.first + (offset - static_cast<std::uint32_t>(repeat) * run.period);
}

CollectiveOp NcclDagProgram::Rank::op(OpRef ref) const {
  if (runs.empty()) return ops[ref];
  std::uint64_t repeat = 0;
  const std::uint32_t t = locate(ref, repeat);
  CollectiveOp o = block[t];
  o.tag += repeat * tag_step[t];
  return o;
}

void NcclDagProgram::start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const Rank& r = body_->ranks[pos];
  cursor.pending.resize(r.count);
  if (r.runs.empty()) {
    for (std::size_t k = 0; k < r.count; ++k) cursor.pending[k] = r.parent_begin[k + 1] - r.parent_begin[k];
  } else {
    for (std::size_t i = 0; i < r.runs.size(); ++i) {
      const Run& run = r.runs[i];
      std::uint32_t t = run.first;
      for (std::uint32_t k = run.start; k < r.run_start[i + 1]; ++k) {
        cursor.pending[k] = r.block_parent_begin[t + 1] - r.block_parent_begin[t];
        if (++t == run.first + run.period) t = run.first;
      }
    }
  }
  ready.insert(ready.end(), r.roots.begin(), r.roots.end());
}

void NcclDagProgram::finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const Rank& r = body_->ranks[pos];
  if (r.runs.empty()) {
    for (std::uint32_t c = r.child_begin[ref]; c < r.child_begin[ref + 1]; ++c) {
      const std::uint32_t child = r.children[c];
      if (--cursor.pending[child] == 0) ready.push_back(child);
    }
    return;
  }
  std::uint64_t repeat = 0;
  const std::uint32_t t = r.locate(ref, repeat);
  for (std::uint32_t c = r.block_child_begin[t]; c < r.block_child_begin[t + 1]; ++c) {
    const OpRef child = ref + r.block_children[c];
    if (--cursor.pending[child] == 0) ready.push_back(child);
  }
}

void NcclDagProgram::parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const {
  const Rank& r = body_->ranks[pos];
  if (r.runs.empty()) {
    for (std::uint32_t p = r.parent_begin[ref]; p < r.parent_begin[ref + 1]; ++p) out.push_back(r.parent_list[p]);
    return;
  }
  std::uint64_t repeat = 0;
  const std::uint32_t t = r.locate(ref, repeat);
  for (std::uint32_t p = r.block_parent_begin[t]; p < r.block_parent_begin[t + 1]; ++p) {
    const ParentCode& code = r.block_parents[p];
    out.push_back(code.back ? ref - code.value : code.value);
  }
}

namespace {

// Frees a vector's memory.
template <class T>
void release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

}  // namespace

void NcclDagProgram::Rank::compress() {
  const auto n = static_cast<std::uint32_t>(ops.size());
  constexpr std::uint32_t kSmall = 256;        // fewer ops: one by one costs nothing
  constexpr std::uint32_t kMaxPeriod = 1 << 14;  // a block's ops at most (NCCL's loop per rank is tens)
  constexpr int kTries = 16;                   // periods tried at one op
  if (n < kSmall) return;
  const auto np = [&](std::uint32_t k) { return parent_begin[k + 1] - parent_begin[k]; };
  const auto nc = [&](std::uint32_t k) { return child_begin[k + 1] - child_begin[k]; };
  // Ops a and b alike but for their tags, with as many parents and children.
  const auto alike = [&](std::uint32_t a, std::uint32_t b) {
    const CollectiveOp& x = ops[a];
    const CollectiveOp& y = ops[b];
    return x.kind == y.kind && x.channel == y.channel && x.peer == y.peer && x.bytes == y.bytes &&
           x.duration == y.duration && x.rate == y.rate && x.node == y.node && x.proxy_ns == y.proxy_ns &&
           np(a) == np(b) && nc(a) == nc(b);
  };
  // The next op alike each (by a hash of what alike compares; a collision only costs a try).
  constexpr std::uint32_t kNo = ~std::uint32_t{0};
  std::vector<std::uint32_t> next(n, kNo);
  {
    std::unordered_map<std::uint64_t, std::uint32_t> later;
    for (std::uint32_t k = n; k-- > 0;) {
      const CollectiveOp& o = ops[k];
      std::uint64_t h = static_cast<std::uint64_t>(o.kind) | std::uint64_t{o.channel} << 8 | std::uint64_t{o.peer} << 24;
      h = h * 0x9e3779b97f4a7c15ull ^ o.bytes;
      h = h * 0x9e3779b97f4a7c15ull ^ static_cast<std::uint64_t>(o.duration);
      h = h * 0x9e3779b97f4a7c15ull ^ static_cast<std::uint64_t>(o.rate);
      h = h * 0x9e3779b97f4a7c15ull ^ (std::uint64_t{o.node} << 32 | o.proxy_ns);
      h = h * 0x9e3779b97f4a7c15ull ^ (std::uint64_t{np(k)} << 32 | nc(k));
      auto [it, fresh] = later.try_emplace(h, k);
      if (!fresh) {
        next[k] = it->second;
        it->second = k;
      }
    }
  }
  // How many times the block [i, i + T) repeats from i (1: not at all);
  // `back` gets, per parent entry of the block, whether it moves with it.
  std::vector<char> back;
  const auto repeats = [&](std::uint32_t i, std::uint32_t T, std::vector<char>& moves) -> std::uint32_t {
    if (std::uint64_t{i} + 2 * std::uint64_t{T} > n) return 1;
    moves.clear();
    for (std::uint32_t a = i; a < i + T; ++a) {
      const std::uint32_t b = a + T;
      if (!alike(a, b)) return 1;
      for (std::uint32_t q = 0; q < np(a); ++q) {
        const std::uint32_t pa = parent_list[parent_begin[a] + q], pb = parent_list[parent_begin[b] + q];
        if (pb == pa + T) {
          moves.push_back(1);
        } else if (pb == pa) {
          moves.push_back(0);
        } else {
          return 1;
        }
      }
      for (std::uint32_t q = 0; q < nc(a); ++q) {
        if (children[child_begin[b] + q] != children[child_begin[a] + q] + T) return 1;
      }
    }
    std::uint32_t K = 2;
    for (; std::uint64_t{i} + std::uint64_t{K + 1} * T <= n; ++K) {
      const std::uint32_t from = i + K * T;
      std::size_t e = 0;
      for (std::uint32_t b = from; b < from + T; ++b) {
        const std::uint32_t a = b - T;
        if (!alike(a, b) || ops[b].tag - ops[a].tag != ops[i + T + (a - i) % T].tag - ops[i + (a - i) % T].tag) {
          return K;
        }
        for (std::uint32_t q = 0; q < np(a); ++q, ++e) {
          const std::uint32_t pa = parent_list[parent_begin[a] + q], pb = parent_list[parent_begin[b] + q];
          if (pb != (moves[e] ? pa + T : pa)) return K;
        }
        for (std::uint32_t q = 0; q < nc(a); ++q) {
          if (children[child_begin[b] + q] != children[child_begin[a] + q] + T) return K;
        }
      }
    }
    return K;
  };
  // Appends ops [i, i + T) as a run's block repeated K times (`moves` as repeats gave it; empty: none move).
  const auto emit = [&](std::uint32_t i, std::uint32_t T, std::uint32_t K, const std::vector<char>& moves) {
    run_start.push_back(i);
    runs.push_back(Run{i, T, static_cast<std::uint32_t>(block.size())});
    std::size_t e = 0;
    for (std::uint32_t a = i; a < i + T; ++a) {
      block.push_back(ops[a]);
      tag_step.push_back(K > 1 ? ops[a + T].tag - ops[a].tag : 0);
      for (std::uint32_t q = parent_begin[a]; q < parent_begin[a + 1]; ++q, ++e) {
        const std::uint32_t p = parent_list[q];
        const bool moves_with = e < moves.size() && moves[e];
        block_parents.push_back(ParentCode{moves_with ? a - p : p, moves_with});
      }
      block_parent_begin.push_back(static_cast<std::uint32_t>(block_parents.size()));
      for (std::uint32_t q = child_begin[a]; q < child_begin[a + 1]; ++q) block_children.push_back(children[q] - a);
      block_child_begin.push_back(static_cast<std::uint32_t>(block_children.size()));
    }
  };
  block_parent_begin.push_back(0);
  block_child_begin.push_back(0);
  const std::vector<char> none;
  std::vector<char> moves, best_moves;
  std::uint32_t literal = 0;  // ops from here to i repeat nowhere: one block, once
  std::uint32_t i = 0;
  while (i < n) {
    std::uint32_t best_T = 0, best_K = 1;
    int tries = 0;
    for (std::uint32_t c = next[i]; c != kNo && c - i <= kMaxPeriod && tries < kTries; c = next[c], ++tries) {
      const std::uint32_t T = c - i;
      if (best_T != 0 && T % best_T == 0) continue;  // a multiple of a period found covers no more
      const std::uint32_t K = repeats(i, T, moves);
      if (K >= 2 && std::uint64_t{K} * T > std::uint64_t{best_K} * best_T) {
        best_T = T;
        best_K = K;
        best_moves.swap(moves);
      }
    }
    if (best_T == 0) {
      ++i;
      continue;
    }
    if (literal < i) emit(literal, i - literal, 1, none);
    emit(i, best_T, best_K, best_moves);
    i += best_T * best_K;
    literal = i;
    if (block.size() > n / 4) break;  // not worth it: stays one by one
  }
  if (block.size() <= n / 4 && literal < n) emit(literal, n - literal, 1, none);
  if (block.size() > n / 4) {
    release(run_start);
    release(runs);
    release(block);
    release(tag_step);
    release(block_parent_begin);
    release(block_parents);
    release(block_child_begin);
    release(block_children);
    return;
  }
  run_start.push_back(n);
  release(ops);
  release(parent_begin);
  release(parent_list);
  release(child_begin);
  release(children);
}

std::uint32_t NcclDagProgram::symmetric_peer(std::uint32_t pos, std::uint32_t origin_peer) const {
  const std::vector<std::uint32_t>& peers = body_->origin_peers;
  const auto it = std::lower_bound(peers.begin(), peers.end(), origin_peer);
  if (it == peers.end() || *it != origin_peer) return origin_peer;  // not a peer of the origin
  return body_->peer_map[std::size_t{pos} * peers.size() + static_cast<std::size_t>(it - peers.begin())];
}

std::uint64_t NcclDagProgram::stored_ops() const {
  std::uint64_t ops = 0;
  for (const Rank& r : body_->ranks) ops += r.runs.empty() ? r.count : r.block.size();
  return ops;
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
    std::uint32_t* map = peer_map.data() + std::size_t{p} * np;  // (none when rank 0 has no peers)
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

namespace {
thread_local bool packing = true;  // DagPackingOff
}  // namespace

DagPackingOff::DagPackingOff() : was_(packing) { packing = false; }
DagPackingOff::~DagPackingOff() { packing = was_; }

DagBuilder::DagBuilder(std::uint32_t ranks) : DagBuilder(ranks, packing) {}

DagBuilder::DagBuilder(std::uint32_t ranks, bool pack)
    : ranks_(ranks), prepared_(ranks, false), compressed_(ranks, false), pack_(pack) {
  for (auto& r : ranks_) r.parent_begin.push_back(0);
}

template <class Parents>
std::uint32_t DagBuilder::add_after(std::uint32_t rank, const CollectiveOp& op, const Parents& parents) {
  if (prepared_[rank]) throw std::logic_error("nccl dag: an op added to rank " + std::to_string(rank) + " after it was sealed");
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

void DagBuilder::prepare(std::uint32_t rank) {
  if (prepared_[rank]) return;
  prepared_[rank] = true;
  NcclDagProgram::Rank& r = ranks_[rank];
  const auto count = static_cast<std::uint32_t>(r.ops.size());
  r.count = count;
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
    switch_ops_ = true;
    const auto [it, fresh] = switch_index_.emplace(op.node, static_cast<std::uint32_t>(switches_.size()));
    if (fresh) switches_.push_back(op.node);
    op.node = it->second;
  }
}

void DagBuilder::seal(std::uint32_t rank) {
  prepare(rank);
  // A program with switch ops is not rank-symmetric (find_symmetry), so a
  // rank of one needs its ops one by one no more; others wait for build.
  if (pack_ && switch_ops_ && !compressed_[rank]) {
    compressed_[rank] = true;
    ranks_[rank].compress();
  }
}

std::shared_ptr<const CollectiveProgram> DagBuilder::build(std::string name) {
  auto body = std::make_shared<NcclDagProgram::Body>();
  body->name = std::move(name);
  for (std::uint32_t r = 0; r < ranks_.size(); ++r) prepare(r);
  body->ranks = std::move(ranks_);
  if (!switch_ops_) body->find_symmetry();
  for (std::uint32_t r = 0; r < body->ranks.size(); ++r) {
    if (pack_ && !compressed_[r]) body->ranks[r].compress();
  }
  auto prog = std::shared_ptr<NcclDagProgram>(new NcclDagProgram());
  prog->body_ = std::move(body);
  prog->switches_ = std::move(switches_);
  return prog;
}

}  // namespace sim::nccl
