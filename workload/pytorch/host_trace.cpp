#include "workload/pytorch/host_trace.h"

#include <charconv>
#include <tuple>
#include <unordered_set>

#include "core/error.h"
#include "workload/pytorch/json_element_stream.h"
#include "workload/pytorch/trace_durations.h"

namespace sim::pytorch {

namespace {

using json = nlohmann::json;

// "MAJOR.MINOR.PATCH..." (e.g. "1.1.1-chakra.0.0.4"): three numbers that
// fit an int (from_chars refuses what does not, where sscanf's %d is undefined).
bool parse_version(const std::string& schema, int (&v)[3]) {
  const char* p = schema.data();
  const char* end = schema.data() + schema.size();
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (p == end || *p != '.') return false;
      ++p;
    }
    const auto [next, ec] = std::from_chars(p, end, v[i]);
    if (ec != std::errc() || v[i] < 0) return false;
    p = next;
  }
  return true;
}

bool is_tensor_value(const json& v) {
  if (!v.is_array() || v.size() != 6 || !v[5].is_string()) return false;
  for (int i = 0; i < 5; ++i) {
    if (!v[i].is_number_integer()) return false;
  }
  return true;
}

// Tensors inside a value whose type mentions Tensor (lists of lists included).
void collect_tensors(const json& v, std::vector<TensorRef>& out, int depth = 0) {
  if (depth > 8 || !v.is_array()) return;
  if (is_tensor_value(v)) {
    out.push_back(TensorRef{v[0].get<std::int64_t>(), v[1].get<std::int64_t>(), v[3].get<std::int64_t>(),
                            v[4].get<std::int64_t>()});
    return;
  }
  for (const json& e : v) collect_tensors(e, out, depth + 1);
}

// The schema string from the first bytes of the file (it is written first),
// so errors met while streaming the nodes can name it.
std::string peek_schema(const std::string& path) {
  const std::string head = peek_json_text(path, 1024);
  const std::size_t k = head.find("\"schema\"");
  if (k == std::string::npos) return {};
  const std::size_t q1 = head.find('"', head.find(':', k) + 1);
  if (q1 == std::string::npos) return {};
  const std::size_t q2 = head.find('"', q1 + 1);
  if (q2 == std::string::npos) return {};
  return head.substr(q1 + 1, q2 - q1 - 1);
}

std::string dtype_of(const json& type) {
  if (!type.is_string()) return {};
  const std::string& t = type.get_ref<const std::string&>();
  if (t.find("BFloat16") != std::string::npos) return "bf16";
  if (t.find("Half") != std::string::npos) return "fp16";
  if (t.find("Float8") != std::string::npos) return "fp8";
  if (t == "Tensor(float)") return "fp32";
  return {};
}

// The operand positions of each matrix product (its schema's order).
std::optional<HostOp::Gemm> gemm_of(const std::string& name, const json& shapes, const json& types) {
  int a = -1, b = -1;
  if (name == "aten::mm" || name == "aten::bmm") a = 0, b = 1;
  else if (name == "aten::addmm" || name == "aten::baddbmm") a = 1, b = 2;
  else return std::nullopt;
  if (!shapes.is_array() || static_cast<int>(shapes.size()) <= b) return std::nullopt;
  const json& sa = shapes[static_cast<std::size_t>(a)];
  const json& sb = shapes[static_cast<std::size_t>(b)];
  const std::size_t rank = name.find("bmm") != std::string::npos ? 3 : 2;
  if (!sa.is_array() || !sb.is_array() || sa.size() != rank || sb.size() != rank) return std::nullopt;
  for (const json* s : {&sa, &sb}) {
    for (const json& d : *s) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < 0) return std::nullopt;
    }
  }
  HostOp::Gemm g;
  const std::size_t o = rank - 2;
  if (rank == 3) g.batch = sa[0].get<std::int64_t>();
  g.m = sa[o].get<std::int64_t>();
  g.k = sa[o + 1].get<std::int64_t>();
  g.n = sb[o + 1].get<std::int64_t>();
  if (sb[o].get<std::int64_t>() != g.k) return std::nullopt;
  if (types.is_array() && static_cast<int>(types.size()) > a) g.dtype = dtype_of(types[static_cast<std::size_t>(a)]);
  return g;
}

// 2 * batch * m * n * k operations and the three matrices' bytes (at 4 B an
// element) within int64, as the ET's num_ops and tensor_size hold them.
bool gemm_fits(const HostOp::Gemm& g) {
  std::int64_t ops = 2, mk = 0, kn = 0, mn = 0, sum = 0, bytes = 0;
  return !__builtin_mul_overflow(ops, g.batch, &ops) && !__builtin_mul_overflow(ops, g.m, &ops) &&
         !__builtin_mul_overflow(ops, g.n, &ops) && !__builtin_mul_overflow(ops, g.k, &ops) &&
         !__builtin_mul_overflow(g.m, g.k, &mk) && !__builtin_mul_overflow(g.k, g.n, &kn) &&
         !__builtin_mul_overflow(g.m, g.n, &mn) && !__builtin_add_overflow(mk, kn, &sum) &&
         !__builtin_add_overflow(sum, mn, &sum) && !__builtin_mul_overflow(sum, g.batch, &bytes) &&
         !__builtin_mul_overflow(bytes, std::int64_t{4}, &bytes);
}

class NodeReader {
 public:
  NodeReader(const std::string& path, int rank, const std::string& schema, bool known)
      : path_(path), rank_(rank), schema_(schema), known_(known) {}

  void read(json& node, HostTrace& trace) {
    ++index_;
    if (!node.is_object()) fail("node " + std::to_string(index_) + " of 'nodes'", "", "is not an object");
    const json* id = member(node, "id");
    if (!id || !id->is_number_unsigned()) {
      fail("node " + std::to_string(index_) + " of 'nodes'", "id", id ? "is not a non-negative integer" : "is missing");
    }
    HostOp op;
    op.id = id->get<std::uint64_t>();
    const std::string where = "op id " + std::to_string(op.id);
    const json* name = member(node, "name");
    if (!name || !name->is_string()) fail(where, "name", name ? "is not a string" : "is missing");
    op.name = name->get<std::string>();
    const json* ctrl = member(node, "ctrl_deps");
    if (!ctrl || !ctrl->is_number_unsigned()) fail(where, "ctrl_deps", ctrl ? "is not a node id" : "is missing");
    op.parent = ctrl->get<std::uint64_t>();
    if (const json* dur = member(node, "dur")) {
      if (!dur->is_number() || dur->get<double>() < 0) fail(where, "dur", "is not a non-negative number");
      op.dur_us = dur->get<double>();
      checked_micros(*op.dur_us, path_ + ": rank " + std::to_string(rank_) + ": " + where + " (" + op.name + ")");
    }
    const bool keep = keeps_arguments(op.name);
    for (const char* side : {"inputs", "outputs"}) {
      json* io = member(node, side);
      if (!io || !io->is_object()) fail(where, side, io ? "is not an object" : "is missing");
      json* values = member(*io, "values");
      if (!values || !values->is_array()) fail(where, std::string(side) + ".values", values ? "is not a list" : "is missing");
      json* types = member(*io, "types");
      if (types && (!types->is_array() || types->size() != values->size())) {
        fail(where, std::string(side) + ".types", "is not a list as long as " + std::string(side) + ".values");
      }
      std::vector<TensorRef>& tensors = side[0] == 'i' ? op.inputs : op.outputs;
      for (std::size_t i = 0; i < values->size(); ++i) {
        const bool typed_tensor = !types || ((*types)[i].is_string() && (*types)[i].get_ref<const std::string&>().find("Tensor") != std::string::npos);
        if (typed_tensor) collect_tensors((*values)[i], tensors);
      }
      if (keep) {
        if (side[0] == 'i') {
          op.input_values = std::move(*values);
          if (types) op.input_types = std::move(*types);
        } else {
          op.output_values = std::move(*values);
        }
      }
    }
    if (json* in = member(node, "inputs"); op.name.rfind("aten::", 0) == 0 && op.name.find("mm") != std::string::npos) {
      static const json kNull;
      const json* shapes = member(*in, "shapes");
      const json* types = member(*in, "types");
      if (!types) types = &op.input_types;
      op.gemm = gemm_of(op.name, shapes ? *shapes : kNull, *types);
      if (op.gemm && !gemm_fits(*op.gemm)) {
        fail(where + " (" + op.name + ")", "inputs.shapes", "give a matrix product of more than 2^63 - 1 operations or bytes");
      }
    }
    for (const std::vector<TensorRef>* side : {&op.inputs, &op.outputs}) {
      for (const TensorRef& t : *side) {
        std::uint64_t b = 0;
        if (t.numel > 0 && t.itemsize > 0 &&
            __builtin_mul_overflow(static_cast<std::uint64_t>(t.numel), static_cast<std::uint64_t>(t.itemsize), &b)) {
          fail(where + " (" + op.name + ")", side == &op.inputs ? "inputs.values" : "outputs.values",
               "holds a tensor of more than 2^64 - 1 B (numel x itemsize)");
        }
      }
    }
    json* attrs = member(node, "attrs");
    if (!attrs || !attrs->is_array()) fail(where, "attrs", attrs ? "is not a list" : "is missing");
    for (const json& a : *attrs) {
      const json* an = a.is_object() ? member(a, "name") : nullptr;
      const json* av = a.is_object() ? member(a, "value") : nullptr;
      if (!an || !an->is_string() || !av) fail(where, "attrs", "holds an entry without name and value");
      const std::string& n = an->get_ref<const std::string&>();
      if (n == "rf_id") {
        if (!av->is_number_unsigned()) fail(where, "attrs.rf_id", "is not a non-negative integer");
        op.rf_id = av->get<std::uint64_t>();
        op.has_rf_id = true;
      } else if (n == "tid") {
        if (!av->is_number_integer()) fail(where, "attrs.tid", "is not an integer");
        op.tid = static_cast<std::uint64_t>(av->get<std::int64_t>());
      } else if (n == "scope") {
        if (!av->is_number_integer()) fail(where, "attrs.scope", "is not an integer");
        op.scope = av->get<std::int64_t>();
      }
    }
    if (!ids_.insert(op.id).second) fail(where, "id", "appears twice");
    trace.ops.push_back(std::move(op));
  }

 private:
  static json* member(json& j, const char* key) {
    auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
  }
  static const json* member(const json& j, const char* key) {
    auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
  }
  [[noreturn]] void fail(const std::string& where, const std::string& field, const std::string& problem) const {
    std::string msg = path_ + ": rank " + std::to_string(rank_) + ": " + where;
    if (!field.empty()) msg += ": field '" + field + "'";
    msg += " " + problem;
    if (!known_) {
      msg += " (schema '" + schema_ + "' is not one this importer knows, " + kOldestSchema + " .. " + kNewestSchema +
             ", and it lacks a field the importer needs)";
    }
    throw InputError(msg);
  }

  const std::string& path_;
  int rank_;
  std::string schema_;
  bool known_;
  std::size_t index_ = 0;
  std::unordered_set<std::uint64_t> ids_;
};

}  // namespace

bool is_known_schema(const std::string& schema) {
  int v[3], lo[3], hi[3];
  if (!parse_version(schema, v) || !parse_version(kOldestSchema, lo) || !parse_version(kNewestSchema, hi)) return false;
  if (schema.find("-chakra.0.0.4") == std::string::npos) return false;
  // Compared part by part: a part may be any int ("1.651588039.1"), so no
  // packing of the three into one number.
  const auto as_tuple = [](const int (&x)[3]) { return std::tie(x[0], x[1], x[2]); };
  return as_tuple(v) >= as_tuple(lo) && as_tuple(v) <= as_tuple(hi);
}

bool keeps_arguments(const std::string& name) {
  return name.rfind("c10d::", 0) == 0 || name.rfind("_c10d_functional::", 0) == 0 ||
         name.rfind("c10d_functional::", 0) == 0 || name == "record_param_comms" ||
         name.find("process_group:init") != std::string::npos;
}

HostTrace read_host_trace(const std::string& path, int rank) {
  HostTrace trace;
  trace.path = path;
  const std::string peeked = peek_schema(path);
  const bool known = is_known_schema(peeked);
  NodeReader reader(path, rank, peeked, known);
  json top = stream_json_array(path, "nodes", [&](json& node) { reader.read(node, trace); });
  auto schema = top.find("schema");
  if (schema == top.end() || !schema->is_string()) {
    throw InputError(path + ": rank " + std::to_string(rank) +
                     ": field 'schema' is missing: not a PyTorch execution trace (expected e.g. \"" + kNewestSchema + "\")");
  }
  trace.schema = schema->get<std::string>();
  trace.known_schema = is_known_schema(trace.schema);
  if (auto pid = top.find("pid"); pid != top.end() && pid->is_number_integer()) trace.pid = pid->get<std::int64_t>();
  return trace;
}

}  // namespace sim::pytorch
