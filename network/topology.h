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

// What a node is in the machine (docs/network.md, "Hosts and roles"): a GPU
// (every NPU), a NIC it reaches the network through, a switch inside a host
// (NVSwitch, PCIe switch) or one of the fabric's (leaf, spine, core; plain
// "switch" where a topology does not say).
enum class NodeRole : std::uint8_t { kGpu, kNic, kNvSwitch, kPcieSwitch, kLeaf, kSpine, kCore, kSwitch };
const char* node_role_name(NodeRole role);  // "gpu", "nic", "nvswitch", "pcie-switch", "leaf", ...
// The role written `name` in a YAML file; false when there is none.
bool node_role_from_name(const std::string& name, NodeRole& role);
// The fabric's levels in order (leaf 1, spine 2, core 3, switch 4); 0 for the
// roles that sit in a host.
int fabric_level(NodeRole role);
// host() of a node outside every host (the fabric's switches).
inline constexpr std::uint32_t kNoHost = 0xffffffffU;

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
  // Inside a host (the NPUs that differ only in the dimensions inside one are
  // one machine), and what its switches are (kSwitch kind only).
  bool in_host = false;
  NodeRole role = NodeRole::kSwitch;
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
  // them, and the one queue pair `qp` of communicator `communicator` hashes
  // onto with seed `seed`. NPUs are the caller's to check; route(src, dst) is
  // route_path(src, dst, ecmp_path(src, dst, 0, 0)).
  bool multipath() const;
  std::uint64_t path_count(NodeId src, NodeId dst) const;
  void route_path(NodeId src, NodeId dst, std::uint64_t k, std::vector<LinkId>& out) const;
  std::uint64_t ecmp_path(NodeId src, NodeId dst, std::uint64_t qp, std::uint64_t seed,
                          std::uint32_t communicator = 0) const;

  // Whether `node` is a switch that reduces and multicasts (a YAML
  // `in_network_reduction: true`): NVSwitch generation 3, InfiniBand SHARP.
  bool reduces(NodeId node) const {
    return node >= npu_count_ && node - npu_count_ < reducing_.size() && reducing_[node - npu_count_];
  }
  bool any_reduces() const { return reducing_count_ > 0; }
  // For the form readers: marks switch `node` as reducing.
  void mark_reducing(NodeId node);

  // Hosts and roles. Unless a file says otherwise (`roles:` of a dimension
  // stack, `hosts:` and `roles:` of an explicit graph), dimension 0 is the
  // host: NPU n sits in host n / dims()[0], and every switch is a "switch".
  // A switch or NIC inside a host (nvswitch, pcie-switch, nic) belongs to the
  // host of the NPUs that link to it.
  NodeRole role(NodeId node) const {
    return node < npu_count_ ? NodeRole::kGpu : roles_.empty() ? NodeRole::kSwitch : roles_[node - npu_count_];
  }
  // The host (machine) NPU `npu` sits in, 0..host_count()-1.
  std::uint32_t host(NodeId npu) const { return hosts_.empty() ? npu / host_size_ : hosts_[npu]; }
  std::uint32_t host_count() const { return host_count_; }
  // Where NPU `npu` sits among its host's NPUs (0..), in id order: the rail
  // of a rail-optimised fabric.
  std::uint32_t host_slot(NodeId npu) const { return slots_.empty() ? npu % host_size_ : slots_[npu]; }
  // Whether the topology's file declared its hosts or roles.
  bool hardware_declared() const { return hardware_declared_; }
  // For the form readers: the switches' roles (switch_count() of them; empty:
  // every one a "switch") and the hosts, either as a size (NPU n in host
  // n / host_size; it must divide npu_count()) or per NPU (`npu_hosts`, each
  // in 0..H-1 with every host holding an NPU; host_size is then ignored).
  // Throws std::invalid_argument when they do not fit; readers check first.
  void set_hardware(std::vector<NodeRole> switch_roles, std::uint32_t host_size, std::vector<std::uint32_t> npu_hosts,
                    bool declared);

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
  std::vector<NodeRole> roles_;       // per switch; empty: every switch kSwitch
  std::uint32_t host_size_ = 1;        // NPUs per host when hosts_ is empty
  std::vector<std::uint32_t> hosts_;  // per NPU; empty: npu / host_size_
  std::vector<std::uint32_t> slots_;  // per NPU; empty: npu % host_size_
  std::uint32_t host_count_ = 1;
  bool hardware_declared_ = false;
  void default_hosts();  // dimension 0 is the host
};

// Reads a topology YAML file. Throws InputError naming the file and key.
Topology load_topology(const std::string& path);
// Same from text; `source` names it in error messages.
Topology parse_topology(const std::string& yaml_text, const std::string& source);

}  // namespace sim
