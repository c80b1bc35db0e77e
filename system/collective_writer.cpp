#include "system/collective_writer.h"

#include <deque>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "core/error.h"
#include "system/ring_program.h"

namespace sim {

namespace {

std::uint32_t mod(std::int64_t v, std::uint32_t n) {
  const std::int64_t r = v % static_cast<std::int64_t>(n);
  return static_cast<std::uint32_t>(r < 0 ? r + n : r);
}

// ASTRA-sim's feeders read comm_src/comm_dst/comm_tag and the chunk trio as
// int32, so small values go there; larger ones need int64 (our reader takes both).
void put_int(et::Node& node, const char* name, std::uint64_t value) {
  et::AttributeProto* a = node.add_attr();
  a->set_name(name);
  if (value <= static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
    a->set_int32_val(static_cast<std::int32_t>(value));
  } else {
    a->set_int64_val(static_cast<std::int64_t>(value));
  }
}

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

// Which part of the collective buffer (EtProgram's chunk numbering) the ring
// moves at (pos, chunk, step); it mirrors RingProgram::send_bytes.
struct Parts {
  std::uint64_t idx, cnt, total;
};
Parts ring_parts(CollectiveType type, std::uint32_t n, std::uint32_t chunks, std::uint32_t pos, std::uint32_t chunk,
                 std::uint32_t step) {
  const std::uint64_t total = static_cast<std::uint64_t>(n) * chunks;
  if (type == CollectiveType::kAllGather) {
    // The buffer is the S*N output; rank j's input is parts j*k .. j*k+k-1,
    // and step s forwards the input of rank pos - s.
    return {static_cast<std::uint64_t>(mod(static_cast<std::int64_t>(pos) - step, n)) * chunks + chunk, 1, total};
  }
  const std::uint32_t piece = step < n - 1 ? mod(static_cast<std::int64_t>(pos) - step, n)
                                           : mod(static_cast<std::int64_t>(pos) + 1 - (step - (n - 1)), n);
  return {static_cast<std::uint64_t>(chunk) * n + piece, 1, total};
}

}  // namespace

std::vector<EtTrace> ring_algorithm_ets(CollectiveType type, std::uint32_t npus, std::uint32_t chunks,
                                        std::uint64_t bytes) {
  if (!RingProgram::supports(type)) {
    throw InputError(std::string("collective gen ring: no ring for ") + collective_name(type) +
                     " (allreduce, allgather, reducescatter, alltoall)");
  }
  const RingProgram ring(type, npus, bytes, chunks);
  const std::uint32_t steps = ring.steps();
  const std::uint64_t refs = static_cast<std::uint64_t>(chunks) * steps * 3;
  const bool chunk_attrs = type != CollectiveType::kAllToAll;

  std::vector<EtTrace> traces(npus);
  for (std::uint32_t pos = 0; pos < npus; ++pos) {
    // Walk the program: the op whose finish() makes an op ready is its one
    // data dependency (every ring op waits for exactly one other).
    constexpr std::int64_t kUnseen = -2, kRoot = -1;
    std::vector<std::int64_t> parent(refs, kUnseen);
    RankCursor cursor;
    std::vector<OpRef> ready;
    ring.start(pos, cursor, ready);
    std::deque<OpRef> frontier;
    // Arrays are indexed by the ring's dense op numbering.
    for (OpRef r : ready) {
      parent[ring.dense(r)] = kRoot;
      frontier.push_back(r);
    }
    std::uint64_t seen = 0;
    while (!frontier.empty()) {
      const OpRef r = frontier.front();
      frontier.pop_front();
      ++seen;
      ready.clear();
      ring.finish(pos, r, cursor, ready);
      for (OpRef c : ready) {
        if (parent[ring.dense(c)] != kUnseen) throw std::logic_error("ring: op made ready twice");
        parent[ring.dense(c)] = static_cast<std::int64_t>(ring.dense(r));
        frontier.push_back(c);
      }
    }
    if (seen != ring.op_count(pos)) throw std::logic_error("ring: walk does not reach every op");

    // Node ids ascend with (chunk, step, slot), which is the order the ring
    // lists ready ops in; the engine issues an ET's ready ops by id.
    std::vector<std::uint64_t> id(refs, 0);
    std::uint64_t next = 0;
    for (std::uint64_t d = 0; d < refs; ++d) {
      if (parent[d] != kUnseen) id[d] = next++;
    }

    EtTrace& t = traces[pos];
    t.metadata.set_version("0.0.4");
    put_metadata(t.metadata, "collective", collective_name(type));
    put_metadata(t.metadata, "collective_size", static_cast<std::int64_t>(bytes));
    put_metadata(t.metadata, "algorithm", std::string("ring"));
    put_metadata(t.metadata, "npus", npus);
    put_metadata(t.metadata, "chunks", chunks);
    t.nodes.reserve(seen);
    for (std::uint64_t d = 0; d < refs; ++d) {
      if (parent[d] == kUnseen) continue;
      const OpRef r = ring.from_dense(d);
      const CollectiveOp op = ring.op(pos, r);
      const std::uint32_t chunk = RingProgram::chunk_of(r);
      const std::uint32_t step = RingProgram::step_of(r);
      static const char* const kSlot[] = {"send", "recv", "reduce"};
      et::Node& node = t.nodes.emplace_back();
      node.set_id(id[d]);
      node.set_name("ring." + std::string(kSlot[RingProgram::slot_of(r)]) + " c" + std::to_string(chunk) + " s" +
                    std::to_string(step));
      if (parent[d] >= 0) node.add_data_deps(id[static_cast<std::uint64_t>(parent[d])]);
      et::AttributeProto* cpu = node.add_attr();
      cpu->set_name("is_cpu_op");
      cpu->set_bool_val(false);
      switch (op.kind) {
        case OpKind::kSend:
          node.set_type(et::COMM_SEND_NODE);
          put_int(node, "comm_dst", op.peer);
          break;
        case OpKind::kRecv:
          node.set_type(et::COMM_RECV_NODE);
          put_int(node, "comm_src", op.peer);
          break;
        case OpKind::kCompute: {
          // No duration: the system's reduction model prices it.
          node.set_type(et::COMP_NODE);
          et::AttributeProto* ts = node.add_attr();
          ts->set_name("tensor_size");
          ts->set_uint64_val(op.bytes);
          break;
        }
      }
      if (op.kind != OpKind::kCompute) {
        put_int(node, "comm_tag", op.tag);
        et::AttributeProto* size = node.add_attr();
        size->set_name("comm_size");
        size->set_int64_val(static_cast<std::int64_t>(op.bytes));
      }
      if (chunk_attrs) {
        // A receive (and its reduce) moves what the left neighbour sends.
        const std::uint32_t from = op.kind == OpKind::kSend ? pos : op.peer;
        const Parts p = ring_parts(type, npus, chunks, from, chunk, step);
        put_int(node, "msg_chunk_idx", p.idx);
        put_int(node, "msg_chunk_cnt", p.cnt);
        put_int(node, "total_chunk_cnt", p.total);
      }
    }
  }
  return traces;
}

std::size_t write_rank_ets(const std::vector<EtTrace>& traces, const std::string& prefix) {
  namespace fs = std::filesystem;
  const fs::path parent = fs::path(prefix).parent_path();
  std::error_code ec;
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) throw InputError("cannot create folder '" + parent.string() + "': " + ec.message());
  }
  for (std::size_t r = 0; r < traces.size(); ++r) write_et(traces[r], prefix + "." + std::to_string(r) + ".et");
  std::size_t removed = 0;
  for (std::size_t r = traces.size();; ++r) {
    const std::string stale = prefix + "." + std::to_string(r) + ".et";
    if (!fs::remove(stale, ec)) break;
    ++removed;
  }
  return removed;
}

}  // namespace sim
