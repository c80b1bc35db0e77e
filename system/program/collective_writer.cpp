#include "system/program/collective_writer.h"

#include <algorithm>
#include <deque>
#include <unordered_set>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "core/error.h"
#include "workload/et/rank_set_writer.h"

namespace sim {

void put_metadata(et::GlobalMetadata& md, const char* name, std::int64_t value) {
  et::AttributeProto* a = md.add_attr();
  a->set_name(name);
  a->set_int64_val(value);
}

void put_metadata(et::GlobalMetadata& md, const char* name, const std::string& value) {
  et::AttributeProto* a = md.add_attr();
  a->set_name(name);
  a->set_string_val(value);
}

// ASTRA-sim's feeders read comm_src/comm_dst/comm_tag and the chunk trio as
// int32, so small values go there; larger ones need int64 (our reader takes both).
void put_int_attr(et::Node& node, const char* name, std::uint64_t value) {
  et::AttributeProto* a = node.add_attr();
  a->set_name(name);
  if (value <= static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
    a->set_int32_val(static_cast<std::int32_t>(value));
  } else {
    a->set_int64_val(static_cast<std::int64_t>(value));
  }
}

std::vector<DagOp> program_dag(const CollectiveProgram& program, std::uint32_t pos) {
  // Walk the program, finishing every op once it is ready; check on the way
  // that parents() names every op that must finish first.
  std::vector<OpRef> ready, parents, ops;
  RankCursor cursor;
  std::unordered_set<OpRef> done;
  program.start(pos, cursor, ready);
  std::deque<OpRef> frontier(ready.begin(), ready.end());
  for (OpRef r : ready) {
    parents.clear();
    program.parents(pos, r, parents);
    if (!parents.empty()) throw std::logic_error(program.name() + ": a ready op at the start has parents");
  }
  while (!frontier.empty()) {
    const OpRef r = frontier.front();
    frontier.pop_front();
    ops.push_back(r);
    done.insert(r);
    ready.clear();
    program.finish(pos, r, cursor, ready);
    for (OpRef c : ready) {
      parents.clear();
      program.parents(pos, c, parents);
      bool named = false;
      for (OpRef p : parents) {
        named = named || p == r;
        if (!done.count(p)) throw std::logic_error(program.name() + ": op ready before one of its parents");
      }
      if (!named) throw std::logic_error(program.name() + ": op made ready by an op that is not its parent");
      frontier.push_back(c);
    }
  }
  if (ops.size() != program.op_count(pos)) throw std::logic_error(program.name() + ": walk does not reach every op");
  // Node ids ascend with OpRef, the order native programs list ready ops in;
  // the engine issues an ET's ready ops by id.
  std::sort(ops.begin(), ops.end());
  const bool ranged = program.chunk_total() > 0;
  std::vector<DagOp> dag(ops.size());
  for (std::size_t d = 0; d < ops.size(); ++d) {
    DagOp& o = dag[d];
    o.ref = ops[d];
    o.op = program.op(pos, o.ref);
    if (ranged) o.range = program.chunk_range(pos, o.ref);
    parents.clear();
    program.parents(pos, o.ref, parents);
    for (OpRef p : parents) {
      o.deps.push_back(static_cast<std::uint64_t>(std::lower_bound(ops.begin(), ops.end(), p) - ops.begin()));
    }
    std::sort(o.deps.begin(), o.deps.end());
    o.deps.erase(std::unique(o.deps.begin(), o.deps.end()), o.deps.end());
  }
  return dag;
}

EtAlgorithm program_algorithm(const CollectiveProgram& program, CollectiveType type, std::uint64_t bytes) {
  EtAlgorithm algo;
  algo.source = program.name();
  algo.type = type;
  algo.type_recorded = true;
  if (type != CollectiveType::kBarrier) algo.written_size = bytes;
  algo.strided_blocks = program.strided_blocks();
  algo.equal_parts = program.chunk_total() > 0 && program.equal_parts();
  const std::uint32_t n = program.group_size();
  const std::uint64_t total = program.chunk_total();
  algo.ranks.resize(n);
  for (std::uint32_t pos = 0; pos < n; ++pos) {
    algo.files.push_back(program.name() + "." + std::to_string(pos));
    const std::vector<DagOp> dag = program_dag(program, pos);
    EtRankProgram& p = algo.ranks[pos];
    const auto count = static_cast<std::uint32_t>(dag.size());
    p.ops.resize(count);
    p.num_parents.assign(count, 0);
    std::vector<std::vector<std::uint32_t>> kids(count);
    for (std::uint32_t k = 0; k < count; ++k) {
      EtOpSpec& s = p.ops[k];
      s.kind = dag[k].op.kind;
      s.peer = dag[k].op.peer;
      s.bytes = dag[k].op.bytes;
      s.tag = dag[k].op.tag;
      s.node_id = k;
      if (dag[k].range.count > 0) {
        s.chunk_idx = static_cast<std::int64_t>(dag[k].range.first);
        s.chunk_cnt = static_cast<std::int64_t>(dag[k].range.count);
        s.total_chunks = static_cast<std::int64_t>(total);
      }
      for (std::uint64_t d : dag[k].deps) kids[d].push_back(k);
      p.num_parents[k] = static_cast<std::uint32_t>(dag[k].deps.size());
      if (dag[k].deps.empty()) p.roots.push_back(k);
    }
    for (std::uint32_t k = 0; k < count; ++k) {
      p.child_begin.push_back(static_cast<std::uint32_t>(p.children.size()));
      p.children.insert(p.children.end(), kids[k].begin(), kids[k].end());
    }
    p.child_begin.push_back(static_cast<std::uint32_t>(p.children.size()));
  }
  return algo;
}

// The traces of group positions [first, first + count).
static std::vector<EtTrace> position_ets(const CollectiveProgram& program, CollectiveType type, std::uint64_t bytes,
                                         std::uint32_t chunks, std::uint32_t first, std::uint32_t count) {
  const std::uint32_t npus = program.group_size();
  const std::uint64_t total = program.chunk_total();
  std::vector<EtTrace> traces(count);
  for (std::uint32_t pos = first; pos < first + count; ++pos) {
    const std::vector<DagOp> dag = program_dag(program, pos);
    EtTrace& t = traces[pos - first];
    t.metadata.set_version("0.0.4");
    put_metadata(t.metadata, "collective", collective_name(type));
    // A barrier's 1-byte messages do not scale with S: without collective_size
    // they are read as written.
    if (type != CollectiveType::kBarrier) put_metadata(t.metadata, "collective_size", static_cast<std::int64_t>(bytes));
    const std::string& name = program.name();
    put_metadata(t.metadata, "algorithm", name.substr(0, name.find('(')));
    put_metadata(t.metadata, "algorithm_full", name);
    put_metadata(t.metadata, "npus", npus);
    put_metadata(t.metadata, "chunks", chunks);
    if (program.strided_blocks()) put_metadata(t.metadata, "chunk_layout", std::string("strided"));
    if (total > 0 && program.equal_parts()) put_metadata(t.metadata, "chunk_sizes", std::string("equal"));
    t.nodes.reserve(dag.size());
    for (std::uint64_t d = 0; d < dag.size(); ++d) {
      const OpRef r = dag[d].ref;
      const CollectiveOp& op = dag[d].op;
      et::Node& node = t.nodes.emplace_back();
      node.set_id(d);
      node.set_name(program.label(pos, r));
      for (std::uint64_t p : dag[d].deps) node.add_data_deps(p);
      et::AttributeProto* cpu = node.add_attr();
      cpu->set_name("is_cpu_op");
      cpu->set_bool_val(false);
      switch (op.kind) {
        case OpKind::kSend:
          node.set_type(et::COMM_SEND_NODE);
          put_int_attr(node, "comm_dst", op.peer);
          break;
        case OpKind::kRecv:
          node.set_type(et::COMM_RECV_NODE);
          put_int_attr(node, "comm_src", op.peer);
          break;
        case OpKind::kSwitchReduce:
        case OpKind::kMulticast:
          throw InputError("collective '" + name + "' reduces or multicasts in a switch, which Chakra ETs cannot "
                           "express: it cannot be written as ETs");
        case OpKind::kCompute: {
          if (op.rate > 0) {
            throw InputError("collective '" + name + "' copies through a channel's pacer, which Chakra ETs cannot "
                             "express: it cannot be written as ETs");
          }
          // No duration: the system's reduction model prices it.
          node.set_type(et::COMP_NODE);
          et::AttributeProto* ts = node.add_attr();
          ts->set_name("tensor_size");
          ts->set_uint64_val(op.bytes);
          break;
        }
      }
      if (op.kind != OpKind::kCompute) {
        put_int_attr(node, "comm_tag", op.tag);
        et::AttributeProto* size = node.add_attr();
        size->set_name("comm_size");
        size->set_int64_val(static_cast<std::int64_t>(op.bytes));
      }
      if (total > 0) {
        const ChunkRange p = dag[d].range;
        if (p.count > 0) {
          put_int_attr(node, "msg_chunk_idx", p.first);
          put_int_attr(node, "msg_chunk_cnt", p.count);
          put_int_attr(node, "total_chunk_cnt", total);
        }
      }
    }
  }
  return traces;
}

std::vector<EtTrace> program_ets(const CollectiveProgram& program, CollectiveType type, std::uint64_t bytes,
                                 std::uint32_t chunks) {
  return position_ets(program, type, bytes, chunks, 0, program.group_size());
}

EtTrace program_et(const CollectiveProgram& program, CollectiveType type, std::uint64_t bytes, std::uint32_t chunks,
                   std::uint32_t pos) {
  return std::move(position_ets(program, type, bytes, chunks, pos, 1).front());
}


// Writes trace_of(r) to <prefix>.<r>.et for r < ranks; returns the note on
// earlier files removed.
template <typename TraceOf>
static std::string write_ranks(std::size_t ranks, const std::string& prefix, TraceOf&& trace_of) {
  RankSetWriter writer(prefix, static_cast<std::uint32_t>(ranks));
  for (std::size_t r = 0; r < ranks; ++r) writer.write(static_cast<std::uint32_t>(r), trace_of(r));
  writer.commit();
  return writer.removed_note();
}

std::string write_rank_ets(const std::vector<EtTrace>& traces, const std::string& prefix) {
  return write_ranks(traces.size(), prefix, [&](std::size_t r) -> const EtTrace& { return traces[r]; });
}

std::string write_program_ets(const CollectiveProgram& program, CollectiveType type, std::uint64_t bytes,
                              std::uint32_t chunks, const std::string& prefix) {
  return write_ranks(program.group_size(), prefix, [&](std::size_t r) {
    return program_et(program, type, bytes, chunks, static_cast<std::uint32_t>(r));
  });
}

}  // namespace sim
