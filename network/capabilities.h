// What a backend can do beyond carrying messages, asked for by the engine
// (Network::closed_form_routes(), Network::solo_flows()) instead of knowing
// backends by name or type. A backend offers a capability by implementing its
// interface; one that does not returns nullptr, and the engine then runs
// every message through send().
//
// - ClosedFormRoutes: every route has a fixed cost and messages queue only at
//   their sender's egress port (or a bottleneck past it). What folded replicas
//   need (a copy's route priced as its original's) and what exact step
//   aggregation prices a whole collective with.
// - SoloFlows: a message alone on its links costs a closed form, and the
//   backend can take back and re-record messages, so a collective whose every
//   flow is alone is advanced as one (system/runner/aggregation/flow_carrier.h).
// - PortLoads: traffic timed elsewhere (a stand-in's collective over folded
//   copies, system/runner/aggregation/stand_in.h) put on an NPU's port as one
//   flow at most its share of the port's rate, sharing the port with the
//   messages through it as their messages would, and ending later when
//   they leave it less than that share.
//
// Which backends offer which is known before one is built:
// BackendInfo::capabilities (network/backend_registry.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/time.h"
#include "network/topology.h"

namespace sim {

struct Delivery;  // network/network.h

class ClosedFormRoutes {
 public:
  // What a route costs; the same for every message on it.
  struct PathCost {
    Time latency_sum = 0;
    BytesPerSecond min_bandwidth = 0;
    LinkId first_link = 0;
    // The first link of least bandwidth (first_link when that one is the
    // slowest), and the first link's own bandwidth.
    LinkId bottleneck_link = 0;
    BytesPerSecond port_bandwidth = 0;
    std::uint32_t hops = 0;
    bool operator==(const PathCost&) const = default;
  };

  virtual const Topology& topology() const = 0;
  // Cost of the route src -> dst (src != dst), cached.
  virtual PathCost path_cost(NodeId src, NodeId dst) = 0;
  // The same, not cached: for checks over many pairs that never send (the
  // replicas a fold mirrors), which would fill the cache with pairs never used.
  virtual PathCost path_cost_once(NodeId src, NodeId dst) = 0;
  // Whether an NPU's messages leave each port one after another.
  virtual bool serializes_egress() const = 0;
  // The longest any serializing link has been busy so far.
  virtual Time busiest_queue() const = 0;
  // When every egress port of NPU `npu` is free (0 if it never sent).
  virtual Time egress_free(NodeId npu) const = 0;

  // --- exact step aggregation: a collective priced for all its ranks at once
  // leaves the backend as sending each of its messages would have.
  // Room for `more` NPU pairs beyond those used so far.
  virtual void reserve_pairs(std::size_t more) = 0;
  // Takes back a message send() injected at the current time (its delivery
  // event stays queued: the caller ignores it).
  virtual void unsend(NodeId src, NodeId dst, std::uint64_t bytes) = 0;
  // `messages` messages, `bytes` in all, from src to dst, the last of them
  // leaving src's egress port at `egress_free`.
  virtual void record_batch(NodeId src, NodeId dst, std::uint64_t messages, std::uint64_t bytes,
                            Time egress_free) = 0;

 protected:
  ~ClosedFormRoutes() = default;
};

class SoloFlows {
 public:
  struct SoloRoute {
    Time latency = 0;               // route latency plus the per-message latency
    BytesPerSecond bottleneck = 0;  // the rate of a message alone on the route
    std::vector<LinkId> links;      // NIC links included
  };
  virtual const Topology& topology() const = 0;
  // The route src -> dst of `communicator`'s messages (Connection::communicator;
  // its own hashed path on a multi-path fabric) as a message alone on it sees it.
  virtual SoloRoute solo_route(NodeId src, NodeId dst, std::uint32_t communicator) = 0;
  // Whether some pair has several equal-cost paths (so connections other
  // than a pair's first may take other links than solo_route()).
  virtual bool multipath() const = 0;
  // Whether every message a pair sends on its first connection is one flow on solo_route().
  virtual bool routes_by_pair() const = 0;
  // Whether messages of one NPU pair and communicator leave one after another.
  virtual bool pair_fifo() const = 0;
  // Messages in the network: in flight or queued behind their connection's previous one.
  virtual std::size_t messages_in_network() const = 0;
  // Takes back the last message sent from src to dst on `communicator`
  // (Connection::communicator) at the current time, alone on its links (its
  // events become void).
  virtual void take_back(NodeId src, NodeId dst, std::uint32_t communicator, std::uint64_t bytes) = 0;
  // `messages` messages, `bytes` in all, from src to dst on `communicator`,
  // each alone on solo_route()'s links, sending for `busy` in all: the links'
  // bytes, busy time and peak.
  virtual void record_batch(NodeId src, NodeId dst, std::uint32_t communicator, std::uint64_t messages,
                            std::uint64_t bytes, Time busy) = 0;

  // The time a message of `bytes` takes to leave its bottleneck at `rate`
  // (ceil(bytes x 1e12 / rate) ps), or -1 if it does not fit a Time.
  static Time drain_time(std::uint64_t bytes, BytesPerSecond rate);

 protected:
  ~SoloFlows() = default;
};

class PortLoads {
 public:
  // Puts a load on NPU `npu`'s port (the first link of its route to `peer`
  // and the last link of peer's route to it): one flow at most `load` (0 to
  // 1) of the port's rate, with `work` of time's worth to carry at that rate.
  // `to` is delivered when it has: `work` from now when nothing else uses the
  // port, later when the port is shared (max-min fairly, as one flow).
  // Returns its id for cancel_port_load.
  virtual std::uint32_t add_port_load(NodeId npu, NodeId peer, Time work, double load, const Delivery& to) = 0;
  // Takes a load off its port before it is delivered (its delivery is void)
  // and says how much of it was carried, 0 to 1.
  virtual double cancel_port_load(std::uint32_t id) = 0;
  // Whether messages between two NPUs on one communicator leave one after
  // another (then a group's collectives, which send to one peer on the
  // group's communicator, take the port one at a time).
  virtual bool ordered_pairs() const = 0;

 protected:
  ~PortLoads() = default;
};

}  // namespace sim
