// Routes by NPU pair, as our router chooses them (fat-tree ECMP hashes the
// pair, the torus goes dimension by dimension, graphs take fewest hops), so
// every transport's packets take exactly the other backends' links.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <unordered_map>
#include <vector>

#include "network/topology.h"

namespace sim {

class PairRoutes {
 public:
  explicit PairRoutes(const Topology& topology) : topology_(topology) {}
  // The links from src to dst in order; computed once per pair. The reference
  // stays valid while this object lives (node-based map).
  const std::vector<LinkId>& route(NodeId src, NodeId dst);
  // Equal-cost path `k` of the pair (Topology::route_path), for transports
  // that route queue pairs apart; path k of a pair with one path is route().
  const std::vector<LinkId>& route_path(NodeId src, NodeId dst, std::uint64_t k);

 private:
  const Topology& topology_;
  std::unordered_map<std::uint64_t, std::vector<LinkId>> routes_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<LinkId>> paths_;
};

inline std::uint64_t pair_key(NodeId src, NodeId dst) { return (std::uint64_t{src} << 32) | dst; }

}  // namespace sim
