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

class Router;  // routing rule of one topology form (dimension-order, shortest path, ...)

class Topology {
 public:
  Topology(std::string description, std::uint32_t npu_count, std::uint32_t switch_count,
           std::vector<Link> links, std::vector<std::uint32_t> dims, std::unique_ptr<Router> router);
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

  // Appends to `out` the links from NPU `src` to NPU `dst`, in order.
  // Nothing is appended when src == dst. Deterministic.
  void route(NodeId src, NodeId dst, std::vector<LinkId>& out) const;

 private:
  std::string description_;
  std::uint32_t npu_count_;
  std::uint32_t switch_count_;
  std::vector<Link> links_;
  std::vector<std::uint32_t> dims_;
  std::unique_ptr<Router> router_;
};

// Reads a topology YAML file. Throws InputError naming the file and key.
Topology load_topology(const std::string& path);
// Same from text; `source` names it in error messages.
Topology parse_topology(const std::string& yaml_text, const std::string& source);

}  // namespace sim
