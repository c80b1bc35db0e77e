#include "system/collectives/algorithm_context.h"

#include <unordered_map>

namespace sim {

std::vector<std::vector<std::uint32_t>> AlgorithmContext::positions_by_domain() const {
  std::vector<std::vector<std::uint32_t>> out(domains);
  for (std::uint32_t p = 0; p < size(); ++p) out[domain_of[p]].push_back(p);
  return out;
}

std::shared_ptr<const AlgorithmContext> make_algorithm_context(std::shared_ptr<const std::vector<std::uint32_t>> members,
                                                               const Topology* topology) {
  auto ctx = std::make_shared<AlgorithmContext>();
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
  const std::uint32_t size0 = ctx->dims.empty() ? topology->npu_count() : ctx->dims.front().size;
  std::unordered_map<std::uint32_t, std::uint32_t> domain_index;  // NPU id / size0 -> domain
  for (std::uint32_t p = 0; p < n; ++p) {
    const std::uint32_t npu = (*ctx->members)[p];
    ctx->rail_of[p] = npu % size0;
    const auto [it, fresh] = domain_index.try_emplace(npu / size0, static_cast<std::uint32_t>(domain_index.size()));
    ctx->domain_of[p] = it->second;
  }
  ctx->domains = static_cast<std::uint32_t>(domain_index.size());
  ctx->domain_switch.assign(ctx->domains, kNoSwitch);
  // The dimension-0 switch of a domain: its first member's lowest-numbered
  // link to a switch (a dimension stack numbers dimension 0's links first; a
  // fat tree's NPU has only its leaf link).
  if (!ctx->dims.empty() && ctx->dims.front().kind == DimensionKind::kSwitch) {
    std::vector<std::uint32_t> first(ctx->domains, n);
    for (std::uint32_t p = n; p-- > 0;) first[ctx->domain_of[p]] = p;
    std::unordered_map<NodeId, std::uint32_t> want;  // NPU -> domain
    for (std::uint32_t d = 0; d < ctx->domains; ++d) want.emplace((*ctx->members)[first[d]], d);
    for (const Link& l : topology->links()) {
      if (l.to < topology->npu_count()) continue;
      const auto it = want.find(l.from);
      if (it == want.end() || ctx->domain_switch[it->second] != kNoSwitch) continue;
      ctx->domain_switch[it->second] = l.to;
    }
  }
  bool all = ctx->domains > 0;
  for (const NodeId sw : ctx->domain_switch) all = all && sw != kNoSwitch && topology->reduces(sw);
  ctx->domain_reduces = all;
  for (std::size_t d = 1; d < ctx->dims.size(); ++d) ctx->fabric_reduces = ctx->fabric_reduces || ctx->dims[d].in_network_reduction;
  return ctx;
}

}  // namespace sim
