// Explicit graph: NPUs, switches and a list of links, routed by fewest hops, or, on a graph
// that names its hosts and roles, out of a host by the destination's rail (pxn).
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>
#include <yaml-cpp/yaml.h>

#include "network/pxn_router.h"
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
    // One spelling per node: "npu01" would read as npu1, a likely typo.
    bool ok = !digits.empty() && digits.size() < 10 && (digits.size() == 1 || digits[0] != '0');
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

// `roles: {nvswitch: [sw0, sw1], nic: [sw2, ...], leaf: [...]}`: what each
// switch is; a switch not named is a "switch". NPUs are GPUs.
std::vector<NodeRole> read_roles(const ConfigReader& config, const YAML::Node& root, std::uint32_t npus,
                                 std::uint32_t switches) {
  const YAML::Node map = root["roles"];
  if (!map) return {};
  config.require_map(map, "roles");
  std::vector<NodeRole> roles(switches, NodeRole::kSwitch);
  std::vector<bool> named(switches, false);
  std::set<std::string> seen;
  for (const auto& entry : map) {
    if (!entry.first.IsScalar()) config.fail(entry.first, "'roles': a key must be a role name, e.g. nic");
    const std::string name = entry.first.Scalar();
    if (!seen.insert(name).second) config.fail(entry.first, "duplicate key 'roles." + name + "'");
    NodeRole role = NodeRole::kSwitch;
    if (!node_role_from_name(name, role) || role == NodeRole::kGpu) {
      config.fail(entry.first, "'roles': unknown switch role '" + name +
                                   "' (known: nic, nvswitch, pcie-switch, leaf, spine, core, switch; NPUs are GPUs)");
    }
    const std::string key = "roles." + name;
    if (!entry.second.IsSequence()) config.fail(entry.second, "'" + key + "' must be a list of switches");
    for (std::size_t i = 0; i < entry.second.size(); ++i) {
      const std::string at = key + "[" + std::to_string(i) + "]";
      const NodeId node = node_ref(config, entry.second[i], at, npus, switches);
      if (node < npus) config.fail(entry.second[i], "'" + at + "': NPU " + std::to_string(node) + " is a GPU, not a " + name);
      if (named[node - npus]) {
        config.fail(entry.second[i], "'" + at + "': switch " + std::to_string(node - npus) + " is given a role twice");
      }
      named[node - npus] = true;
      roles[node - npus] = role;
    }
  }
  return roles;
}

// `hosts: [[npu0, npu1], [npu2, npu3]]`: the NPUs of each host, every NPU in one.
std::vector<std::uint32_t> read_hosts(const ConfigReader& config, const YAML::Node& root, std::uint32_t npus,
                                      std::uint32_t switches) {
  const YAML::Node list = root["hosts"];
  if (!list) return {};
  if (!list.IsSequence() || list.size() == 0) config.fail(list, "'hosts' must be a list of hosts, each a list of NPUs");
  std::vector<std::uint32_t> hosts(npus, kNoHost);
  for (std::size_t h = 0; h < list.size(); ++h) {
    const std::string key = "hosts[" + std::to_string(h) + "]";
    if (!list[h].IsSequence() || list[h].size() == 0) config.fail(list[h], "'" + key + "' must be a list of NPUs");
    for (std::size_t i = 0; i < list[h].size(); ++i) {
      const std::string at = key + "[" + std::to_string(i) + "]";
      const NodeId node = node_ref(config, list[h][i], at, npus, switches);
      if (node >= npus) {
        config.fail(list[h][i], "'" + at + "': switch " + std::to_string(node - npus) +
                                    " is not an NPU (a host lists its NPUs; its switches and NICs follow from 'roles')");
      }
      if (hosts[node] != kNoHost) {
        config.fail(list[h][i], "'" + at + "': NPU " + std::to_string(node) + " is already in host " +
                                    std::to_string(hosts[node]));
      }
      hosts[node] = static_cast<std::uint32_t>(h);
    }
  }
  for (std::uint32_t n = 0; n < npus; ++n) {
    if (hosts[n] == kNoHost) config.fail(list, "'hosts': NPU " + std::to_string(n) + " is in no host");
  }
  return hosts;
}

// "npu3" or "sw1", as a file writes them.
std::string node_name(NodeId node, std::uint32_t npus) {
  return node < npus ? "npu" + std::to_string(node) : "sw" + std::to_string(node - npus);
}

// A NIC is a host's port to the network: NCCL's model finds it through the
// links of the host's GPUs, directly or under a PCIe switch they link to. A
// `nic` no GPU reaches that way would be read as something it is not.
void check_nics(const ConfigReader& config, const YAML::Node& root, std::uint32_t npus,
                const std::vector<NodeRole>& roles, const std::vector<Link>& links) {
  if (roles.empty()) return;
  const auto role = [&](NodeId node) { return node < npus ? NodeRole::kGpu : roles[node - npus]; };
  std::vector<bool> under_gpu(roles.size(), false);  // a pcie-switch a GPU links to
  for (const Link& l : links) {
    if (l.from < npus && role(l.to) == NodeRole::kPcieSwitch) under_gpu[l.to - npus] = true;
  }
  std::vector<bool> reached(roles.size(), false);
  for (const Link& l : links) {
    if (role(l.to) != NodeRole::kNic) continue;
    const bool from_gpu = l.from < npus || (role(l.from) == NodeRole::kPcieSwitch && under_gpu[l.from - npus]);
    if (from_gpu) reached[l.to - npus] = true;
  }
  const YAML::Node list = root["roles"]["nic"];
  if (!list) return;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const NodeId nic = node_ref(config, list[i], "roles.nic", npus, static_cast<std::uint32_t>(roles.size()));
    if (!reached[nic - npus]) {
      config.fail(list[i], "'roles.nic[" + std::to_string(i) + "]': switch " + std::to_string(nic - npus) +
                               " is linked from no GPU (a NIC is a host's port to the network: link it from the GPUs "
                               "that use it, directly or under a pcie-switch they link to)");
    }
  }
}

// A NIC is one host's: GPUs of two hosts reaching one NIC (directly or under
// a pcie-switch) would make it either host's port, whichever the model met
// first.
void check_nic_hosts(const ConfigReader& config, const YAML::Node& root, std::uint32_t npus,
                     const std::vector<NodeRole>& roles, const std::vector<Link>& links,
                     const std::vector<std::uint32_t>& hosts) {
  if (roles.empty() || hosts.empty() || !root["roles"]["nic"]) return;
  const auto role = [&](NodeId node) { return node < npus ? NodeRole::kGpu : roles[node - npus]; };
  constexpr std::uint32_t kNone = ~0u, kMany = ~0u - 1;
  // The host of each pcie-switch's GPUs (kMany: GPUs of several), then of each NIC's.
  const auto join = [&](std::uint32_t& slot, std::uint32_t host) {
    slot = slot == kNone || slot == host ? host : kMany;
  };
  std::vector<std::uint32_t> pcie(roles.size(), kNone), nic(roles.size(), kNone);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> nic_hosts(roles.size(), {kNone, kNone});  // two it joins
  for (const Link& l : links) {
    if (l.from < npus && role(l.to) == NodeRole::kPcieSwitch) join(pcie[l.to - npus], hosts[l.from]);
  }
  for (const Link& l : links) {
    if (role(l.to) != NodeRole::kNic) continue;
    std::uint32_t host = kNone;
    if (l.from < npus) host = hosts[l.from];
    else if (role(l.from) == NodeRole::kPcieSwitch) host = pcie[l.from - npus];
    if (host == kNone) continue;
    auto& seen = nic_hosts[l.to - npus];
    if (seen.first == kNone) seen.first = host;
    else if (host != seen.first && seen.second == kNone) seen.second = host;
    join(nic[l.to - npus], host);
  }
  const YAML::Node list = root["roles"]["nic"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const NodeId at = node_ref(config, list[i], "roles.nic", npus, static_cast<std::uint32_t>(roles.size()));
    if (nic[at - npus] != kMany) continue;
    const auto [a, b] = nic_hosts[at - npus];
    const std::string which = a == kMany || b == kNone ? "several hosts (through a pcie-switch shared by them)"
                                                       : "hosts " + std::to_string(a) + " and " + std::to_string(b);
    config.fail(list[i], "'roles.nic[" + std::to_string(i) + "]': switch " + std::to_string(at - npus) +
                             " is linked from GPUs of " + which +
                             ": a NIC is one host's port to the network (give each host its own NICs)");
  }
}

}  // namespace

Topology parse_graph_form(const ConfigReader& config, const YAML::Node& root) {
  config.check_keys(root, "", {"name", "npus", "switches", "bandwidth", "latency", "links", "hosts", "roles", "routing"});
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
  // Each direction of a node pair is one link: a second one would never carry traffic (routes take
  // the first), so its bandwidth would be silently lost. Entry index of each directed link:
  std::unordered_map<std::uint64_t, std::size_t> entry_of;
  auto add = [&](const YAML::Node& entry, std::size_t i, const Link& link) {
    const auto [it, fresh] = entry_of.emplace((std::uint64_t{link.from} << 32) | link.to, i);
    if (!fresh) {
      config.fail(entry, "'links[" + std::to_string(i) + "]' repeats the link " + node_name(link.from, n) + " -> " +
                             node_name(link.to, n) + " of 'links[" + std::to_string(it->second) +
                             "]' (one link per direction of a pair: give its whole bandwidth once)");
    }
    links.push_back(link);
  };
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
    add(entry, i, link);
    if (bidirectional) add(entry, i, Link{dst, src, link.bandwidth, link.latency});
  }

  auto shortest = std::make_unique<ShortestPathRouter>(n + sw, n, links);
  if (const auto pair = shortest->unreachable_pair()) {
    config.fail(list, "npu " + std::to_string(pair->first) + " cannot reach npu " + std::to_string(pair->second));
  }
  std::vector<NodeRole> roles = read_roles(config, root, n, sw);
  check_nics(config, root, n, roles, links);
  std::vector<std::uint32_t> hosts = read_hosts(config, root, n, sw);
  check_nic_hosts(config, root, n, roles, links, hosts);
  std::unique_ptr<Router> router;
  // A graph that says which GPUs share a machine and which switches are its NVSwitches and NICs
  // routes as NCCL does by default (PXN): the fewest hops could enter a host by another GPU's NIC
  // and cross its NVLink, a path no transport takes (docs/network.md).
  const bool described = !hosts.empty() && root["roles"];
  bool pxn = described;
  if (const YAML::Node r = root["routing"]) {
    const std::string rule = config.text(r, "routing");
    if (rule != "pxn" && rule != "shortest") config.fail(r, "'routing' must be shortest or pxn, got '" + rule + "'");
    pxn = rule == "pxn";
    if (pxn && hosts.empty()) {
      config.fail(r, "'routing: pxn' needs 'hosts' (the NPUs of each machine): it sends a message to another host "
                     "out through the NIC on the destination's rail");
    }
  }
  if (pxn) {
    auto rails = std::make_unique<PxnRouter>(std::move(shortest), n, sw, links, roles, hosts);
    if (rails->problem().empty()) {
      router = std::move(rails);
    } else if (root["routing"]) {
      config.fail(root["routing"], "'routing: pxn': " + rails->problem());
    } else {
      // As NCCL, which uses PXN only where a GPU reaches the one beside the rail inside
      // its machine: a graph whose hosts lack such paths takes the fewest hops (the summary says so).
      router = rails->take_shortest();
      pxn = false;
    }
  } else {
    router = std::move(shortest);
  }
  std::string label = "Graph";
  if (const YAML::Node name = root["name"]) label = config.text(name, "name");
  std::string description = describe_topology(label, n, sw, links);
  // Across hosts the rule matters (docs/network.md): the summary says which.
  if (pxn || hosts.size() > 0) description += pxn ? ", routing pxn" : ", routing shortest";
  Topology topology(std::move(description), n, sw, std::move(links), std::vector<std::uint32_t>{n}, std::move(router));
  const bool declared = root["hosts"] || root["roles"];
  // Without `hosts`, the graph is one host (its one dimension).
  topology.set_hardware(std::move(roles), hosts.empty() ? n : 1, std::move(hosts), declared);
  return topology;
}

}  // namespace sim
