// Explicit graph: NPUs, switches and a list of links, routed by fewest hops.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "network/shortest_path_router.h"
#include "network/topology_forms.h"

namespace sim {

namespace {

// A node written as an id (0..npus+switches-1) or by name: "npu3", "sw1".
NodeId node_ref(const ConfigReader& config, const YAML::Node& node, const std::string& key, std::uint32_t npus,
                std::uint32_t switches) {
  const std::string s = config.text(node, key);
  std::uint64_t id = 0;
  if (s.rfind("npu", 0) == 0 || s.rfind("sw", 0) == 0) {
    const bool is_npu = s[0] == 'n';
    const std::string digits = s.substr(is_npu ? 3 : 2);
    std::uint64_t index = 0;
    bool ok = !digits.empty() && digits.size() < 10;
    for (char c : digits) {
      ok = ok && c >= '0' && c <= '9';
      index = index * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (!ok) config.fail(node, "'" + key + "' must be a node id, npuN or swN, got '" + s + "'");
    if (index >= (is_npu ? npus : switches)) {
      config.fail(node, "'" + key + "': no " + (is_npu ? "NPU " : "switch ") + s + " (" +
                            std::to_string(npus) + " NPUs, " + std::to_string(switches) + " switches)");
    }
    id = is_npu ? index : npus + index;
  } else {
    id = config.count(node, key);
    if (id >= std::uint64_t{npus} + switches) {
      config.fail(node, "'" + key + "': node " + s + " out of range (" + std::to_string(npus) + " NPUs + " +
                            std::to_string(switches) + " switches = nodes 0.." +
                            std::to_string(std::uint64_t{npus} + switches - 1) + ")");
    }
  }
  return static_cast<NodeId>(id);
}

}  // namespace

Topology parse_graph_form(const ConfigReader& config, const YAML::Node& root) {
  config.check_keys(root, "", {"name", "npus", "switches", "bandwidth", "latency", "links"});
  constexpr std::uint64_t kMaxNodes = 1U << 24;
  const std::uint64_t npus = config.count(config.require(root, "npus"), "npus");
  if (npus < 2) config.fail(root["npus"], "'npus' must be >= 2");
  if (npus > kMaxNodes) config.fail(root["npus"], "'npus' is too large");
  std::uint64_t switches = 0;
  if (const YAML::Node s = root["switches"]) switches = config.count(s, "switches");
  if (switches > kMaxNodes) config.fail(root["switches"], "'switches' is too large");

  // Top-level bandwidth/latency are defaults for links that omit them.
  std::optional<BytesPerSecond> default_bandwidth;
  std::optional<Time> default_latency;
  if (const YAML::Node b = root["bandwidth"]) default_bandwidth = config.bandwidth(b, "bandwidth");
  if (const YAML::Node l = root["latency"]) default_latency = config.latency(l, "latency");

  const auto n = static_cast<std::uint32_t>(npus), sw = static_cast<std::uint32_t>(switches);
  const YAML::Node list = config.require_list(root, "links");
  std::vector<Link> links;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node entry = list[i];
    const std::string at = "links[" + std::to_string(i) + "]";
    config.require_map(entry, at);
    config.check_keys(entry, at + ".", {"src", "dst", "bandwidth", "latency", "bidirectional"});
    const NodeId src = node_ref(config, config.require(entry, "src"), at + ".src", n, sw);
    const NodeId dst = node_ref(config, config.require(entry, "dst"), at + ".dst", n, sw);
    if (src == dst) config.fail(entry, "'" + at + "' links node " + std::to_string(src) + " to itself");

    Link link{src, dst, 0, 0};
    if (const YAML::Node b = entry["bandwidth"]) link.bandwidth = config.bandwidth(b, at + ".bandwidth");
    else if (default_bandwidth) link.bandwidth = *default_bandwidth;
    else config.fail(entry, "'" + at + "' has no 'bandwidth' and there is no top-level default");
    if (const YAML::Node l = entry["latency"]) link.latency = config.latency(l, at + ".latency");
    else if (default_latency) link.latency = *default_latency;
    else config.fail(entry, "'" + at + "' has no 'latency' and there is no top-level default");

    bool bidirectional = true;
    if (const YAML::Node b = entry["bidirectional"]) bidirectional = config.flag(b, at + ".bidirectional");
    links.push_back(link);
    if (bidirectional) links.push_back(Link{dst, src, link.bandwidth, link.latency});
  }

  auto router = std::make_unique<ShortestPathRouter>(n + sw, n, links);
  if (const auto pair = router->unreachable_pair()) {
    config.fail(list, "npu " + std::to_string(pair->first) + " cannot reach npu " + std::to_string(pair->second));
  }
  std::string label = "Graph";
  if (const YAML::Node name = root["name"]) label = config.text(name, "name");
  std::string description = describe_topology(label, n, sw, links);
  return Topology(std::move(description), n, sw, std::move(links), std::vector<std::uint32_t>{n}, std::move(router));
}

}  // namespace sim
