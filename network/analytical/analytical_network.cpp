#include "network/analytical/analytical_network.h"

#include <unordered_map>

#include <algorithm>
#include <limits>
#include <new>
#include <string>

#include "core/error.h"

namespace sim {

AnalyticalNetwork::AnalyticalNetwork(const Topology& topology, EventQueue& queue, LinkModel model,
                                     bool serialize_egress)
    : topology_(topology),
      queue_(queue),
      model_(model),
      serialize_egress_(serialize_egress),
      egress_free_at_(topology.links().size(), 0),
      last_(topology.npu_count()) {
  model_.check_links(topology);
  const std::uint64_t npus = topology.npu_count();
  if (npus * npus <= kDensePairs) {
    // Huge pages up to 2,048 NPUs (16 MiB): a check that walks every rank's
    // routes (folding's, aggregation's) then faults a few times instead of
    // once per row. Above that the rows are 16 KiB or more and sparsely used,
    // and whole 2 MiB pages would hold up to 64 MiB for a few entries per row.
    const std::size_t bytes = npus * npus * sizeof(std::uint32_t);
    dense_pair_of_ = std::unique_ptr<std::uint32_t[], ZeroedTableDeleter>(
        static_cast<std::uint32_t*>(allocate_zeroed_table(bytes, bytes <= kHugeDensePairBytes)),
        ZeroedTableDeleter{bytes});
  }
}

std::uint32_t AnalyticalNetwork::pair_index(NodeId src, NodeId dst) {
  const std::uint64_t key = std::uint64_t{src} * topology_.npu_count() + dst;
  if (dense_pair_of_) {
    if (const std::uint32_t known = dense_pair_of_[key]; known != 0) return known - 1;
  } else if (const std::uint32_t* known = pair_of_.find(key)) {
    return *known;
  }
  const std::uint32_t cost = cost_index(route_cost(src, dst));
  const auto index = static_cast<std::uint32_t>(pairs_.size());
  pairs_.push_back(Pair{src, dst, cost, 0});
  if (dense_pair_of_) {
    dense_pair_of_[key] = index + 1;
  } else {
    pair_of_[key] = index;
  }
  return index;
}

std::uint32_t AnalyticalNetwork::cost_index(const PathCost& cost) {
  std::uint32_t& index = cost_of_[cost];  // 0: new (indices are stored + 1)
  if (index == 0) {
    costs_.push_back(cost);
    index = static_cast<std::uint32_t>(costs_.size());
  }
  return index - 1;
}

AnalyticalNetwork::PathCost AnalyticalNetwork::path_cost_once(NodeId src, NodeId dst) {
  const std::uint64_t key = std::uint64_t{src} * topology_.npu_count() + dst;
  if (dense_pair_of_) {
    if (const std::uint32_t known = dense_pair_of_[key]; known != 0) return costs_[pairs_[known - 1].cost];
  } else if (const std::uint32_t* known = pair_of_.find(key)) {
    return costs_[pairs_[*known].cost];
  }
  return route_cost(src, dst);
}

AnalyticalNetwork::PathCost AnalyticalNetwork::route_cost(NodeId src, NodeId dst) {
  scratch_route_.clear();
  topology_.route(src, dst, scratch_route_);
  PathCost cost;
  cost.min_bandwidth = std::numeric_limits<BytesPerSecond>::max();
  cost.first_link = scratch_route_.empty() ? 0 : scratch_route_.front();
  cost.hops = static_cast<std::uint32_t>(scratch_route_.size());
  cost.bottleneck_link = cost.first_link;
  for (const LinkId id : scratch_route_) {
    const Link& link = topology_.links()[id];
    cost.latency_sum = add_time(cost.latency_sum, link.latency, "a route's latency");
    const BytesPerSecond bw = model_.effective(link.bandwidth);
    if (id == cost.first_link) cost.port_bandwidth = bw;
    if (bw < cost.min_bandwidth) {
      cost.min_bandwidth = bw;
      cost.bottleneck_link = id;
    }
  }
  cost.latency_sum = add_time(cost.latency_sum, model_.message_latency, "a route's latency");
  return cost;
}

Time AnalyticalNetwork::busiest_queue() const {
  std::unordered_map<LinkId, Time> busy;
  for (const Pair& p : pairs_) {
    if (p.bytes == 0) continue;
    const PathCost& cost = costs_[p.cost];
    if (cost.bottleneck_link != cost.first_link) {
      busy[cost.first_link] += transfer_time(p.bytes, cost.port_bandwidth);
      busy[cost.bottleneck_link] += transfer_time(p.bytes, cost.min_bandwidth);
    } else {
      busy[cost.first_link] += transfer_time(p.bytes, cost.min_bandwidth);
    }
  }
  for (std::size_t l = 0; l < link_bytes_.size(); ++l) {
    if (link_bytes_[l] > 0) busy[static_cast<LinkId>(l)] += transfer_time(link_bytes_[l], topology_.links()[l].bandwidth);
  }
  Time most = 0;
  for (const auto& [link, t] : busy) most = std::max(most, t);
  return most;
}

void AnalyticalNetwork::send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to) {
  if (!admit(src, dst, to, queue_)) return;
  LastPath& last = last_[src];
  if (last.dst != dst) {
    last.dst = dst;
    last.pair = pair_index(src, dst);
  }
  Pair& pair = pairs_[last.pair];
  const PathCost& cost = costs_[pair.cost];
  // Every sum checked: 1e14 B at 1 B/s, or a long queue at the egress port,
  // must stop the run with the limit named, never wrap into the past.
  const Time beta = transfer_time(bytes, cost.min_bandwidth);
  Time start = queue_.now();
  // A route whose bottleneck lies past the sender's port (a GPU's NVLink on
  // the way to another GPU's NIC) holds the port only for the port's own
  // time, and queues on its bottleneck link instead: the port is not a
  // 50 GB/s link because one of its messages goes on to one.
  // Waiting there does not hold the port either: the message crosses the
  // port when the port is free and waits past it (NCCL's PXN stages it in the
  // proxy GPU's buffer), so the port's next messages, which go elsewhere
  // (another channel's NVLink step), are not stuck behind a queue they do
  // not use.
  const bool downstream = cost.bottleneck_link != cost.first_link;
  Time sent = 0;
  Time port_free = 0;
  if (serialize_egress_) {
    if (downstream) {
      const auto [port_start, port_end] = book(cost.first_link, start, transfer_time(bytes, cost.port_bandwidth));
      port_free = port_end;
      sent = book(cost.bottleneck_link, port_start, beta).second;
    } else {
      sent = book(cost.first_link, start, beta).second;
      port_free = sent;
    }
  } else {
    sent = add_time(start, beta, "the end of a message's injection");
  }
  const Time delivery = add_time(sent, cost.latency_sum, "a message's delivery");
  pair.bytes = add_bytes(pair.bytes, bytes, "the bytes an NPU pair sent");
  if (serialize_egress_) {
    last.busy_until = std::max(last.busy_until, port_free);
    if (downstream) {
      const NodeId owner = topology_.links()[cost.bottleneck_link].from;  // its port is busy too
      if (owner < topology_.npu_count()) last_[owner].busy_until = std::max(last_[owner].busy_until, sent);
    }
  }
  queue_.schedule(delivery, to.handler, to.kind, to.payload);
}

void AnalyticalNetwork::send_on_link(LinkId link, std::uint64_t bytes, const Delivery& to) {
  const Link& l = topology_.links().at(link);
  recount_messages(1, 0);
  const Time beta = transfer_time(bytes, model_.effective(l.bandwidth));
  const Time sent = serialize_egress_ ? book(link, queue_.now(), beta).second
                                      : add_time(queue_.now(), beta, "the end of a message's injection");
  const Time delivery =
      add_time(sent, add_time(l.latency, model_.message_latency, "a link's latency"), "a message's delivery");
  if (serialize_egress_ && l.from < topology_.npu_count()) {
    last_[l.from].busy_until = std::max(last_[l.from].busy_until, sent);
  }
  if (link_bytes_.empty()) link_bytes_.assign(topology_.links().size(), 0);
  link_bytes_[link] = add_bytes(link_bytes_[link], bytes, "the bytes a link carried");
  queue_.schedule(delivery, to.handler, to.kind, to.payload);
}

std::pair<Time, Time> AnalyticalNetwork::book(LinkId link, Time ready, Time duration) {
  Time& tail = egress_free_at_[link];
  Time first = -1;
  if (!idle_.empty() && !idle_[link].empty() && ready < tail) {
    std::vector<Idle>& gaps = idle_[link];
    std::vector<Idle>& left = idle_scratch_;  // the gaps that stay, rebuilt in place of `gaps`
    left.clear();
    for (Idle g : gaps) {
      if (g.end <= queue_.now()) continue;  // past: nothing is ready that early any more
      const Time s = std::max(g.begin, ready);
      if (duration > 0 && s < g.end) {
        const Time use = std::min(g.end - s, duration);
        if (first < 0) first = s;
        duration -= use;
        if (duration == 0) ready = s + use;  // where the last piece ends
        if (s > g.begin) left.push_back(Idle{g.begin, s});
        g.begin = s + use;
      }
      if (g.begin < g.end) left.push_back(g);
    }
    gaps.swap(left);
    if (duration == 0 && first >= 0) return {first, ready};
  }
  // The rest from the free tail on; a start past it leaves the link idle until then.
  const Time s = std::max(ready, tail);
  const Time idle_from = std::max(tail, queue_.now());
  if (s > idle_from) {
    if (idle_.empty()) idle_.resize(egress_free_at_.size());
    idle_[link].push_back(Idle{idle_from, s});
  }
  if (first < 0) first = s;
  tail = add_time(s, duration, "the end of a message's injection");
  return {first, tail};
}

void AnalyticalNetwork::unsend(NodeId src, NodeId dst, std::uint64_t bytes) {
  pairs_[pair_index(src, dst)].bytes -= bytes;
  recount_messages(0, 1);
}

void AnalyticalNetwork::record_batch(NodeId src, NodeId dst, std::uint64_t messages, std::uint64_t bytes,
                                     Time egress_free) {
  Pair& pair = pairs_[pair_index(src, dst)];
  pair.bytes = add_bytes(pair.bytes, bytes, "the bytes an NPU pair sent");
  if (serialize_egress_ && messages > 0) {
    egress_free_at_[costs_[pair.cost].first_link] = egress_free;
    last_[src].busy_until = std::max(last_[src].busy_until, egress_free);
  }
  recount_messages(messages, 0);
}

std::vector<LinkUsage> AnalyticalNetwork::link_usage() const {
  std::vector<LinkUsage> usage(topology_.links().size());
  for (std::size_t l = 0; l < link_bytes_.size(); ++l) usage[l].bytes = link_bytes_[l];
  std::vector<LinkId> route;
  for (const Pair& p : pairs_) {
    if (p.bytes == 0) continue;
    route.clear();
    topology_.route(p.src, p.dst, route);
    for (const LinkId id : route) usage[id].bytes = add_bytes(usage[id].bytes, p.bytes, "the bytes a link carried");
  }
  return usage;
}

}  // namespace sim
