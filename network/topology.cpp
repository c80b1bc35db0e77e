#include "network/topology.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/input_file.h"
#include "core/units.h"
#include "network/router.h"
#include "network/topology_forms.h"

namespace sim {

Topology::Topology(std::string description, std::uint32_t npu_count, std::uint32_t switch_count,
                   std::vector<Link> links, std::vector<std::uint32_t> dims, std::unique_ptr<Router> router)
    : description_(std::move(description)),
      npu_count_(npu_count),
      switch_count_(switch_count),
      links_(std::move(links)),
      dims_(std::move(dims)),
      router_(std::move(router)) {
  for (std::uint32_t d : dims_) dimensions_.push_back(TopologyDimension{DimensionKind::kOther, d, 0, 0});
  default_hosts();
}

Topology::Topology(std::string description, std::uint32_t npu_count, std::uint32_t switch_count,
                   std::vector<Link> links, std::vector<TopologyDimension> dimensions, std::unique_ptr<Router> router)
    : description_(std::move(description)),
      npu_count_(npu_count),
      switch_count_(switch_count),
      links_(std::move(links)),
      dimensions_(std::move(dimensions)),
      router_(std::move(router)) {
  for (const TopologyDimension& d : dimensions_) dims_.push_back(d.size);
  default_hosts();
}

const char* dimension_kind_name(DimensionKind kind) {
  switch (kind) {
    case DimensionKind::kRing: return "Ring";
    case DimensionKind::kLine: return "Line";
    case DimensionKind::kFullyConnected: return "FullyConnected";
    case DimensionKind::kSwitch: return "Switch";
    case DimensionKind::kOther: break;
  }
  return "other";
}

const char* node_role_name(NodeRole role) {
  switch (role) {
    case NodeRole::kGpu: return "gpu";
    case NodeRole::kNic: return "nic";
    case NodeRole::kNvSwitch: return "nvswitch";
    case NodeRole::kPcieSwitch: return "pcie-switch";
    case NodeRole::kLeaf: return "leaf";
    case NodeRole::kSpine: return "spine";
    case NodeRole::kCore: return "core";
    case NodeRole::kSwitch: break;
  }
  return "switch";
}

bool node_role_from_name(const std::string& name, NodeRole& role) {
  for (const NodeRole r : {NodeRole::kGpu, NodeRole::kNic, NodeRole::kNvSwitch, NodeRole::kPcieSwitch, NodeRole::kLeaf,
                           NodeRole::kSpine, NodeRole::kCore, NodeRole::kSwitch}) {
    if (name == node_role_name(r)) {
      role = r;
      return true;
    }
  }
  return false;
}

int fabric_level(NodeRole role) {
  switch (role) {
    case NodeRole::kLeaf: return 1;
    case NodeRole::kSpine: return 2;
    case NodeRole::kCore: return 3;
    case NodeRole::kSwitch: return 4;
    default: return 0;
  }
}

void Topology::default_hosts() {
  host_size_ = dims_.empty() || dims_[0] == 0 || npu_count_ % dims_[0] != 0 ? 1 : dims_[0];
  host_count_ = npu_count_ / host_size_;
}

void Topology::set_hardware(std::vector<NodeRole> switch_roles, std::uint32_t host_size,
                            std::vector<std::uint32_t> npu_hosts, bool declared) {
  if (!switch_roles.empty() && switch_roles.size() != switch_count_) {
    throw std::invalid_argument("set_hardware: " + std::to_string(switch_roles.size()) + " roles for " +
                                std::to_string(switch_count_) + " switches");
  }
  for (const NodeRole r : switch_roles) {
    if (r == NodeRole::kGpu) throw std::invalid_argument("set_hardware: a switch cannot be a gpu");
  }
  std::uint32_t count = 0;
  std::vector<std::uint32_t> slots;
  if (npu_hosts.empty()) {
    if (host_size == 0 || npu_count_ % host_size != 0) {
      throw std::invalid_argument("set_hardware: hosts of " + std::to_string(host_size) + " NPUs do not divide " +
                                  std::to_string(npu_count_));
    }
    count = npu_count_ / host_size;
  } else {
    if (npu_hosts.size() != npu_count_) {
      throw std::invalid_argument("set_hardware: " + std::to_string(npu_hosts.size()) + " hosts for " +
                                  std::to_string(npu_count_) + " NPUs");
    }
    for (const std::uint32_t h : npu_hosts) count = std::max(count, h + 1);
    std::vector<std::uint32_t> filled(count, 0);
    slots.resize(npu_count_);
    for (NodeId n = 0; n < npu_count_; ++n) slots[n] = filled[npu_hosts[n]]++;
    for (std::uint32_t h = 0; h < count; ++h) {
      if (filled[h] == 0) throw std::invalid_argument("set_hardware: host " + std::to_string(h) + " has no NPU");
    }
  }
  roles_ = std::move(switch_roles);
  host_size_ = npu_hosts.empty() ? host_size : 1;
  hosts_ = std::move(npu_hosts);
  slots_ = std::move(slots);
  host_count_ = count;
  hardware_declared_ = declared;
}

Topology::Topology(Topology&&) noexcept = default;

void Topology::mark_reducing(NodeId node) {
  if (node < npu_count_ || node >= node_count()) return;
  if (reducing_.empty()) reducing_.assign(switch_count_, false);
  if (!reducing_[node - npu_count_]) ++reducing_count_;
  reducing_[node - npu_count_] = true;
}
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::~Topology() = default;

void Topology::route(NodeId src, NodeId dst, std::vector<LinkId>& out) const {
  if (src >= npu_count_ || dst >= npu_count_) {
    throw std::out_of_range("route " + std::to_string(src) + " -> " + std::to_string(dst) + ": topology has " +
                            std::to_string(npu_count_) + " NPUs");
  }
  if (src != dst) router_->route(src, dst, out);
}

bool Topology::multipath() const { return router_->multipath(); }

std::uint64_t Topology::path_count(NodeId src, NodeId dst) const {
  return src == dst ? 1 : router_->path_count(src, dst);
}

void Topology::route_path(NodeId src, NodeId dst, std::uint64_t k, std::vector<LinkId>& out) const {
  if (src != dst) router_->route_path(src, dst, k, out);
}

std::uint64_t Topology::ecmp_path(NodeId src, NodeId dst, std::uint64_t qp, std::uint64_t seed,
                                  std::uint32_t communicator) const {
  return src == dst ? 0 : router_->ecmp_path(src, dst, qp, seed, communicator);
}

void check_link_count(const std::string& source, std::uint64_t links) {
  if (links > kMaxLinks) {
    throw InputError(source + ": topology too large (" + std::to_string(links) + " links, limit 2^24)");
  }
}

std::string describe_topology(const std::string& label, std::uint32_t npus, std::uint32_t switches,
                              const std::vector<Link>& links) {
  std::string s = label + " (" + std::to_string(npus) + " NPUs, ";
  if (switches > 0) s += std::to_string(switches) + (switches == 1 ? " switch, " : " switches, ");
  s += std::to_string(links.size()) + " links";
  if (!links.empty()) {
    const auto [bw_lo, bw_hi] = std::minmax_element(
        links.begin(), links.end(), [](const Link& a, const Link& b) { return a.bandwidth < b.bandwidth; });
    const auto [lat_lo, lat_hi] = std::minmax_element(
        links.begin(), links.end(), [](const Link& a, const Link& b) { return a.latency < b.latency; });
    s += ", " + format_bandwidth(bw_lo->bandwidth);
    if (bw_hi->bandwidth != bw_lo->bandwidth) s += " to " + format_bandwidth(bw_hi->bandwidth);
    s += ", " + format_ns(lat_lo->latency) + " ns";
    if (lat_hi->latency != lat_lo->latency) s += " to " + format_ns(lat_hi->latency) + " ns";
  }
  return s + ")";
}

Topology parse_topology(const std::string& yaml_text, const std::string& source) {
  const ConfigReader config(source);
  const YAML::Node root = config.load(yaml_text);
  if (!root.IsMap()) {
    config.fail(root, "a topology must be a map with 'topology' (ASTRA-sim form), 'shape' or 'links'");
  }
  // The form is told by its one characteristic key; each form then rejects
  // the keys of the others as unknown.
  if (root["topology"]) return parse_astrasim_form(config, root);
  if (root["shape"]) return parse_shape_form(config, root);
  if (root["links"]) return parse_graph_form(config, root);
  config.fail(root, "cannot tell the topology form: expected key 'topology' (ASTRA-sim form), 'shape' or 'links'");
}

Topology load_topology(const std::string& path) {
  return parse_topology(read_input_file(path, "topology file"), path);
}

}  // namespace sim
