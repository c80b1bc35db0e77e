#include "system/collectives/nccl/model/nccl_system.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "core/error.h"
#include "system/collectives/nccl/model/sharp_tree.h"

namespace sim::nccl {

namespace {

// The search's speed lists and limits are NCCL's (nccl_constants.h).
template <std::size_t N>
std::vector<double> list(const double (&speeds)[N]) {
  return std::vector<double>(speeds, speeds + N);
}
const std::vector<double> kIntra = list(kSpeedIntra);
const std::vector<double> kInter = list(kSpeedInter);
const std::vector<double> kIntraSm90 = list(kSpeedIntraSm90);
const std::vector<double> kInterSm90 = list(kSpeedInterSm90);

// How many channels of `speed` fit `capacity` GB/s (a small tolerance for the float sums NCCL does),
// at most kMaxChannels: more never changes a search capped at kSearchChannels, and a link of
// 1e9 GB/s (tests' "free" network) must not overflow an int here or in per_node * fit().
int fit(double capacity, double speed) {
  return static_cast<int>(std::min(std::floor(capacity / speed + 1e-9), static_cast<double>(kMaxChannels)));
}

Graph ring_or_tree(Arch arch, int per_node, int nodes, double gpu_bw, double nic_bw, int nics, bool tree) {
  const std::vector<double>& speeds =
      nodes == 1 ? (arch == Arch::kHopper ? kIntraSm90 : kIntra) : (arch == Arch::kHopper ? kInterSm90 : kInter);
  const double max_bw = nodes == 1 ? gpu_bw : std::min(gpu_bw, nic_bw);
  double total = gpu_bw;
  // Patterns other than the ring need not come back to the first GPU: NCCL lets them start higher.
  if (tree && per_node > 1) total *= static_cast<double>(per_node) / (per_node - 1);
  std::size_t i = 0;
  while (i + 1 < speeds.size() && (speeds[i] > max_bw || speeds[i] > total)) ++i;
  int best_ch = 0;
  double best_speed = 0;
  for (; i < speeds.size(); ++i) {
    const double s = speeds[i];
    // A channel takes `s` on every GPU's NVLink (in and out) and, across
    // nodes, on one NIC per node: a node's NICs carry nics * floor(nic / s)
    // channels.
    int ch = per_node > 1 ? fit(gpu_bw, s) : kSearchChannels;
    if (nodes > 1) ch = std::min(ch, nics * fit(nic_bw, s));
    ch = std::min(ch, kSearchChannels);
    if (ch > 0 && ch * s > best_ch * best_speed + 1e-9) {
      best_ch = ch;
      best_speed = s;
    }
    if (best_ch * best_speed >= gpu_bw - 1e-9) break;
  }
  Graph g;
  if (best_ch == 0) return g;
  const bool hopper_keeps = arch == Arch::kHopper && best_speed < kHopperKeepBelow && best_ch > kHopperKeepOver;
  if (best_speed >= kDuplicateAbove && !hopper_keeps) {
    const int dup = std::min(best_ch * 2, kMaxChannels);
    best_speed /= static_cast<double>((dup + best_ch - 1) / best_ch);
    best_ch = dup;
  }
  g.channels = best_ch;
  g.bw_intra = best_speed;
  g.bw_inter = best_speed;
  return g;
}

Graph nvls_graph(Arch arch, int per_node, int nodes, double gpu_bw, double nic_bw) {
  // One channel per GPU ("head"); a channel takes its speed twice on its head's
  // links and once on every other GPU's, both ways (ncclTopoSearchTryNvls):
  // per_node channels take speed * (per_node + 1) of each GPU's NVLink. With
  // NICs (several nodes) the search walks the inter-node speed list.
  Graph g;
  if (per_node < 2) return g;
  const std::vector<double>& speeds =
      nodes == 1 ? (arch == Arch::kHopper ? kIntraSm90 : kIntra) : (arch == Arch::kHopper ? kInterSm90 : kInter);
  const int ch = std::min(per_node, kMaxNvlsArity);
  const double total = gpu_bw * per_node / (per_node - 1);
  for (std::size_t i = 0; i < speeds.size(); ++i) {
    const double s = speeds[i];
    if (s > gpu_bw || s * ch > total + 1e-9) continue;
    if (s * (per_node + 1) <= gpu_bw + 1e-9) {
      g.channels = ch;
      g.bw_intra = s;
      g.bw_inter = s;
      if (nodes > 1) {
        // Search pass 2 for NVLS (search.cc): same channels, bwInter raised a
        // step at a time while below twice bwIntra, as far as a head's NIC
        // carries its channel (each GPU heads one channel on its own NIC).
        if (s > nic_bw + 1e-9) {
          g.bw_inter = 0;
          for (const double v : speeds) {
            if (v <= nic_bw + 1e-9) {
              g.bw_inter = v;
              break;
            }
          }
        }
        for (std::size_t k = i; k-- > 0 && g.bw_inter < 2 * s && speeds[k] <= nic_bw + 1e-9;) g.bw_inter = speeds[k];
      }
      return g;
    }
  }
  return g;
}

}  // namespace

double host_bandwidth(const Topology& topology, const std::vector<std::uint32_t>& host_npus) {
  if (host_npus.empty()) return 0;
  const std::uint32_t host = topology.host(host_npus[0]);
  std::map<NodeId, std::pair<double, double>> per_gpu;  // GPU -> (NVLink, PCIe) GB/s
  for (const std::uint32_t n : host_npus) per_gpu[n] = {0, 0};
  for (const Link& l : topology.links()) {
    const auto it = per_gpu.find(l.from);
    if (it == per_gpu.end()) continue;
    const double gbs = static_cast<double>(l.bandwidth) / 1e9;
    const NodeRole to = topology.role(l.to);
    if ((to == NodeRole::kGpu && topology.host(l.to) == host) || to == NodeRole::kNvSwitch) it->second.first += gbs;
    else if (to == NodeRole::kPcieSwitch) it->second.second += gbs;
  }
  double best = 0;
  for (const auto& [gpu, bw] : per_gpu) best = std::max(best, bw.first > 0 ? bw.first : bw.second);
  return best;
}

NetworkDevices network_devices(const Topology& topology, const std::vector<std::uint32_t>& host_npus) {
  NetworkDevices out;
  if (host_npus.empty()) return out;
  const std::uint32_t npus = topology.npu_count();
  const std::uint32_t host = topology.host(host_npus[0]);
  std::map<NodeId, std::vector<NodeId>> pcie_nics;   // the host's PCIe switch -> NICs under it
  std::map<NodeId, std::vector<std::pair<NodeId, double>>> gpu_links;  // GPU -> (node, GB/s) it links to, in link order
  std::map<NodeId, double> nic_speed;                // NIC -> GB/s out of the host
  for (const std::uint32_t n : host_npus) gpu_links[n];
  for (const Link& l : topology.links()) {
    if (l.from < npus && gpu_links.count(l.from)) gpu_links[l.from].emplace_back(l.to, static_cast<double>(l.bandwidth) / 1e9);
  }
  std::set<NodeId> host_switches;
  for (const auto& [gpu, to] : gpu_links) {
    for (const auto& [x, bw] : to) {
      if (x >= npus && topology.role(x) == NodeRole::kPcieSwitch) host_switches.insert(x);
      if (x >= npus && topology.role(x) == NodeRole::kNic) nic_speed[x] = 0;
    }
  }
  for (const Link& l : topology.links()) {
    if (host_switches.count(l.from) && l.to >= npus && topology.role(l.to) == NodeRole::kNic) {
      pcie_nics[l.from].push_back(l.to);
      nic_speed[l.to] = 0;
    }
  }
  if (!nic_speed.empty()) {
    // A NIC's speed: its links out of the host (to the fabric, or to GPUs of other hosts).
    for (const Link& l : topology.links()) {
      const auto it = nic_speed.find(l.from);
      if (it == nic_speed.end()) continue;
      const NodeRole to = topology.role(l.to);
      const bool inside = to == NodeRole::kNvSwitch || to == NodeRole::kPcieSwitch || to == NodeRole::kNic ||
                          (to == NodeRole::kGpu && topology.host(l.to) == host);
      if (!inside) it->second += static_cast<double>(l.bandwidth) / 1e9;
    }
    // Which GPUs reach each NIC (directly or under a PCIe switch they link to).
    std::map<NodeId, std::set<NodeId>> reached_by;
    std::map<NodeId, std::set<NodeId>> nics_of;
    for (const auto& [gpu, to] : gpu_links) {
      for (const auto& [x, bw] : to) {
        if (x < npus) continue;
        if (topology.role(x) == NodeRole::kNic) nics_of[gpu].insert(x);
        if (const auto p = pcie_nics.find(x); p != pcie_nics.end()) nics_of[gpu].insert(p->second.begin(), p->second.end());
      }
    }
    for (const auto& [gpu, nics] : nics_of) {
      for (const NodeId nic : nics) reached_by[nic].insert(gpu);
    }
    std::vector<double> devices;
    std::set<NodeId> counted;
    for (const auto& [gpu, nics] : nics_of) {
      double own = 0;
      for (const NodeId nic : nics) {
        if (reached_by[nic].size() == 1) {
          own += nic_speed[nic];
        } else if (counted.insert(nic).second) {
          devices.push_back(nic_speed[nic]);
        }
      }
      if (own > 0) devices.push_back(own);
    }
    if (!devices.empty()) {
      out.devices = static_cast<int>(devices.size());
      out.speed = *std::min_element(devices.begin(), devices.end());
    }
    return out;
  }
  // No NIC nodes: each GPU's first link out of its host is its NIC, with its
  // other links to switches of the same role.
  std::vector<double> devices;
  for (const auto& [gpu, to] : gpu_links) {
    double sum = 0;
    bool found = false;
    NodeRole port = NodeRole::kGpu;
    for (const auto& [x, bw] : to) {
      const NodeRole role = topology.role(x);
      const bool leaves = role == NodeRole::kGpu ? topology.host(x) != host : fabric_level(role) > 0;
      if (!leaves) continue;
      if (!found) {
        found = true;
        port = role;
        sum = bw;
      } else if (role == port && role != NodeRole::kGpu) {
        sum += bw;
      }
    }
    if (found) devices.push_back(sum);
  }
  if (!devices.empty()) {
    out.devices = static_cast<int>(devices.size());
    out.speed = *std::min_element(devices.begin(), devices.end());
  }
  return out;
}

double nvlink_efficiency(Arch arch) {
  const double bw = arch == Arch::kHopper ? kNvlinkBwSm90 : arch == Arch::kAmpere ? kNvlinkBwSm80 : kNvlinkBwSm70;
  return bw / kNvlinkSpecBw;
}

std::array<Graph, kAlgos> search_graphs(Arch arch, int ranks, int nodes, double gpu_bw, double nic_bw, bool nvls,
                                        bool collnet, int nics) {
  std::array<Graph, kAlgos> graphs;
  const int per_node = ranks / std::max(nodes, 1);
  if (nics <= 0) nics = per_node;
  graphs[static_cast<int>(Algo::kRing)] = ring_or_tree(arch, per_node, nodes, gpu_bw, nic_bw, nics, false);
  graphs[static_cast<int>(Algo::kTree)] = ring_or_tree(arch, per_node, nodes, gpu_bw, nic_bw, nics, true);
  if (nvls) {
    // Each GPU heads a channel on the network: with fewer devices than GPUs,
    // the heads share them.
    const double head_nic = nic_bw * std::min(1.0, static_cast<double>(nics) / std::max(per_node, 1));
    graphs[static_cast<int>(Algo::kNvls)] = nvls_graph(arch, per_node, nodes, gpu_bw, head_nic);
    if (nodes > 1) graphs[static_cast<int>(Algo::kNvlsTree)] = graphs[static_cast<int>(Algo::kNvls)];
  }
  if (collnet && nodes > 1) {
    // CollNet: one channel per NIC-attached GPU, at the NIC's speed.
    Graph g;
    g.channels = per_node;
    g.bw_intra = std::min(nic_bw, gpu_bw / std::max(per_node, 1));
    g.bw_inter = g.bw_intra;
    graphs[static_cast<int>(Algo::kCollNetChain)] = g;
    graphs[static_cast<int>(Algo::kCollNetDirect)] = g;
  }
  return graphs;
}

int run_channels(const std::array<Graph, kAlgos>& graphs, Arch arch, int ranks, int nodes) {
  const Graph& ring = graphs[static_cast<int>(Algo::kRing)];
  const Graph& tree = graphs[static_cast<int>(Algo::kTree)];
  int nc = ring.channels > 0 && tree.channels > 0 ? std::min(ring.channels, tree.channels)
                                                  : std::max(ring.channels, tree.channels);
  nc = std::min(kRunChannelsMax, 2 * nc);
  const Graph& chain = graphs[static_cast<int>(Algo::kCollNetChain)];
  if (chain.channels > 0 && chain.bw_intra > chain.bw_inter && ranks > nodes) nc = std::min(kRunChannelsMax, nc + nc / 2);
  if (arch == Arch::kHopper && nodes > 1 && ring.bw_intra > kHopperDoubleAbove && nc < kHopperDoubleBelow) nc *= 2;
  return std::max(nc, 1);
}

NcclSystem describe_system(const AlgorithmContext& ctx, Arch arch) {
  NcclSystem s;
  s.arch = arch;
  s.ranks = static_cast<int>(ctx.size());
  s.nodes = static_cast<int>(ctx.domains);
  const std::vector<std::vector<std::uint32_t>> by_domain = ctx.positions_by_domain();
  if (ctx.ranks_per_domain() == 0) {
    const auto other = std::find_if(by_domain.begin(), by_domain.end(),
                                    [&](const auto& d) { return d.size() != by_domain.front().size(); });
    throw InputError("nccl: the group has " + std::to_string(by_domain.front().size()) + " ranks on one node and " +
                     std::to_string(other == by_domain.end() ? 0 : other->size()) +
                     " on another; NCCL's model needs the same number on every node");
  }
  s.per_node = s.ranks / std::max(s.nodes, 1);
  // The group's GPUs on its first node: NCCL trims the GPUs outside a
  // communicator from its system (ncclTopoTrimSystem), and each GPU uses its own NICs.
  std::vector<std::uint32_t> host_npus;
  for (const std::uint32_t p : by_domain.front()) host_npus.push_back((*ctx.members)[p]);
  double intra = ctx.topology ? host_bandwidth(*ctx.topology, host_npus) : 0;
  if (intra <= 0 && ctx.topology) {  // no link inside the host (one GPU per host): its first link
    for (const Link& l : ctx.topology->links()) {
      if (l.from == (*ctx.members)[0]) {
        intra = static_cast<double>(l.bandwidth) / 1e9;
        break;
      }
    }
  }
  if (intra <= 0) intra = 25;  // no topology (tools): one NVLink
  s.gpu_bw = intra * nvlink_efficiency(arch);
  if (s.nodes > 1) {
    const NetworkDevices net = ctx.topology ? network_devices(*ctx.topology, host_npus) : NetworkDevices{};
    s.nic_bw = net.devices > 0 ? net.speed : 12.5;  // none found: a 100 Gb/s NIC
    s.nics = net.devices > 0 ? net.devices : s.per_node;
  }
  s.nvls = ctx.domain_reduces;
  s.collnet = ctx.fabric_reduces && !sharp_tree(ctx).empty();
  s.graphs = search_graphs(arch, s.ranks, s.nodes, s.gpu_bw, s.nic_bw, s.nvls, s.collnet, s.nics);
  s.run_channels = run_channels(s.graphs, arch, s.ranks, s.nodes);
  return s;
}

}  // namespace sim::nccl
