#include "system/collectives/algorithm_context.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"

namespace sim {

std::vector<std::vector<std::uint32_t>> AlgorithmContext::positions_by_domain() const {
  std::vector<std::vector<std::uint32_t>> out(domains);
  for (std::uint32_t p = 0; p < size(); ++p) out[domain_of[p]].push_back(p);
  return out;
}

std::uint32_t AlgorithmContext::ranks_per_domain() const {
  std::vector<std::uint32_t> count(domains, 0);
  for (const std::uint32_t d : domain_of) ++count[d];
  for (const std::uint32_t c : count) {
    if (c != count.front()) return 0;
  }
  return count.empty() ? 0 : count.front();
}

std::shared_ptr<const AlgorithmContext> make_algorithm_context(std::shared_ptr<const std::vector<std::uint32_t>> members,
                                                               const Topology* topology,
                                                               GpuMemory memory) {
  auto ctx = std::make_shared<AlgorithmContext>();
  ctx->memory = memory;
  const auto n = static_cast<std::uint32_t>(members->size());
  ctx->members = std::move(members);
  ctx->topology = topology;
  ctx->domain_of.assign(n, 0);
  ctx->rail_of.assign(n, 0);
  if (!topology) {
    for (std::uint32_t p = 0; p < n; ++p) ctx->rail_of[p] = p;
    ctx->domain_switch.assign(1, kNoSwitch);
    return ctx;
  }
  ctx->dims = topology->dimensions();
  std::unordered_map<std::uint32_t, std::uint32_t> domain_index;  // host -> domain
  for (std::uint32_t p = 0; p < n; ++p) {
    const std::uint32_t npu = (*ctx->members)[p];
    ctx->rail_of[p] = topology->host_slot(npu);
    const auto [it, fresh] = domain_index.try_emplace(topology->host(npu), static_cast<std::uint32_t>(domain_index.size()));
    ctx->domain_of[p] = it->second;
  }
  ctx->domains = static_cast<std::uint32_t>(domain_index.size());
  ctx->domain_switch.assign(ctx->domains, kNoSwitch);
  // The NVSwitch of a domain: the first one its first member links to.
  {
    std::vector<std::uint32_t> first(ctx->domains, n);
    for (std::uint32_t p = n; p-- > 0;) first[ctx->domain_of[p]] = p;
    std::unordered_map<NodeId, std::uint32_t> want;  // NPU -> domain
    for (std::uint32_t d = 0; d < ctx->domains; ++d) want.emplace((*ctx->members)[first[d]], d);
    for (const Link& l : topology->links()) {
      if (l.to < topology->npu_count() || topology->role(l.to) != NodeRole::kNvSwitch) continue;
      const auto it = want.find(l.from);
      if (it == want.end() || ctx->domain_switch[it->second] != kNoSwitch) continue;
      ctx->domain_switch[it->second] = l.to;
    }
  }
  bool all = ctx->domains > 0;
  for (const NodeId sw : ctx->domain_switch) all = all && sw != kNoSwitch && topology->reduces(sw);
  // NVLink SHARP reduces the copies of the GPUs under one switch: a host
  // whose GPUs hang off several (its NVSwitches stacked in two levels) has
  // no switch that sees them all. A stack whose host is its first dimension
  // alone has one switch per host by construction; others are checked.
  const auto& dims = topology->dimensions();
  const bool one_level = !dims.empty() && dims[0].in_host && (dims.size() == 1 || !dims[1].in_host);
  if (all && !one_level) {
    std::vector<std::uint32_t> position(topology->npu_count(), n);  // NPU -> member
    for (std::uint32_t p = 0; p < n; ++p) position[(*ctx->members)[p]] = p;
    std::vector<char> under(n, 0);
    for (const Link& l : topology->links()) {
      if (l.from >= topology->npu_count() || position[l.from] == n) continue;
      const std::uint32_t p = position[l.from];
      if (l.to == ctx->domain_switch[ctx->domain_of[p]]) under[p] = 1;
    }
    for (std::uint32_t p = 0; p < n && all; ++p) {
      if (under[p]) continue;
      all = false;
      ctx->withheld = "NPU " + std::to_string((*ctx->members)[p]) + " is not under its host's switch " +
                      std::to_string(ctx->domain_switch[ctx->domain_of[p]]) +
                      " (the host's GPUs hang off several switches): NVLink SHARP needs every GPU of a host under "
                      "one reducing switch";
    }
  }
  ctx->domain_reduces = all;
  for (std::size_t d = 1; d < ctx->dims.size(); ++d) ctx->fabric_reduces = ctx->fabric_reduces || ctx->dims[d].in_network_reduction;
  return ctx;
}

std::shared_ptr<const AlgorithmContext> make_line_context(std::shared_ptr<const std::vector<std::uint32_t>> line,
                                                          const std::vector<std::uint32_t>& group,
                                                          const Topology* topology, GpuMemory memory) {
  auto shared = make_algorithm_context(line, topology, memory);
  if (!topology) return shared;
  auto ctx = std::make_shared<AlgorithmContext>(*shared);
  const std::unordered_set<std::uint32_t> in_line(line->begin(), line->end());
  std::unordered_set<std::uint32_t> outside;  // group members not in the line
  for (const std::uint32_t m : group) {
    if (!in_line.count(m)) outside.insert(m);
  }
  // Switches a member outside the line hangs off.
  std::unordered_set<NodeId> shared_switches;
  for (const Link& l : topology->links()) {
    if (l.to >= topology->npu_count() && outside.count(l.from)) shared_switches.insert(l.to);
  }
  if (ctx->domain_reduces) {
    for (const NodeId sw : ctx->domain_switch) {
      if (!shared_switches.count(sw)) continue;
      ctx->domain_reduces = false;
      ctx->withheld = "its node switch " + std::to_string(sw) +
                      " also joins group members of other lines of the hierarchical collective, whose phases "
                      "run at the same time: it cannot reduce or multicast for this dimension's line alone "
                      "(choose it for the whole group, not a dimension of a hierarchical list; docs/nccl.md)";
      break;
    }
  }
  if (ctx->fabric_reduces) {
    std::unordered_set<NodeId> own(ctx->domain_switch.begin(), ctx->domain_switch.end());
    for (const Link& l : topology->links()) {
      if (l.to < topology->npu_count() || !in_line.count(l.from) || own.count(l.to)) continue;
      if (!topology->reduces(l.to) || !shared_switches.count(l.to)) continue;
      ctx->fabric_reduces = false;
      ctx->withheld = "its fabric switch " + std::to_string(l.to) +
                      " also joins group members of other lines of the hierarchical collective, whose phases "
                      "run at the same time: it cannot reduce for this dimension's line alone "
                      "(choose it for the whole group, not a dimension of a hierarchical list; docs/nccl.md)";
      break;
    }
  }
  return ctx;
}

std::vector<std::vector<NodeId>> switches_of_npus(const Topology& topology) {
  std::vector<std::vector<NodeId>> out(topology.npu_count());
  for (const Link& l : topology.links()) {
    if (l.from < topology.npu_count() && l.to >= topology.npu_count()) out[l.from].push_back(l.to);
  }
  return out;
}

std::unordered_map<NodeId, NodeId> switch_translation(const std::vector<std::vector<NodeId>>& switches_of,
                                                      const std::vector<std::uint32_t>& from,
                                                      const std::vector<std::uint32_t>& to) {
  std::unordered_map<NodeId, NodeId> out, back;
  for (std::size_t p = 0; p < from.size() && p < to.size(); ++p) {
    const std::vector<NodeId>& a = switches_of[from[p]];
    const std::vector<NodeId>& b = switches_of[to[p]];
    for (std::size_t k = 0; k < a.size(); ++k) {
      const NodeId there = k < b.size() ? b[k] : kNoSwitch;
      const auto [it, fresh] = out.try_emplace(a[k], there);
      const auto [jt, fresh_back] = back.try_emplace(there, a[k]);
      if (there == kNoSwitch || it->second != there || jt->second != a[k]) {
        throw InputError("hierarchical: the lines of a dimension are not alike: NPU " + std::to_string(from[p]) +
                         " reaches switch " + std::to_string(a[k]) + " where NPU " + std::to_string(to[p]) +
                         (there == kNoSwitch ? std::string(" has no such switch link")
                                             : " reaches switch " + std::to_string(there)) +
                         ", so an algorithm that addresses switches cannot run the same way on both");
      }
    }
  }
  return out;
}

}  // namespace sim
