#include "workload/pytorch/comm_ops.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "core/error.h"

namespace sim::pytorch {

namespace {

using json = nlohmann::json;

constexpr int kNone = -1;

struct Signature {
  std::string_view name;
  CommKind kind;
  CollectiveType coll;
  int bytes_arg;  // the argument whose tensors are the bytes (kNone: 0 bytes)
  int peer_arg;   // send / recv: the peer (group rank)
  int tag_arg;
};

// c10d operators as torch/csrc/distributed/c10d/Ops.cpp declares them
// (argument positions from their schemas, e.g.
// "allgather_(Tensor[][] output_tensors, Tensor[] input_tensors, ProcessGroup, ...)").
// ALL_GATHER and GATHER count one rank's input, as Chakra's comm_size does.
constexpr Signature kSignatures[] = {
    {"c10d::allreduce_", CommKind::kCollective, CollectiveType::kAllReduce, 0, kNone, kNone},
    {"c10d::allreduce_coalesced_", CommKind::kCollective, CollectiveType::kAllReduce, 0, kNone, kNone},
    {"c10d::allgather_", CommKind::kCollective, CollectiveType::kAllGather, 1, kNone, kNone},
    {"c10d::_allgather_base_", CommKind::kCollective, CollectiveType::kAllGather, 1, kNone, kNone},
    {"c10d::allgather_coalesced_", CommKind::kCollective, CollectiveType::kAllGather, 1, kNone, kNone},
    {"c10d::allgather_into_tensor_coalesced_", CommKind::kCollective, CollectiveType::kAllGather, 1, kNone, kNone},
    {"c10d::reduce_scatter_", CommKind::kCollective, CollectiveType::kReduceScatter, 1, kNone, kNone},
    {"c10d::_reduce_scatter_base_", CommKind::kCollective, CollectiveType::kReduceScatter, 1, kNone, kNone},
    {"c10d::reduce_scatter_tensor_coalesced_", CommKind::kCollective, CollectiveType::kReduceScatter, 1, kNone, kNone},
    {"c10d::alltoall_", CommKind::kCollective, CollectiveType::kAllToAll, 1, kNone, kNone},
    {"c10d::alltoall_base_", CommKind::kCollective, CollectiveType::kAllToAll, 1, kNone, kNone},
    {"c10d::broadcast_", CommKind::kCollective, CollectiveType::kBroadcast, 0, kNone, kNone},
    {"c10d::reduce_", CommKind::kCollective, CollectiveType::kReduce, 0, kNone, kNone},
    {"c10d::gather_", CommKind::kCollective, CollectiveType::kGather, 1, kNone, kNone},
    {"c10d::scatter_", CommKind::kCollective, CollectiveType::kScatter, 0, kNone, kNone},
    {"c10d::barrier", CommKind::kCollective, CollectiveType::kBarrier, kNone, kNone, kNone},
    {"c10d::monitored_barrier_", CommKind::kCollective, CollectiveType::kBarrier, kNone, kNone, kNone},
    {"c10d::send", CommKind::kSend, CollectiveType::kAllReduce, 0, 2, 3},
    {"c10d::recv_", CommKind::kRecv, CollectiveType::kAllReduce, 0, 2, 3},
    // Functional collectives (torch.distributed._functional_collectives): the
    // group travels as its name, the last string argument.
    {"_c10d_functional::all_reduce", CommKind::kCollective, CollectiveType::kAllReduce, 0, kNone, kNone},
    {"_c10d_functional::all_reduce_", CommKind::kCollective, CollectiveType::kAllReduce, 0, kNone, kNone},
    {"_c10d_functional::all_gather_into_tensor", CommKind::kCollective, CollectiveType::kAllGather, 0, kNone, kNone},
    {"_c10d_functional::reduce_scatter_tensor", CommKind::kCollective, CollectiveType::kReduceScatter, 0, kNone, kNone},
    {"_c10d_functional::all_to_all_single", CommKind::kCollective, CollectiveType::kAllToAll, 0, kNone, kNone},
    {"_c10d_functional::broadcast", CommKind::kCollective, CollectiveType::kBroadcast, 0, kNone, kNone},
};

const Signature* signature_of(std::string_view name) {
  for (const Signature& s : kSignatures) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// record_param_comms' collective names (ProcessGroupNCCL's opType strings and
// the names it passes for coalesced / base variants).
bool record_collective(std::string_view name, CommKind& kind, CollectiveType& coll) {
  kind = CommKind::kCollective;
  if (name == "send") {
    kind = CommKind::kSend;
    return true;
  }
  if (name == "recv") {
    kind = CommKind::kRecv;
    return true;
  }
  struct Alias {
    std::string_view name;
    CollectiveType coll;
  };
  static constexpr Alias kAliases[] = {
      {"allreduce", CollectiveType::kAllReduce},        {"allreduce_coalesced", CollectiveType::kAllReduce},
      {"all_gather", CollectiveType::kAllGather},       {"allgather", CollectiveType::kAllGather},
      {"_allgather_base", CollectiveType::kAllGather},  {"allgather_into_tensor_coalesced", CollectiveType::kAllGather},
      {"all_gather_into_tensor_coalesced", CollectiveType::kAllGather},
      {"reduce_scatter", CollectiveType::kReduceScatter}, {"_reduce_scatter_base", CollectiveType::kReduceScatter},
      {"reduce_scatter_tensor_coalesced", CollectiveType::kReduceScatter},
      {"all_to_all", CollectiveType::kAllToAll},        {"all_to_allv", CollectiveType::kAllToAll},
      {"alltoall", CollectiveType::kAllToAll},          {"alltoall_base", CollectiveType::kAllToAll},
      {"broadcast", CollectiveType::kBroadcast},        {"reduce", CollectiveType::kReduce},
      {"gather", CollectiveType::kGather},              {"scatter", CollectiveType::kScatter},
      {"barrier", CollectiveType::kBarrier},
  };
  for (const Alias& a : kAliases) {
    if (a.name == name) {
      coll = a.coll;
      return true;
    }
  }
  return parse_collective_name(name, coll);
}

bool is_tensor(const json& v) {
  if (!v.is_array() || v.size() != 6 || !v[5].is_string()) return false;
  for (int i = 0; i < 5; ++i) {
    if (!v[i].is_number_integer()) return false;
  }
  return true;
}

constexpr std::uint64_t kMaxCommBytes = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

bool tensor_bytes(const json& v, std::uint64_t& out, int depth = 0) {
  if (depth > 8 || !v.is_array()) return false;
  if (is_tensor(v)) {
    const std::int64_t numel = v[3].get<std::int64_t>(), item = v[4].get<std::int64_t>();
    // Saturates past 2^63 - 1 B (ETs hold comm_size as int64): the caller refuses that.
    if (numel > 0 && item > 0) {
      std::uint64_t b = 0;
      if (__builtin_mul_overflow(static_cast<std::uint64_t>(numel), static_cast<std::uint64_t>(item), &b) ||
          __builtin_add_overflow(out, b, &out) || out > kMaxCommBytes) {
        out = kMaxCommBytes + 1;
      }
    }
    return true;
  }
  bool any = v.empty();  // an empty list of tensors is 0 bytes, not an error
  for (const json& e : v) any = tensor_bytes(e, out, depth + 1) || any;
  return any;
}

bool is_record_op(const std::string& name) { return name == "record_param_comms"; }
bool is_work_record(const std::string& name) { return name.rfind("gloo:", 0) == 0 || name.rfind("nccl:", 0) == 0; }

}  // namespace

std::string describe_comm(const CommOp& c) {
  if (c.kind == CommKind::kSend) return "SEND";
  if (c.kind == CommKind::kRecv) return "RECV";
  return collective_name(c.coll);
}

CommExtraction extract_comm_ops(const HostTrace& host, const TraceLinks& links, int rank) {
  CommExtraction out;
  const std::size_t n = host.ops.size();
  auto fail = [&](const HostOp& op, const std::string& field, const std::string& problem) {
    throw InputError(host.path + ": rank " + std::to_string(rank) + ": op id " + std::to_string(op.id) + " (" +
                     op.name + "): field '" + field + "' " + problem);
  };
  // Which ops start a communication record (their subtree is the record's own work).
  std::vector<std::int8_t> starts(n, 0);  // 1: a known collective, 2: a lone record / work record
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& name = host.ops[i].name;
    if (signature_of(name)) starts[i] = 1;
    // Not the work records (gloo:*, nccl:*): they start on the calling thread
    // and end on the backend's worker thread, so the trace files the caller's
    // next operators under them; they are annotations, not containers.
    else if (is_record_op(name) || name == "_c10d_functional::wait_tensor") starts[i] = 2;
    else if (name.rfind("c10d::", 0) == 0) out.unsupported.add(name);
  }
  // in_comm: the op or an ancestor starts one (parents resolved by walking up; memoised).
  out.in_comm.assign(n, false);
  // Iterative walk up to the first ancestor already decided (a cycle of
  // ctrl_deps ends at the op met twice: state 0 set before walking on).
  std::vector<std::int8_t> state(n, -1);
  std::vector<std::size_t> path;
  for (std::size_t i = 0; i < n; ++i) {
    path.clear();
    std::size_t j = i;
    bool value = false;
    while (true) {
      if (state[j] >= 0) {
        value = state[j] > 0;
        break;
      }
      if (starts[j]) {
        value = true;
        break;
      }
      state[j] = 0;
      path.push_back(j);
      if (links.parent[j] < 0) break;
      j = static_cast<std::size_t>(links.parent[j]);
    }
    for (std::size_t p : path) state[p] = value;
    if (starts[i]) state[i] = 1;
    out.in_comm[i] = state[i] > 0;
  }

  // Top-level communication ops: a known operator not inside another one, or a
  // lone record_param_comms naming a collective.
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return host.ops[a].rf_id < host.ops[b].rf_id; });
  auto ancestor_starts = [&](std::size_t i) {
    for (std::int32_t p = links.parent[i]; p >= 0; p = links.parent[static_cast<std::size_t>(p)]) {
      if (starts[static_cast<std::size_t>(p)] == 1 || is_record_op(host.ops[static_cast<std::size_t>(p)].name)) return true;
    }
    return false;
  };
  // Children lists for record_param_comms under a c10d op.
  std::vector<std::vector<std::size_t>> records_under(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_record_op(host.ops[i].name)) continue;
    for (std::int32_t p = links.parent[i]; p >= 0; p = links.parent[static_cast<std::size_t>(p)]) {
      if (starts[static_cast<std::size_t>(p)] == 1) {
        records_under[static_cast<std::size_t>(p)].push_back(i);
        break;
      }
    }
  }

  auto read_record = [&](const HostOp& rec, CommOp& c, bool set_type) {
    // record_param_comms(inputs..., seq, <group>, rank, collective name, ...):
    // the group sits two places before the collective name.
    const json& v = rec.input_values;
    if (!v.is_array()) return false;
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (!v[k].is_string()) continue;
      CommKind kind;
      CollectiveType coll;
      if (!record_collective(v[k].get_ref<const std::string&>(), kind, coll)) continue;
      if (set_type) {
        c.kind = kind;
        c.coll = coll;
      }
      if (k >= 2) {
        const json& g = v[k - 2];
        if (g.is_string()) c.pg_name = g.get<std::string>();
        else if (g.is_array() && !g.empty() && g[0].is_string()) c.pg_name = g[0].get<std::string>();
        else if (g.is_number_integer()) c.backend_id = g.get<std::int64_t>();
        if (!c.pg_name.empty()) c.pg_source = "record_param_comms";
      }
      return true;
    }
    return false;
  };

  for (std::size_t i : order) {
    const HostOp& op = host.ops[i];
    const Signature* sig = signature_of(op.name);
    const bool lone_record = is_record_op(op.name) && !ancestor_starts(i);
    if ((!sig && !lone_record) || (sig && ancestor_starts(i))) continue;
    CommOp c;
    c.op = i;
    const json& v = op.input_values;
    if (sig) {
      c.kind = sig->kind;
      c.coll = sig->coll;
      if (sig->bytes_arg != kNone) {
        const std::size_t a = static_cast<std::size_t>(sig->bytes_arg);
        if (!v.is_array() || a >= v.size() || !tensor_bytes(v[a], c.bytes)) {
          fail(op, "inputs.values[" + std::to_string(a) + "]", "is not the tensor (list) its schema puts there");
        }
      }
      auto int_arg = [&](int a, const char* what) {
        const std::size_t k = static_cast<std::size_t>(a);
        if (!v.is_array() || k >= v.size() || !v[k].is_number_integer()) {
          fail(op, "inputs.values[" + std::to_string(k) + "]", std::string("is not the ") + what + " (an int)");
        }
        return v[k].get<std::int64_t>();
      };
      if (sig->peer_arg != kNone) c.peer = int_arg(sig->peer_arg, "peer rank");
      if (sig->tag_arg != kNone) c.tag = int_arg(sig->tag_arg, "tag");
      // async_op: the last Bool argument, where the schema has one.
      const json& types = op.input_types;
      if (types.is_array() && v.is_array()) {
        for (std::size_t k = types.size(); k-- > 0;) {
          if (types[k] == "Bool" && k < v.size() && v[k].is_boolean()) {
            c.async_op = v[k].get<bool>();
            break;
          }
        }
      }
      if (op.name.rfind("_c10d_functional::", 0) == 0) {
        c.async_op = true;  // returns at once; wait_tensor (a reader of the output) waits
        for (std::size_t k = v.is_array() ? v.size() : 0; k-- > 0;) {
          if (v[k].is_string()) {
            c.pg_name = v[k].get<std::string>();
            c.pg_source = "group_name argument";
            break;
          }
        }
      }
      for (std::size_t r : records_under[i]) {
        if (read_record(host.ops[r], c, /*set_type=*/false)) break;
      }
    } else {
      if (!read_record(op, c, /*set_type=*/true)) continue;  // "wait", "init", ...: not communication
      if (v.is_array() && !v.empty()) tensor_bytes(v[0], c.bytes);
    }
    if (c.bytes > kMaxCommBytes) fail(op, "inputs.values", "hold tensors of more than 2^63 - 1 B in all (numel x itemsize)");
    out.ops.push_back(std::move(c));
  }

  // The backend's work record of each op: the first unclaimed gloo:* / nccl:*
  // record started after the op (c10d enqueues the work inside the call, so
  // the records come in the ops' order).
  std::vector<std::size_t> work;
  for (std::size_t i : order) {
    if (is_work_record(host.ops[i].name)) work.push_back(i);
  }
  std::size_t w = 0;
  for (std::size_t k = 0; k < out.ops.size(); ++k) {
    const std::uint64_t rf = host.ops[out.ops[k].op].rf_id;
    const std::uint64_t next_rf = k + 1 < out.ops.size() ? host.ops[out.ops[k + 1].op].rf_id : ~std::uint64_t{0};
    while (w < work.size() && host.ops[work[w]].rf_id <= rf) ++w;
    if (w < work.size() && host.ops[work[w]].rf_id < next_rf) {
      out.ops[k].work_op = static_cast<std::int32_t>(work[w]);
      const std::string& wn = host.ops[work[w]].name;
      out.ops[k].backend = wn.substr(0, wn.find(':'));
      ++w;
    }
  }
  return out;
}

}  // namespace sim::pytorch
