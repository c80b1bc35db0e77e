#include "network/analytical_network.h"

#include <algorithm>
#include <limits>
#include <string>

#include "core/error.h"

namespace sim {

AnalyticalNetwork::AnalyticalNetwork(const Topology& topology, EventQueue& queue, MessageSink& sink)
    : topology_(topology),
      queue_(queue),
      sink_(sink),
      egress_free_at_(topology.links().size(), 0),
      last_(topology.npu_count()) {}

AnalyticalNetwork::PathCost AnalyticalNetwork::path_cost(NodeId src, NodeId dst) {
  const std::uint64_t key = std::uint64_t{src} * topology_.npu_count() + dst;
  if (const PathCost* known = costs_.find(key)) return *known;
  scratch_route_.clear();
  topology_.route(src, dst, scratch_route_);
  PathCost cost;
  cost.min_bandwidth = std::numeric_limits<BytesPerSecond>::max();
  cost.first_link = scratch_route_.empty() ? 0 : scratch_route_.front();
  cost.hops = static_cast<std::uint32_t>(scratch_route_.size());
  for (const LinkId id : scratch_route_) {
    const Link& link = topology_.links()[id];
    cost.latency_sum += link.latency;
    cost.min_bandwidth = std::min(cost.min_bandwidth, link.bandwidth);
  }
  costs_[key] = cost;
  return cost;
}

void AnalyticalNetwork::send(NodeId src, NodeId dst, std::uint64_t bytes, std::uint64_t token) {
  const std::uint32_t npus = topology_.npu_count();
  if (src >= npus || dst >= npus) {
    throw InputError("message " + std::to_string(src) + " -> " + std::to_string(dst) + ": the topology has " +
                     std::to_string(npus) + " NPUs (0.." + std::to_string(npus - 1) + ")");
  }
  ++messages_sent_;
  const Time now = queue_.now();
  if (src == dst) {
    queue_.schedule(now, this, 0, token);
    return;
  }
  LastPath& last = last_[src];
  if (last.dst != dst) last = LastPath{dst, path_cost(src, dst)};
  const PathCost& cost = last.cost;
  const Time beta = transfer_time(bytes, cost.min_bandwidth);
  Time& egress_free = egress_free_at_[cost.first_link];
  const Time start = std::max(now, egress_free);
  egress_free = start + beta;
  queue_.schedule(start + cost.latency_sum + beta, this, 0, token);
}

void AnalyticalNetwork::on_event(const Event& event) { sink_.on_delivered(event.payload); }

}  // namespace sim
