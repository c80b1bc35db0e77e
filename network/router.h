// The routing rule of one topology form.
//
// Routes are recomputed on demand rather than stored for every pair: a 4,096-NPU
// topology has 16 M pairs, while shaped topologies route arithmetically and
// explicit graphs keep one next-hop table per destination actually used.
#pragma once

#include <vector>

#include "network/topology.h"

namespace sim {

class Router {
 public:
  virtual ~Router() = default;
  // Appends the links from NPU `src` to NPU `dst` (src != dst), in order.
  virtual void route(NodeId src, NodeId dst, std::vector<LinkId>& out) const = 0;
};

}  // namespace sim
