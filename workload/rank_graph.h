// One rank's dependency graph, compacted from its Chakra ET for the run.
//
// Edges are data_deps (and ctrl_deps when asked). Forward references are
// resolved after the whole file is indexed. Children keep file order, which is
// the order Chakra's own feeder reports them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>  // not used here any more; kept for includers
#include <vector>

#include "workload/et_io.h"

namespace sim {

enum class NodeKind : std::uint8_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kCommSend = 5,
  kCommRecv = 6,
  kCommColl = 7,
};
const char* node_kind_name(NodeKind kind);

// Chakra CollectiveCommType values.
enum class CollectiveType : std::uint8_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};
const char* collective_name(CollectiveType type);  // "ALL_REDUCE"
// Accepts "allreduce", "all_reduce", "ALL_REDUCE", "all-reduce"; false if unknown.
bool parse_collective_name(std::string_view text, CollectiveType& out);

// What the simulator needs of a node, decoded once from its attributes.
struct TaskNode {
  std::uint64_t id = 0;
  NodeKind kind = NodeKind::kInvalid;
  bool is_cpu_op = false;
  bool has_duration = false;
  bool has_roofline = false;  // num_ops and tensor_size both present
  bool has_comm_size = false;
  CollectiveType coll = CollectiveType::kAllReduce;
  std::uint64_t duration_micros = 0;
  std::int64_t num_ops = 0;
  std::uint64_t tensor_size = 0;
  std::uint64_t comm_size = 0;
  std::int32_t comm_src = -1;
  std::int32_t comm_dst = -1;
  std::int64_t comm_tag = 0;
  std::uint32_t group = 0;  // index into the graph's pg_names (0 = world)
  std::uint32_t first_child = 0;  // children are children_[first_child, first_child + num_children)
  std::uint32_t num_children = 0;
  std::uint32_t num_parents = 0;
};

struct GraphOptions {
  bool ctrl_deps = false;    // also follow ctrl_deps
  bool strict_deps = false;  // a dangling ctrl dep is an error, not a warning
};

class RankGraph {
 public:
  // Throws InputError (naming file, rank, node id) for duplicate ids, a data
  // dep on an absent node, bad attributes; IncompleteError for a cycle.
  RankGraph(const EtTrace& trace, int rank, const GraphOptions& options);
  // Streams the file (read_et_nodes): no decoded trace is kept in memory.
  RankGraph(const std::string& path, int rank, const GraphOptions& options);

  int rank() const { return rank_; }
  const std::string& path() const { return path_; }
  std::size_t size() const { return nodes_.size(); }
  const TaskNode& node(std::uint32_t index) const { return nodes_[index]; }
  std::string_view name(std::uint32_t index) const {
    const std::uint32_t begin = index == 0 ? 0 : name_end_[index - 1];
    return std::string_view(names_).substr(begin, name_end_[index] - begin);
  }
  std::span<const std::uint32_t> children(std::uint32_t index) const {
    const TaskNode& n = nodes_[index];
    return {children_.data() + n.first_child, n.num_children};
  }
  // Node indices without parents, in ascending node id.
  std::vector<std::uint32_t> roots() const;
  // Index of a node id, or -1.
  std::int64_t index_of(std::uint64_t id) const;
  // Communicator names referenced by pg_name; entry 0 is the world ("").
  const std::vector<std::string>& group_names() const { return group_names_; }
  // Ctrl deps that pointed at absent nodes and were ignored.
  std::size_t dangling_ctrl_deps() const { return dangling_ctrl_deps_; }
  // Ctrl deps of a node on itself, ignored.
  std::size_t self_ctrl_deps() const { return self_ctrl_deps_; }

 private:
  struct Pending;
  void add(const et::Node& node, const GraphOptions& options, Pending& pending);
  void link(const GraphOptions& options, Pending& pending);
  void index_ids();
  void check_acyclic() const;

  int rank_;
  std::string path_;
  std::vector<TaskNode> nodes_;
  std::string names_;                   // every node's name, back to back
  std::vector<std::uint32_t> name_end_;  // node i's name ends at names_[name_end_[i]]
  std::vector<std::uint32_t> children_;
  // Sorted (id, index) pairs; left empty when the file lists ids in ascending
  // order (the usual case), where nodes_ itself is sorted by id.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> by_id_;
  bool dense_ids_ = false;  // ascending and consecutive: index = id - first id
  std::vector<std::string> group_names_;
  std::size_t dangling_ctrl_deps_ = 0;
  std::size_t self_ctrl_deps_ = 0;
};

}  // namespace sim
