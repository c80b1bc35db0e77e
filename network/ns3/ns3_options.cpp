#include "network/ns3/ns3_options.h"

#include <iterator>
#include <string>

#include "core/error.h"

namespace sim {

const char* const kNs3Summary =
    "packet-level on ns-3 3.37: every link a point-to-point channel, one TCP connection per NPU pair "
    "(transport: tcp), RoCEv2 queue pairs with PFC, ECN and DCQCN (transport: roce) or InfiniBand ones with credit "
    "flow control (transport: ib), routes as ours";

namespace {

// Keys that only one transport reads: setting one for the other is an error,
// not a silently ignored line.
const char* const kTcpOnly[] = {"queue_size", "tcp_buffer", "min_rto", "delayed_ack",
                                "initial_cwnd", "congestion", "connect"};
const char* const kRoceOnly[] = {"pfc", "buffer_size", "pfc_xoff", "pfc_xon", "ecn_kmin", "ecn_kmax", "ecn_pmax",
                                 "dcqcn", "dcqcn_g", "dcqcn_alpha_timer", "dcqcn_rate_timer", "dcqcn_byte_counter",
                                 "dcqcn_fast_recovery", "dcqcn_rate_ai", "dcqcn_rate_hai", "dcqcn_min_rate",
                                 "cnp_interval", "retransmit_timeout"};

bool flag(const BackendOptions& o, const std::string& key) { return o.choice(key, {"true", "false"}) == "true"; }

Time positive_time(const BackendOptions& o, const std::string& key) {
  const Time t = o.time(key);
  if (t <= 0) throw InputError(o.where(key) + ": expected a time > 0, e.g. 50us");
  return t;
}

// ns-3's point-to-point device puts a 2-byte PPP header on every IP packet
// before it enters the link's drop-tail queue.
constexpr std::uint64_t kPppHeaderBytes = 2;

void parse_tcp(const Topology& t, const BackendOptions& o, Ns3Options& n) {
  if (o.has("queue_size")) {
    n.queue_bytes = o.integer("queue_size", 1, std::uint64_t{1} << 32);
    // A queue smaller than one full-size frame drops every segment: no
    // connection opens (an internal error) or none delivers (a run that
    // cannot finish, with no word of why).
    const std::uint64_t frame = std::uint64_t{n.mtu} + kPppHeaderBytes;
    if (n.queue_bytes < frame) {
      throw InputError(o.where("queue_size") + ": " + std::to_string(n.queue_bytes) +
                       " B cannot hold one packet: a link sends mtu (" + std::to_string(n.mtu) + " B) plus a " +
                       std::to_string(kPppHeaderBytes) + " B PPP header, " + std::to_string(frame) +
                       " B, so it would drop every full segment; give at least " + std::to_string(frame) +
                       " B (or a smaller mtu)");
    }
  }
  if (o.has("tcp_buffer")) n.tcp_buffer = o.integer("tcp_buffer", 1 << 12, std::uint64_t{1} << 30);
  if (o.has("min_rto")) n.min_rto = o.time("min_rto");
  if (o.has("delayed_ack")) n.delayed_ack = o.time("delayed_ack");
  if (o.has("initial_cwnd")) n.initial_cwnd = static_cast<std::uint32_t>(o.count("initial_cwnd", 1, 1 << 16));
  if (o.has("congestion")) n.congestion = o.choice("congestion", {"newreno", "cubic"});
  if (o.has("connect")) n.connect_before_start = o.choice("connect", {"before_start", "on_first_send"}) == "before_start";
  // Every ordered pair's connection up front is quadratic (and ns-3 finds sockets by a linear scan).
  constexpr std::uint32_t kMostNpusConnectedBeforeStart = 128;
  if (n.connect_before_start && t.npu_count() > kMostNpusConnectedBeforeStart) {
    throw InputError("network backend 'ns3': connect: before_start (the default) would open " +
                     std::to_string(std::uint64_t{t.npu_count()} * (t.npu_count() - 1)) + " TCP connections for " +
                     std::to_string(t.npu_count()) + " NPUs (at most " + std::to_string(kMostNpusConnectedBeforeStart) +
                     " NPUs); set network.connect: on_first_send");
  }
}

void parse_roce(const BackendOptions& o, RoceOptions& r) {
  constexpr std::uint64_t kMostBytes = std::uint64_t{1} << 40;
  if (o.has("pfc")) r.pfc = flag(o, "pfc");
  if (o.has("buffer_size")) {
    r.buffer_bytes = o.integer("buffer_size", 1, kMostBytes);
    r.buffer_where = o.where("buffer_size");
  }
  if (o.has("pfc_xoff")) {
    r.pfc_xoff = o.integer("pfc_xoff", 1, kMostBytes);
    // A port that pauses its sender only once it holds the whole shared
    // buffer (or more) is never paused before the switch drops: PFC's
    // lossless promise would be broken with no word.
    if (r.pfc_xoff >= r.buffer_bytes) {
      throw InputError(o.where("pfc_xoff") + ": " + std::to_string(r.pfc_xoff) + " B is not below the switch's " +
                       "buffer of " + std::to_string(r.buffer_bytes) + " B (" +
                       (o.has("buffer_size") ? r.buffer_where : std::string("buffer_size's default")) +
                       "): a port would fill the whole buffer before it pauses its sender, and the switch would "
                       "drop; give pfc_xoff below buffer_size (per port, leaving the other ports and the headroom "
                       "their room)");
    }
  }
  if (o.has("pfc_xon")) {
    r.pfc_xon = o.integer("pfc_xon", 1, kMostBytes);
    r.pfc_xon_where = o.where("pfc_xon");
  }
  if (r.pfc_xon != 0 && r.pfc_xoff != 0 && r.pfc_xon >= r.pfc_xoff) {
    throw InputError(o.where("pfc_xon") + ": expected less than pfc_xoff (" + std::to_string(r.pfc_xoff) + " B), got " +
                     std::to_string(r.pfc_xon) + " B");
  }
  if (o.has("ecn_kmin")) r.ecn_kmin = o.integer("ecn_kmin", 0, kMostBytes);
  if (o.has("ecn_kmax")) r.ecn_kmax = o.integer("ecn_kmax", 1, kMostBytes);
  if (r.ecn_kmin >= r.ecn_kmax) {
    throw InputError((o.has("ecn_kmax") ? o.where("ecn_kmax") : o.where("ecn_kmin")) + ": expected ecn_kmin < ecn_kmax, got " +
                     std::to_string(r.ecn_kmin) + " B and " + std::to_string(r.ecn_kmax) + " B");
  }
  if (o.has("ecn_pmax")) r.ecn_pmax = o.fraction("ecn_pmax");
  if (o.has("dcqcn")) r.dcqcn = flag(o, "dcqcn");
  if (o.has("dcqcn_g")) r.g = o.fraction("dcqcn_g");
  if (o.has("dcqcn_alpha_timer")) r.alpha_timer = positive_time(o, "dcqcn_alpha_timer");
  if (o.has("dcqcn_rate_timer")) r.rate_timer = positive_time(o, "dcqcn_rate_timer");
  if (o.has("dcqcn_byte_counter")) r.byte_counter = o.integer("dcqcn_byte_counter", 1, kMostBytes);
  if (o.has("dcqcn_fast_recovery")) {
    r.fast_recovery_steps = static_cast<std::uint32_t>(o.count("dcqcn_fast_recovery", 1, 1000));
  }
  if (o.has("dcqcn_rate_ai")) r.rate_ai = o.bandwidth("dcqcn_rate_ai");
  if (o.has("dcqcn_rate_hai")) r.rate_hai = o.bandwidth("dcqcn_rate_hai");
  if (o.has("dcqcn_min_rate")) r.min_rate = o.bandwidth("dcqcn_min_rate");
  if (o.has("cnp_interval")) r.cnp_interval = o.time("cnp_interval");
  if (o.has("retransmit_timeout")) {
    r.retransmit_timeout = positive_time(o, "retransmit_timeout");
    r.retransmit_where = o.where("retransmit_timeout");
  }
}

}  // namespace

std::vector<BackendOption> ns3_backend_options() {
  return {
      {"transport", "tcp (default): one TCP connection per NPU pair over drop-tail queues; roce: RoCEv2 queue pairs "
                    "with PFC, ECN marking and DCQCN; ib: InfiniBand queue pairs with credit-based link flow control"},
      {"mtu", "IP packet size of every link in bytes (default 9000: jumbo frames; TCP segments carry mtu - 52, "
              "RoCE packets the largest IB MTU <= mtu - 44)"},
      {"queue_size", "tcp: drop-tail transmit queue of every link, e.g. 1MiB (default 4MiB)"},
      {"tcp_buffer", "tcp: send and receive buffer of every TCP connection (default 2MiB)"},
      {"min_rto", "tcp: TCP minimum retransmission timeout (default 1ms)"},
      {"delayed_ack", "tcp: TCP delayed-ACK timeout (default 10us; an ACK every 2 segments)"},
      {"initial_cwnd", "tcp: TCP initial congestion window in segments (default 10, as Linux)"},
      {"congestion", "tcp: TCP congestion control: newreno (default) or cubic"},
      {"connect", "tcp: before_start (default): every NPU pair's handshake done before time 0; "
                  "on_first_send: a pair's first message waits for its handshake"},
      {"pfc", "roce: true (default): switches pause the upstream sender per priority; false: they drop when full"},
      {"buffer_size", "roce: shared packet buffer of every switch; ib: every node's input buffers, split evenly "
                      "among its input ports as their credits (default 12MB)"},
      {"pfc_xoff", "roce: ingress bytes per port that send PAUSE (default: the buffer left after headroom, shared "
                   "by the ports)"},
      {"pfc_xon", "roce: ingress bytes per port below which RESUME is sent (default pfc_xoff - 2 frames)"},
      {"ecn_kmin", "roce: egress queue below which no packet is ECN-marked (default 5KB)"},
      {"ecn_kmax", "roce: egress queue above which every packet is marked (default 200KB)"},
      {"ecn_pmax", "roce: marking probability at ecn_kmax, rising linearly from ecn_kmin (default 0.01)"},
      {"dcqcn", "roce: true (default): DCQCN rate control at every NIC; false: line rate always"},
      {"dcqcn_g", "roce: gain of alpha's moving average (default 0.00390625 = 1/256)"},
      {"dcqcn_alpha_timer", "roce: alpha's period: it decays by 1 - g for every one without a CNP (default 55us)"},
      {"dcqcn_rate_timer", "roce: rate-increase timer (default 55us)"},
      {"dcqcn_byte_counter", "roce: bytes sent per rate-increase event (default 10MB)"},
      {"dcqcn_fast_recovery", "roce: fast-recovery steps before additive increase (default 5)"},
      {"dcqcn_rate_ai", "roce: additive increase of the target rate (default 40Mbps)"},
      {"dcqcn_rate_hai", "roce: hyper increase of the target rate (default 50Mbps)"},
      {"dcqcn_min_rate", "roce: lowest rate a QP is cut to (default 1Mbps)"},
      {"cnp_interval", "roce: at most one CNP per queue pair per interval (default 50us)"},
      {"retransmit_timeout", "roce: go-back-N resends from the last acknowledged byte after this long without "
                             "progress (default 67.108864ms: 4.096us x 2^14)"},
      {"traffic_classes", "roce, ib: traffic classes with their own queues and flow control per port (PFC "
                          "priorities, InfiniBand data virtual lanes; default 1); a job's service level "
                          "(--service-level) mod this picks its class"},
      {"seed", "ns-3 random seed and ECN marking's random stream (default 1)"},
  };
}

Ns3Options parse_ns3_options(const Topology& t, const BackendOptions& o) {
  Ns3Options n;
  n.links = o.link_model();
  std::string name = "tcp";
  if (o.has("transport")) name = o.choice("transport", {"tcp", "roce", "ib"});
  n.transport = name == "roce" ? Ns3Transport::kRoce : name == "ib" ? Ns3Transport::kIb : Ns3Transport::kTcp;
  auto refuse = [&](const char* const* begin, const char* const* end, const char* other, const char* allowed) {
    for (const char* const* k = begin; k != end; ++k) {
      if (o.has(*k) && (allowed == nullptr || std::string(*k) != allowed)) {
        throw InputError(o.where(*k) + ": option '" + *k + "' is for transport: " + other + " only (this network's "
                         "transport is " + name + ")");
      }
    }
  };
  if (n.transport != Ns3Transport::kTcp) refuse(std::begin(kTcpOnly), std::end(kTcpOnly), "tcp", nullptr);
  if (n.transport == Ns3Transport::kTcp) refuse(std::begin(kRoceOnly), std::end(kRoceOnly), "roce", nullptr);
  if (n.transport == Ns3Transport::kIb) refuse(std::begin(kRoceOnly), std::end(kRoceOnly), "roce", "buffer_size");
  if (o.has("mtu")) n.mtu = static_cast<std::uint32_t>(o.integer("mtu", 576, 65535));
  if (n.transport == Ns3Transport::kTcp) {
    parse_tcp(t, o, n);
  } else {
    parse_roce(o, n.roce);
    // A floor at or above a NIC's line rate leaves DCQCN nothing to cut:
    // every CNP would set the queue pair's rate to the floor, no slower than
    // the link, so DCQCN would be off without a word.
    if (n.transport == Ns3Transport::kRoce && n.roce.dcqcn && o.has("dcqcn_min_rate")) {
      for (const Link& l : t.links()) {
        if (l.from >= t.npu_count()) continue;
        const BytesPerSecond line = n.links.effective(l.bandwidth);
        if (n.roce.min_rate >= line) {
          throw InputError(o.where("dcqcn_min_rate") + ": " + std::to_string(n.roce.min_rate) +
                           " B/s is not below npu" + std::to_string(l.from) + "'s line rate of " +
                           std::to_string(line) + " B/s: DCQCN could never slow a queue pair (give a floor below "
                           "the slowest NIC's rate, or dcqcn: false)");
        }
      }
    }
    if (n.transport == Ns3Transport::kIb) {
      n.roce.pfc = false;  // credits instead
      n.roce.dcqcn = false;
    }
  }
  if (o.has("traffic_classes")) {
    if (n.transport == Ns3Transport::kTcp) {
      throw InputError(o.where("traffic_classes") + ": option 'traffic_classes' is for transport: roce or ib only "
                       "(this network's transport is tcp)");
    }
    // 802.1p has 8 priorities; InfiniBand defines data virtual lanes 0 to 14.
    const std::uint64_t most = n.transport == Ns3Transport::kRoce ? 8 : 15;
    n.traffic_classes = static_cast<std::uint32_t>(o.count("traffic_classes", 1, most));
  }
  if (o.has("seed")) n.seed = static_cast<std::uint32_t>(o.count("seed", 1, 0xffffffffu));
  n.routing = o.routing_model();
  // Where a pair has several paths, a key ns3 cannot honour is an error, not
  // a silent single path (elsewhere every pair has one path and the keys
  // change nothing, as on every backend).
  if (t.multipath()) {
    const RoutingModel plain;
    if (n.transport == Ns3Transport::kTcp &&
        (n.routing.routing != plain.routing || n.routing.qps_per_connection != 1 || n.routing.ecmp_seed != 0)) {
      const char* key = n.routing.routing != plain.routing ? "routing"
                        : n.routing.qps_per_connection != 1 ? "qps_per_connection"
                                                             : "ecmp_seed";
      throw InputError(o.where(key) + ": transport: tcp runs one TCP connection per NPU pair on the pair's own "
                       "route; queue pairs, spraying, adaptive routing and seeded hashing need transport: roce or ib "
                       "(or the flow backend)");
    }
  }
  return n;
}

}  // namespace sim
