#include "network/flow/flow_network.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/error.h"

namespace sim {

namespace {
constexpr std::uint32_t kNoFlow = 0xffffffffu;
constexpr std::uint64_t kPsPerSecond = 1'000'000'000'000ULL;

// ceil(remaining / rate) picoseconds, or -1 if it does not fit a Time.
Time time_to_drain(uint128 remaining, BytesPerSecond rate) {
  if (remaining <= UINT64_MAX - rate) {  // up to ~18 MB left: a 64-bit division, much cheaper
    return static_cast<Time>((static_cast<std::uint64_t>(remaining) + rate - 1) / rate);
  }
  const uint128 t = (remaining + rate - 1) / rate;
  if (t > static_cast<uint128>(std::numeric_limits<Time>::max() / 2)) return -1;
  return static_cast<Time>(t);
}

// add_time / add_bytes with the check inline: they are called on every
// message, and the out-of-line versions (which build the error) cost a call each.
inline Time add_time_inline(Time a, Time b, const char* what) {
  Time sum;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &sum)) [[unlikely]] return add_time(a, b, what);
  return sum;
}
inline std::uint64_t add_bytes_inline(std::uint64_t a, std::uint64_t b, const char* what) {
  std::uint64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) [[unlikely]] return add_bytes(a, b, what);
  return sum;
}
}  // namespace

FlowNetwork::FlowNetwork(const Topology& topology, EventQueue& queue, Options options)
    : topology_(topology),
      queue_(queue),
      options_(options),
      lanes_apart_(options.pair_fifo || topology.multipath()),
      last_(topology.npu_count()) {
  const auto& links = topology.links();
  const std::size_t nic = options_.nic_bandwidth ? 2 * std::size_t{topology.npu_count()} : 0;
  links_.resize(links.size() + nic);
  occupant_.assign(links_.size(), kNoFlow);
  for (std::size_t i = 0; i < links.size(); ++i) links_[i].capacity = options_.links.effective(links[i].bandwidth);
  for (std::size_t i = links.size(); i < links_.size(); ++i) links_[i].capacity = options_.nic_bandwidth;
}

std::uint32_t FlowNetwork::route_of(NodeId src, NodeId dst) {
  const std::uint64_t key = std::uint64_t{src} * topology_.npu_count() + dst;
  std::uint32_t index;
  if (const std::uint32_t* known = route_of_.find(key)) {
    index = *known;
  } else {
    // The path of the pair's first queue pair: the topology's own route
    // unless the ECMP hash is seeded.
    const std::uint64_t paths = topology_.path_count(src, dst);
    const std::uint64_t k =
        paths > 1 ? topology_.ecmp_path(src, dst, 0, options_.routing.ecmp_seed) : 0;
    index = make_route(src, dst, k, paths);
    route_of_[key] = index;
  }
  last_[src] = LastRoute{dst, index};
  return index;
}

std::uint32_t FlowNetwork::lane_of(std::uint32_t pair, std::uint32_t communicator, bool make) {
  if (communicator == 0) return pair;
  const std::uint64_t key = std::uint64_t{pair} << 32 | communicator;
  if (const std::uint32_t* known = lane_of_.find(key)) return *known;
  if (!make) throw std::logic_error("flow network: no lane for that communicator");
  // A queue of its own, on the path the communicator's first queue pair
  // hashes to (on one path, the pair's links and latency); the pair's paths.
  const Route own = routes_[pair];
  const std::uint64_t k =
      own.paths > 1 ? topology_.ecmp_path(own.src, own.dst, 0, options_.routing.ecmp_seed, communicator) : own.path;
  std::uint32_t index;
  if (k == own.path) {
    Route lane = own;
    lane.drain_bytes = 0;
    lane.drain = 0;
    lane.active = lane.active_message = lane.queued_head = lane.queued_tail = kNoFlow;
    index = static_cast<std::uint32_t>(routes_.size());
    routes_.push_back(lane);
  } else {
    index = make_route(own.src, own.dst, k, own.paths);
  }
  routes_[index].base = pair;
  lane_of_[key] = index;
  return index;
}

std::uint32_t FlowNetwork::path_route(std::uint32_t pair, std::uint64_t k) {
  pair = routes_[pair].base;  // a lane's paths are its pair's
  if (routes_[pair].path == k) return pair;
  const std::uint64_t key = std::uint64_t{pair} << 32 | k;
  if (const std::uint32_t* known = path_of_.find(key)) return *known;
  const std::uint32_t index = make_route(routes_[pair].src, routes_[pair].dst, k, routes_[pair].paths);
  path_of_[key] = index;
  return index;
}

std::uint32_t FlowNetwork::make_route(NodeId src, NodeId dst, std::uint64_t k, std::uint64_t paths) {
  // Path numbers index a topology's links (FatTree: spines x cores), far below 2^32.
  if (paths > 0xffffffffu) throw std::logic_error("flow network: more than 2^32 equal-cost paths");
  scratch_route_.clear();
  if (paths > 1) {
    topology_.route_path(src, dst, k, scratch_route_);
  } else {
    topology_.route(src, dst, scratch_route_);
  }
  {
    Route r;
    r.src = src;
    r.dst = dst;
    r.paths = static_cast<std::uint32_t>(paths);
    r.path = static_cast<std::uint32_t>(k);
    r.begin = static_cast<std::uint32_t>(route_links_.size());
    const auto real = static_cast<LinkId>(topology_.links().size());
    if (options_.nic_bandwidth) route_links_.push_back(real + src);
    for (const LinkId id : scratch_route_) {
      route_links_.push_back(id);
      r.latency = add_time(r.latency, topology_.links()[id].latency, "a route's latency");
    }
    if (options_.nic_bandwidth) route_links_.push_back(real + topology_.npu_count() + dst);
    r.hops = static_cast<std::uint32_t>(route_links_.size() - r.begin);
    r.latency = add_time(r.latency, options_.links.message_latency, "a route's latency");
    r.bottleneck = std::numeric_limits<BytesPerSecond>::max();
    for (std::uint32_t h = 0; h < r.hops; ++h) r.bottleneck = std::min(r.bottleneck, links_[route_links_[r.begin + h]].capacity);
    r.base = static_cast<std::uint32_t>(routes_.size());
    routes_.push_back(r);
  }
  return static_cast<std::uint32_t>(routes_.size() - 1);
}

bool FlowNetwork::routes_by_pair() const {
  return !topology_.multipath() ||
         (options_.routing.routing == Routing::kEcmpHash && options_.routing.qps_per_connection == 1);
}

bool FlowNetwork::one_flow(const Route& pair, Connection connection) const {
  return pair.paths == 1 || (connection.index == 0 && options_.routing.routing == Routing::kEcmpHash &&
                             options_.routing.qps_per_connection == 1);
}

std::size_t FlowNetwork::load_of(LinkId link) const {
  const std::uint32_t o = occupant_[link];
  if (o == kShared) return links_[link].flows.size();
  if (o != kNoFlow) return flows_[o].finish > queue_.now() ? 1 : 0;
  return 0;
}

std::uint32_t FlowNetwork::least_loaded_path(std::uint32_t pair, std::uint64_t from) {
  const std::uint64_t paths = routes_[pair].paths;
  std::uint32_t best = kNoFlow;
  for (std::uint64_t t = 0; t < paths; ++t) {
    const std::uint32_t r = path_route(pair, (from + t) % paths);
    const Route& route = routes_[r];
    scratch_load_.clear();
    for (std::uint32_t h = 0; h < route.hops; ++h) scratch_load_.push_back(load_of(route_links_[route.begin + h]));
    // Hop by hop, the first hop whose load differs decides: each switch on the way up takes its least loaded uplink.
    if (best == kNoFlow || scratch_load_ < best_load_) {
      best = r;
      best_load_.swap(scratch_load_);
    }
  }
  return best;
}

std::uint32_t FlowNetwork::alloc_flow() {
  if (free_flow_ != kNoFlow) {
    const std::uint32_t f = free_flow_;
    free_flow_ = flows_[f].next_free;
    return f;
  }
  flows_.emplace_back();
  return static_cast<std::uint32_t>(flows_.size() - 1);
}

void FlowNetwork::send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to) {
  if (!admit(src, dst, to, queue_)) return;
  const LastRoute last = last_[src];  // most lookups end here, without a call
  const std::uint32_t r = last.dst == dst && last.communicator == 0 ? last.route : route_of(src, dst);
  send_route(r, bytes, to);
}

void FlowNetwork::send_on(Connection connection, NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to) {
  if (!admit(src, dst, to, queue_)) return;
  const std::uint32_t communicator = lane_key(connection.communicator);
  const LastRoute last = last_[src];
  std::uint32_t r;
  if (last.dst == dst && last.communicator == communicator) {
    r = last.route;
  } else {
    r = lane_of(route_of(src, dst), communicator);
    last_[src] = LastRoute{dst, r, communicator};
  }
  send_route(r, bytes, to, connection);
}

std::uint32_t FlowNetwork::link_route(LinkId link) {
  // Keyed above every NPU pair's key (src * npus + dst < npus^2).
  const std::uint64_t npus = topology_.npu_count();
  const std::uint64_t key = npus * npus + link;
  if (const std::uint32_t* known = route_of_.find(key)) return *known;
  const Link& l = topology_.links().at(link);
  Route r;
  r.begin = static_cast<std::uint32_t>(route_links_.size());
  route_links_.push_back(link);
  r.hops = 1;
  r.latency = add_time(l.latency, options_.links.message_latency, "a link's latency");
  r.bottleneck = links_[link].capacity;
  const auto index = static_cast<std::uint32_t>(routes_.size());
  r.base = index;
  routes_.push_back(r);
  route_of_[key] = index;
  return index;
}

void FlowNetwork::send_on_link(LinkId link, std::uint64_t bytes, const Delivery& to) {
  recount_messages(1, 0);
  send_route(link_route(link), bytes, to);
}

std::uint32_t FlowNetwork::add_port_load(NodeId npu, NodeId peer, Time work, double load, const Delivery& to) {
  if (npu == peer || npu >= topology_.npu_count() || peer >= topology_.npu_count()) {
    throw std::logic_error("flow network: a port load needs two NPUs");
  }
  const Time now = queue_.now();
  const LinkId egress = route_links_[routes_[route_of(npu, peer)].begin];
  const std::uint32_t back = route_of(peer, npu);
  const LinkId ingress = route_links_[routes_[back].begin + routes_[back].hops - 1];
  const BytesPerSecond port = std::min(links_[egress].capacity, links_[ingress].capacity);
  const auto cap = std::max<BytesPerSecond>(
      1, static_cast<BytesPerSecond>(std::clamp(load, 0.0, 1.0) * static_cast<double>(port)));
  std::uint32_t slot = free_port_load_;
  if (slot != kNoFlow) {
    free_port_load_ = port_loads_[slot].next_free;
  } else {
    slot = static_cast<std::uint32_t>(port_loads_.size());
    PortLoad fresh;
    fresh.cap_link = static_cast<LinkId>(links_.size());
    links_.emplace_back();
    occupant_.push_back(kNoFlow);
    fresh.route = static_cast<std::uint32_t>(routes_.size());
    Route r;
    r.begin = static_cast<std::uint32_t>(route_links_.size());
    r.hops = 3;
    route_links_.insert(route_links_.end(), {fresh.cap_link, 0, 0});
    routes_.push_back(r);
    port_loads_.push_back(fresh);
  }
  PortLoad& pl = port_loads_[slot];
  pl.to = to;
  pl.start = now;
  pl.due = add_time(now, work, "a port load's end");
  pl.bytes = static_cast<std::uint64_t>(static_cast<uint128>(cap) * static_cast<std::uint64_t>(std::max<Time>(work, 0)) /
                                        kPsPerSecond);
  pl.live = true;
  pl.flow = kNoFlow;
  links_[pl.cap_link].capacity = cap;
  Route& r = routes_[pl.route];
  route_links_[r.begin + 1] = egress;
  route_links_[r.begin + 2] = ingress;
  r.src = r.dst = npu;
  r.latency = 0;
  r.bottleneck = std::min(cap, port);
  r.drain_bytes = 0;
  r.active = kNoFlow;
  const std::uint64_t payload = std::uint64_t{pl.version} << 32 | slot;
  if (pl.bytes == 0) {
    queue_.schedule(pl.due, this, kPortLoadDrained, payload);
  } else {
    pl.flow = start_flow(pl.route, pl.route, pl.bytes, Delivery{this, kPortLoadDrained, payload}, kNoFlow, 0);
  }
  return slot;
}

double FlowNetwork::cancel_port_load(std::uint32_t id) {
  if (id >= port_loads_.size() || !port_loads_[id].live) throw std::logic_error("flow network: no such port load");
  PortLoad& pl = port_loads_[id];
  const Time now = queue_.now();
  const std::uint64_t payload = std::uint64_t{pl.version} << 32 | id;
  double carried = 1;
  // Its flow, unless that has finished already (its delivery is then queued, and the id may be reused).
  Flow* flow = pl.flow != kNoFlow ? &flows_[pl.flow] : nullptr;
  if (flow && !(flow->to.handler == this && flow->to.kind == kPortLoadDrained && flow->to.payload == payload &&
                (flow->attached || flow->solo))) {
    flow = nullptr;
  }
  if (flow) {
    uint128 left = 0;
    if (flow->solo) {
      if (flow->finish > now) left = static_cast<uint128>(flow->rate) * static_cast<std::uint64_t>(flow->finish - now);
    } else {
      const uint128 sent = static_cast<uint128>(flow->rate) * static_cast<std::uint64_t>(now - flow->updated);
      left = sent >= flow->remaining ? 0 : flow->remaining - sent;
    }
    carried = 1 - static_cast<double>(left) / (static_cast<double>(pl.bytes) * static_cast<double>(kPsPerSecond));
    if (flow->attached) {
      // Its links counted all its bytes when it started (a solo flow its busy
      // time to its finish too): what it did not carry is given back.
      const auto unsent = static_cast<std::uint64_t>(left / kPsPerSecond);
      for (std::uint32_t h = 0; h < 3; ++h) {
        LinkState& link = links_[route_links_[routes_[pl.route].begin + h]];
        link.bytes -= std::min(link.bytes, unsent);
        if (flow->solo && flow->finish > now) link.busy -= flow->finish - now;
      }
      detach(pl.flow, now);
    }
    free_flow(pl.flow);
  } else if (pl.bytes == 0 && pl.due > pl.start) {
    carried = static_cast<double>(now - pl.start) / static_cast<double>(pl.due - pl.start);
  }
  free_port_load(id);
  return std::clamp(carried, 0.0, 1.0);
}

void FlowNetwork::free_port_load(std::uint32_t slot) {
  PortLoad& pl = port_loads_[slot];
  pl.live = false;
  pl.flow = kNoFlow;
  ++pl.version;
  pl.next_free = free_port_load_;
  free_port_load_ = slot;
}

void FlowNetwork::port_load_drained(std::uint64_t payload) {
  const auto slot = static_cast<std::uint32_t>(payload);
  PortLoad& pl = port_loads_[slot];
  if (!pl.live || pl.version != static_cast<std::uint32_t>(payload >> 32)) return;  // cancelled
  pl.flow = kNoFlow;  // its flow is freed (this is its delivery)
  if (queue_.now() < pl.due) {  // drained early (its cap rounds down): delivered at its work's end
    queue_.schedule(pl.due, this, kPortLoadDrained, payload);
    return;
  }
  const Delivery to = pl.to;
  free_port_load(slot);
  queue_.schedule(queue_.now(), to.handler, to.kind, to.payload);
}

void FlowNetwork::send_route(std::uint32_t r, std::uint64_t bytes, const Delivery& to, Connection connection) {
  if (options_.pair_fifo && pair_busy(r)) {
    std::uint32_t q;
    if (free_queued_ != kNoFlow) {
      q = free_queued_;
      free_queued_ = queued_[q].next;
    } else {
      q = static_cast<std::uint32_t>(queued_.size());
      queued_.emplace_back();
    }
    queued_[q] = Queued{bytes, to, kNoFlow, connection};
    ++queued_count_;
    Route& route = routes_[r];
    if (route.queued_tail == kNoFlow) route.queued_head = q; else queued_[route.queued_tail].next = q;
    route.queued_tail = q;
    if (route.active != kNoFlow) watch(route.active);
    if (route.active_message != kNoFlow) {
      for (const std::uint32_t f : messages_[route.active_message].parts) {
        if (f != kNoFlow) watch(f);
      }
    }
    return;
  }
  start_message(r, bytes, to, connection);
}

bool FlowNetwork::pair_busy(std::uint32_t r) {
  if (routes_[r].queued_head != kNoFlow) return true;
  return sending(r);
}

bool FlowNetwork::sending(std::uint32_t r) {
  Route& route = routes_[r];
  const Time now = queue_.now();
  if (route.active != kNoFlow) {
    const Flow& flow = flows_[route.active];
    if (flow.solo && flow.finish <= now) {  // sent everything; only its latency is left
      route.active = kNoFlow;
      return false;
    }
    return true;
  }
  if (route.active_message != kNoFlow) {
    for (const std::uint32_t f : messages_[route.active_message].parts) {
      if (f != kNoFlow && !(flows_[f].solo && flows_[f].finish <= now)) return true;
    }
    route.active_message = kNoFlow;
  }
  return false;
}

void FlowNetwork::watch(std::uint32_t f) {
  Flow& flow = flows_[f];
  if (!flow.solo || flow.watched) return;  // an ordinary flow advances its pair when it finishes
  flow.watched = true;
  queue_.schedule(flow.finish, this, kPairNext, static_cast<std::uint64_t>(flow.version) << 32 | f);
}

void FlowNetwork::pair_advance(std::uint32_t r) {
  routes_[r].active = kNoFlow;
  routes_[r].active_message = kNoFlow;
  while (routes_[r].queued_head != kNoFlow && routes_[r].active == kNoFlow && routes_[r].active_message == kNoFlow) {
    Route& route = routes_[r];
    const std::uint32_t q = route.queued_head;
    const Queued next = queued_[q];
    route.queued_head = next.next;
    if (route.queued_head == kNoFlow) route.queued_tail = kNoFlow;
    queued_[q].next = free_queued_;
    free_queued_ = q;
    --queued_count_;
    start_message(r, next.bytes, next.to, next.connection);  // a zero-byte message leaves at once; the loop goes on
  }
}

void FlowNetwork::start_message(std::uint32_t r, std::uint64_t bytes, const Delivery& to, Connection connection) {
  if (one_flow(routes_[r], connection) || bytes == 0) {
    start_flow(r, r, bytes, to, kNoFlow, 0);
  } else {
    start_parts(r, bytes, to, connection);
  }
}

void FlowNetwork::start_parts(std::uint32_t pair, std::uint64_t bytes, const Delivery& to, Connection connection) {
  const RoutingModel& m = options_.routing;
  const NodeId src = routes_[pair].src, dst = routes_[pair].dst;
  // (QP or path, bytes) of every part that carries bytes: an even split, the
  // first `bytes mod n` parts one byte more.
  scratch_parts_.clear();
  const std::uint64_t n = m.routing == Routing::kSpray ? routes_[pair].paths : m.qps_per_connection;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t share = bytes / n + (i < bytes % n ? 1 : 0);
    if (share == 0) continue;
    scratch_parts_.emplace_back(m.routing == Routing::kSpray ? i : std::uint64_t{connection.index} * n + i, share);
  }
  const auto path_of_part = [&](std::uint64_t id) {
    if (m.routing == Routing::kSpray) return path_route(pair, id);
    const std::uint64_t hashed = topology_.ecmp_path(src, dst, id, m.ecmp_seed, connection.communicator);
    return m.routing == Routing::kAdaptive ? least_loaded_path(pair, hashed) : path_route(pair, hashed);
  };
  if (scratch_parts_.size() == 1) {  // one part carries it all: a whole message on that path
    start_flow(path_of_part(scratch_parts_[0].first), pair, bytes, to, kNoFlow, 0);
    return;
  }
  std::uint32_t id;
  if (free_message_ != kNoFlow) {
    id = free_message_;
    free_message_ = messages_[id].next_free;
  } else {
    id = static_cast<std::uint32_t>(messages_.size());
    messages_.emplace_back();
  }
  {
    Message& message = messages_[id];
    message.to = to;
    message.pair = pair;
    message.undelivered = static_cast<std::uint32_t>(scratch_parts_.size());
    message.parts.assign(scratch_parts_.size(), kNoFlow);
  }
  // One after another at the same instant: adaptive sees the parts started before it.
  for (std::uint32_t i = 0; i < scratch_parts_.size(); ++i) {
    start_flow(path_of_part(scratch_parts_[i].first), pair, scratch_parts_[i].second, Delivery{this, kPartDelivered, id},
               id, i);
  }
  if (options_.pair_fifo) routes_[pair].active_message = id;
}

void FlowNetwork::part_delivered(std::uint32_t id, const Event& event) {
  Message& message = messages_[id];
  if (--message.undelivered > 0) return;
  const Delivery to = message.to;
  if (routes_[message.pair].active_message == id) routes_[message.pair].active_message = kNoFlow;
  message.next_free = free_message_;
  free_message_ = id;
  to.handler->on_event(Event{event.time, to.handler, to.payload, to.kind});
}

std::uint32_t FlowNetwork::start_flow(std::uint32_t r, std::uint32_t pair, std::uint64_t bytes, const Delivery& to,
                             std::uint32_t message, std::uint32_t part) {
  const Time now = queue_.now();
  Route& route = routes_[r];
  if (bytes == 0) {  // nothing to share: only the latency
    queue_.schedule(add_time(now, route.latency, "a message's delivery"), to.handler, to.kind, to.payload);
    return kNoFlow;
  }
  const LinkId* const hop = route_links_.data() + route.begin;
  // Alone on every link of its route: the bottleneck rate, no recompute.
  bool alone = true;
  for (std::uint32_t h = 0; h < route.hops; ++h) {
    const LinkId l = hop[h];
    if (const std::uint32_t other = occupant_[l]; other < kShared) {
      if (flows_[other].finish <= now) {
        detach_solo(flows_[other]);  // all sent; its delivery event frees it
      } else {
        make_ordinary(other);
      }
    }
    alone = alone && occupant_[l] == kNoFlow;
  }

  const std::uint32_t f = alloc_flow();
  Flow& flow = flows_[f];
  flow.remaining = static_cast<uint128>(bytes) * kPsPerSecond;
  flow.updated = now;
  flow.latency = route.latency;
  flow.to = to;
  flow.route = r;
  flow.pair = pair;
  flow.message = message;
  flow.part = part;
  if (message != kNoFlow) messages_[message].parts[part] = f;
  flow.finish = -1;
  flow.frozen = false;
  flow.solo = alone;
  flow.watched = false;
  if (options_.pair_fifo && message == kNoFlow) routes_[pair].active = f;
  ++in_flight_;
  peak_in_flight_ = std::max(peak_in_flight_, in_flight_);
  if (!alone) {
    attach(f, bytes);
    flow.rate = 0;
    for (std::uint32_t h = 0; h < route.hops; ++h) mark_dirty(hop[h]);
    return f;
  }
  // Solo: its finish is known now, so it costs one event (its delivery), and
  // its links' busy time is counted at once (make_ordinary takes back what it
  // does not use). Every link is empty: position 0 everywhere, slots written
  // only if it ever shares.
  flow.attached = true;
  flow.rate = route.bottleneck;
  // The drain time of the route's last message size, kept: a pair mostly
  // sends one size again and again, and the division is the slow part.
  if (route.drain_bytes != bytes) {
    const Time drain = drain_time(bytes, flow.rate);
    if (drain < 0) drain_limit(flow);
    route.drain_bytes = bytes;
    route.drain = drain;
  }
  const Time at = add_time_inline(now, route.drain, "a message's finish on the flow network");
  const Time delivered = add_time_inline(at, flow.latency, "a message's delivery");
  for (std::uint32_t h = 0; h < route.hops; ++h) {
    occupant_[hop[h]] = f;
    LinkState& link = links_[hop[h]];
    link.busy += route.drain;
    link.peak = std::max(link.peak, 1u);
    link.bytes = add_bytes_inline(link.bytes, bytes, "the bytes a link carried");
  }
  flow.finish = at;
  ++flow.version;
  queue_.schedule(delivered, this, kSoloDelivered, static_cast<std::uint64_t>(flow.version) << 32 | f);
  if (routes_[pair].queued_head != kNoFlow) watch(f);
  return f;
}

void FlowNetwork::attach(std::uint32_t f, std::uint64_t bytes) {
  Flow& flow = flows_[f];
  flow.attached = true;
  const Route& route = routes_[flow.route];
  const Time now = queue_.now();
  flow.slot.resize(route.hops);
  for (std::uint32_t h = 0; h < route.hops; ++h) {
    LinkState& link = links_[route_links_[route.begin + h]];
    if (link.flows.empty()) link.busy_since = now;
    occupant_[route_links_[route.begin + h]] = kShared;
    flow.slot[h] = static_cast<std::uint32_t>(link.flows.size());
    link.flows.push_back(FlowRef{f, h});
    link.peak = std::max(link.peak, static_cast<std::uint32_t>(link.flows.size()));
    link.bytes = add_bytes(link.bytes, bytes, "the bytes a link carried");
  }
}

inline void FlowNetwork::detach_solo(Flow& flow) {
  flow.attached = false;
  --in_flight_;
  const Route& route = routes_[flow.route];
  const LinkId* const hop = route_links_.data() + route.begin;
  for (std::uint32_t h = 0; h < route.hops; ++h) occupant_[hop[h]] = kNoFlow;
}

void FlowNetwork::detach(std::uint32_t f, Time until) {
  Flow& flow = flows_[f];
  if (flow.solo) {  // the only flow on each of its links, busy until its finish (counted at its start)
    detach_solo(flow);
    return;
  }
  flow.attached = false;
  --in_flight_;
  const Route& route = routes_[flow.route];
  for (std::uint32_t h = 0; h < route.hops; ++h) {
    const LinkId id = route_links_[route.begin + h];
    LinkState& link = links_[id];
    // Swap-remove, and tell the moved flow its new position.
    const std::uint32_t pos = flow.slot[h];
    const FlowRef moved = link.flows.back();
    link.flows[pos] = moved;
    flows_[moved.flow].slot[moved.hop] = pos;
    link.flows.pop_back();
    if (link.flows.empty()) {
      occupant_[id] = kNoFlow;
      link.busy += until - link.busy_since;
    } else {
      mark_dirty(id);
    }
  }
}

void FlowNetwork::make_ordinary(std::uint32_t f) {
  Flow& flow = flows_[f];
  // Its delivery event becomes void; the recompute this join triggers gives
  // it a rate and a finish. Its links were counted busy until its solo
  // finish: from now on they count as shared links do, busy since now.
  const Time now = queue_.now();
  const Route& route = routes_[flow.route];
  // Into its links' lists, where it was alone: first on every one.
  flow.slot.assign(route.hops, 0);
  for (std::uint32_t h = 0; h < route.hops; ++h) {
    const LinkId id = route_links_[route.begin + h];
    LinkState& link = links_[id];
    link.busy -= flow.finish - now;
    link.busy_since = now;
    occupant_[id] = kShared;
    link.flows.push_back(FlowRef{f, h});
  }
  flow.solo = false;
  flow.watched = false;
  flow.finish = -1;
  ++flow.version;
}

void FlowNetwork::free_flow(std::uint32_t f) {
  Flow& flow = flows_[f];
  if (routes_[flow.pair].active == f) routes_[flow.pair].active = kNoFlow;
  if (flow.message != kNoFlow) messages_[flow.message].parts[flow.part] = kNoFlow;
  flow.message = kNoFlow;
  ++flow.version;  // whatever event still names it is stale
  flow.finish = -1;
  flow.solo = false;
  flow.watched = false;
  flow.next_free = free_flow_;
  free_flow_ = f;
}

void FlowNetwork::mark_dirty(LinkId l) {
  LinkState& link = links_[l];
  if (!link.dirty) {
    link.dirty = true;
    dirty_.push_back(l);
  }
  if (!recompute_pending_) {
    recompute_pending_ = true;
    // Queued behind every event already due now: all starts and finishes of
    // this instant are folded into one recompute.
    queue_.schedule(queue_.now(), this, kRecompute, 0);
  }
}

void FlowNetwork::drain_limit(const Flow& flow) {
  throw TimeLimitError("a message on the flow network (" + std::to_string(static_cast<std::uint64_t>(
                           flow.remaining / kPsPerSecond)) + " B left at " + std::to_string(flow.rate) +
                       " B/s) would finish after the largest representable time, " + describe_time_limit());
}

void FlowNetwork::schedule_finish(std::uint32_t f) {
  Flow& flow = flows_[f];
  const Time drain = time_to_drain(flow.remaining, flow.rate);
  if (drain < 0) drain_limit(flow);
  const Time at = add_time(flow.updated, drain, "a message's finish on the flow network");
  add_time(at, flow.latency, "a message's delivery");  // checked here so the event below cannot wrap
  if (at == flow.finish) return;  // unchanged: the queued finish event stands
  flow.finish = at;
  ++flow.version;
  const std::uint64_t payload = static_cast<std::uint64_t>(flow.version) << 32 | f;
  if (flow.solo) {
    queue_.schedule(at + flow.latency, this, kSoloDelivered, payload);
    return;
  }
  ++reschedules_;
  queue_.schedule(at, this, kFinish, payload);
}

void FlowNetwork::finish(std::uint32_t f) {
  Flow& flow = flows_[f];
  detach(f, queue_.now());
  queue_.schedule(add_time(queue_.now(), flow.latency, "a message's delivery"), flow.to.handler, flow.to.kind, flow.to.payload);
  const std::uint32_t r = flow.pair;
  const bool whole = flow.message == kNoFlow;
  free_flow(f);
  if (whole || !sending(r)) pair_advance(r);
}

void FlowNetwork::on_event(const Event& event) {
  if (event.kind == kRecompute) {
    recompute();
    return;
  }
  if (event.kind == kPartDelivered) {
    part_delivered(static_cast<std::uint32_t>(event.payload), event);
    return;
  }
  if (event.kind == kPortLoadDrained) {
    port_load_drained(event.payload);
    return;
  }
  const auto f = static_cast<std::uint32_t>(event.payload);
  const auto version = static_cast<std::uint32_t>(event.payload >> 32);
  Flow& flow = flows_[f];
  if (flow.version != version) return;  // rescheduled since
  if (event.kind == kPairNext) {  // a watched solo flow has sent everything
    if (flow.solo && flow.finish == queue_.now() && !sending(flow.pair)) pair_advance(flow.pair);
    return;
  }
  if (event.kind == kSoloDelivered) {
    if (flow.attached) detach_solo(flow);  // the version matched: still solo
    const Delivery to = flow.to;
    const std::uint32_t r = flow.pair;
    const std::uint32_t message = flow.message;
    free_flow(f);
    // With zero latency the delivery can come before the watch event: advance here.
    if (routes_[r].queued_head != kNoFlow && routes_[r].active == kNoFlow &&
        (message == kNoFlow ? routes_[r].active_message == kNoFlow : !sending(r))) {
      pair_advance(r);
    }
    if (message != kNoFlow) {
      part_delivered(message, event);
      return;
    }
    to.handler->on_event(Event{event.time, to.handler, to.payload, to.kind});
    return;
  }
  if (flow.finish != queue_.now()) return;
  finish(f);
}

void FlowNetwork::recompute() {
  recompute_pending_ = false;
  ++recomputes_;
  const Time now = queue_.now();
  ++epoch_;
  // The connected part of the flow-link graph around the changed links.
  comp_flows_.clear();
  comp_links_.clear();
  for (const LinkId l : dirty_) {
    links_[l].dirty = false;
    if (links_[l].seen != epoch_ && !links_[l].flows.empty()) {
      links_[l].seen = epoch_;
      comp_links_.push_back(l);
    }
  }
  dirty_.clear();
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    for (const FlowRef ref : links_[comp_links_[i]].flows) {
      Flow& flow = flows_[ref.flow];
      if (flow.seen == epoch_) continue;
      flow.seen = epoch_;
      comp_flows_.push_back(ref.flow);
      const Route& route = routes_[flow.route];
      for (std::uint32_t h = 0; h < route.hops; ++h) {
        LinkState& link = links_[route_links_[route.begin + h]];
        if (link.seen != epoch_) {
          link.seen = epoch_;
          comp_links_.push_back(route_links_[route.begin + h]);
        }
      }
    }
  }
  // Bring every affected flow up to now at its old rate.
  for (const std::uint32_t f : comp_flows_) {
    Flow& flow = flows_[f];
    const uint128 sent = static_cast<uint128>(flow.rate) * static_cast<std::uint64_t>(now - flow.updated);
    flow.remaining = sent >= flow.remaining ? 0 : flow.remaining - sent;
    flow.updated = now;
    flow.frozen = false;
  }
  // Progressive filling: the link with the smallest fair share fixes the rate
  // of its unfrozen flows; take them out of every link they cross; repeat.
  // A link's share only grows as others freeze flows, so a heap entry whose
  // share is out of date is simply pushed again with its current value.
  heap_.clear();
  auto share = [](const LinkState& l) { return l.left / l.unfrozen; };
  for (const LinkId l : comp_links_) {
    LinkState& link = links_[l];
    link.left = link.capacity;
    link.unfrozen = static_cast<std::uint32_t>(link.flows.size());
    heap_.emplace_back(share(link), l);
  }
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    const auto [key, l] = heap_.back();
    heap_.pop_back();
    LinkState& link = links_[l];
    if (link.unfrozen == 0) continue;
    const std::uint64_t s = share(link);
    if (s != key) {
      heap_.emplace_back(s, l);
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
      continue;
    }
    // A share below 1 B/s (more flows than bytes per second) still moves.
    const BytesPerSecond rate = s > 0 ? s : 1;
    for (const FlowRef ref : link.flows) {
      Flow& flow = flows_[ref.flow];
      if (flow.frozen) continue;
      flow.frozen = true;
      flow.rate = rate;
      ++rates_set_;
      const Route& route = routes_[flow.route];
      for (std::uint32_t h = 0; h < route.hops; ++h) {
        LinkState& other = links_[route_links_[route.begin + h]];
        other.left = other.left >= rate ? other.left - rate : 0;
        --other.unfrozen;
      }
    }
  }
  for (const std::uint32_t f : comp_flows_) schedule_finish(f);
}

std::vector<LinkUsage> FlowNetwork::link_usage() const {
  const std::size_t n = topology_.links().size();
  std::vector<LinkUsage> usage(n);
  const Time now = queue_.now();
  for (std::size_t i = 0; i < n; ++i) {
    const LinkState& l = links_[i];
    usage[i].bytes = l.bytes;
    usage[i].busy = l.busy;
    if (occupant_[i] == kShared) {
      usage[i].busy += now - l.busy_since;
    } else if (occupant_[i] != kNoFlow) {  // solo: counted until its finish, which may be still ahead
      usage[i].busy -= std::max<Time>(flows_[occupant_[i]].finish - now, 0);
    }
    usage[i].peak_flows = l.peak;
  }
  return usage;
}

Time SoloFlows::drain_time(std::uint64_t bytes, BytesPerSecond rate) {
  return time_to_drain(static_cast<uint128>(bytes) * kPsPerSecond, rate);
}

SoloFlows::SoloRoute FlowNetwork::solo_route(NodeId src, NodeId dst, std::uint32_t communicator) {
  const Route& r = routes_[lane_of(route_of(src, dst), lane_key(communicator))];
  SoloRoute out;
  out.latency = r.latency;
  out.bottleneck = r.bottleneck;
  out.links.assign(route_links_.begin() + r.begin, route_links_.begin() + r.begin + r.hops);
  return out;
}

void FlowNetwork::take_back(NodeId src, NodeId dst, std::uint32_t communicator, std::uint64_t bytes) {
  const std::uint32_t pair = route_of(src, dst);
  Route& route = routes_[lane_of(pair, lane_key(communicator), false)];
  recount_messages(0, 1);
  if (route.queued_tail != kNoFlow) {  // the last one queued (a short list: walk it for the one before)
    const std::uint32_t q = route.queued_tail;
    std::uint32_t before = kNoFlow;
    for (std::uint32_t i = route.queued_head; i != q; i = queued_[i].next) before = i;
    if (queued_[q].bytes != bytes) throw std::logic_error("flow network: take_back of a message not queued last");
    if (before == kNoFlow) {
      route.queued_head = route.queued_tail = kNoFlow;
    } else {
      queued_[before].next = kNoFlow;
      route.queued_tail = before;
    }
    queued_[q].next = free_queued_;
    free_queued_ = q;
    --queued_count_;
    return;
  }
  if (bytes == 0) return;  // delivered after its latency alone: its event is void to the caller
  const Time now = queue_.now();
  const std::uint32_t f = route.active;
  if (f == kNoFlow || !flows_[f].solo || !flows_[f].attached || flows_[f].updated != now ||
      flows_[f].remaining != static_cast<uint128>(bytes) * kPsPerSecond) {
    throw std::logic_error("flow network: take_back of a message that is not a solo flow started now");
  }
  Flow& flow = flows_[f];
  const LinkId* const hop = route_links_.data() + route.begin;
  for (std::uint32_t h = 0; h < route.hops; ++h) {
    LinkState& link = links_[hop[h]];
    link.bytes -= bytes;
    link.busy -= flow.finish - now;  // counted whole at its start; its peak of 1 stands
  }
  detach_solo(flow);
  free_flow(f);  // its delivery and watch events are stale
}

void FlowNetwork::record_batch(NodeId src, NodeId dst, std::uint32_t communicator, std::uint64_t messages,
                               std::uint64_t bytes, Time busy) {
  const Route& route = routes_[lane_of(route_of(src, dst), lane_key(communicator))];
  const LinkId* const hop = route_links_.data() + route.begin;
  for (std::uint32_t h = 0; h < route.hops; ++h) {
    LinkState& link = links_[hop[h]];
    link.bytes = add_bytes(link.bytes, bytes, "the bytes a link carried");
    link.busy = add_time(link.busy, busy, "a link's busy time");
    if (busy > 0) link.peak = std::max(link.peak, 1u);
  }
  recount_messages(messages, 0);
}

std::vector<BytesPerSecond> FlowNetwork::rates_on(LinkId link) const {
  std::vector<BytesPerSecond> rates;
  if (occupant_.at(link) < kShared) rates.push_back(flows_[occupant_[link]].rate);
  for (const FlowRef ref : links_.at(link).flows) rates.push_back(flows_[ref.flow].rate);
  return rates;
}

std::vector<std::pair<std::string, std::uint64_t>> FlowNetwork::counters() const {
  return {{"rate recomputations", recomputes_},
          {"flow rates set", rates_set_},
          {"finish reschedules", reschedules_},
          {"peak flows in flight", peak_in_flight_}};
}

}  // namespace sim
