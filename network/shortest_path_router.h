// Routing on an arbitrary graph: fewest hops, ties broken by the lowest
// next-hop node id (then lowest link id), so routes are deterministic.
//
// One next-hop table per destination, built by a backward BFS the first time a
// destination is routed to and kept. Memory grows with the destinations
// actually used, never with all N^2 pairs up front. Routing is thread-safe:
// one topology is shared read-only by the points of a sweep run on threads,
// so each table is published once (std::call_once per destination).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "network/router.h"

namespace sim {

class ShortestPathRouter final : public Router {
 public:
  ShortestPathRouter(std::uint32_t node_count, std::uint32_t npu_count, const std::vector<Link>& links);

  void route(NodeId src, NodeId dst, std::vector<LinkId>& out) const override;

  // Some (from, to) pair of NPUs with no path, or nothing if every NPU reaches
  // every other. O(nodes + links): all NPUs must share one strongly connected
  // component, checked by a forward and a backward search from NPU 0.
  std::optional<std::pair<NodeId, NodeId>> unreachable_pair() const;

 private:
  static constexpr LinkId kNone = ~LinkId{0};

  // Hop distance of every node from `start` along (backward = against) links.
  std::vector<std::uint32_t> distances(NodeId start, bool backward) const;
  const std::vector<LinkId>& next_hops_to(NodeId dst) const;
  void build_next_hops(NodeId dst) const;  // fills next_hop_[dst]; once per dst

  std::uint32_t node_count_;
  std::uint32_t npu_count_;
  std::vector<NodeId> from_, to_;  // per link
  // Compressed adjacency: links leaving / entering node v are
  // out_[out_start_[v] .. out_start_[v+1]) and likewise for in_.
  std::vector<std::uint32_t> out_start_, in_start_;
  std::vector<LinkId> out_, in_;
  mutable std::vector<std::vector<LinkId>> next_hop_;  // [dst][node] -> link, built lazily
  mutable std::unique_ptr<std::once_flag[]> built_;    // [dst]: next_hop_[dst] is complete
};

}  // namespace sim
