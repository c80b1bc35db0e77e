#include "network/ns3/routes.h"

namespace sim {

const std::vector<LinkId>& PairRoutes::route(NodeId src, NodeId dst) {
  auto [it, fresh] = routes_.try_emplace(pair_key(src, dst));
  if (fresh) topology_.route(src, dst, it->second);
  return it->second;
}

}  // namespace sim
