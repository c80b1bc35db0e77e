#include "system/scenario/identical_ranks.h"

#include <set>

#include "system/registry/algorithm_registry.h"

namespace sim {

bool identical_ranks_fold(const RankGraph& graph, std::uint32_t world, const SystemConfig& config,
                          const Topology& topology) {
  // One Switch dimension: every NPU has one link up and one down, so each
  // copy's links carry what the original's carry (the expansion relies on it).
  if (world < 2 || topology.dimensions().size() != 1 || topology.dimensions()[0].kind != DimensionKind::kSwitch) {
    return false;
  }
  if (graph.dangling_ctrl_deps() > 0 || graph.self_ctrl_deps() > 0) return false;  // warned per rank
  for (const CommunicatorSpec& c : graph.communicators()) {
    if (!c.pg_name.empty() || c.involved_count != 0) return false;
  }
  // Native choices only (an injected algorithm is not rank-symmetric, and
  // would be loaded twice to find out).
  if (!config.per_node_algorithms.empty()) return false;
  for (const auto& [type, choice] : config.algorithms) {
    if (!find_native_algorithm(choice.substr(0, choice.find(':')))) return false;
  }
  AlgorithmRegistry algorithms(config, topology.dims(), nullptr, true);
  algorithms.set_topology(&topology);
  auto members = std::make_shared<std::vector<std::uint32_t>>(world);
  for (std::uint32_t i = 0; i < world; ++i) (*members)[i] = i;
  std::set<std::pair<CollectiveType, std::uint64_t>> checked;
  for (std::uint32_t i = 0; i < graph.size(); ++i) {
    const NodeKind kind = graph.kind(i);
    if (kind == NodeKind::kCommSend || kind == NodeKind::kCommRecv) return false;
    if (kind != NodeKind::kCommColl) continue;
    const TaskNode& n = graph.node(i);
    if (!checked.emplace(n.coll, n.comm_size).second) continue;
    const auto program =
        algorithms.program_for(CollectiveRequest{n.coll, n.comm_size, members, config.collective_chunks, n.id});
    if (program && !program->rank_symmetric()) return false;
  }
  return true;
}

}  // namespace sim
