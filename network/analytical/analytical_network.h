// The analytical backend: alpha-beta per message, no contention inside the
// network, plus serialization at the sender's egress port.
//
// A message of `bytes` from src to dst, sent at time `now`, on a route whose
// links have latencies l_i and bandwidths b_i:
//
//   beta     = transfer_time(bytes, min_i b_i)    cut-through: the bottleneck sets the rate
//   start    = max(now, egress_free_at[first link])
//   egress_free_at[first link] = start + beta
//   delivery = start + sum_i l_i + beta
//
// The first link is the sender's egress port; it injects one message at a time,
// in send() order. Without it, pipelined chunks sent back to back would all
// arrive after one latency + one beta and a collective would beat the link rate
// (ASTRA-sim's congestion-unaware backend reports busbw above link bandwidth).
// Option `egress: overlap` drops the serialization, which is exactly
// ASTRA-sim's congestion-unaware model (every message as if alone on the
// network): for reproducing its numbers, not for physics.
// Messages from different senders, or on different first links, never delay
// each other, even where their routes share a link: use the flow backend for
// contention. (A message whose bottleneck lies past its first link queues at
// that bottleneck too, and a link idle before such a message serves later
// ones ready there: analytical_network.cpp, send and book.)
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/flat_map.h"
#include "core/huge_pages.h"
#include "network/backend_registry.h"
#include "network/capabilities.h"
#include "network/network.h"

namespace sim {

class AnalyticalNetwork final : public Network, public ClosedFormRoutes {
 public:
  using PathCost = ClosedFormRoutes::PathCost;

  AnalyticalNetwork(const Topology& topology, EventQueue& queue, LinkModel model = {},
                    bool serialize_egress = true);

  std::string_view name() const override { return "analytical"; }
  const Topology& topology() const override { return topology_; }
  void send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to) override;
  // Switch operations: a message on one link, serialized at that link like
  // an egress port (a switch's port down to an NPU is its egress).
  bool carries_switch_ops() const override { return true; }
  void send_on_link(LinkId link, std::uint64_t bytes, const Delivery& to) override;
  // Bytes per link (each pair's bytes spread over its route when asked).
  std::vector<LinkUsage> link_usage() const override;
  bool measures_link_time() const override { return false; }
  ClosedFormRoutes* closed_form_routes() override { return this; }

  // The longest any link that serializes messages (an egress port, a
  // bottleneck past it, a switch's port for switch operations) has been busy
  // so far: its messages' injection times summed.
  Time busiest_queue() const override;

  // Cost of the route src -> dst (src != dst), computed once then cached.
  PathCost path_cost(NodeId src, NodeId dst) override { return costs_[pairs_[pair_index(src, dst)].cost]; }
  // The same, not cached: for checks over many pairs that never send (the
  // replicas a fold mirrors), which would fill the cache with pairs never used.
  PathCost path_cost_once(NodeId src, NodeId dst) override;

  // --- exact step aggregation (system/runner/aggregation/): a symmetric
  // collective priced for all its ranks at once leaves the backend as sending
  // each of its messages would have (egress ports, bytes per pair, messages).
  bool serializes_egress() const override { return serialize_egress_; }
  // Room for `more` NPU pairs beyond those used so far (a collective about
  // to be priced for every rank at once), so the table grows once.
  void reserve_pairs(std::size_t more) override { pairs_.reserve(pairs_.size() + more); }
  // When every egress port of NPU `npu` is free (0 if it never sent).
  Time egress_free(NodeId npu) const override { return last_[npu].busy_until; }
  // Takes back a message send() injected at the current time (its delivery
  // event stays queued: the caller ignores it). The egress port is left as
  // it is; record_batch() sets it.
  void unsend(NodeId src, NodeId dst, std::uint64_t bytes) override;
  // `messages` messages, `bytes` in all, from src to dst, the last of them
  // leaving src's egress port at `egress_free`.
  void record_batch(NodeId src, NodeId dst, std::uint64_t messages, std::uint64_t bytes, Time egress_free) override;

 private:
  // One NPU pair that has sent: its cost (an index into costs_: routes of
  // one shape share one, so a pair is 24 bytes where an all-to-all has a
  // million) and the bytes it has sent so far.
  struct Pair {
    NodeId src, dst;
    std::uint32_t cost;
    std::uint64_t bytes = 0;
  };
  struct PathCostHash {
    std::size_t operator()(const PathCost& c) const noexcept {
      return mix64(static_cast<std::uint64_t>(c.latency_sum) * 0x9e3779b97f4a7c15ull ^ c.min_bandwidth ^
                   (std::uint64_t{c.first_link} << 32 | c.bottleneck_link) ^ (c.port_bandwidth << 7) ^ c.hops);
    }
  };
  std::uint32_t pair_index(NodeId src, NodeId dst);
  std::uint32_t cost_index(const PathCost& cost);
  PathCost route_cost(NodeId src, NodeId dst);

  const Topology& topology_;
  EventQueue& queue_;
  LinkModel model_;
  bool serialize_egress_;
  std::vector<Time> egress_free_at_;                    // per link: free from then on
  // Per link, the times before egress_free_at_ when it stood idle while later
  // messages were already booked (a message relayed to another GPU's NIC
  // booked past the NIC's own sends, waiting for its GPU's NVLink port):
  // sorted, disjoint [begin, end). A message ready in such a gap starts
  // there, in pieces around the booked ones, as a port serving every queue
  // pair it has work for does (packets interleave; the message is through
  // when its last piece is). Empty on most links.
  struct Idle {
    Time begin, end;
  };
  std::vector<std::vector<Idle>> idle_;  // per link, sized at the first gap
  std::vector<Idle> idle_scratch_;       // book()'s working list, kept to spare an allocation per message
  // Books `duration` on `link` from `ready` on: the gaps first, then the
  // free tail. Returns when the first piece starts and when the last ends.
  std::pair<Time, Time> book(LinkId link, Time ready, Time duration);
  // src * npus + dst -> index in pairs_ + 1 (0: not used yet). Dense up to
  // kDensePairs NPU pairs: a source's destinations are then one row, which
  // all-to-all patterns (direct: every rank to every other) walk in order,
  // where a hash table would miss the cache on every pair. Mapped zero pages
  // (core/huge_pages.h), so only the parts where sources send are ever
  // touched; hashed above that.
  static constexpr std::uint64_t kDensePairs = std::uint64_t{1} << 24;
  static constexpr std::size_t kHugeDensePairBytes = std::size_t{16} << 20;
  std::unique_ptr<std::uint32_t[], ZeroedTableDeleter> dense_pair_of_;
  FlatMap<std::uint64_t, std::uint32_t, Mix64Hash> pair_of_;  // the same, hashed: src * npus + dst -> index
  std::vector<Pair> pairs_;                                 // only the pairs actually used
  std::vector<PathCost> costs_;                             // the distinct costs of their routes
  FlatMap<PathCost, std::uint32_t, PathCostHash> cost_of_;  // cost -> index in costs_
  // Each source's last destination: collectives send to the same peer again
  // and again, so most lookups end here without hashing.
  struct LastPath {
    NodeId dst = ~NodeId{0};
    std::uint32_t pair = 0;
    Time busy_until = 0;  // the latest egress free time of the source's ports
  };
  std::vector<LastPath> last_;
  std::vector<LinkId> scratch_route_;
  std::vector<std::uint64_t> link_bytes_;  // bytes sent with send_on_link, per link (empty until one is)
};

}  // namespace sim
