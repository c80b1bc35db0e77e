#include "workload/rank_graph.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "core/error.h"
#include "core/time.h"
#include "workload/et/et_io.h"

namespace sim {

namespace {

constexpr const char* kCollectiveNames[] = {
    "ALL_REDUCE", "REDUCE", "ALL_GATHER", "GATHER", "SCATTER",
    "BROADCAST", "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};

std::string where(const std::string& path, int rank, std::uint64_t id) {
  return path + ": rank " + std::to_string(rank) + ", node " + std::to_string(id);
}

}  // namespace

const char* node_kind_name(NodeKind kind) {
  switch (kind) {
    case NodeKind::kInvalid: return "INVALID";
    case NodeKind::kMetadata: return "METADATA";
    case NodeKind::kMemLoad: return "MEM_LOAD";
    case NodeKind::kMemStore: return "MEM_STORE";
    case NodeKind::kComp: return "COMP";
    case NodeKind::kCommSend: return "COMM_SEND";
    case NodeKind::kCommRecv: return "COMM_RECV";
    case NodeKind::kCommColl: return "COMM_COLL";
  }
  return "?";
}

const char* collective_name(CollectiveType type) {
  return kCollectiveNames[static_cast<int>(type)];
}

bool parse_collective_name(std::string_view text, CollectiveType& out) {
  std::string norm;
  for (char c : text) {
    if (c == '_' || c == '-') continue;
    norm.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  }
  for (int i = 0; i < 10; ++i) {
    std::string name;
    for (const char* p = kCollectiveNames[i]; *p; ++p) {
      if (*p != '_') name.push_back(*p);
    }
    if (name == norm) {
      out = static_cast<CollectiveType>(i);
      return true;
    }
  }
  return false;
}

namespace {


struct StemHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

// "send17" -> ("send", 17): a trailing run of 1..9 digits without a leading
// zero (so printing the number gives the same text back). -1: no suffix.
std::int64_t split_name(std::string_view name, std::string_view& stem) {
  std::size_t k = name.size();
  while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9') --k;
  const std::size_t digits = name.size() - k;
  stem = name;
  if (digits == 0 || digits > 9 || (digits > 1 && name[k] == '0')) return -1;
  std::int64_t v = 0;
  for (std::size_t i = k; i < name.size(); ++i) v = v * 10 + (name[i] - '0');
  stem = name.substr(0, k);
  return v;
}

// name == lit for short literals, as a few word compares instead of a memcmp call.
template <std::size_t N>
bool is(std::string_view name, const char (&lit)[N]) {
  constexpr std::size_t n = N - 1;
  static_assert(n >= 4 && n <= 16);
  if (name.size() != n) return false;
  if constexpr (n >= 8) {
    std::uint64_t a0, a1, b0, b1;
    std::memcpy(&a0, name.data(), 8);
    std::memcpy(&a1, name.data() + n - 8, 8);
    std::memcpy(&b0, lit, 8);
    std::memcpy(&b1, lit + n - 8, 8);
    return a0 == b0 && a1 == b1;
  } else {
    std::uint32_t a0, a1, b0, b1;
    std::memcpy(&a0, name.data(), 4);
    std::memcpy(&a1, name.data() + n - 4, 4);
    std::memcpy(&b0, lit, 4);
    std::memcpy(&b1, lit + n - 4, 4);
    return a0 == b0 && a1 == b1;
  }
}

}  // namespace

// What construction keeps between reading the nodes and linking them.
struct RankGraph::Pending {
  struct ShapeHash {
    std::size_t operator()(const Shape& s) const {
      std::uint64_t h = static_cast<std::uint64_t>(s.kind) | static_cast<std::uint64_t>(s.flags) << 8 |
                        static_cast<std::uint64_t>(s.coll) << 16 | static_cast<std::uint64_t>(s.stem) << 32;
      auto mix = [&](std::uint64_t v) { h = (h ^ v) * 0x9e3779b97f4a7c15ull; h ^= h >> 29; };
      mix(static_cast<std::uint32_t>(s.comm_src) | static_cast<std::uint64_t>(static_cast<std::uint32_t>(s.comm_dst)) << 32);
      mix(s.group);
      mix(s.duration_micros);
      mix(static_cast<std::uint64_t>(s.num_ops));
      mix(s.tensor_size);
      mix(s.comm_size);
      mix(s.kernel);
      return static_cast<std::size_t>(h);
    }
  };
  std::vector<std::uint64_t> ids;        // per node
  std::vector<std::uint64_t> deps;       // per node: its data deps, then (if followed) its ctrl deps
  std::vector<std::uint32_t> dep_begin;  // node i: deps[dep_begin[i] .. data_end[i]) data, .. dep_begin[i+1] ctrl
  std::vector<std::uint32_t> data_end;
  std::unordered_map<Shape, std::uint32_t, ShapeHash> shapes;
  std::map<KernelShape, std::uint32_t> kernels;  // shape -> RankGraph::Shape::kernel
  std::unordered_map<std::string, std::uint32_t, StemHash, std::equal_to<>> stems;
  // Small caches in front of the maps (the stems' text lives in the map's keys).
  std::pair<std::string_view, std::uint32_t> recent_stems[4] = {
      {{}, 0xffffffffu}, {{}, 0xffffffffu}, {{}, 0xffffffffu}, {{}, 0xffffffffu}};
  std::size_t next_stem = 0;
  std::uint32_t recent_shapes[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu};
  std::size_t next_shape = 0;
  std::size_t expected_nodes = 0;  // from the file's frame count (0: unknown)
  // link()'s temporaries.
  std::vector<std::uint32_t> parents;       // resolved parent indices, flat, per node in order
  std::vector<std::uint32_t> parent_begin;  // per node + 1
  std::vector<std::uint32_t> child_count;
  std::vector<std::uint32_t> last_child;
  std::vector<std::uint32_t> fill;
  // Graphs up to this many nodes keep the vectors' room for the next graph;
  // larger ones free each vector as soon as it is done with (the peak of a
  // single huge trace matters more than reuse).
  static constexpr std::size_t kKeepNodes = std::size_t{1} << 20;
  bool keep = true;

  // Done with `v` for this graph.
  template <typename V>
  void done(V& v) {
    if (keep) {
      v.clear();
    } else {
      v = V{};
    }
  }
  // Ready for the next graph.
  void reset() {
    for (auto* v : {&ids, &deps}) done(*v);
    for (auto* v : {&dep_begin, &data_end, &parents, &parent_begin, &child_count, &last_child, &fill}) done(*v);
    shapes.clear();
    kernels.clear();
    stems.clear();
    for (auto& r : recent_stems) r = {{}, 0xffffffffu};
    for (auto& r : recent_shapes) r = 0xffffffffu;
    next_stem = next_shape = 0;
    expected_nodes = 0;
    keep = true;
  }
};

RankGraph::Scratch::Scratch() : pending_(std::make_unique<Pending>()) {}
RankGraph::Scratch::~Scratch() = default;

RankGraph::RankGraph(const EtTrace& trace, int rank, const GraphOptions& options)
    : RankGraph(rank, trace.path, options, [&](const NodeSink& sink) {
        for (const et::Node& node : trace.nodes) sink(node);
      }) {}

RankGraph::RankGraph(int rank, std::string path, const GraphOptions& options,
                     const std::function<void(const NodeSink&)>& produce)
    : rank_(rank), path_(std::move(path)) {
  Body& b = start();
  Pending p;
  b.communicators_.emplace_back();
  WireNode wire;
  produce([&](const et::Node& node) {
    wire_node_from(node, wire);
    add(b, wire, options, p);
  });
  link(b, options, p);
}

RankGraph::RankGraph(const std::string& path, int rank, const GraphOptions& options, Scratch* scratch)
    : rank_(rank), path_(path) {
  Scratch local;
  if (!scratch) scratch = &local;
  if (options.protobuf_decoder) {
    Body& b = start();
    Pending& p = *scratch->pending_;
    p.reset();
    b.communicators_.emplace_back();
    et::GlobalMetadata metadata;
    WireNode wire;
    read_et_nodes(path, metadata, [&](const et::Node& node) {
      wire_node_from(node, wire);
      add(b, wire, options, p);
    });
    link(b, options, p);
    return;
  }
  decode(scratch->file_.read(path, "trace", std::numeric_limits<std::uint64_t>::max()), options, *scratch);
  // A file's bytes are not kept past a file of 64 MiB (one huge trace).
  if (scratch->file_.capacity() > kKeptFileBytes) scratch->file_.release();
}

RankGraph::RankGraph(std::string_view bytes, const std::string& path, int rank, const GraphOptions& options,
                     Scratch* scratch)
    : rank_(rank), path_(path) {
  if (options.protobuf_decoder) {
    throw std::logic_error("RankGraph from bytes: the protobuf decoder reads the file itself");
  }
  Scratch local;
  decode(bytes, options, scratch ? *scratch : local);
}

RankGraph::RankGraph(const RankGraph& same, int rank, std::string path)
    : rank_(rank), path_(std::move(path)), body_(same.body_) {}

RankGraph::Body& RankGraph::start() {
  // The accessors read body_ while the graph is built (ids, tags, parents
  // already linked); nothing else holds it yet.
  auto body = std::make_shared<Body>();
  Body& b = *body;
  body_ = std::move(body);
  return b;
}

void RankGraph::decode(std::string_view bytes, const GraphOptions& options, Scratch& scratch) {
  Body& b = start();
  Pending& p = *scratch.pending_;
  p.reset();
  b.communicators_.emplace_back();
  et::GlobalMetadata metadata;
  std::size_t frames = 0;
  scan_et_wire_nodes(
      bytes, path_, metadata,
      [&](const WireNode& node) {
        if (b.shape_of_.empty() && frames > 1) {  // the first node: size the columns once
          p.expected_nodes = frames - 1;
          b.shape_of_.reserve(p.expected_nodes);
          p.ids.reserve(p.expected_nodes);
          p.dep_begin.reserve(p.expected_nodes + 1);
          p.data_end.reserve(p.expected_nodes);
        }
        add(b, node, options, p);
      },
      &frames);
  link(b, options, p);
}

void RankGraph::add(Body& b, const WireNode& src, const GraphOptions& options, Pending& p) {
  const int rank = rank_;
  const auto index = static_cast<std::uint32_t>(b.shape_of_.size());
  if (index == 0xffffffffu) throw InputError(path_ + ": rank " + std::to_string(rank) + ": more than 2^32 - 1 nodes");
  const std::uint64_t id = src.id;
  p.ids.push_back(id);
  Shape s;
  const int type = src.type;
  if (type < 0 || type > 7) {
    throw InputError(where(path_, rank, id) + " '" + std::string(src.name) + "': unknown node type " + std::to_string(type));
  }
  s.kind = static_cast<NodeKind>(type);
  std::int64_t name_num = -1;
  {
    std::string_view stem;
    const std::int64_t num = split_name(src.name, stem);
    // The last few stems first: traces repeat a handful of names.
    std::uint32_t found = 0xffffffffu;
    for (const auto& [text, index] : p.recent_stems) {
      if (index != 0xffffffffu && text == stem) found = index;
    }
    if (found == 0xffffffffu) {
      auto it = p.stems.find(stem);
      if (it == p.stems.end()) {
        b.stems_ += stem;
        if (b.stems_.size() > 0xffffffffu) throw InputError(path_ + ": rank " + std::to_string(rank) + ": node names exceed 4 GiB");
        b.stem_end_.push_back(static_cast<std::uint32_t>(b.stems_.size()));
        it = p.stems.emplace(std::string(stem), static_cast<std::uint32_t>(b.stem_end_.size() - 1)).first;
      }
      found = it->second;
      p.recent_stems[p.next_stem++ % std::size(p.recent_stems)] = {it->first, found};
    }
    s.stem = found;
    name_num = num;
  }
  s.duration_micros = src.duration_micros;
  // Checked where it enters: a duration that alone passes the time limit is bad input.
  if (src.duration_micros > static_cast<std::uint64_t>(kMaxTime / kMicrosecond)) {
    throw InputError(where(path_, rank, id) + " '" + std::string(src.name) + "': duration_micros " +
                     std::to_string(src.duration_micros) + " is longer than the largest representable time, " +
                     describe_time_limit());
  }
  if (src.duration_micros != 0) s.flags |= Shape::kDuration;
  // One pass over the attributes (the first of a repeated name wins, as in
  // attr_int), then each read in a fixed order, so errors come in that order.
  const WireAttr *is_cpu_op = nullptr, *num_ops = nullptr, *tensor_size = nullptr, *comm_size = nullptr,
                 *comm_tag = nullptr, *comm_src = nullptr, *comm_dst = nullptr, *comm_type = nullptr,
                 *pg_name = nullptr, *involved_dim = nullptr, *kernel = nullptr;
  for (const WireAttr& a : src.attrs) {
    const std::string_view name = a.name;
    const WireAttr** slot = nullptr;
    switch (name.size()) {  // the names' lengths tell most apart
      case 6: slot = is(name, "kernel") ? &kernel : nullptr; break;
      case 7: slot = is(name, "num_ops") ? &num_ops : is(name, "pg_name") ? &pg_name : nullptr; break;
      case 8:
        slot = is(name, "comm_tag") ? &comm_tag : is(name, "comm_src") ? &comm_src : is(name, "comm_dst") ? &comm_dst : nullptr;
        break;
      case 9:
        slot = is(name, "comm_size")   ? &comm_size
               : is(name, "is_cpu_op") ? &is_cpu_op
               : is(name, "comm_type") ? &comm_type
                                     : nullptr;
        break;
      case 11: slot = is(name, "tensor_size") ? &tensor_size : nullptr; break;
      case 12: slot = is(name, "involved_dim") ? &involved_dim : nullptr; break;
      default: break;
    }
    if (slot && !*slot) *slot = &a;
  }
  // Every error about this node names the file, rank, node id and name, and
  // the attribute; every integer is range-checked against where it is kept.
  const auto here = [&] { return where(path_, rank, id) + " '" + std::string(src.name) + "'"; };
  const auto int_attr = [&](const WireAttr& a, std::int64_t lo, std::int64_t hi) {
    std::int64_t v = 0;
    try {
      v = wire_attr_int(src, a);
    } catch (const AttrError& e) {
      throw InputError(here() + ": " + e.detail());
    }
    if (v < lo || v > hi) {
      throw InputError(here() + ": attribute '" + std::string(a.name) + "' value " + std::to_string(v) +
                       " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    return v;
  };
  constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMaxRank = std::numeric_limits<std::int32_t>::max();
  bool cpu_op = false;
  std::string_view pg;
  try {
    cpu_op = is_cpu_op && wire_attr_bool(src, *is_cpu_op);
    if (pg_name) pg = wire_attr_string(src, *pg_name);
  } catch (const AttrError& e) {
    throw InputError(here() + ": " + e.detail());
  }
  if (cpu_op) s.flags |= Shape::kCpuOp;
  if (num_ops) s.num_ops = int_attr(*num_ops, 0, kMaxInt64);
  if (tensor_size) s.tensor_size = static_cast<std::uint64_t>(int_attr(*tensor_size, 0, kMaxInt64));
  if (num_ops && tensor_size) s.flags |= Shape::kRoofline;
  if (kernel && s.kind == NodeKind::kComp) {  // its shape, for compute/kernel_model.h
    KernelShape shape;
    try {
      read_kernel_shape(src, shape);
    } catch (const InputError& e) {
      throw InputError(here() + ": " + e.what());
    }
    const auto [it, fresh] = p.kernels.emplace(std::move(shape), static_cast<std::uint32_t>(b.kernels_.size() + 1));
    if (fresh) b.kernels_.push_back(it->first);
    s.kernel = it->second;
  }

  std::int64_t tag = 0;
  if (s.kind == NodeKind::kCommColl || s.kind == NodeKind::kCommSend || s.kind == NodeKind::kCommRecv) {
    if (comm_size) {
      s.comm_size = static_cast<std::uint64_t>(int_attr(*comm_size, 0, kMaxInt64));
      s.flags |= Shape::kCommSize;
    }
    if (comm_tag) tag = int_attr(*comm_tag, std::numeric_limits<std::int64_t>::min(), kMaxInt64);  // any int64
    if (comm_src) s.comm_src = static_cast<std::int32_t>(int_attr(*comm_src, 0, kMaxRank));
    if (comm_dst) s.comm_dst = static_cast<std::int32_t>(int_attr(*comm_dst, 0, kMaxRank));
  }
  const bool has_comm_size = s.flags & Shape::kCommSize;
  if (s.kind == NodeKind::kCommColl && !cpu_op) {
    if (!comm_type) throw InputError(here() + ": COMM_COLL node without comm_type");
    s.coll = static_cast<CollectiveType>(int_attr(*comm_type, 0, 9));
    if (!has_comm_size) throw InputError(here() + ": COMM_COLL node without comm_size");
    CommunicatorSpec spec;
    spec.pg_name = pg;  // resolved against the run's process groups (system/groups/process_groups.h)
    if (involved_dim) {
      if (involved_dim->value_case != 28) {  // AttributeProto.bool_list
        throw InputError(here() + ": attribute 'involved_dim' must be a bool_list (one entry per network dimension)");
      }
      if (involved_dim->count > 64) {
        throw InputError(here() + ": involved_dim has " + std::to_string(involved_dim->count) +
                         " entries; at most 64 are supported");
      }
      spec.involved_count = involved_dim->count;
      spec.involved_mask = involved_dim->bits;
    }
    auto it = std::find(b.communicators_.begin(), b.communicators_.end(), spec);
    s.group = static_cast<std::uint32_t>(it - b.communicators_.begin());
    if (it == b.communicators_.end()) {
      spec.first_use = index;
      b.communicators_.push_back(std::move(spec));
    }
  }
  if (s.kind == NodeKind::kMetadata && !src.inputs_values.empty()) {
    b.metadata_texts_.push_back(MetadataText{index, std::string(src.inputs_values)});
  }
  if (s.kind == NodeKind::kCommSend || s.kind == NodeKind::kCommRecv) {
    const bool send = s.kind == NodeKind::kCommSend;
    if (!has_comm_size) throw InputError(here() + ": " + node_kind_name(s.kind) + " without comm_size");
    if (send && s.comm_dst < 0) throw InputError(here() + ": COMM_SEND without comm_dst");
    if (!send && s.comm_src < 0) throw InputError(here() + ": COMM_RECV without comm_src");
  }
  if (tag != 0 || !b.tags_.empty()) {  // allocated at the first nonzero tag
    if (b.tags_.empty()) b.tags_.reserve(std::max<std::size_t>(p.expected_nodes, index + 1));
    b.tags_.resize(index, 0);
    if (tag >= 0 && tag < 0xffffffffll) {
      b.tags_.push_back(static_cast<std::uint32_t>(tag));
    } else {
      b.tags_.push_back(0xffffffffu);
      b.tags_big_.emplace_back(index, tag);
    }
  }
  add_name_number(b, index, name_num, tag);
  std::uint32_t shape = 0xffffffffu;
  for (const std::uint32_t k : p.recent_shapes) {
    if (k != 0xffffffffu && b.shapes_[k] == s) shape = k;
  }
  if (shape == 0xffffffffu) {
    const auto [it, fresh] = p.shapes.try_emplace(s, static_cast<std::uint32_t>(b.shapes_.size()));
    if (fresh) b.shapes_.push_back(s);
    shape = it->second;
    p.recent_shapes[p.next_shape++ % std::size(p.recent_shapes)] = shape;
  }
  b.shape_of_.push_back(shape);

  if (p.deps.size() + src.data_deps.size() + src.ctrl_deps.size() > 0xffffffffu) {
    throw InputError(path_ + ": rank " + std::to_string(rank) + ": more than 2^32 - 1 dependencies");
  }
  p.dep_begin.push_back(static_cast<std::uint32_t>(p.deps.size()));
  p.deps.insert(p.deps.end(), src.data_deps.begin(), src.data_deps.end());
  p.data_end.push_back(static_cast<std::uint32_t>(p.deps.size()));
  if (options.ctrl_deps) p.deps.insert(p.deps.end(), src.ctrl_deps.begin(), src.ctrl_deps.end());
}

void RankGraph::link(Body& b, const GraphOptions& options, Pending& p) {
  // Edges are resolved once every id is known (data_deps may point forward).
  const std::size_t n = b.shape_of_.size();
  p.keep = n <= Pending::kKeepNodes;
  index_ids(b, p.ids);  // copies the ids into ids_ unless they are consecutive
  p.done(p.ids);
  p.shapes.clear();
  p.stems.clear();
  p.dep_begin.push_back(static_cast<std::uint32_t>(p.deps.size()));
  auto& parents = p.parents;  // resolved parent indices, flat, per node in order
  auto& parent_begin = p.parent_begin;
  auto& child_count = p.child_count;
  auto& last_child = p.last_child;
  parents.reserve(p.deps.size());
  parent_begin.assign(n + 1, 0);
  child_count.assign(n, 0);
  // last_child[p] == i + 1: p is already a parent of i. Repeated deps are
  // dropped in O(1), so a node with 200,000 deps costs 200,000 steps, not 2e10.
  last_child.assign(n, 0);
  // Every parent earlier in file order than its child: no cycle is possible,
  // so check_acyclic (a pass over the whole graph) is not needed.
  bool backward = true;
  for (std::uint32_t i = 0; i < n; ++i) {
    parent_begin[i] = static_cast<std::uint32_t>(parents.size());
    const std::uint64_t id = this->id(i);
    for (std::uint32_t k = p.dep_begin[i]; k < p.dep_begin[i + 1]; ++k) {
      const std::uint64_t dep = p.deps[k];
      const bool ctrl = k >= p.data_end[i];
      if (ctrl && dep == id) {  // PyTorch-derived traces hold such self-references; they order nothing
        ++b.self_ctrl_deps_;
        continue;
      }
      const std::int64_t found = index_of(dep);
      if (found < 0) {
        if (!ctrl) {
          throw InputError(where(path_, rank_, id) + ": data dependency on absent node " + std::to_string(dep));
        }
        if (options.strict_deps) {
          throw InputError(where(path_, rank_, id) + ": control dependency on absent node " + std::to_string(dep));
        }
        ++b.dangling_ctrl_deps_;
        continue;
      }
      const auto parent = static_cast<std::uint32_t>(found);
      if (parent == i) throw InputError(where(path_, rank_, id) + ": node depends on itself (cycle)");
      backward &= parent < i;
      if (last_child[parent] == i + 1) continue;
      last_child[parent] = i + 1;
      parents.push_back(parent);
      ++child_count[parent];
    }
  }
  parent_begin[n] = static_cast<std::uint32_t>(parents.size());
  p.done(last_child);
  for (auto* v : {&p.deps}) p.done(*v);
  for (auto* v : {&p.dep_begin, &p.data_end}) p.done(*v);
  b.child_begin_.reserve(n + 1);
  b.parents_.resize(n);
  std::uint32_t offset = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    b.child_begin_.push_back(offset);
    offset += child_count[i];
    const std::uint32_t count = parent_begin[i + 1] - parent_begin[i];
    if (count < 0xffffu) {
      b.parents_[i] = static_cast<std::uint16_t>(count);
    } else {
      b.parents_[i] = 0xffffu;
      b.parents_big_.emplace_back(i, count);
    }
  }
  b.child_begin_.push_back(offset);
  p.done(child_count);
  b.children_.resize(offset);
  auto& fill = p.fill;
  fill.assign(n, 0);
  for (std::uint32_t i = 0; i < n; ++i) {  // child lists in file order of the children
    for (std::uint32_t k = parent_begin[i]; k < parent_begin[i + 1]; ++k) {
      const std::uint32_t parent = parents[k];
      b.children_[b.child_begin_[parent] + fill[parent]++] = i;
    }
  }
  p.done(parents);
  p.done(parent_begin);
  p.done(fill);
  // Streamed in without a frame count (JSON, protobuf path): up to twice the room needed.
  b.shapes_.shrink_to_fit();
  b.shape_of_.shrink_to_fit();
  b.tags_.shrink_to_fit();
  b.tags_big_.shrink_to_fit();
  b.name_num_.shrink_to_fit();
  b.stems_.shrink_to_fit();
  b.stem_end_.shrink_to_fit();
  if (!backward) check_acyclic();
}

void RankGraph::index_ids(Body& b, std::vector<std::uint64_t>& ids) {
  // Duplicate ids, and the id -> index lookup: nothing when ids are
  // consecutive, ids_ itself when ascending, else a sorted copy of (id, index).
  const std::size_t n = ids.size();
  bool ascending = true;
  for (std::size_t i = 1; i < n && ascending; ++i) ascending = ids[i - 1] < ids[i];
  const bool dense = ascending && n > 0 && ids.back() - ids.front() == n - 1;
  b.first_id_ = n > 0 ? ids.front() : 0;
  if (dense) return;
  b.ids_.assign(ids.begin(), ids.end());  // `ids` is construction state, reused for the next graph
  if (ascending) return;
  b.by_id_.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) b.by_id_.emplace_back(b.ids_[i], i);
  std::sort(b.by_id_.begin(), b.by_id_.end());
  // The first node in file order that repeats an earlier node's id.
  std::uint32_t dup = 0xffffffffu;
  for (std::size_t k = 1; k < n; ++k) {
    if (b.by_id_[k].first == b.by_id_[k - 1].first) dup = std::min(dup, b.by_id_[k].second);
  }
  if (dup != 0xffffffffu) throw InputError(where(path_, rank_, b.ids_[dup]) + ": duplicate node id");
}

std::uint32_t RankGraph::big_parents(std::uint32_t index) const {
  const auto it = std::lower_bound(body_->parents_big_.begin(), body_->parents_big_.end(), std::make_pair(index, std::uint32_t{0}));
  return it->second;
}

std::int64_t RankGraph::big_tag(std::uint32_t index) const {
  const auto it = std::lower_bound(body_->tags_big_.begin(), body_->tags_big_.end(), std::make_pair(index, std::int64_t{0}),
                                   [](const auto& x, const auto& y) { return x.first < y.first; });
  return it->second;
}

std::string RankGraph::name(std::uint32_t index) const {
  const Body& b = *body_;
  const std::uint32_t stem = shape(index).stem;
  const std::uint32_t begin = stem == 0 ? 0 : b.stem_end_[stem - 1];
  std::string out = b.stems_.substr(begin, b.stem_end_[stem] - begin);
  if (b.names_follow_tags_) {
    out += std::to_string(tag(index));
  } else if (!b.name_num_.empty() && b.name_num_[index] != 0) {
    out += std::to_string(b.name_num_[index] - 1);
  }
  return out;
}

void RankGraph::add_name_number(Body& b, std::uint32_t index, std::int64_t num, std::int64_t tag) {
  if (b.names_follow_tags_) {
    if (num >= 0 && num == tag) return;  // name() rebuilds it from the tag
    // The first node whose suffix is not its tag: keep every suffix from now on.
    b.names_follow_tags_ = false;
    for (std::uint32_t k = 0; k < index; ++k) b.name_num_.push_back(static_cast<std::uint32_t>(this->tag(k) + 1));
  }
  if (num >= 0 || !b.name_num_.empty()) {  // allocated at the first numbered name
    b.name_num_.resize(index, 0);
    b.name_num_.push_back(static_cast<std::uint32_t>(num + 1));
  }
}

std::size_t RankGraph::memory_bytes() const {
  const Body& g = *body_;
  std::size_t b = sizeof(*this) + path_.capacity() + sizeof(Body);
  b += g.shapes_.capacity() * sizeof(Shape) + g.shape_of_.memory_bytes() + g.child_begin_.memory_bytes() +
       g.children_.capacity() * 4 + g.parents_.capacity() * 2 + g.parents_big_.capacity() * 8 + g.tags_.memory_bytes() +
       g.tags_big_.capacity() * 16 + g.name_num_.memory_bytes() + g.stems_.capacity() + g.stem_end_.capacity() * 4 +
       g.ids_.capacity() * 8 + g.by_id_.capacity() * 16;
  for (const CommunicatorSpec& c : g.communicators_) b += sizeof(c) + c.pg_name.capacity();
  for (const MetadataText& m : g.metadata_texts_) b += sizeof(m) + m.values.capacity();
  for (const KernelShape& k : g.kernels_) b += sizeof(k) + k.dtype.capacity() + k.op.capacity();
  return b;
}

std::vector<std::uint32_t> RankGraph::roots() const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < size(); ++i) {
    if (body_->parents_[i] == 0) out.push_back(i);
  }
  std::sort(out.begin(), out.end(), [&](std::uint32_t a, std::uint32_t b) { return id(a) < id(b); });
  return out;
}

std::int64_t RankGraph::index_of(std::uint64_t id) const {
  const std::size_t n = size();
  const Body& b = *body_;
  if (b.ids_.empty()) {  // ids first .. first + n - 1, in order
    return id >= b.first_id_ && id - b.first_id_ < n ? static_cast<std::int64_t>(id - b.first_id_) : -1;
  }
  if (b.by_id_.empty()) {  // ids_ is sorted
    const auto it = std::lower_bound(b.ids_.begin(), b.ids_.end(), id);
    return it == b.ids_.end() || *it != id ? -1 : it - b.ids_.begin();
  }
  const auto it = std::lower_bound(b.by_id_.begin(), b.by_id_.end(), std::make_pair(id, std::uint32_t{0}));
  return it == b.by_id_.end() || it->first != id ? -1 : static_cast<std::int64_t>(it->second);
}

void RankGraph::check_acyclic() const {
  // Kahn's algorithm; whatever is left over lies on or behind a cycle.
  const std::size_t n = size();
  std::vector<std::uint32_t> pending(n);
  std::vector<std::uint32_t> stack;
  for (std::uint32_t i = 0; i < n; ++i) {
    pending[i] = num_parents(i);
    if (pending[i] == 0) stack.push_back(i);
  }
  std::size_t seen = 0;
  while (!stack.empty()) {
    const std::uint32_t i = stack.back();
    stack.pop_back();
    ++seen;
    for (std::uint32_t c : children(i)) {
      if (--pending[c] == 0) stack.push_back(c);
    }
  }
  if (seen == n) return;
  // Walk parents-with-pending-deps backwards from a leftover node until a node repeats.
  std::vector<std::vector<std::uint32_t>> parents(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    for (std::uint32_t c : children(i)) parents[c].push_back(i);
  }
  std::uint32_t cur = 0;
  while (pending[cur] == 0) ++cur;
  std::vector<std::int64_t> pos(n, -1);
  std::vector<std::uint32_t> walk;
  while (pos[cur] < 0) {
    pos[cur] = static_cast<std::int64_t>(walk.size());
    walk.push_back(cur);
    for (std::uint32_t p : parents[cur]) {
      if (pending[p] > 0) {
        cur = p;
        break;
      }
    }
  }
  // walk[k + 1] is a parent of walk[k]; print the cycle in dependency order,
  // its first nodes only: a 200,000-node cycle once made a 1.9 MB message.
  constexpr std::size_t kShown = 10;
  const std::size_t length = walk.size() - static_cast<std::size_t>(pos[cur]);
  std::string cycle = std::to_string(id(cur));
  std::size_t shown = 1;
  for (std::size_t k = walk.size() - 1; k > static_cast<std::size_t>(pos[cur]) && shown < kShown; --k, ++shown) {
    cycle += " -> " + std::to_string(id(walk[k]));
  }
  if (shown < length) cycle += " -> ... (" + std::to_string(length) + " nodes in all)";
  cycle += " -> " + std::to_string(id(cur));
  throw InputError(path_ + ": rank " + std::to_string(rank_) + ": dependency cycle: " + cycle + " (" +
                        std::to_string(n - seen) + " nodes can never run)");
}

}  // namespace sim
