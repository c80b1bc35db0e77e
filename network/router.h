// The routing rule of one topology form.
//
// Routes are recomputed on demand rather than stored for every pair: a 4,096-NPU
// topology has 16 M pairs, while shaped topologies route arithmetically and
// explicit graphs keep one next-hop table per destination actually used.
#pragma once

#include <cstdint>
#include <vector>

#include "network/topology.h"

namespace sim {

class Router {
 public:
  virtual ~Router() = default;
  // Appends the links from NPU `src` to NPU `dst` (src != dst), in order:
  // the path of the pair's first queue pair, ecmp_path(src, dst, 0, 0).
  virtual void route(NodeId src, NodeId dst, std::vector<LinkId>& out) const = 0;

  // Equal-cost multi-path (docs/network.md, "Multi-path routing"). Forms with
  // one path per pair keep these defaults.
  // Whether some pair of NPUs has more than one equal-cost path.
  virtual bool multipath() const { return false; }
  // How many equal-cost paths run from src to dst (>= 1; src != dst).
  virtual std::uint64_t path_count(NodeId /*src*/, NodeId /*dst*/) const { return 1; }
  // Appends path `k` (< path_count) from src to dst.
  virtual void route_path(NodeId src, NodeId dst, std::uint64_t /*k*/, std::vector<LinkId>& out) const {
    route(src, dst, out);
  }
  // The path (< path_count) that queue pair `qp` of the pair's communicator
  // `communicator` (Connection::communicator) takes under the form's ECMP
  // rule, its hash seeded with `seed`.
  virtual std::uint64_t ecmp_path(NodeId /*src*/, NodeId /*dst*/, std::uint64_t /*qp*/, std::uint64_t /*seed*/,
                                  std::uint32_t /*communicator*/) const {
    return 0;
  }
};

}  // namespace sim
