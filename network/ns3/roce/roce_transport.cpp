// transport: roce and transport: ib (network/ns3/transport.h): ports, forwarding
// nodes with PFC and ECN (or InfiniBand's credits), and NICs with queue
// pairs, DCQCN and go-back-N, as events on ns-3's simulator. The only
// translation unit of the RDMA model that includes ns-3 (its simulator only).
#include "network/ns3/transport.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "network/ns3/link_stats.h"
#include "network/ns3/roce/dcqcn.h"
#include "network/ns3/roce/frames.h"
#include "network/ns3/roce/pfc_thresholds.h"
#include "network/ns3/routes.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"

namespace sim {
namespace {

Time now() { return ns3::Simulator::Now().GetPicoSeconds(); }
ns3::Time ps(Time t) { return ns3::PicoSeconds(t); }

// The receiver acknowledges at every message's end and every this many bytes
// (a NIC coalesces ACKs; they only free the sender's retransmission state).
constexpr std::uint64_t kAckEvery = 64 * 1024;

class RoceTransport final : public Transport {
 public:
  RoceTransport(const Topology& topology, const Ns3Options& options, MessageSink& sink);

  void send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to, Time at, Connection connection) override;
  bool carries_switch_ops() const override { return true; }
  std::uint32_t traffic_classes() const override { return classes_; }
  void send_on_link(LinkId link, std::uint64_t bytes, const Delivery& to, Time at) override;
  std::vector<LinkUsage> link_usage() const override;
  std::vector<std::pair<std::string, std::uint64_t>> counters() const override;

 private:
  // One traffic class at one directed link (a PFC priority, an InfiniBand
  // data virtual lane): its queue and flow control at the transmitting end,
  // and the far end's ingress accounting for it.
  struct Lane {
    bool paused = false;  // by a PAUSE from the far end (data only: control frames have their own priority)
    Time paused_since = 0;
    std::deque<RocePacket> data;  // data forwarded through this node
    std::uint64_t data_bytes = 0;
    bool transit_turn = false;    // at an NPU that forwards: alternate forwarded and own data
    // transport: ib: bytes of data the far end can still take (its credits).
    std::uint64_t credits = 0;
    // The far end's ingress accounting of data that arrived on this link.
    std::uint64_t ingress_bytes = 0;
    bool xoff = false;  // a PAUSE is in force for it
  };
  // The transmitting end of one directed link.
  struct Port {
    BytesPerSecond rate = 0;
    Time latency = 0;
    bool busy = false;
    std::deque<RocePacket> control;  // ACK, NACK, CNP: strict priority over data
    std::vector<Lane> lanes;         // per traffic class, served in turn (one packet each)
    std::uint32_t next_lane = 0;
    std::vector<std::uint32_t> qps;      // queue pairs starting on this link (an NPU's; a switch's one-hop ones)
    std::size_t next_qp = 0;             // round robin among them
    ns3::EventId wake;                   // the earliest rate-limited QP's next packet
    Time wake_at = -1;
    LinkStats stats;
  };
  struct Message {
    std::uint64_t end;
    Delivery to;
    // A part of a message split over queue pairs (or paths): its index in
    // splits_, delivered when its last part arrives; kWhole: the message itself.
    std::uint32_t split = kWhole;
  };
  struct Split {
    std::uint32_t parts_left = 0;
    Delivery to;
  };
  static constexpr std::uint32_t kWhole = ~std::uint32_t{0};
  struct QueuePair {
    NodeId src = 0, dst = 0;
    std::uint8_t lane = 0;  // its traffic class
    const std::vector<LinkId>* route = nullptr;  // src -> dst: data
    const std::vector<LinkId>* back = nullptr;   // dst -> src: ACK, NACK, CNP
    // Sender (the NIC of src).
    std::uint64_t queued = 0;     // bytes of every message sent so far
    std::uint64_t offered = 0;    // bytes injected so far
    std::uint64_t next = 0;       // next byte to send
    std::uint64_t highest = 0;    // one past the highest byte ever sent
    std::uint64_t acked = 0;      // every byte below is acknowledged
    bool loading = false;         // queued > acked: counted on its route's links (adaptive routing)
    std::deque<std::uint64_t> ends;  // message ends not yet acknowledged
    std::uint32_t epoch = 0;      // go-back count
    Time next_send = 0;           // the rate limiter's next departure
    DcqcnRate rate;
    ns3::EventId rate_timer, rto;
    // The rate timer's next expiry while the QP has nothing to send: its
    // expiries are then applied when it next has (-1: the timer is an event).
    Time idle_timer_due = -1;
    std::uint64_t acked_at_rto = 0;  // `acked` when the timeout was armed
    bool sent_since_rto = false;     // a packet left since then
    // Receiver (the NIC of dst).
    std::uint64_t expected = 0;      // next byte in order
    std::uint64_t ack_sent = 0;      // `expected` of the last ACK
    std::uint32_t nacked_epoch = 0;  // 1 + the epoch last NACKed (0: none)
    Time last_cnp = -1;
    std::deque<Message> messages;
    QueuePair(const RoceOptions& o, BytesPerSecond line) : rate(o, line) {}
  };

  // The queue pair of src -> dst on equal-cost path `path` (0 where the
  // pair has one) for `communicator` (Connection::communicator: NCCL opens
  // every communicator's queue pairs apart): queue pairs of a pair and
  // communicator that hash onto one path share it.
  QueuePair& queue_pair(NodeId src, NodeId dst, std::uint64_t path, std::uint8_t lane, std::uint32_t communicator,
                        std::uint32_t& index);
  // A new queue pair src -> dst on `route`, acknowledged over `back`.
  std::uint32_t add_queue_pair(NodeId src, NodeId dst, const std::vector<LinkId>& route,
                               const std::vector<LinkId>& back);
  void put(NodeId src, NodeId dst, std::uint64_t path, std::uint8_t lane, std::uint32_t communicator,
           std::uint64_t wire, const Delivery& to, std::uint32_t split, Time at);
  void put_on(std::uint32_t index, std::uint64_t wire, const Delivery& to, std::uint32_t split, Time at);
  void message_arrived(const Message& m);
  // routing: adaptive: the least loaded of the pair's equal-cost paths,
  // candidates from path `from` on (ties stay where ecmp-hash puts them).
  std::uint64_t least_loaded_path(NodeId src, NodeId dst, std::uint64_t from);
  // Counts q on its route's links while it has bytes not yet acknowledged.
  void set_loading(QueuePair& q, bool on);
  void inject(std::uint32_t qp, std::uint64_t bytes);
  void try_send(LinkId l);
  bool next_own_packet(LinkId l, Port& port, std::uint8_t lane, RocePacket& out);
  void transmitted(LinkId l) {
    ports_[l].busy = false;
    try_send(l);
  }
  void arrive(LinkId l, RocePacket p);
  void forward(NodeId at, LinkId in, RocePacket p);
  void leave_buffer(NodeId at, const RocePacket& p);
  void pause(LinkId l, std::uint8_t lane, bool on);
  void paused_arrives(LinkId l, std::uint8_t lane, bool on);
  void receive_data(QueuePair& q, std::uint32_t qp, const RocePacket& p);
  void receive_control(QueuePair& q, std::uint32_t qp, const RocePacket& p);
  void send_control(std::uint32_t qp, RocePacket::Kind kind, std::uint64_t seq, std::uint32_t epoch);
  void go_back(std::uint32_t qp, std::uint64_t to);
  void arm_rto(std::uint32_t qp);
  void on_rto(std::uint32_t qp);
  void on_rate_timer(std::uint32_t qp);
  void retime(QueuePair& q, double old_rate, Time at);
  void wake_rate_timer(std::uint32_t qp);
  void kick(QueuePair& q) { try_send(q.route->front()); }
  bool marks(std::uint64_t queue_bytes);
  void return_credits(LinkId l, std::uint8_t lane, std::uint32_t bytes);
  void credits_arrive(LinkId l, std::uint8_t lane, std::uint32_t bytes) {
    ports_[l].lanes[lane].credits += bytes;
    try_send(l);
  }

  const Topology& topology_;
  const Ns3Options options_;
  const RoceOptions& roce_;
  MessageSink& sink_;
  PairRoutes routes_;
  const std::uint32_t payload_mtu_;
  // transport: ib: link-level credits instead of PFC, no ECN, no DCQCN, and
  // InfiniBand's headers instead of RoCEv2's.
  const bool credit_flow_;
  const std::uint32_t header_bytes_;
  const std::uint32_t classes_;  // traffic classes (network.traffic_classes)
  std::vector<Port> ports_;                     // per link
  // Per link: queue pairs with unacknowledged data whose route crosses it
  // (the load adaptive routing compares, as the flow backend's flows).
  std::vector<std::uint32_t> link_load_;
  std::vector<std::uint32_t> scratch_load_, best_load_;  // least_loaded_path's, kept to allocate once
  std::vector<LinkId> reverse_;                 // per link: the link back, or kNoReverse
  std::vector<PfcThresholds> thresholds_;       // per node
  std::vector<std::uint64_t> buffered_;         // per node: data bytes in its buffer
  std::deque<QueuePair> qps_;
  // (pair, path x 16 + lane, communicator) -> qps_ index
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>, std::uint32_t> qp_of_path_;
  // send_on_link's queue pairs, one per link, and their one-link routes
  // (a deque: the queue pairs keep pointers to them).
  std::unordered_map<LinkId, std::uint32_t> qp_of_link_;
  std::deque<std::vector<LinkId>> one_hop_routes_;
  std::vector<Split> splits_;
  std::vector<std::uint32_t> free_splits_;
  std::mt19937_64 rng_;
  std::uint64_t retransmitted_ = 0, timeouts_ = 0, nacks_ = 0;
  static constexpr LinkId kNoReverse = ~LinkId{0};
};

RoceTransport::RoceTransport(const Topology& topology, const Ns3Options& options, MessageSink& sink)
    : topology_(topology),
      options_(options),
      roce_(options_.roce),
      sink_(sink),
      routes_(topology),
      payload_mtu_(roce_payload_mtu(options.mtu)),
      credit_flow_(options.transport == Ns3Transport::kIb),
      header_bytes_(credit_flow_ ? kIbHeaderBytes : kRoceHeaderBytes),
      classes_(options.traffic_classes),
      rng_(options.seed) {
  const std::vector<Link>& links = topology_.links();
  ports_.resize(links.size());
  link_load_.assign(links.size(), 0);
  reverse_.assign(links.size(), kNoReverse);
  std::unordered_map<std::uint64_t, LinkId> by_ends;
  for (LinkId l = 0; l < links.size(); ++l) {
    ports_[l].rate = options_.links.effective(links[l].bandwidth);
    ports_[l].latency = links[l].latency;
    ports_[l].stats.rate = ports_[l].rate;
    ports_[l].lanes.resize(classes_);
    by_ends.emplace(pair_key(links[l].from, links[l].to), l);
  }
  for (LinkId l = 0; l < links.size(); ++l) {
    auto it = by_ends.find(pair_key(links[l].to, links[l].from));
    if (it != by_ends.end()) reverse_[l] = it->second;
  }
  // Go-back-N resends from the last acknowledged byte when its timer runs
  // out: a timer not longer than one full packet on a link resends every
  // packet before its acknowledgement can come, for ever (a run that never
  // ended). Refused, naming the timer and the link.
  const std::uint64_t frame = payload_mtu_ + header_bytes_;
  for (LinkId l = 0; l < links.size(); ++l) {
    const double packet_ps = static_cast<double>(frame) / static_cast<double>(ports_[l].rate) * 1e12;
    if (packet_ps < static_cast<double>(roce_.retransmit_timeout)) continue;
    const auto name = [this](NodeId v) {
      return v < topology_.npu_count() ? "npu" + std::to_string(v) : "sw" + std::to_string(v - topology_.npu_count());
    };
    const std::string where = !roce_.retransmit_where.empty() ? roce_.retransmit_where
                              : credit_flow_ ? std::string("the go-back-N timer (InfiniBand's)")
                                             : std::string("the go-back-N timer (retransmit_timeout's default)");
    throw InputError(where + ": " + format_time(roce_.retransmit_timeout) + " is not longer than one full packet (" +
                     std::to_string(frame) + " B) on the link " + name(links[l].from) + " -> " + name(links[l].to) +
                     " at " + std::to_string(ports_[l].rate) + " B/s (" + format_time(static_cast<Time>(packet_ps)) +
                     "): every packet would be resent before its acknowledgement could come, and the run would never "
                     "end; give links of their real rate" + (credit_flow_ ? "" : ", or a longer retransmit_timeout"));
  }
  buffered_.assign(topology_.node_count(), 0);
  if (!credit_flow_) {
    thresholds_ = pfc_thresholds(topology_, options_, payload_mtu_ + header_bytes_);
    return;
  }
  // Every input port's buffer is its share of the node's, split evenly
  // among the data virtual lanes: what the link into it starts with as
  // credits on each lane.
  thresholds_.assign(topology_.node_count(), PfcThresholds{});
  std::vector<std::uint64_t> ports_in(topology_.node_count(), 0);
  for (const Link& k : links) ++ports_in[k.to];
  for (LinkId l = 0; l < links.size(); ++l) {
    const std::uint64_t share = roce_.buffer_bytes / ports_in[links[l].to] / classes_;
    if (share < payload_mtu_ + header_bytes_) {
      throw InputError(roce_.buffer_where + ": " + std::to_string(roce_.buffer_bytes) + " B shared by the " +
                       std::to_string(ports_in[links[l].to]) + " input ports of node " +
                       std::to_string(links[l].to) +
                       (classes_ > 1 ? " and " + std::to_string(classes_) + " virtual lanes" : std::string()) +
                       " leaves each less than one " + std::to_string(payload_mtu_ + header_bytes_) +
                       " B packet of credits");
    }
    for (Lane& lane : ports_[l].lanes) lane.credits = share;
  }
}

RoceTransport::QueuePair& RoceTransport::queue_pair(NodeId src, NodeId dst, std::uint64_t path, std::uint8_t lane,
                                                    std::uint32_t communicator, std::uint32_t& index) {
  auto [it, fresh] = qp_of_path_.try_emplace({pair_key(src, dst), path * 16 + lane, communicator},
                                             static_cast<std::uint32_t>(qps_.size()));
  if (fresh) {
    // ACKs, NACKs and CNPs take the reverse pair's own route (small frames of
    // strict priority, whichever path the data took).
    add_queue_pair(src, dst, routes_.route_path(src, dst, path), routes_.route(dst, src));
    qps_.back().lane = lane;
  }
  index = it->second;
  return qps_[index];
}

std::uint32_t RoceTransport::add_queue_pair(NodeId src, NodeId dst, const std::vector<LinkId>& route,
                                            const std::vector<LinkId>& back) {
  const auto index = static_cast<std::uint32_t>(qps_.size());
  qps_.emplace_back(roce_, ports_[route.front()].rate);
  QueuePair& q = qps_.back();
  q.src = src;
  q.dst = dst;
  q.route = &route;
  q.back = &back;
  ports_[route.front()].qps.push_back(index);
  return index;
}

// In-network reduction's uploads and a switch's copies down
// (Network::send_on_link): one queue pair per link, from its sending end (an
// NPU's NIC or the switch's port) to its receiving end, acknowledged over the
// link back. The receiving end takes each packet at once, as a NIC does: a
// reducing switch sums at line rate (docs/network.md), so an upload holds no
// buffer there and sends no PAUSE. The switch's own packets wait for PAUSE
// and credits like forwarded ones and take turns with them at the port.
void RoceTransport::send_on_link(LinkId link, std::uint64_t bytes, const Delivery& to, Time at) {
  auto [it, fresh] = qp_of_link_.try_emplace(link, 0);
  if (fresh) {
    const Link& k = topology_.links()[link];
    if (reverse_[link] == kNoReverse) {
      throw InputError("link " + std::to_string(k.from) + " -> " + std::to_string(k.to) +
                       " carries a switch reduction or multicast but has no link back for its acknowledgements");
    }
    one_hop_routes_.push_back({link});
    one_hop_routes_.push_back({reverse_[link]});
    it->second = add_queue_pair(k.from, k.to, one_hop_routes_[one_hop_routes_.size() - 2], one_hop_routes_.back());
  }
  put_on(it->second, bytes == 0 ? 1 : bytes, to, kWhole, at);
}

void RoceTransport::send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to, Time at,
                         Connection c) {
  const std::uint32_t connection = c.index;
  const auto lane = static_cast<std::uint8_t>(c.service_level % classes_);
  // A queue pair's stream has no empty message: one of 0 bytes is carried as 1 byte.
  const std::uint64_t wire = bytes == 0 ? 1 : bytes;
  // Where the pair has several equal-cost paths (a FatTree), the message is
  // split evenly over its connection's queue pairs, each on the path its
  // (src, dst, qp, communicator) hashes to as in the flow backend (ecmp-hash) or on the
  // least loaded path when it is sent (adaptive: each part sees the parts put
  // before it), or over every path (spray); parts of no byte are not sent.
  const std::uint64_t paths = topology_.path_count(src, dst);
  const RoutingModel& m = options_.routing;
  const bool spray = m.routing == Routing::kSpray;
  const std::uint64_t n = paths <= 1 ? 1 : spray ? paths : m.qps_per_connection;
  const auto path_of = [&](std::uint64_t i) -> std::uint64_t {
    if (paths <= 1) return 0;
    if (spray) return i;
    const std::uint64_t qp = std::uint64_t{connection} * m.qps_per_connection + i;
    const std::uint64_t hashed = topology_.ecmp_path(src, dst, qp, m.ecmp_seed, c.communicator);
    return m.routing == Routing::kAdaptive ? least_loaded_path(src, dst, hashed) : hashed;
  };
  const std::uint64_t parts = std::min(n, wire);
  if (parts == 1) {
    put(src, dst, path_of(0), lane, c.communicator, wire, to, kWhole, at);
    return;
  }
  std::uint32_t split;
  if (!free_splits_.empty()) {
    split = free_splits_.back();
    free_splits_.pop_back();
  } else {
    split = static_cast<std::uint32_t>(splits_.size());
    splits_.emplace_back();
  }
  splits_[split] = Split{static_cast<std::uint32_t>(parts), to};
  for (std::uint64_t i = 0; i < parts; ++i) {
    put(src, dst, path_of(i), lane, c.communicator, wire / n + (i < wire % n ? 1 : 0), to, split, at);
  }
}

std::uint64_t RoceTransport::least_loaded_path(NodeId src, NodeId dst, std::uint64_t from) {
  const std::uint64_t paths = topology_.path_count(src, dst);
  std::uint64_t best = from;
  for (std::uint64_t t = 0; t < paths; ++t) {
    const std::uint64_t k = (from + t) % paths;
    scratch_load_.clear();
    for (const LinkId l : routes_.route_path(src, dst, k)) scratch_load_.push_back(link_load_[l]);
    // Hop by hop, the first hop whose load differs decides: each switch on
    // the way up takes its least loaded uplink (the flow backend's rule).
    if (t == 0 || scratch_load_ < best_load_) {
      best = k;
      best_load_.swap(scratch_load_);
    }
  }
  return best;
}

void RoceTransport::set_loading(QueuePair& q, bool on) {
  if (q.loading == on) return;
  q.loading = on;
  for (const LinkId l : *q.route) link_load_[l] += on ? 1 : -1;
}

void RoceTransport::put(NodeId src, NodeId dst, std::uint64_t path, std::uint8_t lane, std::uint32_t communicator,
                        std::uint64_t wire, const Delivery& to, std::uint32_t split, Time at) {
  std::uint32_t index = 0;
  queue_pair(src, dst, path, lane, communicator, index);
  put_on(index, wire, to, split, at);
}

void RoceTransport::put_on(std::uint32_t index, std::uint64_t wire, const Delivery& to, std::uint32_t split, Time at) {
  QueuePair& q = qps_[index];
  set_loading(q, true);
  q.queued += wire;
  q.messages.push_back({q.queued, to, split});
  ns3::Simulator::Schedule(ps(at - now()), &RoceTransport::inject, this, index, wire);
}

void RoceTransport::message_arrived(const Message& m) {
  if (m.split == kWhole) {
    sink_.delivered(m.to);
    return;
  }
  Split& s = splits_[m.split];
  if (--s.parts_left > 0) return;
  free_splits_.push_back(m.split);
  sink_.delivered(s.to);
}

void RoceTransport::inject(std::uint32_t qp, std::uint64_t bytes) {
  wake_rate_timer(qp);
  QueuePair& q = qps_[qp];
  q.offered += bytes;
  q.ends.push_back(q.offered);
  kick(q);
}

// Starts the next frame on link l if it is idle: control first, then data
// of the traffic classes in turn, each unless paused (within a class,
// forwarded data and the NIC's own queue pairs in turn).
void RoceTransport::try_send(LinkId l) {
  Port& port = ports_[l];
  if (port.busy) return;
  RocePacket p;
  bool have = false;
  if (!port.control.empty()) {
    p = port.control.front();
    port.control.pop_front();
    have = true;
    if (p.kind == RocePacket::kCnp) ++port.stats.cnps;
  }
  for (std::uint32_t k = 0; k < classes_ && !have; ++k) {
    const auto c = static_cast<std::uint8_t>((port.next_lane + k) % classes_);
    Lane& lane = port.lanes[c];
    if (lane.paused) continue;
    // Under credit flow a packet leaves only when the far end has room for it
    // (a NIC's own: room for a full one).
    const bool forwarded_fits = !lane.data.empty() && (!credit_flow_ || lane.credits >= lane.data.front().wire);
    const bool own_fits = !credit_flow_ || lane.credits >= payload_mtu_ + header_bytes_;
    const bool forwarded_first = forwarded_fits && (port.qps.empty() || lane.transit_turn);
    if (!forwarded_first && own_fits) have = next_own_packet(l, port, c, p);
    if (!have && forwarded_fits) {
      p = lane.data.front();
      lane.data.pop_front();
      // ECN at egress: marked as it leaves, on the queue it leaves behind
      // and itself, so the mark reaches the receiver without the queue's delay.
      if (!credit_flow_ && marks(lane.data_bytes)) {
        p.ecn = true;
        ++port.stats.ecn_marks;
      }
      lane.data_bytes -= p.wire;
      leave_buffer(topology_.links()[l].from, p);
      have = true;
    }
    lane.transit_turn = !forwarded_first;
    if (have) port.next_lane = (c + 1) % classes_;
  }
  if (!have) return;
  if (credit_flow_ && p.kind == RocePacket::kData) port.lanes[p.lane].credits -= p.wire;
  port.busy = true;
  port.stats.transmitted(p.wire, p.kind == RocePacket::kData ? p.payload : 0);
  const Time serialize = transfer_time(p.wire, port.rate);
  ns3::Simulator::Schedule(ps(serialize), &RoceTransport::transmitted, this, l);
  ns3::Simulator::Schedule(ps(serialize + port.latency), &RoceTransport::arrive, this, l, p);
}

// The NIC's next data packet on link l: round robin over the queue pairs that
// start there and have bytes to send and whose rate limiter allows it now.
bool RoceTransport::next_own_packet(LinkId l, Port& port, std::uint8_t lane, RocePacket& out) {
  const std::size_t n = port.qps.size();
  Time earliest = -1;
  const Time t = now();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (port.next_qp + k) % n;
    const std::uint32_t qp = port.qps[i];
    QueuePair& q = qps_[qp];
    if (q.lane != lane || q.next >= q.offered) continue;
    if (q.next_send > t) {
      earliest = earliest < 0 ? q.next_send : std::min(earliest, q.next_send);
      continue;
    }
    port.next_qp = (i + 1) % n;
    // A packet never spans two messages (each is its own RDMA operation).
    const auto end = std::upper_bound(q.ends.begin(), q.ends.end(), q.next);
    const std::uint64_t message_end = end == q.ends.end() ? q.offered : *end;
    out = RocePacket{};
    out.kind = RocePacket::kData;
    out.qp = qp;
    out.lane = lane;
    out.seq = q.next;
    out.payload = static_cast<std::uint32_t>(std::min<std::uint64_t>(payload_mtu_, message_end - q.next));
    out.wire = out.payload + header_bytes_;
    out.epoch = q.epoch;
    if (q.next < q.highest) ++retransmitted_;
    q.sent_since_rto = true;
    q.next += out.payload;
    q.highest = std::max(q.highest, q.next);
    if (roce_.dcqcn) {
      // The rate limiter spaces departures by the frame's time at the QP's rate.
      q.rate.on_sent(out.payload);
      q.next_send = t + static_cast<Time>(static_cast<double>(out.wire) / q.rate.rate() * 1e12);
    }
    if (!q.rto.IsRunning()) arm_rto(qp);
    return true;
  }
  if (earliest >= 0 && (!port.wake.IsRunning() || earliest < port.wake_at)) {
    port.wake.Cancel();
    port.wake = ns3::Simulator::Schedule(ps(earliest - t), &RoceTransport::try_send, this, l);
    port.wake_at = earliest;
  }
  return false;
}

void RoceTransport::arrive(LinkId l, RocePacket p) {
  const NodeId at = topology_.links()[l].to;
  QueuePair& q = qps_[p.qp];
  const std::vector<LinkId>& route = p.kind == RocePacket::kData ? *q.route : *q.back;
  if (p.hop + 1 < route.size()) {
    forward(at, l, p);
  } else if (p.kind == RocePacket::kData) {
    if (credit_flow_) return_credits(l, p.lane, p.wire);  // the NIC takes it at once
    receive_data(q, p.qp, p);
  } else {
    receive_control(q, p.qp, p);
  }
}

// A packet passing through `at` (a switch, or an NPU that forwards): control
// frames go straight to their egress queue; data is buffered and counted
// against its ingress port for PFC or, when the buffer is full, dropped.
void RoceTransport::forward(NodeId at, LinkId in, RocePacket p) {
  QueuePair& q = qps_[p.qp];
  ++p.hop;
  const LinkId out = (p.kind == RocePacket::kData ? *q.route : *q.back)[p.hop];
  Port& egress = ports_[out];
  if (p.kind != RocePacket::kData) {
    egress.control.push_back(p);
    try_send(out);
    return;
  }
  if (!credit_flow_ && buffered_[at] + p.wire > roce_.buffer_bytes) {
    ++egress.stats.drops;
    return;
  }
  buffered_[at] += p.wire;
  p.ingress = in;
  Lane& ingress = ports_[in].lanes[p.lane];
  ingress.ingress_bytes += p.wire;
  if (roce_.pfc && !ingress.xoff && ingress.ingress_bytes > thresholds_[at].xoff) pause(in, p.lane, true);
  Lane& queue = egress.lanes[p.lane];
  queue.data.push_back(p);
  queue.data_bytes += p.wire;
  egress.stats.queue_at(queue.data_bytes);
  try_send(out);
}

void RoceTransport::leave_buffer(NodeId at, const RocePacket& p) {
  buffered_[at] -= p.wire;
  if (credit_flow_) return_credits(p.ingress, p.lane, p.wire);
  Lane& ingress = ports_[p.ingress].lanes[p.lane];
  ingress.ingress_bytes -= p.wire;
  if (ingress.xoff && ingress.ingress_bytes <= thresholds_[at].xon) pause(p.ingress, p.lane, false);
}

// A flow-control update back up link l: its sender may send `bytes` more
// once the update has crossed the cable.
void RoceTransport::return_credits(LinkId l, std::uint8_t lane, std::uint32_t bytes) {
  ns3::Simulator::Schedule(ps(ports_[l].latency), &RoceTransport::credits_arrive, this, l, lane, bytes);
}

// RED on the egress queue: never below Kmin, always above Kmax, linear to Pmax between.
bool RoceTransport::marks(std::uint64_t queue_bytes) {
  if (queue_bytes <= roce_.ecn_kmin) return false;
  if (queue_bytes >= roce_.ecn_kmax) return true;
  const double p = roce_.ecn_pmax * static_cast<double>(queue_bytes - roce_.ecn_kmin) /
                   static_cast<double>(roce_.ecn_kmax - roce_.ecn_kmin);
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53 < p;
}

// The receiving end of link l sends PAUSE (on) or RESUME (off) for one data
// priority; it leaves at once (a MAC control frame) on the link back and takes
// effect at l's sender after its serialization and the cable's latency.
void RoceTransport::pause(LinkId l, std::uint8_t lane, bool on) {
  Port& port = ports_[l];
  port.lanes[lane].xoff = on;
  const LinkId back = reverse_[l];
  Time delay = port.latency + transfer_time(kPauseFrameBytes, port.rate);
  if (back != kNoReverse) {
    ++ports_[back].stats.pauses_sent;
    delay = ports_[back].latency + transfer_time(kPauseFrameBytes, ports_[back].rate);
  }
  ns3::Simulator::Schedule(ps(delay), &RoceTransport::paused_arrives, this, l, lane, on);
}

void RoceTransport::paused_arrives(LinkId l, std::uint8_t lane, bool on) {
  Port& port = ports_[l];
  Lane& c = port.lanes[lane];
  if (on == c.paused) return;
  c.paused = on;
  if (on) {
    ++port.stats.pauses_received;
    c.paused_since = now();
  } else {
    port.stats.paused += now() - c.paused_since;
    try_send(l);
  }
}

void RoceTransport::receive_data(QueuePair& q, std::uint32_t qp, const RocePacket& p) {
  // The notification point: a CNP for marked packets, at most one per interval.
  if (p.ecn && roce_.dcqcn && (q.last_cnp < 0 || now() - q.last_cnp >= roce_.cnp_interval)) {
    q.last_cnp = now();
    send_control(qp, RocePacket::kCnp, 0, 0);
  }
  if (p.seq != q.expected) {
    // Go-back-N: the receiver keeps only in-order data. A gap is NACKed once
    // per sender epoch (each go-back starts a new one).
    if (p.seq > q.expected && p.epoch + 1 > q.nacked_epoch) {
      q.nacked_epoch = p.epoch + 1;
      ++nacks_;
      send_control(qp, RocePacket::kNack, q.expected, p.epoch);
    }
    return;
  }
  q.expected += p.payload;
  bool ended = false;
  while (!q.messages.empty() && q.messages.front().end <= q.expected) {
    const Message m = q.messages.front();
    q.messages.pop_front();
    message_arrived(m);
    ended = true;
  }
  if (ended || q.expected - q.ack_sent >= kAckEvery) {
    q.ack_sent = q.expected;
    send_control(qp, RocePacket::kAck, q.expected, 0);
  }
}

void RoceTransport::send_control(std::uint32_t qp, RocePacket::Kind kind, std::uint64_t seq, std::uint32_t epoch) {
  RocePacket c;
  c.kind = kind;
  c.qp = qp;
  c.seq = seq;
  c.epoch = epoch;
  c.wire = kind == RocePacket::kCnp ? kCnpFrameBytes : header_bytes_ + 4;  // ACK/NACK: + AETH
  const LinkId first = qps_[qp].back->front();
  ports_[first].control.push_back(c);
  try_send(first);
}

void RoceTransport::receive_control(QueuePair& q, std::uint32_t qp, const RocePacket& p) {
  if (p.kind == RocePacket::kCnp) {
    // The reaction point: cut the rate, restart the increase timer.
    wake_rate_timer(qp);
    const double old_rate = q.rate.rate();
    q.rate.on_cnp(now());
    retime(q, old_rate, now());
    q.rate_timer.Cancel();
    q.rate_timer = ns3::Simulator::Schedule(ps(roce_.rate_timer), &RoceTransport::on_rate_timer, this, qp);
    return;
  }
  if (p.seq > q.acked) {
    q.acked = p.seq;
    while (!q.ends.empty() && q.ends.front() <= q.acked) q.ends.pop_front();
    if (q.acked >= q.queued) set_loading(q, false);
  }
  if (p.kind == RocePacket::kNack && p.epoch == q.epoch && p.seq < q.next) go_back(qp, p.seq);
}

void RoceTransport::go_back(std::uint32_t qp, std::uint64_t to) {
  wake_rate_timer(qp);
  QueuePair& q = qps_[qp];
  q.next = std::max(to, q.acked);
  ++q.epoch;
  kick(q);
}

void RoceTransport::arm_rto(std::uint32_t qp) {
  qps_[qp].acked_at_rto = qps_[qp].acked;
  qps_[qp].sent_since_rto = false;
  qps_[qp].rto = ns3::Simulator::Schedule(ps(roce_.retransmit_timeout), &RoceTransport::on_rto, this, qp);
}

// Bytes are outstanding and for a whole timeout no acknowledgement moved and
// nothing was sent (a sender still sending would hear a NACK for a gap): the
// tail was lost; resend from the first unacknowledged byte.
void RoceTransport::on_rto(std::uint32_t qp) {
  QueuePair& q = qps_[qp];
  if (q.acked >= q.highest) return;
  if (q.acked == q.acked_at_rto && !q.sent_since_rto) {
    ++timeouts_;
    go_back(qp, q.acked);
  }
  arm_rto(qp);
}

// The rate changed while the limiter holds the queue pair's next packet: what
// is left of the gap runs at the new rate, as a rate limiter that earns its
// credit at the current rate does. Without this a queue pair cut to a low rate
// and raised again stays silent for the whole gap the low rate set (at the
// 1 Mb/s floor, 33 ms for one 4 KiB packet).
void RoceTransport::retime(QueuePair& q, double old_rate, Time t) {
  if (q.next_send <= t || old_rate == q.rate.rate()) return;
  const bool sooner = q.rate.rate() > old_rate;
  q.next_send = t + static_cast<Time>(static_cast<double>(q.next_send - t) * old_rate / q.rate.rate());
  if (sooner && q.next < q.offered) kick(q);
}

void RoceTransport::on_rate_timer(std::uint32_t qp) {
  QueuePair& q = qps_[qp];
  const double old_rate = q.rate.rate();
  q.rate.on_rate_timer();
  retime(q, old_rate, now());
  if (q.rate.at_line_rate()) return;
  if (q.next >= q.offered) {
    // Nothing to send: no event per period while idle (thousands of QPs
    // recovering at R_AI would otherwise keep ns-3 busy long after the
    // workload ends); wake_rate_timer applies the expiries when it matters.
    q.idle_timer_due = now() + roce_.rate_timer;
    return;
  }
  q.rate_timer = ns3::Simulator::Schedule(ps(roce_.rate_timer), &RoceTransport::on_rate_timer, this, qp);
}

// The QP is about to send again or to take a CNP: apply the rate timer's
// expiries while it was idle, each as its event would have (an expiry at this
// very instant first: its event was scheduled earlier), and run the timer as
// an event again from its next expiry.
void RoceTransport::wake_rate_timer(std::uint32_t qp) {
  QueuePair& q = qps_[qp];
  if (q.idle_timer_due < 0) return;
  const Time t = now();
  while (q.idle_timer_due <= t && !q.rate.at_line_rate()) {
    const double old_rate = q.rate.rate();
    q.rate.on_rate_timer();
    retime(q, old_rate, q.idle_timer_due);
    q.idle_timer_due += roce_.rate_timer;
  }
  if (!q.rate.at_line_rate()) {
    q.rate_timer = ns3::Simulator::Schedule(ps(q.idle_timer_due - t), &RoceTransport::on_rate_timer, this, qp);
  }
  q.idle_timer_due = -1;
}

std::vector<LinkUsage> RoceTransport::link_usage() const {
  std::vector<LinkUsage> out(ports_.size());
  for (LinkId l = 0; l < ports_.size(); ++l) {
    out[l] = ports_[l].stats.usage();
    for (const Lane& c : ports_[l].lanes) {
      if (c.paused) out[l].paused += now() - c.paused_since;
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::uint64_t>> RoceTransport::counters() const {
  std::uint64_t pauses = 0, marks = 0, cnps = 0;
  for (const Port& p : ports_) {
    pauses += p.stats.pauses_received;
    marks += p.stats.ecn_marks;
  }
  for (const Port& p : ports_) cnps += p.stats.cnps;
  return {{"queue pairs", qps_.size()},       {"PFC pauses", pauses},
          {"ECN marks", marks},               {"CNP transmissions (all hops)", cnps},
          {"NACKs", nacks_},                  {"retransmitted packets", retransmitted_},
          {"retransmission timeouts", timeouts_}};
}

}  // namespace

std::unique_ptr<Transport> make_roce_transport(const Topology& topology, const Ns3Options& options, MessageSink& sink) {
  return std::make_unique<RoceTransport>(topology, options, sink);
}

std::unique_ptr<Transport> make_ib_transport(const Topology& topology, const Ns3Options& options, MessageSink& sink) {
  return std::make_unique<RoceTransport>(topology, options, sink);
}

}  // namespace sim
