#include "network/pxn_router.h"

#include <algorithm>
#include <set>

namespace sim {

namespace {

constexpr std::uint32_t kUnreached = ~std::uint32_t{0};

std::string node_text(NodeId node, std::uint32_t npus) {
  return node < npus ? "npu" + std::to_string(node) : "sw" + std::to_string(node - npus);
}

}  // namespace

PxnRouter::PxnRouter(std::unique_ptr<ShortestPathRouter> shortest, std::uint32_t npu_count, std::uint32_t switch_count,
                     const std::vector<Link>& links, const std::vector<NodeRole>& roles,
                     const std::vector<std::uint32_t>& hosts)
    : shortest_(std::move(shortest)), hosts_(hosts), rail_(npu_count, kNoRail) {
  const std::uint32_t npus = npu_count;
  const std::uint32_t node_count = npus + switch_count;  // `roles` is empty when the file names none
  const auto role = [&](NodeId v) { return v < npus ? NodeRole::kGpu : roles.empty() ? NodeRole::kSwitch : roles[v - npus]; };
  std::uint32_t host_count = 0;
  for (const std::uint32_t h : hosts_) host_count = std::max(host_count, h + 1);

  // A GPU's NICs, as NCCL's model finds them: linked from it, or under a PCIe
  // switch it links to.
  std::vector<std::vector<NodeId>> pcie_nics(switch_count);
  for (const Link& l : links) {
    if (role(l.from) == NodeRole::kPcieSwitch && role(l.to) == NodeRole::kNic) pcie_nics[l.from - npus].push_back(l.to);
  }
  std::vector<NodeId> first_nic(npus, kNoExit);
  std::vector<std::set<NodeId>> host_nics(host_count);
  bool any_nic = false;
  const auto reach = [&](NodeId gpu, NodeId nic) {
    first_nic[gpu] = std::min(first_nic[gpu], nic);
    host_nics[hosts_[gpu]].insert(nic);
    any_nic = true;
  };
  for (const Link& l : links) {
    if (l.from >= npus) continue;
    if (role(l.to) == NodeRole::kNic) reach(l.from, l.to);
    if (role(l.to) == NodeRole::kPcieSwitch) {
      for (const NodeId nic : pcie_nics[l.to - npus]) reach(l.from, nic);
    }
  }
  exits_.resize(host_count);
  if (any_nic) {
    for (std::uint32_t h = 0; h < host_count; ++h) exits_[h].assign(host_nics[h].begin(), host_nics[h].end());
    for (NodeId g = 0; g < npus; ++g) {
      if (first_nic[g] == kNoExit) continue;
      const auto& e = exits_[hosts_[g]];
      rail_[g] = static_cast<std::uint32_t>(std::lower_bound(e.begin(), e.end(), first_nic[g]) - e.begin());
    }
  } else {
    for (NodeId g = 0; g < npus; ++g) {
      rail_[g] = static_cast<std::uint32_t>(exits_[hosts_[g]].size());
      exits_[hosts_[g]].push_back(g);
    }
  }

  // Paths inside a host: through its GPUs and the NVSwitches and PCIe switches
  // between them, to the exit. Fewest hops, ties to the lowest next node (then
  // link), as the fewest-hops router breaks them.
  std::vector<std::uint32_t> out_start(node_count + 1, 0), in_start(node_count + 1, 0);
  for (const Link& l : links) {
    ++out_start[l.from + 1];
    ++in_start[l.to + 1];
  }
  for (std::uint32_t v = 0; v < node_count; ++v) {
    out_start[v + 1] += out_start[v];
    in_start[v + 1] += in_start[v];
  }
  std::vector<LinkId> out(links.size()), in(links.size());
  {
    std::vector<std::uint32_t> of(out_start.begin(), out_start.end() - 1), inf(in_start.begin(), in_start.end() - 1);
    for (LinkId id = 0; id < links.size(); ++id) {
      out[of[links[id].from]++] = id;
      in[inf[links[id].to]++] = id;
    }
  }
  std::vector<std::vector<NodeId>> host_gpus(host_count);
  for (NodeId g = 0; g < npus; ++g) host_gpus[hosts_[g]].push_back(g);

  first_path_.assign(npus, 0);
  std::uint32_t paths = 0;
  for (NodeId g = 0; g < npus; ++g) {
    first_path_[g] = paths;
    paths += static_cast<std::uint32_t>(exits_[hosts_[g]].size());
  }
  path_start_.assign(paths + 1, 0);
  std::vector<std::vector<LinkId>> path(paths);

  std::vector<std::uint32_t> dist(node_count, kUnreached);
  std::vector<NodeId> frontier;
  for (std::uint32_t h = 0; h < host_count; ++h) {
    const auto inside = [&](NodeId v) {
      const NodeRole r = role(v);
      return r == NodeRole::kGpu ? hosts_[v] == h : r == NodeRole::kNvSwitch || r == NodeRole::kPcieSwitch;
    };
    for (std::uint32_t r = 0; r < exits_[h].size(); ++r) {
      const NodeId x = exits_[h][r];
      frontier.assign(1, x);
      dist[x] = 0;
      for (std::size_t head = 0; head < frontier.size(); ++head) {
        const NodeId v = frontier[head];
        for (std::uint32_t k = in_start[v]; k < in_start[v + 1]; ++k) {
          const NodeId u = links[in[k]].from;
          if (dist[u] == kUnreached && inside(u)) {
            dist[u] = dist[v] + 1;
            frontier.push_back(u);
          }
        }
      }
      for (const NodeId g : host_gpus[h]) {
        if (dist[g] == kUnreached) {
          if (problem_.empty()) {
            problem_ = node_text(g, npus) + " cannot reach " + node_text(x, npus) + ", a way out of its host " +
                       std::to_string(h) + ", inside the host (through its GPUs, and the switches 'roles' names nvswitch or pcie-switch)";
          }
          continue;
        }
        std::vector<LinkId>& p = path[first_path_[g] + r];
        for (NodeId at = g; at != x;) {
          LinkId best = 0;
          bool found = false;
          for (std::uint32_t k = out_start[at]; k < out_start[at + 1]; ++k) {
            const NodeId to = links[out[k]].to;
            if (dist[to] == kUnreached || dist[to] + 1 != dist[at]) continue;
            if (!found || to < links[best].to) best = out[k];
            found = true;
          }
          p.push_back(best);
          at = links[best].to;
        }
      }
      for (const NodeId v : frontier) dist[v] = kUnreached;
    }
  }
  for (std::uint32_t i = 0; i < paths; ++i) {
    path_start_[i + 1] = path_start_[i] + static_cast<std::uint32_t>(path[i].size());
    path_links_.insert(path_links_.end(), path[i].begin(), path[i].end());
  }
}

NodeId PxnRouter::exit(std::uint32_t host, NodeId dst) const {
  const std::uint32_t r = rail_[dst];
  if (hosts_[dst] == host || r == kNoRail || r >= exits_[host].size()) return kNoExit;
  return exits_[host][r];
}

void PxnRouter::route(NodeId src, NodeId dst, std::vector<LinkId>& out) const {
  const NodeId x = exit(hosts_[src], dst);
  if (x == kNoExit) {
    shortest_->route(src, dst, out);
    return;
  }
  const std::uint32_t p = first_path_[src] + rail_[dst];
  out.insert(out.end(), path_links_.begin() + path_start_[p], path_links_.begin() + path_start_[p + 1]);
  shortest_->route(x, dst, out);
}

}  // namespace sim
