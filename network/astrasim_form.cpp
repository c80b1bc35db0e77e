// ASTRA-sim's analytical network YAML: one entry per dimension in each list.
#include <string>
#include <vector>
#include <yaml-cpp/yaml.h>

#include "network/dimension_stack.h"
#include "network/topology_forms.h"

namespace sim {

namespace {

DimensionKind building_block(const ConfigReader& config, const YAML::Node& node, const std::string& key) {
  const std::string name = config.text(node, key);
  if (name == "Ring") return DimensionKind::kRing;
  if (name == "FullyConnected") return DimensionKind::kFullyConnected;
  if (name == "Switch") return DimensionKind::kSwitch;
  config.fail(node, "'" + key + "': unknown topology '" + name + "' (known: Ring, FullyConnected, Switch)");
}

// A dimension's `roles` entry: nvswitch or pcie-switch (a Switch inside a
// host), leaf, spine, core or switch (the fabric's); nvlink or network for
// links without switches. Dimensions inside a host come first.
void read_role(const ConfigReader& config, const YAML::Node& node, const std::string& key, Dimension& d,
               bool host_may_continue) {
  const std::string name = config.text(node, key);
  const bool is_switch = d.kind == DimensionKind::kSwitch;
  NodeRole role = NodeRole::kSwitch;
  if (is_switch) {
    if (!node_role_from_name(name, role) || role == NodeRole::kGpu || role == NodeRole::kNic) {
      config.fail(node, "'" + key + "': a Switch dimension's role is nvswitch, pcie-switch (inside a host), leaf, "
                        "spine, core or switch (the fabric), got '" + name + "'");
    }
    d.in_host = role == NodeRole::kNvSwitch || role == NodeRole::kPcieSwitch;
    d.role = role;
  } else {
    if (name != "nvlink" && name != "network") {
      config.fail(node, "'" + key + "': a dimension of links without switches is nvlink (inside a host) or network "
                        "(between hosts), got '" + name + "'");
    }
    d.in_host = name == "nvlink";
  }
  if (d.in_host && !host_may_continue) {
    config.fail(node, "'" + key + "': '" + name + "' is inside a host but a dimension before it is not: the dimensions "
                      "inside a host come first");
  }
  d.declared = true;
}

}  // namespace

Topology parse_astrasim_form(const ConfigReader& config, const YAML::Node& root) {
  config.check_keys(root, "",
                    {"name", "topology", "npus_count", "bandwidth", "latency", "bandwidth_unit", "in_network_reduction",
                     "roles"});

  // ASTRA-sim writes "GB/s" but converts with 2^30; `bandwidth_unit: GiB/s`
  // reproduces its numbers, the default keeps GB/s = 1e9 B/s.
  double bare_unit = 1e9;
  if (const YAML::Node unit = root["bandwidth_unit"]) {
    const std::string u = config.text(unit, "bandwidth_unit");
    if (u == "GiB/s") bare_unit = 1 << 30;
    else if (u != "GB/s") config.fail(unit, "'bandwidth_unit' must be GB/s or GiB/s, got '" + u + "'");
  }

  const YAML::Node kinds = config.require_list(root, "topology");
  const YAML::Node sizes = config.require_list(root, "npus_count");
  const YAML::Node bandwidths = config.require_list(root, "bandwidth");
  const YAML::Node latencies = config.require_list(root, "latency");
  for (const auto& [key, list] : {std::pair{"npus_count", sizes}, std::pair{"bandwidth", bandwidths},
                                  std::pair{"latency", latencies}}) {
    if (list.size() != kinds.size()) {
      config.fail(list, std::string("'").append(key) + "' has " + std::to_string(list.size()) +
                            " entries but 'topology' has " + std::to_string(kinds.size()) +
                            " (one per dimension)");
    }
  }

  // Optional, one flag per dimension: its switches reduce and multicast.
  YAML::Node reduction;
  const bool has_reduction = static_cast<bool>(root["in_network_reduction"]);
  if (has_reduction) {
    reduction = config.require_list(root, "in_network_reduction");
    if (reduction.size() != kinds.size()) {
      config.fail(reduction, "'in_network_reduction' has " + std::to_string(reduction.size()) +
                                 " entries but 'topology' has " + std::to_string(kinds.size()) + " (one per dimension)");
    }
  }

  // Optional, one per dimension: what its switches are (or, for links
  // without switches, whether they join GPUs of one host or of several).
  YAML::Node roles;
  const bool has_roles = static_cast<bool>(root["roles"]);
  if (has_roles) {
    roles = config.require_list(root, "roles");
    if (roles.size() != kinds.size()) {
      config.fail(roles, "'roles' has " + std::to_string(roles.size()) + " entries but 'topology' has " +
                             std::to_string(kinds.size()) + " (one per dimension)");
    }
  }

  std::vector<Dimension> dims;
  std::string label;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const std::string at = std::string("[").append(std::to_string(i)).append("]");  // not "[" + ...: GCC 12 -Wrestrict false positive
    Dimension d{};
    d.kind = building_block(config, kinds[i], "topology" + at);
    const std::uint64_t size = config.count(sizes[i], "npus_count" + at);
    if (size < 2) config.fail(sizes[i], "'npus_count" + at + "' must be >= 2");
    if (size > (1U << 30)) config.fail(sizes[i], "'npus_count" + at + "' is too large");
    d.size = static_cast<std::uint32_t>(size);
    d.bandwidth = config.bandwidth(bandwidths[i], "bandwidth" + at, bare_unit);
    d.latency = config.latency(latencies[i], "latency" + at);
    if (has_reduction) {
      d.in_network_reduction = config.flag(reduction[i], "in_network_reduction" + at);
      if (d.in_network_reduction && d.kind != DimensionKind::kSwitch) {
        config.fail(reduction[i], "'in_network_reduction" + at + "': only a Switch dimension can reduce in the network, "
                                  "not " + kinds[i].Scalar());
      }
    }
    if (has_roles) read_role(config, roles[i], "roles" + at, d, i == 0 || dims.back().in_host);
    dims.push_back(d);
    label.append(i == 0 ? "" : " x ").append(kinds[i].Scalar()).append(" ").append(std::to_string(size));
  }
  if (const YAML::Node name = root["name"]) label = config.text(name, "name") + ": " + label;
  return build_dimension_stack(config.source(), label, dims);
}

}  // namespace sim
