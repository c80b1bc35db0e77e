#include "system/program/et_algorithm.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <exception>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "core/error.h"
#include "system/program/block_math.h"
#include "workload/et/et_io.h"

namespace sim {

namespace {

std::string at(const std::string& file, std::uint64_t id) { return file + ": node " + std::to_string(id); }

// Reads a converter name COMM_{SEND,RECV}_NODE_tb<t>_step<s> into xml_tb / xml_step.
void parse_msccl_name(std::string_view name, EtOpSpec& op) {
  constexpr std::string_view kSend = "COMM_SEND_NODE_tb", kRecv = "COMM_RECV_NODE_tb", kStep = "_step";
  if (name.starts_with(kSend)) name.remove_prefix(kSend.size());
  else if (name.starts_with(kRecv)) name.remove_prefix(kRecv.size());
  else return;
  const char* end = name.data() + name.size();
  std::int32_t tb = -1, step = -1;
  const auto [p, ec] = std::from_chars(name.data(), end, tb);
  if (ec != std::errc() || tb < 0 || !std::string_view(p, static_cast<std::size_t>(end - p)).starts_with(kStep)) return;
  const auto [q, ec2] = std::from_chars(p + kStep.size(), end, step);
  if (ec2 != std::errc() || q != end || step < 0) return;
  op.xml_tb = tb;
  op.xml_step = step;
}

// The msccl_* attributes of an MSCCL-IR import (one pass over the attributes).
void decode_msccl(const et::Node& node, EtOpSpec& op, const std::string& path) {
  for (const et::AttributeProto& a : node.attr()) {
    const std::string& name = a.name();
    if (!name.starts_with("msccl_")) continue;
    const auto buffer = [&]() -> char {
      const std::string& v = a.string_val();
      if (a.value_case() != et::AttributeProto::kStringVal || v.size() != 1 || v.find_first_of("iost") != 0) {
        throw InputError(at(path, node.id()) + ": " + name + " must be the string i, o, s or t");
      }
      return v[0];
    };
    if (name == "msccl_srcbuf") op.src_buf = buffer();
    else if (name == "msccl_dstbuf") op.dst_buf = buffer();
    else if (name == "msccl_srcoff") op.src_off = attr_int_of(node, a);
    else if (name == "msccl_dstoff") op.dst_off = attr_int_of(node, a);
    else if (name == "msccl_op") {
      const std::string& v = a.string_val();
      if (v == "copy") op.comp = MscclComp::kCopy;
      else if (v == "reduce") op.comp = MscclComp::kReduce;
      else if (v == "recv_reduce") op.comp = MscclComp::kRecvReduce;
      else throw InputError(at(path, node.id()) + ": msccl_op '" + v + "' is not copy, reduce or recv_reduce");
    }
  }
}

// Decodes one node into an op (peers checked against the n ranks).
EtOpSpec decode_op(const et::Node& node, std::uint32_t n, const std::string& path) {
  EtOpSpec op;
  op.node_id = node.id();
  const auto size = attr_int(node, "comm_size");
  op.tag = static_cast<std::uint64_t>(attr_int(node, "comm_tag").value_or(0));
  const auto idx = attr_int(node, "msg_chunk_idx"), cnt = attr_int(node, "msg_chunk_cnt"),
             total = attr_int(node, "total_chunk_cnt");
  // Chunk attributes that cannot describe a share of the buffer were passed over (a total of 0 or
  // below, a count without its total) or read as another share (a negative index), silently.
  const auto bad_chunks = [&](const std::string& what) {
    throw InputError(at(path, node.id()) + ": " + what +
                     " (chunk attributes: msg_chunk_cnt of total_chunk_cnt parts of the buffer, from msg_chunk_idx)");
  };
  if (total && *total <= 0) bad_chunks("total_chunk_cnt " + std::to_string(*total) + " must be > 0");
  if (cnt && *cnt < 0) bad_chunks("msg_chunk_cnt " + std::to_string(*cnt) + " is negative");
  if (idx && *idx < 0) bad_chunks("msg_chunk_idx " + std::to_string(*idx) + " is negative");
  if (cnt.has_value() != total.has_value()) {
    bad_chunks(std::string(cnt ? "msg_chunk_cnt" : "total_chunk_cnt") + " without " + (cnt ? "total_chunk_cnt" : "msg_chunk_cnt"));
  }
  if (idx && !cnt) bad_chunks("msg_chunk_idx without msg_chunk_cnt and total_chunk_cnt");
  op.chunk_idx = idx.value_or(-1);
  op.chunk_cnt = cnt.value_or(-1);
  op.total_chunks = total.value_or(-1);
  decode_msccl(node, op, path);
  switch (node.type()) {
    case et::COMM_SEND_NODE:
    case et::COMM_RECV_NODE: {
      const bool send = node.type() == et::COMM_SEND_NODE;
      op.kind = send ? OpKind::kSend : OpKind::kRecv;
      const char* key = send ? "comm_dst" : "comm_src";
      const auto peer = attr_int(node, key);
      if (!peer) throw InputError(at(path, node.id()) + ": " + (send ? "COMM_SEND" : "COMM_RECV") + " without " + key);
      if (*peer < 0 || *peer >= n) {
        throw InputError(at(path, node.id()) + ": " + key + " " + std::to_string(*peer) +
                         " is outside the algorithm's " + std::to_string(n) + " ranks");
      }
      op.peer = static_cast<std::uint32_t>(*peer);
      parse_msccl_name(node.name(), op);
      if (size) {
        if (*size < 0) throw InputError(at(path, node.id()) + ": negative comm_size");
        op.bytes = static_cast<std::uint64_t>(*size);
      } else if (op.chunk_cnt < 0 || op.total_chunks <= 0) {
        throw InputError(at(path, node.id()) + ": message without comm_size or chunk attributes "
                         "(msg_chunk_cnt, total_chunk_cnt)");
      }
      break;
    }
    case et::COMP_NODE:
    case et::METADATA_NODE:
    case et::INVALID_NODE:
      op.kind = OpKind::kCompute;
      if (node.duration_micros() > 0) {
        if (node.duration_micros() > static_cast<std::uint64_t>(kMaxTime / kMicrosecond)) {
          throw InputError(at(path, node.id()) + ": duration_micros " + std::to_string(node.duration_micros()) +
                           " is longer than the largest representable time, " + describe_time_limit());
        }
        op.duration = static_cast<Time>(node.duration_micros()) * kMicrosecond;
      } else if (node.type() != et::COMP_NODE) {
        op.duration = 0;
      }
      if (const auto t = attr_int(node, "tensor_size")) op.bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, *t));
      else if (size) op.bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, *size));
      break;
    default:
      throw InputError(at(path, node.id()) + ": a collective algorithm may hold only COMM_SEND, "
                       "COMM_RECV and COMP nodes, not " + et::NodeType_Name(node.type()));
  }
  return op;
}

// Streams one rank's file (read_et_nodes) into its program; ops end up in
// ascending node id, the issue order of ready ops.
// `feed(on_node)` calls on_node for every node of the rank, in file order.
template <typename Feed>
EtRankProgram load_rank(const std::string& path, std::uint32_t n, Feed&& feed) {
  std::vector<EtOpSpec> raw;                   // file order
  std::vector<std::uint64_t> deps;             // flat data deps, file order
  std::vector<std::uint32_t> dep_begin{0};
  feed([&](const et::Node& node) {
    raw.push_back(decode_op(node, n, path));
    deps.insert(deps.end(), node.data_deps().begin(), node.data_deps().end());
    dep_begin.push_back(static_cast<std::uint32_t>(deps.size()));
  });
  const auto count = static_cast<std::uint32_t>(raw.size());
  std::vector<std::uint32_t> order(count);
  for (std::uint32_t i = 0; i < count; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return raw[a].node_id < raw[b].node_id; });
  EtRankProgram prog;
  prog.ops.reserve(count);
  for (std::uint32_t k = 0; k < count; ++k) {
    if (k > 0 && raw[order[k]].node_id == raw[order[k - 1]].node_id) {
      throw InputError(at(path, raw[order[k]].node_id) + ": duplicate node id");
    }
    prog.ops.push_back(raw[order[k]]);
  }
  const auto position = [&](std::uint64_t id) -> std::int64_t {  // binary search in the sorted ops
    const auto it = std::lower_bound(prog.ops.begin(), prog.ops.end(), id,
                                     [](const EtOpSpec& op, std::uint64_t v) { return op.node_id < v; });
    return it == prog.ops.end() || it->node_id != id ? -1 : it - prog.ops.begin();
  };
  std::vector<std::vector<std::uint32_t>> kids(count);
  prog.num_parents.assign(count, 0);
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::uint32_t f = order[k];
    for (std::uint32_t d = dep_begin[f]; d < dep_begin[f + 1]; ++d) {
      const std::int64_t parent = position(deps[d]);
      if (parent < 0) {
        throw InputError(at(path, prog.ops[k].node_id) + ": data dependency on absent node " + std::to_string(deps[d]));
      }
      auto& list = kids[parent];
      if (std::find(list.begin(), list.end(), k) != list.end()) continue;
      list.push_back(k);
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
        throw IncompleteError(at(path, prog.ops[k].node_id) + ": lies on or behind a dependency cycle (" +
                              std::to_string(count - seen) + " nodes can never run)");
      }
    }
  }
  return prog;
}

void apply_metadata(EtAlgorithm& algo, const et::GlobalMetadata& md, const std::string& source,
                    std::optional<CollectiveType> expected) {
  if (const auto name = metadata_string(md, "collective")) {
    CollectiveType t;
    if (!parse_collective_name(*name, t)) {
      throw InputError(algo.files[0] + ": metadata 'collective' = '" + *name + "' is not a collective type");
    }
    algo.type = t;
    algo.type_recorded = true;
  }
  if (const auto size = metadata_int(md, "collective_size")) {
    if (*size <= 0) throw InputError(algo.files[0] + ": metadata 'collective_size' must be > 0");
    algo.written_size = static_cast<std::uint64_t>(*size);
  }
  for (const et::AttributeProto& a : md.attr()) {
    if (a.name() == "input_file" && a.value_case() == et::AttributeProto::kStringVal) algo.msccl_xml = a.string_val();
  }
  if (expected) {
    if (algo.type_recorded && algo.type != *expected) {
      throw InputError(source + ": the algorithm is a " + std::string(collective_name(algo.type)) +
                       " but it was given for " + collective_name(*expected));
    }
    algo.type = *expected;
  }
  if (const auto layout = metadata_string(md, "chunk_layout")) algo.strided_blocks = *layout == "strided";
  if (const auto sizes = metadata_string(md, "chunk_sizes")) {
    if (*sizes != "equal" && *sizes != "cut") {
      throw InputError(algo.files[0] + ": metadata 'chunk_sizes' is '" + *sizes + "'; expected 'equal' or 'cut'");
    }
    algo.equal_parts = *sizes == "equal";
  }
  if (const auto i = metadata_int(md, "msccl_i_chunks")) {
    algo.msccl = MscclBuffers{*i, metadata_int(md, "msccl_o_chunks").value_or(0),
                              metadata_int(md, "msccl_inplace").value_or(0) != 0};
  }
}

// msg_chunk_idx names a part of the buffer, so it lies below total_chunk_cnt;
// one past it used to wrap silently, so a mistyped index ran as another part
// while `sim collective check` failed the same ETs. An MSCCL-IR import is the
// exception: its index is the step's offset in the step's own buffer, and a
// scratch buffer may hold more chunks than nchunksperloop (docs/collectives.md).
void check_chunk_indices(const EtAlgorithm& algo) {
  if (algo.msccl || !algo.msccl_xml.empty()) return;
  for (std::size_t r = 0; r < algo.ranks.size(); ++r) {
    for (const EtOpSpec& op : algo.ranks[r].ops) {
      if (op.chunk_idx < 0 || op.total_chunks <= 0 || op.chunk_idx < op.total_chunks) continue;
      throw InputError(at(algo.files[r], op.node_id) + ": msg_chunk_idx " + std::to_string(op.chunk_idx) +
                       " is not below total_chunk_cnt " + std::to_string(op.total_chunks) +
                       " (it names one of the buffer's parts 0.." + std::to_string(op.total_chunks - 1) +
                       "; only an MSCCL-IR import's buffer offsets run past them)");
    }
  }
}

}  // namespace

EtAlgorithm et_algorithm_from_traces(const std::vector<EtTrace>& traces, const std::string& source,
                                     std::optional<CollectiveType> expected) {
  EtAlgorithm algo;
  algo.source = source;
  const auto n = static_cast<std::uint32_t>(traces.size());
  if (n == 0) throw InputError(source + ": no ranks");
  for (std::uint32_t pos = 0; pos < n; ++pos) {
    algo.files.push_back(source + "." + std::to_string(pos) + ".et");
    algo.ranks.push_back(load_rank(algo.files.back(), n, [&](const auto& on_node) {
      for (const et::Node& node : traces[pos].nodes) on_node(node);
    }));
  }
  apply_metadata(algo, traces[0].metadata, source, expected);
  check_chunk_indices(algo);
  return algo;
}

EtAlgorithm load_et_files(const std::string& source, std::optional<CollectiveType> expected) {
  EtAlgorithm algo;
  algo.source = source;
  algo.files = resolve_rank_files(source);
  const auto n = static_cast<std::uint32_t>(algo.files.size());
  // Ranks are independent: load them on every core, keep the lowest rank's error.
  algo.ranks.resize(n);
  std::vector<et::GlobalMetadata> metadata(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::uint32_t> next{0};
  const auto work = [&] {
    for (std::uint32_t pos; (pos = next.fetch_add(1)) < n;) {
      try {
        algo.ranks[pos] = load_rank(algo.files[pos], n, [&](const auto& on_node) {
          read_et_nodes(algo.files[pos], metadata[pos], on_node);
        });
        if (pos != 0) metadata[pos].Clear();  // only rank 0's is used; an MSCCL XML in each can be large
      } catch (...) {
        errors[pos] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  const unsigned threads = std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()), n);
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  apply_metadata(algo, metadata[0], source, expected);
  check_chunk_indices(algo);
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
  // Sizes are worked out in 128 bits and must fit 64: a chunk count far past
  // its buffer used to wrap silently (found writing fuzz/msccl_import.cpp).
  const auto fits = [&](uint128 b) {
    if (b > UINT64_MAX) {
      throw InputError(algo_->source + ": " + et_node_name(pos, spec) + ": its message would be more than 2^64-1 bytes "
                       "at a collective of " + std::to_string(bytes_) + " B (msg_chunk_cnt " + std::to_string(spec.chunk_cnt) +
                       " of total_chunk_cnt " + std::to_string(spec.total_chunks) + ", comm_size " + std::to_string(spec.bytes) + ")");
    }
    return static_cast<std::uint64_t>(b);
  };
  const auto ceil_div = [&](uint128 a, uint128 b) { return fits((a + b - 1) / b); };
  if (spec.chunk_cnt >= 0 && spec.total_chunks > 0) {
    // The S*N output for all-gather and gather, S otherwise.
    const std::uint64_t buffer = collectives::buffer_bytes(algo_->type, bytes_, static_cast<std::uint32_t>(algo_->ranks.size()));
    const auto total = static_cast<std::uint64_t>(spec.total_chunks);
    const auto cnt = static_cast<std::uint64_t>(spec.chunk_cnt);
    if (algo_->equal_parts) {
      // Parts of one padded size, wherever they are (written by a ring).
      op.bytes = fits(static_cast<uint128>(equal_part_bytes(buffer, total)) * cnt);
    } else if (spec.chunk_idx >= 0) {
      // Parts [idx, idx+cnt) of the buffer, wrapping around its end.
      const auto first = static_cast<std::uint64_t>(spec.chunk_idx) % total;
      const std::uint64_t head = std::min(cnt, total - first);
      op.bytes = fits(static_cast<uint128>(parts_bytes(buffer, total, first, head)) +
                      (cnt > head ? static_cast<uint128>(buffer) * (cnt - head) / total : 0));
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

void EtProgram::parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const {
  const EtRankProgram& p = algo_->ranks[pos];
  for (std::uint32_t k = 0; k < p.ops.size(); ++k) {
    for (std::uint32_t c = p.child_begin[k]; c < p.child_begin[k + 1]; ++c) {
      if (p.children[c] == ref) out.push_back(k);
    }
  }
}

void EtProgram::finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const EtRankProgram& p = algo_->ranks[pos];
  for (std::uint32_t c = p.child_begin[ref]; c < p.child_begin[ref + 1]; ++c) {
    const std::uint32_t child = p.children[c];
    if (--cursor.pending[child] == 0) ready.push_back(child);
  }
}

}  // namespace sim
