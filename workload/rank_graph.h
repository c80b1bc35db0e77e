// One rank's dependency graph, compacted from its Chakra ET for the run.
//
// Edges are data_deps (and ctrl_deps when asked). Forward references are
// resolved after the whole file is indexed. Children keep file order, which is
// the order Chakra's own feeder reports them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>  // not used here any more; kept for includers
#include <vector>

#include "core/input_file.h"
#include "workload/kernel_shape.h"
#include "workload/narrow_column.h"

// Declared only: the trace's types are in workload/et/et_io.h, whose protobuf
// messages most includers of the graph never touch.
namespace ChakraProtoMsg {
class Node;
}

namespace sim {

namespace et = ChakraProtoMsg;
struct EtTrace;
struct WireNode;

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
// RankGraph::node() assembles it on demand from the graph's compact storage
// (see RankGraph), so it is a value, not a reference into the graph.
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
  std::uint32_t group = 0;  // index into the graph's communicators() (0: no pg_name, no involved_dim)
  std::uint32_t kernel = 0;  // COMP nodes: RankGraph::kernel_shape(kernel) (0: no kernel attributes)
  std::uint32_t first_child = 0;  // children are children_[first_child, first_child + num_children)
  std::uint32_t num_children = 0;
  std::uint32_t num_parents = 0;
};

// What a COMM_COLL node says about its group: pg_name and involved_dim as
// written (system/groups/process_groups.h resolves them to ranks).
struct CommunicatorSpec {
  std::string pg_name;             // "" when absent
  std::uint32_t involved_count = 0;  // entries in involved_dim; 0 when absent
  std::uint64_t involved_mask = 0;   // bit i: dimension i involved
  std::uint32_t first_use = 0;       // index of the first node naming it (for messages)
  bool operator==(const CommunicatorSpec& o) const {
    return pg_name == o.pg_name && involved_count == o.involved_count && involved_mask == o.involved_mask;
  }
};

// A METADATA node's inputs.values (PyTorch process-group definitions).
struct MetadataText {
  std::uint32_t index = 0;  // the node
  std::string values;
};

struct GraphOptions {
  bool ctrl_deps = false;    // also follow ctrl_deps
  bool strict_deps = false;  // a dangling ctrl dep is an error, not a warning
  // Decode binary ETs with protobuf's parser instead of the hand-written
  // decoder (slower; the tests compare the two).
  bool protobuf_decoder = false;
};

// Storage, per node (the rest is shared):
//  - a shape index (2 B while a rank has fewer than 2^16 shapes, else 4 B): kind, flags, collective, communicator, sizes, peers,
//    durations and the name's stem live in a table of distinct shapes, so the
//    2,000 sends of a ring share one entry;
//  - the first child (CSR; 2 B while the rank has fewer than 2^16 edges, else
//    4 B; children_ holds 4 B per edge);
//  - the parent count (2 B; larger counts in a side table);
//  - comm_tag (2 B while every tag is below 2^16, else 4 B; only once some
//    node has a nonzero tag; tags outside 0..2^32-2 in a side table);
//  - the name's numeric suffix (2 B while below 2^16, else 4 B; only once
//    some name has one): "send17" is stem "send" and 17, so numbered names
//    cost no string per node; while every node's suffix is its comm_tag
//    (round k's "send.k" has tag k) the suffix is not stored at all;
//  - the id (8 B; only when ids are not ascending and consecutive).
class RankGraph {
  struct Pending;
  struct Shape {
    NodeKind kind = NodeKind::kInvalid;
    static constexpr std::uint8_t kCpuOp = 1, kDuration = 2, kRoofline = 4, kCommSize = 8;
    std::uint8_t flags = 0;  // kCpuOp | kDuration | kRoofline | kCommSize
    CollectiveType coll = CollectiveType::kAllReduce;
    std::int32_t comm_src = -1;
    std::int32_t comm_dst = -1;
    std::uint32_t group = 0;
    std::uint32_t stem = 0;  // index into stem_end_
    std::uint32_t kernel = 0;  // 1 + index into kernels_ (0: no kernel attributes); fills padding
    std::uint64_t duration_micros = 0;
    std::int64_t num_ops = 0;
    std::uint64_t tensor_size = 0;
    std::uint64_t comm_size = 0;
    bool operator==(const Shape&) const = default;
  };

 public:
  // What building a graph needs only while it builds: the file's bytes, the
  // ids and dependency lists, lookup tables, linking's temporaries. A loading
  // thread keeps one across the graphs it builds, so these are allocated a few
  // times instead of once per graph and leave no freed holes between the
  // graphs' columns (holes that stay resident: docs/benchmarks.md, "Decoding
  // ETs"). A graph of over a million nodes still frees them as it goes.
  class Scratch {
   public:
    Scratch();
    ~Scratch();
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;

   private:
    friend class RankGraph;
    std::unique_ptr<Pending> pending_;
    FileBuffer file_;
  };

  // Throws InputError (naming file, rank, node id) for duplicate ids, a data
  // dep on an absent node, bad attributes; IncompleteError for a cycle.
  RankGraph(const EtTrace& trace, int rank, const GraphOptions& options);
  // From nodes handed over one at a time, in order (a generator streaming its
  // trace: transformer_graph.h): `produce` calls its argument once per node,
  // and a node need only live during that call. Converting each node while it
  // is still in cache is what makes this cheaper than building the trace
  // first. `path` names the trace in messages; the same checks as above.
  using NodeSink = std::function<void(const et::Node&)>;
  RankGraph(int rank, std::string path, const GraphOptions& options,
            const std::function<void(const NodeSink&)>& produce);
  // Streams the file: binary ETs through the fast decoder (read_et_wire_nodes)
  // unless options.protobuf_decoder; no decoded trace is kept in memory.
  RankGraph(const std::string& path, int rank, const GraphOptions& options, Scratch* scratch = nullptr);
  // The same from a trace's bytes already read (`path` names it in messages);
  // the fast decoder only (std::logic_error with options.protobuf_decoder).
  RankGraph(std::string_view bytes, const std::string& path, int rank, const GraphOptions& options,
            Scratch* scratch = nullptr);
  // `same`'s graph as rank `rank`'s, read from `path`: for a trace whose bytes
  // are those `same` was decoded from (a graph is a function of the bytes and
  // the options; the rank and path only name it in messages), so decoding
  // runs once and the two share one copy of the nodes and edges
  // (workload/loader/workload_loader.h).
  RankGraph(const RankGraph& same, int rank, std::string path);
  // Scratch keeps a file's bytes for the next file up to this size.
  static constexpr std::size_t kKeptFileBytes = std::size_t{64} << 20;

  int rank() const { return rank_; }
  const std::string& path() const { return path_; }
  std::size_t size() const { return body_->shape_of_.size(); }
  // Inlined so that callers reading one field do not pay for the others.
  [[gnu::always_inline]] TaskNode node(std::uint32_t index) const {
    const Body& b = *body_;
    const Shape& s = b.shapes_[b.shape_of_[index]];
    TaskNode t;
    t.id = id(index);
    t.kind = s.kind;
    t.is_cpu_op = s.flags & Shape::kCpuOp;
    t.has_duration = s.flags & Shape::kDuration;
    t.has_roofline = s.flags & Shape::kRoofline;
    t.has_comm_size = s.flags & Shape::kCommSize;
    t.coll = s.coll;
    t.duration_micros = s.duration_micros;
    t.num_ops = s.num_ops;
    t.tensor_size = s.tensor_size;
    t.comm_size = s.comm_size;
    t.comm_src = s.comm_src;
    t.comm_dst = s.comm_dst;
    t.comm_tag = tag(index);
    t.group = s.group;
    t.kernel = s.kernel;
    t.first_child = b.child_begin_[index];
    t.num_children = b.child_begin_[index + 1] - b.child_begin_[index];
    t.num_parents = num_parents(index);
    return t;
  }
  std::uint64_t id(std::uint32_t index) const {
    const Body& b = *body_;
    return b.ids_.empty() ? b.first_id_ + index : b.ids_[index];
  }
  NodeKind kind(std::uint32_t index) const { return shape(index).kind; }
  // Single fields of node(index), for hot paths that need only these.
  bool is_cpu_op(std::uint32_t index) const { return shape(index).flags & Shape::kCpuOp; }
  std::uint64_t comm_size(std::uint32_t index) const { return shape(index).comm_size; }
  std::int32_t comm_src(std::uint32_t index) const { return shape(index).comm_src; }
  std::int32_t comm_dst(std::uint32_t index) const { return shape(index).comm_dst; }
  std::int64_t comm_tag(std::uint32_t index) const { return tag(index); }
  std::string name(std::uint32_t index) const;
  std::span<const std::uint32_t> children(std::uint32_t index) const {
    const Body& b = *body_;
    return {b.children_.data() + b.child_begin_[index], b.child_begin_[index + 1] - b.child_begin_[index]};
  }
  std::uint32_t num_parents(std::uint32_t index) const {
    const std::uint16_t v = body_->parents_[index];
    return v != 0xffffu ? v : big_parents(index);
  }
  // Node indices without parents, in ascending node id.
  std::vector<std::uint32_t> roots() const;
  // Index of a node id, or -1.
  std::int64_t index_of(std::uint64_t id) const;
  // Communicators COMM_COLL nodes name (pg_name, involved_dim); entry 0 is
  // "neither given" (all ranks).
  const std::vector<CommunicatorSpec>& communicators() const { return body_->communicators_; }
  // The kernel shape (workload/kernel_shape.h) of TaskNode::kernel, or
  // nullptr for 0; distinct shapes are kept once per graph.
  const KernelShape* kernel_shape(std::uint32_t kernel) const { return kernel ? &body_->kernels_[kernel - 1] : nullptr; }
  std::size_t kernel_shape_count() const { return body_->kernels_.size(); }
  // METADATA nodes with a nonempty inputs.values, in file order.
  const std::vector<MetadataText>& metadata_texts() const { return body_->metadata_texts_; }
  // Ctrl deps that pointed at absent nodes and were ignored.
  std::size_t dangling_ctrl_deps() const { return body_->dangling_ctrl_deps_; }
  // Ctrl deps of a node on itself, ignored.
  std::size_t self_ctrl_deps() const { return body_->self_ctrl_deps_; }
  // Bytes held by the graph (its vectors' capacities and tables), counting a
  // body shared with other ranks in full.
  std::size_t memory_bytes() const;
  // The address of the nodes and edges: the same for two ranks whose graphs
  // share them (identical traces, workload/loader/workload_loader.h), else distinct.
  const void* storage() const { return body_.get(); }

 private:
  struct Body;
  // Building: a new body_, filled through the Body& these pass along.
  Body& start();
  void decode(std::string_view bytes, const GraphOptions& options, Scratch& scratch);
  void add(Body& b, const WireNode& node, const GraphOptions& options, Pending& pending);
  void link(Body& b, const GraphOptions& options, Pending& pending);
  void index_ids(Body& b, std::vector<std::uint64_t>& ids);
  void add_name_number(Body& b, std::uint32_t index, std::int64_t num, std::int64_t tag);
  void check_acyclic() const;
  const Shape& shape(std::uint32_t index) const { return body_->shapes_[body_->shape_of_[index]]; }
  std::int64_t tag(std::uint32_t index) const {
    const Body& b = *body_;
    if (b.tags_.empty()) return 0;
    const std::uint32_t v = b.tags_[index];
    return v != 0xffffffffu ? v : big_tag(index);
  }
  [[gnu::pure]] std::uint32_t big_parents(std::uint32_t index) const;
  [[gnu::pure]] std::int64_t big_tag(std::uint32_t index) const;

  // The graph proper: everything decoded from the trace's bytes, a function of
  // those bytes and the options alone. Immutable once built, so the ranks whose
  // traces are byte for byte the same share one (load_rank_graphs); what a run
  // changes per rank (ready counts, cursors) lives in the run
  // (system/runner/simulation_run.h), never here.
  struct Body {
    std::vector<Shape> shapes_;
    NarrowColumn shape_of_;                   // per node (2 B while there are under 2^16 shapes)
    NarrowColumn child_begin_;                // per node + 1: children_[child_begin_[i] .. child_begin_[i + 1]) (2 B while a rank has < 2^16 edges)
    std::vector<std::uint32_t> children_;
    std::vector<std::uint16_t> parents_;      // per node; 0xffff: see parents_big_
    std::vector<std::pair<std::uint32_t, std::uint32_t>> parents_big_;  // (index, count), by index
    NarrowColumn tags_;                       // per node (2 B while tags < 2^16), or empty (all 0); 0xffffffff: see tags_big_
    std::vector<std::pair<std::uint32_t, std::int64_t>> tags_big_;      // (index, tag), by index
    NarrowColumn name_num_;                   // per node (2 B while < 2^16), or empty (none): numeric suffix + 1, 0 = none
    bool names_follow_tags_ = true;           // so far every name's suffix is its node's tag: name_num_ not kept
    std::string stems_;                       // distinct name stems, back to back
    std::vector<std::uint32_t> stem_end_;
    std::vector<std::uint64_t> ids_;          // per node, or empty when ids are first_id_, first_id_ + 1, ...
    std::uint64_t first_id_ = 0;
    // Sorted (id, index) pairs; left empty when the file lists ids in ascending
    // order (the usual case), where ids_ itself is sorted.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> by_id_;
    std::vector<CommunicatorSpec> communicators_;
    std::vector<KernelShape> kernels_;
    std::vector<MetadataText> metadata_texts_;
    std::size_t dangling_ctrl_deps_ = 0;
    std::size_t self_ctrl_deps_ = 0;
  };

  int rank_;          // names the graph in messages
  std::string path_;  // likewise
  std::shared_ptr<const Body> body_;
};

}  // namespace sim
