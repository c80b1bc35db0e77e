#include "network/ns3/routes.h"

namespace sim {

const std::vector<LinkId>& PairRoutes::route(NodeId src, NodeId dst) {
  auto [it, fresh] = routes_.try_emplace(pair_key(src, dst));
  if (fresh) topology_.route(src, dst, it->second);
  return it->second;
}

const std::vector<LinkId>& PairRoutes::route_path(NodeId src, NodeId dst, std::uint64_t k) {
  if (topology_.path_count(src, dst) <= 1) return route(src, dst);
  auto [it, fresh] = paths_.try_emplace({pair_key(src, dst), k});
  if (fresh) topology_.route_path(src, dst, k, it->second);
  return it->second;
}

}  // namespace sim
