#include "workload/rank_graph.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

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

// What construction keeps between reading the nodes and linking them.
struct RankGraph::Pending {
  std::vector<std::uint64_t> deps;       // per node: its data deps, then (if followed) its ctrl deps
  std::vector<std::uint32_t> dep_begin;  // node i: deps[dep_begin[i] .. data_end[i]) data, .. dep_begin[i+1] ctrl
  std::vector<std::uint32_t> data_end;
};

RankGraph::RankGraph(const EtTrace& trace, int rank, const GraphOptions& options) : rank_(rank), path_(trace.path) {
  Pending p;
  nodes_.reserve(trace.nodes.size());
  name_end_.reserve(trace.nodes.size());
  group_names_.push_back("");
  for (const et::Node& node : trace.nodes) add(node, options, p);
  link(options, p);
}

RankGraph::RankGraph(const std::string& path, int rank, const GraphOptions& options) : rank_(rank), path_(path) {
  Pending p;
  group_names_.push_back("");
  et::GlobalMetadata metadata;
  read_et_nodes(path, metadata, [&](const et::Node& node) { add(node, options, p); });
  link(options, p);
}

void RankGraph::add(const et::Node& src, const GraphOptions& options, Pending& p) {
  const int rank = rank_;
  TaskNode& t = nodes_.emplace_back();
  t.id = src.id();
  const int type = static_cast<int>(src.type());
  if (type < 0 || type > 7) {
    throw InputError(where(path_, rank, src.id()) + ": unknown node type " + std::to_string(type));
  }
  t.kind = static_cast<NodeKind>(type);
  names_ += src.name();
  if (names_.size() > 0xffffffffu) throw InputError(path_ + ": rank " + std::to_string(rank) + ": node names exceed 4 GiB");
  name_end_.push_back(static_cast<std::uint32_t>(names_.size()));
  t.duration_micros = src.duration_micros();
  t.has_duration = src.duration_micros() != 0;
  // One pass over the attributes (the first of a repeated name wins, as in
  // attr_int), then each read in a fixed order, so errors come in that order.
  const et::AttributeProto *is_cpu_op = nullptr, *num_ops = nullptr, *tensor_size = nullptr, *comm_size = nullptr,
                           *comm_tag = nullptr, *comm_src = nullptr, *comm_dst = nullptr;
  for (const et::AttributeProto& a : src.attr()) {
    const std::string_view name = a.name();
    const et::AttributeProto** slot = name == "is_cpu_op"     ? &is_cpu_op
                                      : name == "num_ops"     ? &num_ops
                                      : name == "tensor_size" ? &tensor_size
                                      : name == "comm_size"   ? &comm_size
                                      : name == "comm_tag"    ? &comm_tag
                                      : name == "comm_src"    ? &comm_src
                                      : name == "comm_dst"    ? &comm_dst
                                                              : nullptr;
    if (slot && !*slot) *slot = &a;
  }
  t.is_cpu_op = is_cpu_op && attr_bool_of(src, *is_cpu_op);
  if (num_ops) t.num_ops = attr_int_of(src, *num_ops);
  if (tensor_size) t.tensor_size = static_cast<std::uint64_t>(std::max<std::int64_t>(0, attr_int_of(src, *tensor_size)));
  t.has_roofline = num_ops && tensor_size;

  if (t.kind == NodeKind::kCommColl || t.kind == NodeKind::kCommSend || t.kind == NodeKind::kCommRecv) {
    if (comm_size) {
      const std::int64_t size = attr_int_of(src, *comm_size);
      if (size < 0) throw InputError(where(path_, rank, t.id) + ": negative comm_size");
      t.comm_size = static_cast<std::uint64_t>(size);
      t.has_comm_size = true;
    }
    if (comm_tag) t.comm_tag = attr_int_of(src, *comm_tag);
    if (comm_src) t.comm_src = static_cast<std::int32_t>(attr_int_of(src, *comm_src));
    if (comm_dst) t.comm_dst = static_cast<std::int32_t>(attr_int_of(src, *comm_dst));
  }
  if (t.kind == NodeKind::kCommColl && !t.is_cpu_op) {
    const auto ct = attr_int(src, "comm_type");
    if (!ct) throw InputError(where(path_, rank, t.id) + ": COMM_COLL node without comm_type");
    if (*ct < 0 || *ct > 9) {
      throw InputError(where(path_, rank, t.id) + ": comm_type " + std::to_string(*ct) +
                       " is not a Chakra collective type (0..9)");
    }
    t.coll = static_cast<CollectiveType>(*ct);
    if (!t.has_comm_size) throw InputError(where(path_, rank, t.id) + ": COMM_COLL node without comm_size");
    std::string pg = attr_string(src, "pg_name").value_or("");
    if (pg == "0") pg = "";  // "" and "0" both mean the world communicator
    auto it = std::find(group_names_.begin(), group_names_.end(), pg);
    t.group = static_cast<std::uint32_t>(it - group_names_.begin());
    if (it == group_names_.end()) group_names_.push_back(pg);
  }
  if (t.kind == NodeKind::kCommSend || t.kind == NodeKind::kCommRecv) {
    const bool send = t.kind == NodeKind::kCommSend;
    if (!t.has_comm_size) throw InputError(where(path_, rank, t.id) + ": " + node_kind_name(t.kind) + " without comm_size");
    if (send && t.comm_dst < 0) throw InputError(where(path_, rank, t.id) + ": COMM_SEND without comm_dst");
    if (!send && t.comm_src < 0) throw InputError(where(path_, rank, t.id) + ": COMM_RECV without comm_src");
  }
  p.dep_begin.push_back(static_cast<std::uint32_t>(p.deps.size()));
  p.deps.insert(p.deps.end(), src.data_deps().begin(), src.data_deps().end());
  p.data_end.push_back(static_cast<std::uint32_t>(p.deps.size()));
  if (options.ctrl_deps) p.deps.insert(p.deps.end(), src.ctrl_deps().begin(), src.ctrl_deps().end());
}

void RankGraph::link(const GraphOptions& options, Pending& p) {
  // Edges are resolved once every id is known (data_deps may point forward).
  const std::size_t n = nodes_.size();
  index_ids();
  p.dep_begin.push_back(static_cast<std::uint32_t>(p.deps.size()));
  std::vector<std::uint32_t> parents;  // resolved parent indices, flat, per node in order
  std::vector<std::uint32_t> parent_begin(n + 1, 0);
  std::vector<std::uint32_t> child_count(n, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    parent_begin[i] = static_cast<std::uint32_t>(parents.size());
    const std::uint64_t id = nodes_[i].id;
    for (std::uint32_t k = p.dep_begin[i]; k < p.dep_begin[i + 1]; ++k) {
      const std::uint64_t dep = p.deps[k];
      const bool ctrl = k >= p.data_end[i];
      const std::int64_t found = index_of(dep);
      if (ctrl && dep == id) {  // PyTorch-derived traces hold such self-references; they order nothing
        ++self_ctrl_deps_;
        continue;
      }
      if (found < 0) {
        if (!ctrl) {
          throw InputError(where(path_, rank_, id) + ": data dependency on absent node " + std::to_string(dep));
        }
        if (options.strict_deps) {
          throw InputError(where(path_, rank_, id) + ": control dependency on absent node " + std::to_string(dep));
        }
        ++dangling_ctrl_deps_;
        continue;
      }
      const auto parent = static_cast<std::uint32_t>(found);
      if (parent == i) throw IncompleteError(where(path_, rank_, id) + ": node depends on itself (cycle)");
      if (std::find(parents.begin() + parent_begin[i], parents.end(), parent) != parents.end()) continue;
      parents.push_back(parent);
      ++child_count[parent];
    }
  }
  parent_begin[n] = static_cast<std::uint32_t>(parents.size());
  std::uint32_t offset = 0;
  for (std::size_t i = 0; i < n; ++i) {
    nodes_[i].first_child = offset;
    nodes_[i].num_children = child_count[i];
    offset += child_count[i];
    nodes_[i].num_parents = parent_begin[i + 1] - parent_begin[i];
  }
  children_.resize(offset);
  std::vector<std::uint32_t> fill(n, 0);
  for (std::uint32_t i = 0; i < n; ++i) {  // child lists in file order of the children
    for (std::uint32_t k = parent_begin[i]; k < parent_begin[i + 1]; ++k) {
      const std::uint32_t parent = parents[k];
      children_[nodes_[parent].first_child + fill[parent]++] = i;
    }
  }
  p = Pending{};  // free the construction state before the cycle check allocates its own
  nodes_.shrink_to_fit();  // streamed in: up to twice the room needed
  names_.shrink_to_fit();
  name_end_.shrink_to_fit();
  check_acyclic();
}

void RankGraph::index_ids() {
  // Duplicate ids, and the id -> index lookup: nodes_ itself when the file
  // lists ids in ascending order, else a sorted copy of (id, index).
  const std::size_t n = nodes_.size();
  bool ascending = true;
  for (std::size_t i = 1; i < n && ascending; ++i) ascending = nodes_[i - 1].id < nodes_[i].id;
  dense_ids_ = ascending && n > 0 && nodes_.back().id - nodes_.front().id == n - 1;
  if (ascending) return;
  by_id_.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) by_id_.emplace_back(nodes_[i].id, i);
  std::sort(by_id_.begin(), by_id_.end());
  // The first node in file order that repeats an earlier node's id.
  std::uint32_t dup = 0xffffffffu;
  for (std::size_t k = 1; k < n; ++k) {
    if (by_id_[k].first == by_id_[k - 1].first) dup = std::min(dup, by_id_[k].second);
  }
  if (dup != 0xffffffffu) throw InputError(where(path_, rank_, nodes_[dup].id) + ": duplicate node id");
}

std::vector<std::uint32_t> RankGraph::roots() const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].num_parents == 0) out.push_back(i);
  }
  std::sort(out.begin(), out.end(), [&](std::uint32_t a, std::uint32_t b) { return nodes_[a].id < nodes_[b].id; });
  return out;
}

std::int64_t RankGraph::index_of(std::uint64_t id) const {
  if (dense_ids_) {  // ids first .. first + n - 1, in order
    const std::uint64_t first = nodes_.front().id;
    return id >= first && id - first < nodes_.size() ? static_cast<std::int64_t>(id - first) : -1;
  }
  if (by_id_.empty()) {  // nodes_ is sorted by id
    const auto it = std::lower_bound(nodes_.begin(), nodes_.end(), id,
                                     [](const TaskNode& n, std::uint64_t v) { return n.id < v; });
    return it == nodes_.end() || it->id != id ? -1 : it - nodes_.begin();
  }
  const auto it = std::lower_bound(by_id_.begin(), by_id_.end(), std::make_pair(id, std::uint32_t{0}));
  return it == by_id_.end() || it->first != id ? -1 : static_cast<std::int64_t>(it->second);
}

void RankGraph::check_acyclic() const {
  // Kahn's algorithm; whatever is left over lies on or behind a cycle.
  std::vector<std::uint32_t> pending(nodes_.size());
  std::vector<std::uint32_t> stack;
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
    pending[i] = nodes_[i].num_parents;
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
  if (seen == nodes_.size()) return;
  // Walk parents-with-pending-deps backwards from a leftover node until a node repeats.
  std::vector<std::vector<std::uint32_t>> parents(nodes_.size());
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
    for (std::uint32_t c : children(i)) parents[c].push_back(i);
  }
  std::uint32_t cur = 0;
  while (pending[cur] == 0) ++cur;
  std::vector<std::int64_t> pos(nodes_.size(), -1);
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
  // walk[k + 1] is a parent of walk[k]; print the cycle in dependency order.
  std::string cycle = std::to_string(nodes_[cur].id);
  for (std::size_t k = walk.size() - 1; k > static_cast<std::size_t>(pos[cur]); --k) {
    cycle += " -> " + std::to_string(nodes_[walk[k]].id);
  }
  cycle += " -> " + std::to_string(nodes_[cur].id);
  throw IncompleteError(path_ + ": rank " + std::to_string(rank_) + ": dependency cycle: " + cycle + " (" +
                        std::to_string(nodes_.size() - seen) + " nodes can never run)");
}

}  // namespace sim
