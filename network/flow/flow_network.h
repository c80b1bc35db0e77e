// The flow backend: congestion-aware, max-min fair sharing of links.
//
// Every message is a flow on its routed path. At every moment each link's
// bandwidth is divided max-min fairly among the flows crossing it
// (progressive filling); rates change only when a flow starts or finishes.
// Cut-through: a message is delivered when its last byte has left its
// bottleneck plus the sum of its path's link latencies, so a message alone on
// its path costs exactly what the analytical backend charges.
//
// Exactness. Rates are whole bytes per second: a link's fair share is rounded
// down, so no link ever carries more than its bandwidth. What a flow still has
// to send is kept exactly as bytes x 1e12 (a 128-bit integer), so that
// `rate x elapsed picoseconds` is subtracted without rounding; a finish time is
// rounded up to the next picosecond. Same inputs, same results, bit for bit.
//
// Incremental. A start or finish marks the links it touches; one recompute
// per simulated instant (an event queued behind everything else at that time)
// re-solves only the flows connected to those links through shared links,
// and reschedules only the finishes that moved. A flow that starts on links
// nobody else uses takes its rate at once, with no recompute, and costs one
// event (its delivery): it stays "solo" until another flow joins one of its
// links while it is still sending, which turns it into an ordinary shared flow.
// A solo flow is always the only flow on each of its links, and is kept out
// of the links' flow lists: a compact per-link word says who occupies a link,
// so the common case touches little memory.
//
// Messages between the same two NPUs on one communicator leave one after
// another (`pair_order: fifo`, the default), as on NCCL's connections, which
// each communicator opens to a peer of its own: the next starts when the
// previous one's last byte has left, and they arrive in the order sent, which
// point-to-point matching relies on. Different communicators' messages to one
// peer share the links like any flows (Connection::communicator), each
// communicator a lane of the pair with its own queue. `pair_order: shared`
// makes every message share like any other flow.
//
// Multi-path fabrics (a FatTree's spines and cores, `routing`): a message on
// connection c is split evenly over its qps_per_connection queue pairs
// c * qps + i, each part a flow on the path its queue pair hashes to
// (ecmp-hash) or the least loaded path when it starts (adaptive); `spray`
// splits it evenly over every equal-cost path. The parts of one message start
// together, the pair's next message when all have left, and the message is
// delivered with its last part. Connection 0 under ecmp-hash with one QP is
// one flow on its lane's route, as on single-path topologies. A
// communicator's queue pairs hash apart from another's (Router::ecmp_path),
// so each lane's route is the path its communicator's first queue pair
// hashes to: the pair's own route for communicator 0.
//
// `nic_bandwidth` adds one virtual egress link per NPU at the head of every
// route and one ingress link at its tail, so an NPU's total injection (and
// ejection) is capped whatever the topology.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/flat_map.h"
#include "network/backend_registry.h"
#include "network/capabilities.h"
#include "network/network.h"

namespace sim {

class FlowNetwork final : public Network, public SoloFlows, public PortLoads, public EventHandler {
 public:
  struct Options {
    LinkModel links;
    BytesPerSecond nic_bandwidth = 0;  // 0: no per-NPU cap
    bool pair_fifo = true;             // messages of one (src, dst) pair and communicator one after another
    RoutingModel routing;              // multi-path fabrics: how a pair's traffic spreads
  };

  FlowNetwork(const Topology& topology, EventQueue& queue, Options options);
  FlowNetwork(const Topology& topology, EventQueue& queue) : FlowNetwork(topology, queue, Options()) {}

  std::string_view name() const override { return "flow"; }
  const Topology& topology() const override { return topology_; }
  void send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to) override;
  void send_on(Connection connection, NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to) override;
  // Switch operations: a flow on one link (N uploads share the switch's
  // links with everything else; a reduced message is one flow down).
  bool carries_switch_ops() const override { return true; }
  void send_on_link(LinkId link, std::uint64_t bytes, const Delivery& to) override;
  std::vector<LinkUsage> link_usage() const override;
  bool measures_link_time() const override { return true; }
  SoloFlows* solo_flows() override { return this; }
  PortLoads* port_loads() override { return this; }
  // A port load is one flow on three links: a virtual link of its own whose
  // capacity is its cap, the port's egress link and its ingress link (no
  // latency). Its bytes are its cap times its work, so alone it drains by its
  // work's end; it is delivered then, or when it drains if later.
  std::uint32_t add_port_load(NodeId npu, NodeId peer, Time work, double load, const Delivery& to) override;
  double cancel_port_load(std::uint32_t id) override;
  bool ordered_pairs() const override { return options_.pair_fifo; }
  std::vector<std::pair<std::string, std::uint64_t>> counters() const override;

  // Flows still sending (for tests).
  std::size_t flows_in_flight() const { return in_flight_; }
  // The current rate of every flow in flight on `link`, in B/s (for tests).
  std::vector<BytesPerSecond> rates_on(LinkId link) const;

  // --- exact step aggregation (system/runner/aggregation/): a collective
  // whose every flow is alone on its links is priced for all its ranks at
  // once, and leaves the backend as sending each of its messages would have.
  SoloRoute solo_route(NodeId src, NodeId dst, std::uint32_t communicator) override;
  // Whether every message a pair sends on connection 0 is one flow on
  // solo_route(): always on single-path topologies, else only under
  // ecmp-hash with one QP per connection.
  bool routes_by_pair() const override;
  bool multipath() const override { return topology_.multipath(); }
  bool pair_fifo() const override { return options_.pair_fifo; }
  // Messages in the network: flows not yet taken off their links and messages
  // queued behind their lane's previous one.
  std::size_t messages_in_network() const override { return in_flight_ + queued_count_; }
  // Takes back the last message sent from src to dst on `communicator` at the
  // current time (its events become void): the last one queued, or the flow
  // that started now, alone on its links. Throws std::logic_error for anything else.
  void take_back(NodeId src, NodeId dst, std::uint32_t communicator, std::uint64_t bytes) override;
  // `messages` messages, `bytes` in all, from src to dst on `communicator`,
  // each alone on solo_route()'s links, sending for `busy` in all: the links'
  // bytes, busy time and peak.
  void record_batch(NodeId src, NodeId dst, std::uint32_t communicator, std::uint64_t messages, std::uint64_t bytes,
                    Time busy) override;

  void on_event(const Event& event) override;

 private:
  // A message in flight on its route.
  struct Flow {
    uint128 remaining = 0;  // bytes still to leave the bottleneck, x 1e12
    BytesPerSecond rate = 0;
    Time updated = 0;  // when `remaining` was last brought up to date
    Time finish = 0;   // when its last byte leaves the bottleneck at `rate`
    Time latency = 0;  // route latency plus the per-message latency
    Delivery to;
    std::uint32_t route = 0;    // index into routes_: its path
    std::uint32_t pair = 0;     // index into routes_: its lane, whose FIFO it is in
    std::uint32_t message = 0xffffffffu;  // a part of messages_[message], or a whole message
    std::uint32_t part = 0;               // its index in that message's parts
    std::uint32_t version = 0;  // bumped when `finish` moves: older finish events are stale
    std::uint32_t seen = 0;     // epoch of the last recompute that reached it
    bool frozen = false;        // its rate is settled in the current recompute
    bool solo = false;          // alone on its links: one delivery event, no finish event
    bool attached = false;      // still on its links' flow lists
    bool watched = false;       // solo with messages queued behind it: an event at its finish
    std::vector<std::uint32_t> slot;  // per hop: its position in that link's flow list
    std::uint32_t next_free = 0;
  };
  struct FlowRef {
    std::uint32_t flow;
    std::uint32_t hop;
  };
  struct LinkState {
    BytesPerSecond capacity = 0;
    std::vector<FlowRef> flows;
    // Statistics.
    std::uint64_t bytes = 0;
    Time busy = 0;        // a solo flow's whole sending time is counted at its start
    Time busy_since = 0;  // when its flow list last became non-empty
    std::uint32_t peak = 0;
    // Recompute scratch.
    std::uint64_t left = 0;      // capacity not yet given to frozen flows
    std::uint32_t unfrozen = 0;  // flows on it not yet frozen
    std::uint32_t seen = 0;      // epoch
    bool dirty = false;
  };
  // One (src, dst) pair: its route, and its messages when they go one at a
  // time. Also one more equal-cost path of a pair (its FIFO fields unused),
  // or one more lane of a pair: the same links, the FIFO of one communicator.
  struct Route {
    std::uint32_t begin = 0, hops = 0;  // into route_links_
    NodeId src = 0, dst = 0;
    std::uint32_t paths = 1;  // the pair's equal-cost paths (1 for a link's route)
    std::uint32_t path = 0;   // which one this is
    std::uint32_t base = 0;   // a lane's pair route (a route's own index otherwise)
    Time latency = 0;
    BytesPerSecond bottleneck = 0;
    std::uint64_t drain_bytes = 0;  // the last solo message's size (0: none yet) ...
    Time drain = 0;                 // ... and its time to leave at `bottleneck`
    std::uint32_t active = 0xffffffffu;  // the flow now sending, if any
    std::uint32_t active_message = 0xffffffffu;  // or the message of several parts now sending
    std::uint32_t queued_head = 0xffffffffu, queued_tail = 0xffffffffu;
  };
  struct Queued {  // a message waiting for its pair's previous one
    std::uint64_t bytes;
    Delivery to;
    std::uint32_t next;
    Connection connection;
  };
  // A message sent as several flows (its parts): delivered with its last part.
  struct Message {
    Delivery to;
    std::uint32_t pair = 0;
    std::uint32_t undelivered = 0;
    std::vector<std::uint32_t> parts;  // flow ids; kNoFlow once that part is freed
    std::uint32_t next_free = 0xffffffffu;
  };

  // A port load (add_port_load): its cap link and route, reused once it is delivered.
  struct PortLoad {
    LinkId cap_link = 0;
    std::uint32_t route = 0;
    Delivery to;
    Time start = 0;
    Time due = 0;  // its start plus its work: not delivered before
    std::uint64_t bytes = 0;
    std::uint32_t flow = 0xffffffffu;  // its flow while it sends
    std::uint32_t version = 0;         // bumped when it ends: older events are stale
    bool live = false;
    std::uint32_t next_free = 0xffffffffu;
  };

  enum Kind : std::uint32_t {
    kFinish = 0,
    kRecompute = 1,
    kSoloDelivered = 2,
    kPairNext = 3,
    kPartDelivered = 4,
    kPortLoadDrained = 5,
  };
  void port_load_drained(std::uint64_t payload);
  void free_port_load(std::uint32_t slot);

  // Finds or builds the pair's route, and makes it the source's last one.
  std::uint32_t route_of(NodeId src, NodeId dst);
  // The lane of the pair whose route is `pair` that carries `communicator`'s
  // messages (the pair route itself for 0), built on first use when `make`.
  std::uint32_t lane_of(std::uint32_t pair, std::uint32_t communicator, bool make = true);
  // The communicator whose lane carries a message of `communicator`: itself
  // where lanes differ in queue (fifo) or path (a multi-path fabric), else 0.
  std::uint32_t lane_key(std::uint32_t communicator) const { return lanes_apart_ ? communicator : 0; }
  // Builds the route of path k of src -> dst (`paths` of them).
  std::uint32_t make_route(NodeId src, NodeId dst, std::uint64_t k, std::uint64_t paths);
  // Path k of the pair whose route is `pair`.
  std::uint32_t path_route(std::uint32_t pair, std::uint64_t k);
  // The least loaded of the pair's paths now (adaptive; docs/network.md), searched from path `from`.
  std::uint32_t least_loaded_path(std::uint32_t pair, std::uint64_t from);
  // Flows sending on `link` now.
  std::size_t load_of(LinkId link) const;
  // Whether the pair's messages are one flow on its own route.
  bool one_flow(const Route& pair, Connection connection) const;
  void start_message(std::uint32_t route, std::uint64_t bytes, const Delivery& to, Connection connection);
  // One flow of `bytes` on path `route` for pair `pair` (part `part` of message `message`, or a whole one).
  std::uint32_t start_flow(std::uint32_t route, std::uint32_t pair, std::uint64_t bytes, const Delivery& to,
                  std::uint32_t message, std::uint32_t part);
  // A message split over several paths (start_message past one_flow).
  void start_parts(std::uint32_t pair, std::uint64_t bytes, const Delivery& to, Connection connection);
  void part_delivered(std::uint32_t message, const Event& event);
  // send()'s common part once the route is known: one after another per route, or at once.
  void send_route(std::uint32_t route, std::uint64_t bytes, const Delivery& to, Connection connection = {});
  // Whether the pair's current message is still sending (clears it when it is through).
  bool sending(std::uint32_t route);
  // The one-link route of `link` (switch operations).
  std::uint32_t link_route(LinkId link);
  // Whether the pair has a message still sending (or waiting).
  bool pair_busy(std::uint32_t route);
  // The pair's sending message has sent everything: start the next ones.
  void pair_advance(std::uint32_t route);
  // A solo flow with messages queued behind it needs an event at its finish.
  void watch(std::uint32_t f);
  std::uint32_t alloc_flow();
  // Puts an ordinary (not solo) flow on its links' lists.
  void attach(std::uint32_t f, std::uint64_t bytes);
  // Takes the flow off its links; they were busy with it until `until`.
  void detach(std::uint32_t f, Time until);
  void detach_solo(Flow& flow);
  // A solo flow still sending now shares a link: into its links' lists, a rate from the recompute.
  void make_ordinary(std::uint32_t f);
  void free_flow(std::uint32_t f);
  void mark_dirty(LinkId l);
  void schedule_finish(std::uint32_t f);
  [[noreturn]] void drain_limit(const Flow& flow);
  void finish(std::uint32_t f);
  void recompute();

  const Topology& topology_;
  EventQueue& queue_;
  Options options_;
  bool lanes_apart_ = true;  // lane_key: pair_fifo, or a multi-path topology (fixed at construction)
  std::vector<LinkState> links_;  // topology links, then NIC egress and ingress links
  // Per link: kNoFlow (free), kShared (ordinary flows, in its list) or the solo flow on it.
  static constexpr std::uint32_t kShared = 0xfffffffeu;
  std::vector<std::uint32_t> occupant_;
  std::vector<LinkId> route_links_;
  std::vector<Route> routes_;
  FlatMap<std::uint64_t, std::uint32_t, Mix64Hash> route_of_;  // src * npus + dst -> index in routes_
  struct LastRoute {
    NodeId dst = ~NodeId{0};
    std::uint32_t route = 0;  // the lane of `communicator`
    std::uint32_t communicator = 0;
  };
  std::vector<LastRoute> last_;  // per source: most lookups end here
  std::vector<LinkId> scratch_route_;
  FlatMap<std::uint64_t, std::uint32_t, Mix64Hash> path_of_;  // pair route << 32 | path -> index in routes_
  FlatMap<std::uint64_t, std::uint32_t, Mix64Hash> lane_of_;  // pair route << 32 | communicator -> index in routes_
  std::vector<Message> messages_;
  std::uint32_t free_message_ = 0xffffffffu;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> scratch_parts_;  // (path or QP, bytes)
  std::vector<std::size_t> scratch_load_, best_load_;

  std::vector<PortLoad> port_loads_;
  std::uint32_t free_port_load_ = 0xffffffffu;

  std::vector<Queued> queued_;
  std::uint32_t free_queued_ = 0xffffffffu;
  std::size_t queued_count_ = 0;
  std::vector<Flow> flows_;
  std::uint32_t free_flow_ = 0xffffffffu;
  std::size_t in_flight_ = 0;

  std::vector<LinkId> dirty_;
  bool recompute_pending_ = false;
  std::uint32_t epoch_ = 0;
  std::vector<std::uint32_t> comp_flows_;
  std::vector<LinkId> comp_links_;
  std::vector<std::pair<std::uint64_t, LinkId>> heap_;

  std::uint64_t recomputes_ = 0;
  std::uint64_t rates_set_ = 0;
  std::uint64_t reschedules_ = 0;
  std::size_t peak_in_flight_ = 0;
};

}  // namespace sim
