#include "system/et_algorithm.h"

#include <algorithm>
#include <unordered_map>

#include "core/error.h"
#include "workload/et_io.h"

namespace sim {

namespace {

std::string at(const std::string& file, std::uint64_t id) { return file + ": node " + std::to_string(id); }

EtRankProgram load_rank(const EtTrace& trace, std::uint32_t n) {
  EtRankProgram prog;
  const std::size_t count = trace.nodes.size();
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  // Ops are kept in ascending node id, the issue order of ready ops.
  std::vector<std::uint32_t> order(count);
  for (std::uint32_t i = 0; i < count; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return trace.nodes[a].id() < trace.nodes[b].id(); });
  for (std::uint32_t k = 0; k < count; ++k) {
    if (!index.emplace(trace.nodes[order[k]].id(), k).second) {
      throw InputError(at(trace.path, trace.nodes[order[k]].id()) + ": duplicate node id");
    }
  }
  prog.ops.resize(count);
  std::vector<std::vector<std::uint32_t>> kids(count);
  prog.num_parents.assign(count, 0);
  for (std::uint32_t k = 0; k < count; ++k) {
    const et::Node& node = trace.nodes[order[k]];
    EtOpSpec& op = prog.ops[k];
    op.node_id = node.id();
    const auto size = attr_int(node, "comm_size");
    op.tag = static_cast<std::uint64_t>(attr_int(node, "comm_tag").value_or(0));
    op.chunk_idx = attr_int(node, "msg_chunk_idx").value_or(-1);
    op.chunk_cnt = attr_int(node, "msg_chunk_cnt").value_or(-1);
    op.total_chunks = attr_int(node, "total_chunk_cnt").value_or(-1);
    switch (node.type()) {
      case et::COMM_SEND_NODE:
      case et::COMM_RECV_NODE: {
        const bool send = node.type() == et::COMM_SEND_NODE;
        op.kind = send ? OpKind::kSend : OpKind::kRecv;
        const char* key = send ? "comm_dst" : "comm_src";
        const auto peer = attr_int(node, key);
        if (!peer) throw InputError(at(trace.path, node.id()) + ": " + (send ? "COMM_SEND" : "COMM_RECV") + " without " + key);
        if (*peer < 0 || *peer >= n) {
          throw InputError(at(trace.path, node.id()) + ": " + key + " " + std::to_string(*peer) +
                           " is outside the algorithm's " + std::to_string(n) + " ranks");
        }
        op.peer = static_cast<std::uint32_t>(*peer);
        if (size) {
          if (*size < 0) throw InputError(at(trace.path, node.id()) + ": negative comm_size");
          op.bytes = static_cast<std::uint64_t>(*size);
        } else if (op.chunk_cnt < 0 || op.total_chunks <= 0) {
          throw InputError(at(trace.path, node.id()) + ": message without comm_size or chunk attributes "
                           "(msg_chunk_cnt, total_chunk_cnt)");
        }
        break;
      }
      case et::COMP_NODE:
      case et::METADATA_NODE:
      case et::INVALID_NODE:
        op.kind = OpKind::kCompute;
        if (node.duration_micros() > 0) {
          op.duration = static_cast<Time>(node.duration_micros()) * kMicrosecond;
        } else if (node.type() != et::COMP_NODE) {
          op.duration = 0;
        }
        if (const auto t = attr_int(node, "tensor_size")) op.bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, *t));
        else if (size) op.bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, *size));
        break;
      default:
        throw InputError(at(trace.path, node.id()) + ": a collective algorithm may hold only COMM_SEND, "
                         "COMM_RECV and COMP nodes, not " + et::NodeType_Name(node.type()));
    }
    for (std::uint64_t dep : node.data_deps()) {
      const auto it = index.find(dep);
      if (it == index.end()) {
        throw InputError(at(trace.path, node.id()) + ": data dependency on absent node " + std::to_string(dep));
      }
      if (std::find(kids[it->second].begin(), kids[it->second].end(), k) != kids[it->second].end()) continue;
      kids[it->second].push_back(k);
      ++prog.num_parents[k];
    }
  }
  prog.child_begin.reserve(count + 1);
  for (std::uint32_t k = 0; k < count; ++k) {
    std::sort(kids[k].begin(), kids[k].end());
    prog.child_begin.push_back(static_cast<std::uint32_t>(prog.children.size()));
    prog.children.insert(prog.children.end(), kids[k].begin(), kids[k].end());
    if (prog.num_parents[k] == 0) prog.roots.push_back(k);
  }
  prog.child_begin.push_back(static_cast<std::uint32_t>(prog.children.size()));
  // Cycle check (Kahn).
  std::vector<std::uint32_t> pending = prog.num_parents, stack = prog.roots;
  std::size_t seen = 0;
  while (!stack.empty()) {
    const std::uint32_t k = stack.back();
    stack.pop_back();
    ++seen;
    for (std::uint32_t c = prog.child_begin[k]; c < prog.child_begin[k + 1]; ++c) {
      if (--pending[prog.children[c]] == 0) stack.push_back(prog.children[c]);
    }
  }
  if (seen != count) {
    for (std::uint32_t k = 0; k < count; ++k) {
      if (pending[k] > 0) {
        throw IncompleteError(at(trace.path, prog.ops[k].node_id) + ": lies on or behind a dependency cycle (" +
                              std::to_string(count - seen) + " nodes can never run)");
      }
    }
  }
  return prog;
}

}  // namespace

EtAlgorithm load_et_algorithm(const std::string& source, std::optional<CollectiveType> expected) {
  EtAlgorithm algo;
  algo.source = source;
  algo.files = resolve_rank_files(source);
  const auto n = static_cast<std::uint32_t>(algo.files.size());
  for (std::uint32_t pos = 0; pos < n; ++pos) {
    const EtTrace trace = read_et(algo.files[pos]);
    if (pos == 0) {
      if (const auto name = metadata_string(trace.metadata, "collective")) {
        CollectiveType t;
        if (!parse_collective_name(*name, t)) {
          throw InputError(trace.path + ": metadata 'collective' = '" + *name + "' is not a collective type");
        }
        algo.type = t;
        algo.type_recorded = true;
      }
      if (const auto size = metadata_int(trace.metadata, "collective_size")) {
        if (*size <= 0) throw InputError(trace.path + ": metadata 'collective_size' must be > 0");
        algo.written_size = static_cast<std::uint64_t>(*size);
      }
    }
    algo.ranks.push_back(load_rank(trace, n));
  }
  if (expected) {
    if (algo.type_recorded && algo.type != *expected) {
      throw InputError(source + ": the algorithm is a " + std::string(collective_name(algo.type)) +
                       " but it was given for " + collective_name(*expected));
    }
    algo.type = *expected;
  }
  return algo;
}

EtProgram::EtProgram(std::shared_ptr<const EtAlgorithm> algorithm, std::uint64_t bytes)
    : algo_(std::move(algorithm)), bytes_(bytes), name_("et:" + algo_->source) {}

void EtProgram::start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const EtRankProgram& p = algo_->ranks[pos];
  cursor.pending = p.num_parents;
  ready.insert(ready.end(), p.roots.begin(), p.roots.end());
}

CollectiveOp EtProgram::op(std::uint32_t pos, OpRef ref) const {
  const EtOpSpec& spec = algo_->ranks[pos].ops[ref];
  CollectiveOp op;
  op.kind = spec.kind;
  op.peer = spec.peer;
  op.tag = spec.tag;
  op.duration = spec.duration;
  const auto ceil_div = [](uint128 a, uint128 b) { return static_cast<std::uint64_t>((a + b - 1) / b); };
  if (spec.chunk_cnt >= 0 && spec.total_chunks > 0) {
    const std::uint64_t buffer = algo_->type == CollectiveType::kAllGather ? bytes_ * algo_->ranks.size() : bytes_;
    const auto total = static_cast<std::uint64_t>(spec.total_chunks);
    const auto cnt = static_cast<std::uint64_t>(spec.chunk_cnt);
    if (spec.chunk_idx >= 0) {
      // Parts [idx, idx+cnt) of the buffer, wrapping around its end.
      const auto first = static_cast<std::uint64_t>(spec.chunk_idx) % total;
      const std::uint64_t head = std::min(cnt, total - first);
      op.bytes = parts_bytes(buffer, total, first, head) + (cnt > head ? parts_bytes(buffer, total, 0, cnt - head) : 0);
    } else {
      op.bytes = ceil_div(static_cast<uint128>(buffer) * cnt, total);
    }
  } else if (algo_->written_size) {
    op.bytes = ceil_div(static_cast<uint128>(spec.bytes) * bytes_, *algo_->written_size);
  } else {
    op.bytes = spec.bytes;
  }
  return op;
}

void EtProgram::finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const EtRankProgram& p = algo_->ranks[pos];
  for (std::uint32_t c = p.child_begin[ref]; c < p.child_begin[ref + 1]; ++c) {
    const std::uint32_t child = p.children[c];
    if (--cursor.pending[child] == 0) ready.push_back(child);
  }
}

}  // namespace sim
