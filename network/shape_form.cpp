// Named shapes: every link has the same bandwidth and latency. FatTree, which
// has its own keys, is read by fat_tree_form.cpp.
#include <string>
#include <vector>
#include <yaml-cpp/yaml.h>

#include "network/dimension_stack.h"
#include "network/topology_forms.h"

namespace sim {

namespace {

constexpr std::uint64_t kMaxSize = 1U << 30;

std::vector<std::uint32_t> read_dims(const ConfigReader& config, const YAML::Node& root) {
  std::vector<std::uint32_t> dims;
  const YAML::Node list = config.require_list(root, "dims");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string key = "dims[" + std::to_string(i) + "]";
    const std::uint64_t n = config.count(list[i], key);
    if (n < 2) config.fail(list[i], "'" + key + "' must be >= 2");
    if (n > kMaxSize) config.fail(list[i], "'" + key + "' is too large");
    dims.push_back(static_cast<std::uint32_t>(n));
  }
  return dims;
}

std::uint32_t read_npus(const ConfigReader& config, const YAML::Node& root) {
  const YAML::Node node = config.require(root, "npus");
  const std::uint64_t n = config.count(node, "npus");
  if (n < 2) config.fail(node, "'npus' must be >= 2");
  if (n > kMaxSize) config.fail(node, "'npus' is too large");
  return static_cast<std::uint32_t>(n);
}

std::string join(const std::vector<std::uint32_t>& dims) {
  std::string s;
  for (std::uint32_t d : dims) s.append(s.empty() ? "" : "x").append(std::to_string(d));
  return s;
}

// Keys only FatTree takes get a message saying so rather than "unknown key".
void reject_fat_tree_keys(const ConfigReader& config, const YAML::Node& root, const std::string& shape) {
  if (const YAML::Node ecmp = root["ecmp"]) {
    config.fail(ecmp, "'ecmp' does not apply to shape " + shape +
                          ": it has a single path per NPU pair, so there is no equal-cost choice to make "
                          "(only FatTree has several)");
  }
  for (const char* key : {"leaves", "npus_per_leaf", "spines", "k", "uplink_bandwidth", "uplink_latency",
                          "oversubscription"}) {
    if (const YAML::Node node = root[key]) {
      config.fail(node, std::string("'") + key + "' applies only to shape FatTree, not " + shape);
    }
  }
}

}  // namespace

Topology parse_shape_form(const ConfigReader& config, const YAML::Node& root) {
  const YAML::Node shape_node = config.require(root, "shape");
  const std::string shape = config.text(shape_node, "shape");
  if (shape == "FatTree") return parse_fat_tree_shape(config, root);
  if (shape != "Ring" && shape != "FullyConnected" && shape != "Switch" && shape != "Mesh" && shape != "Torus" &&
      shape != "Hypercube") {
    config.fail(shape_node, "unknown shape '" + shape +
                                "' (known: Ring, FullyConnected, Switch, Mesh, Torus, Hypercube, FatTree)");
  }
  reject_fat_tree_keys(config, root, shape);
  config.check_keys(root, "", {"name", "shape", "dims", "npus", "bandwidth", "latency", "in_network_reduction"});
  bool reduces = false;
  if (const YAML::Node r = root["in_network_reduction"]) {
    reduces = config.flag(r, "in_network_reduction");
    if (reduces && shape != "Switch") config.fail(r, "'in_network_reduction' applies only to shape Switch, not " + shape);
  }
  const BytesPerSecond bandwidth = config.bandwidth(config.require(root, "bandwidth"), "bandwidth");
  const Time latency = config.latency(config.require(root, "latency"), "latency");
  const bool has_dims = static_cast<bool>(root["dims"]), has_npus = static_cast<bool>(root["npus"]);
  if (has_dims && has_npus) config.fail(root["npus"], "give either 'dims' or 'npus', not both");

  std::vector<std::uint32_t> sizes;
  DimensionKind kind{};
  if (shape == "Ring" || shape == "FullyConnected" || shape == "Switch") {
    // One dimension, written `npus: 8` or `dims: [8]`.
    kind = shape == "Ring" ? DimensionKind::kRing
           : shape == "Switch" ? DimensionKind::kSwitch
                               : DimensionKind::kFullyConnected;
    if (!has_dims && !has_npus) config.fail(root, "missing key 'npus' (or 'dims')");
    sizes = has_npus ? std::vector{read_npus(config, root)} : read_dims(config, root);
    if (sizes.size() != 1) config.fail(root["dims"], shape + " takes one dimension, e.g. dims: [8]");
  } else if (shape == "Mesh" || shape == "Torus") {
    kind = shape == "Mesh" ? DimensionKind::kLine : DimensionKind::kRing;
    if (has_npus) config.fail(root["npus"], shape + " takes 'dims', not 'npus', e.g. dims: [8, 8]");
    sizes = read_dims(config, root);
    if (shape == "Mesh" && sizes.size() != 2 && sizes.size() != 3) {
      config.fail(root["dims"], "Mesh takes 2 or 3 dimensions, e.g. dims: [8, 8]");
    }
  } else if (shape == "Hypercube") {
    // One convention only: the NPU count, a power of two (one dimension per bit).
    kind = DimensionKind::kLine;
    if (has_dims) config.fail(root["dims"], "Hypercube takes 'npus' (a power of two), not 'dims'");
    const std::uint32_t n = read_npus(config, root);
    if ((n & (n - 1)) != 0) config.fail(root["npus"], "Hypercube 'npus' must be a power of two, got " + std::to_string(n));
    for (std::uint32_t m = n; m > 1; m >>= 1) sizes.push_back(2);
  } else {
    config.fail(shape_node, "unknown shape '" + shape + "'");  // checked above
  }

  std::vector<Dimension> dims;
  std::uint64_t npus = 1;
  for (std::uint32_t s : sizes) {
    dims.push_back(Dimension{kind, s, bandwidth, latency, reduces});
    npus *= s;
    if (npus > kMaxSize) config.fail(root, "topology too large (more than 2^30 NPUs)");
  }
  std::string label = shape + " " + (shape == "Hypercube" ? std::to_string(npus) : join(sizes));
  if (const YAML::Node name = root["name"]) label = config.text(name, "name") + ": " + label;
  return build_dimension_stack(config.source(), label, dims);
}

}  // namespace sim
