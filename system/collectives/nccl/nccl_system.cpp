#include "system/collectives/nccl/nccl_system.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "core/error.h"

namespace sim::nccl {

namespace {

// Speeds per channel NCCL tries, GB/s, highest first (src/graph/search.cc,
// speedArrayIntra/Inter and sm90SpeedArrayIntra/Inter).
const std::vector<double> kIntra = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
const std::vector<double> kInter = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                    7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
const std::vector<double> kIntraSm90 = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
const std::vector<double> kInterSm90 = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                        15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

constexpr int kMaxChannels = 32;        // MAXCHANNELS
constexpr int kSearchChannels = 16;     // the search's maxChannels (MAXCHANNELS / 2)
constexpr int kMaxNvlsArity = 32;       // NCCL_MAX_NVLS_ARITY
constexpr double kDuplicateAbove = 25;  // rings/trees of >= 25 GB/s are split into twice the channels at half speed

// How many channels of `speed` fit `capacity` GB/s (a small tolerance for the float sums NCCL does),
// at most kMaxChannels: more never changes a search capped at kSearchChannels, and a link of
// 1e9 GB/s (tests' "free" network) must not overflow an int here or in per_node * fit().
int fit(double capacity, double speed) {
  return static_cast<int>(std::min(std::floor(capacity / speed + 1e-9), static_cast<double>(kMaxChannels)));
}

Graph ring_or_tree(Arch arch, int per_node, int nodes, double gpu_bw, double nic_bw, bool tree) {
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
    // nodes, on one NIC per node: a node's NICs (one per GPU) carry
    // per_node * floor(nic / s) channels.
    int ch = per_node > 1 ? fit(gpu_bw, s) : kSearchChannels;
    if (nodes > 1) ch = std::min(ch, per_node * fit(nic_bw, s));
    ch = std::min(ch, kSearchChannels);
    if (ch > 0 && ch * s > best_ch * best_speed + 1e-9) {
      best_ch = ch;
      best_speed = s;
    }
    if (best_ch * best_speed >= gpu_bw - 1e-9) break;
  }
  Graph g;
  if (best_ch == 0) return g;
  if (best_speed >= kDuplicateAbove) {
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

double nvlink_efficiency(Arch arch) { return arch == Arch::kHopper ? 20.6 / 25.0 : 20.0 / 25.0; }

std::array<Graph, kAlgos> search_graphs(Arch arch, int ranks, int nodes, double gpu_bw, double nic_bw, bool nvls,
                                        bool collnet) {
  std::array<Graph, kAlgos> graphs;
  const int per_node = ranks / std::max(nodes, 1);
  graphs[static_cast<int>(Algo::kRing)] = ring_or_tree(arch, per_node, nodes, gpu_bw, nic_bw, false);
  graphs[static_cast<int>(Algo::kTree)] = ring_or_tree(arch, per_node, nodes, gpu_bw, nic_bw, true);
  if (nvls) {
    graphs[static_cast<int>(Algo::kNvls)] = nvls_graph(arch, per_node, nodes, gpu_bw, nic_bw);
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

std::vector<NodeId> rail_switches(const AlgorithmContext& ctx) {
  if (!ctx.topology || ctx.domains < 2) return {};
  const Topology& topo = *ctx.topology;
  const std::uint32_t n = ctx.size();
  std::vector<NodeId> out(n, kNoSwitch);
  std::vector<std::int64_t> position(topo.npu_count(), -1);
  for (std::uint32_t p = 0; p < n; ++p) position[(*ctx.members)[p]] = p;
  for (const Link& l : topo.links()) {
    if (l.from >= topo.npu_count() || l.to < topo.npu_count() || position[l.from] < 0) continue;
    const auto p = static_cast<std::uint32_t>(position[l.from]);
    if (l.to == ctx.domain_switch[ctx.domain_of[p]] || out[p] != kNoSwitch) continue;
    out[p] = l.to;
  }
  std::map<NodeId, std::vector<std::uint32_t>> nodes_under;  // switch -> domains of its members
  for (std::uint32_t p = 0; p < n; ++p) {
    if (out[p] == kNoSwitch || !topo.reduces(out[p])) return {};
    nodes_under[out[p]].push_back(ctx.domain_of[p]);
  }
  for (auto& [sw, d] : nodes_under) {
    std::sort(d.begin(), d.end());
    if (d.size() != ctx.domains || std::adjacent_find(d.begin(), d.end()) != d.end()) return {};
  }
  return out;
}

NcclSystem describe_system(const AlgorithmContext& ctx, Arch arch) {
  NcclSystem s;
  s.arch = arch;
  s.ranks = static_cast<int>(ctx.size());
  s.nodes = static_cast<int>(ctx.domains);
  const std::vector<std::vector<std::uint32_t>> by_domain = ctx.positions_by_domain();
  for (const auto& d : by_domain) {
    if (d.size() != by_domain.front().size()) {
      throw InputError("nccl: the group has " + std::to_string(by_domain.front().size()) + " ranks on one node and " +
                       std::to_string(d.size()) + " on another; NCCL's model needs the same number on every node");
    }
  }
  s.per_node = s.ranks / std::max(s.nodes, 1);
  // Per-GPU bandwidth inside the node, by dimension 0's shape (GB/s).
  double intra = 0;
  if (!ctx.dims.empty()) {
    const TopologyDimension& d0 = ctx.dims.front();
    const double link = static_cast<double>(d0.bandwidth) / 1e9;
    switch (d0.kind) {
      case DimensionKind::kSwitch: intra = link; break;
      case DimensionKind::kFullyConnected: intra = link * (d0.size - 1); break;
      case DimensionKind::kRing:
      case DimensionKind::kLine: intra = 2 * link; break;
      case DimensionKind::kOther: intra = link; break;
    }
  }
  if (intra <= 0 && ctx.topology) {  // an explicit graph: the first member's first link
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
    s.nic_bw = ctx.dims.size() > 1 && ctx.dims[1].bandwidth > 0 ? static_cast<double>(ctx.dims[1].bandwidth) / 1e9 : 12.5;
  }
  s.nvls = ctx.domain_reduces;
  s.collnet = ctx.fabric_reduces && !rail_switches(ctx).empty();
  s.graphs = search_graphs(arch, s.ranks, s.nodes, s.gpu_bw, s.nic_bw, s.nvls, s.collnet);
  return s;
}

}  // namespace sim::nccl
