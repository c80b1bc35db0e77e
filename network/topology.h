// A network topology: NPUs, switches and directed links, plus its routing rule.
//
// Every YAML form (ASTRA-sim dimension stack, named shape, explicit graph)
// becomes this one graph, so every backend works on every form. Node ids
// 0..npu_count()-1 are NPUs; switches follow.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/time.h"

namespace sim {

using NodeId = std::uint32_t;
using LinkId = std::uint32_t;

struct Link {
  NodeId from;
  NodeId to;
  BytesPerSecond bandwidth;
  Time latency;
};

// Most links a generated topology (dimension stack, fat tree) may have:
// 2^24 links are 400 MB of link table before any run state, and a stack of
// sizes that reaches it is likelier a typo (or a fuzzer) than a design.
inline constexpr std::uint64_t kMaxLinks = 1ULL << 24;
// Throws InputError "<source>: topology too large (N links, limit 2^24)"
// when `links` (counted in 64 bits or more by the caller) passes kMaxLinks.
void check_link_count(const std::string& source, std::uint64_t links);

// How one logical dimension joins the NPUs that differ only in its coordinate.
// kOther: not a dimension-stack block (a fat tree's levels, an explicit graph).
enum class DimensionKind { kRing, kLine, kFullyConnected, kSwitch, kOther };
const char* dimension_kind_name(DimensionKind kind);  // "Ring", "Line", ...

// One logical dimension of a topology. bandwidth and latency are its links'
// (0 when the dimension has no one value, e.g. an explicit graph).
struct TopologyDimension {
  DimensionKind kind = DimensionKind::kOther;
  std::uint32_t size = 1;
  BytesPerSecond bandwidth = 0;
  Time latency = 0;
  bool in_network_reduction = false;  // its switches reduce and multicast (docs/network.md)
};

class Router;  // routing rule of one topology form (dimension-order, shortest path, ...)

class Topology {
 public:
  Topology(std::string description, std::uint32_t npu_count, std::uint32_t switch_count,
           std::vector<Link> links, std::vector<std::uint32_t> dims, std::unique_ptr<Router> router);
  // The same with a full description of each dimension (dims() = their sizes).
  Topology(std::string description, std::uint32_t npu_count, std::uint32_t switch_count,
           std::vector<Link> links, std::vector<TopologyDimension> dimensions, std::unique_ptr<Router> router);
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  ~Topology();

  // Human summary, e.g. "Torus 4x4x4 (64 NPUs, 384 links)".
  const std::string& description() const { return description_; }
  std::uint32_t npu_count() const { return npu_count_; }
  std::uint32_t switch_count() const { return switch_count_; }
  std::uint32_t node_count() const { return npu_count_ + switch_count_; }
  const std::vector<Link>& links() const { return links_; }
  // Logical dimension sizes, fastest-varying first (product = npu_count).
  // A flat or explicit topology has one dimension.
  const std::vector<std::uint32_t>& dims() const { return dims_; }
  // The same dimensions with their kind, bandwidth and latency: a dimension
  // stack's blocks (ASTRA-sim form, named shapes); a fat tree's levels
  // (position under the leaf: kSwitch; leaf, pod: kOther); an explicit graph
  // is one kOther dimension of all NPUs. NPU id = mixed-radix address over
  // these sizes, dimension 0 fastest.
  const std::vector<TopologyDimension>& dimensions() const { return dimensions_; }

  // Appends to `out` the links from NPU `src` to NPU `dst`, in order.
  // Nothing is appended when src == dst. Deterministic.
  void route(NodeId src, NodeId dst, std::vector<LinkId>& out) const;
  // Equal-cost multi-path (network/router.h; FatTree only, one path elsewhere):
  // whether any pair has several paths, how many src -> dst has, path k of
  // them, and the one queue pair `qp` hashes onto with seed `seed`. NPUs are
  // the caller's to check; route(src, dst) is route_path(src, dst, ecmp_path(src, dst, 0, 0)).
  bool multipath() const;
  std::uint64_t path_count(NodeId src, NodeId dst) const;
  void route_path(NodeId src, NodeId dst, std::uint64_t k, std::vector<LinkId>& out) const;
  std::uint64_t ecmp_path(NodeId src, NodeId dst, std::uint64_t qp, std::uint64_t seed) const;

  // Whether `node` is a switch that reduces and multicasts (a YAML
  // `in_network_reduction: true`): NVSwitch generation 3, InfiniBand SHARP.
  bool reduces(NodeId node) const {
    return node >= npu_count_ && node - npu_count_ < reducing_.size() && reducing_[node - npu_count_];
  }
  bool any_reduces() const { return reducing_count_ > 0; }
  // For the form readers: marks switch `node` as reducing.
  void mark_reducing(NodeId node);

 private:
  std::string description_;
  std::uint32_t npu_count_;
  std::uint32_t switch_count_;
  std::vector<Link> links_;
  std::vector<std::uint32_t> dims_;
  std::vector<TopologyDimension> dimensions_;
  std::unique_ptr<Router> router_;
  std::vector<bool> reducing_;  // per switch (node - npu_count); empty: none
  std::uint32_t reducing_count_ = 0;
};

// Reads a topology YAML file. Throws InputError naming the file and key.
Topology load_topology(const std::string& path);
// Same from text; `source` names it in error messages.
Topology parse_topology(const std::string& yaml_text, const std::string& source);

}  // namespace sim
