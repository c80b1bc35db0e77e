#include "system/collectives/nccl/model/sharp_tree.h"

#include <algorithm>
#include <map>
#include <set>

namespace sim::nccl {

SharpTree sharp_tree(const AlgorithmContext& ctx) {
  if (!ctx.topology || ctx.domains < 2) return {};
  const Topology& topo = *ctx.topology;
  const std::uint32_t n = ctx.size();
  std::vector<std::int64_t> position(topo.npu_count(), -1);
  for (std::uint32_t p = 0; p < n; ++p) position[(*ctx.members)[p]] = p;
  // Each member's switches above its node's, in link order.
  std::vector<std::vector<NodeId>> above(n);
  for (const Link& l : topo.links()) {
    if (l.from >= topo.npu_count() || l.to < topo.npu_count() || position[l.from] < 0) continue;
    const auto p = static_cast<std::uint32_t>(position[l.from]);
    if (l.to == ctx.domain_switch[ctx.domain_of[p]]) continue;
    if (std::find(above[p].begin(), above[p].end(), l.to) == above[p].end()) above[p].push_back(l.to);
  }
  const std::size_t depth = above[0].size();
  if (depth == 0 || depth > kMaxSharpLevels) return {};
  for (const auto& a : above) {
    if (a.size() != depth) return {};
    for (const NodeId sw : a) {
      if (!topo.reduces(sw)) return {};
    }
  }
  SharpTree t;
  t.levels.assign(depth, std::vector<NodeId>(n));
  t.index.assign(depth, std::vector<std::uint32_t>(n));
  t.group.assign(depth, std::vector<std::uint32_t>(n));
  t.groups.resize(depth);
  std::uint64_t reach = 1;
  for (std::size_t k = 0; k < depth; ++k) {
    std::map<NodeId, std::uint32_t> id;
    for (std::uint32_t p = 0; p < n; ++p) {
      const NodeId sw = above[p][k];
      const auto [it, fresh] = id.emplace(sw, static_cast<std::uint32_t>(t.groups[k].size()));
      if (fresh) t.groups[k].emplace_back();
      t.levels[k][p] = sw;
      t.group[k][p] = it->second;
      t.groups[k][it->second].push_back(p);
    }
    // Members in group order, as the engine cuts a switch's scatter (CollectiveOp).
    const std::size_t fan = t.groups[k][0].size();
    for (const auto& g : t.groups[k]) {
      if (g.size() != fan) return {};
      std::set<std::uint32_t> nodes;
      for (std::uint32_t i = 0; i < g.size(); ++i) {
        if (ctx.rail_of[g[i]] != ctx.rail_of[g[0]] || !nodes.insert(ctx.domain_of[g[i]]).second) return {};
        t.index[k][g[i]] = i;
      }
    }
    reach *= fan;
  }
  // A level of one member per switch is no level: SHARP's tree for a group
  // under one leaf stops at the leaf.
  for (std::size_t k = t.depth(); k-- > 0;) {
    if (t.groups[k][0].size() > 1) continue;
    t.levels.erase(t.levels.begin() + static_cast<std::ptrdiff_t>(k));
    t.index.erase(t.index.begin() + static_cast<std::ptrdiff_t>(k));
    t.group.erase(t.group.begin() + static_cast<std::ptrdiff_t>(k));
    t.groups.erase(t.groups.begin() + static_cast<std::ptrdiff_t>(k));
  }
  if (reach != ctx.domains) return {};
  // A grid: the members under a switch agree on their places at every other
  // level, and each rail reaches every node once.
  for (std::size_t k = 0; k < t.depth(); ++k) {
    for (const auto& g : t.groups[k]) {
      for (const std::uint32_t q : g) {
        for (std::size_t j = 0; j < t.depth(); ++j) {
          if (j != k && t.index[j][q] != t.index[j][g[0]]) return {};
        }
      }
    }
  }
  std::set<std::pair<std::uint32_t, std::uint64_t>> seen;  // (rail, place in the grid)
  for (std::uint32_t p = 0; p < n; ++p) {
    std::uint64_t place = 0;
    for (std::size_t k = 0; k < t.depth(); ++k) place = place * t.groups[k][0].size() + t.index[k][p];
    if (!seen.emplace(ctx.rail_of[p], place).second) return {};
  }
  std::map<std::uint32_t, std::uint32_t> per_rail;
  for (std::uint32_t p = 0; p < n; ++p) ++per_rail[ctx.rail_of[p]];
  for (const auto& [rail, count] : per_rail) {
    if (count != ctx.domains) return {};
  }
  return t;
}

}  // namespace sim::nccl
