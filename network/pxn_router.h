// Routing through a neighbour's NIC, as NCCL's PXN sends (an explicit graph's
// `routing: pxn`, docs/network.md "Routing through the destination's rail").
//
// A message to a GPU of another host leaves its host by the NIC on the
// destination's rail: the NIC with the same place among the host's NICs as
// the destination's own NIC has among its host's. It reaches that NIC inside
// the host (NVLink to the GPU beside it, or a PCIe switch they share), then
// takes the fewest hops on. On a rail-optimised fabric the message then
// crosses one rail switch and no spine, as NCCL's proxy on the neighbouring
// GPU makes it. Messages inside a host, and to a GPU with no NIC or on a rail
// the sender's host lacks, take the fewest hops.
//
// Without NIC nodes a host's GPUs are its rails: the exit is the GPU of the
// sender's host in the destination's place (its first link out is its NIC).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "network/router.h"
#include "network/shortest_path_router.h"

namespace sim {

class PxnRouter final : public Router {
 public:
  // `roles` per switch (empty: every switch a plain switch), `hosts` per NPU
  // (every NPU in one host 0..H-1). Every GPU must reach each of its host's
  // exits inside the host; problem() names the first that does not.
  PxnRouter(std::unique_ptr<ShortestPathRouter> shortest, std::uint32_t npu_count, std::uint32_t switch_count,
            const std::vector<Link>& links, const std::vector<NodeRole>& roles, const std::vector<std::uint32_t>& hosts);

  void route(NodeId src, NodeId dst, std::vector<LinkId>& out) const override;

  // Empty when every GPU reaches every exit of its host; otherwise what does not.
  const std::string& problem() const { return problem_; }
  // The fewest-hops router underneath (for its reachability check).
  const ShortestPathRouter& shortest() const { return *shortest_; }
  // The fewest-hops router it wraps, for a graph that cannot route by rails (leaves this one empty).
  std::unique_ptr<ShortestPathRouter> take_shortest() { return std::move(shortest_); }
  // The node a message from host `host` to `dst` leaves by, or kNoExit when it
  // takes the fewest hops.
  static constexpr NodeId kNoExit = ~NodeId{0};
  NodeId exit(std::uint32_t host, NodeId dst) const;

 private:
  static constexpr std::uint32_t kNoRail = ~std::uint32_t{0};

  std::unique_ptr<ShortestPathRouter> shortest_;
  std::vector<std::uint32_t> hosts_;             // per NPU
  std::vector<std::uint32_t> rail_;              // per NPU: its place among its host's exits, or kNoRail
  std::vector<std::vector<NodeId>> exits_;       // per host: its NICs (or GPUs) in id order
  // Inside-the-host path of GPU g to exit r of its host: links
  // path_links_[path_start_[first_path_[g] + r] .. path_start_[first_path_[g] + r + 1]).
  std::vector<std::uint32_t> first_path_;
  std::vector<std::uint32_t> path_start_;
  std::vector<LinkId> path_links_;
  std::string problem_;
};

}  // namespace sim
