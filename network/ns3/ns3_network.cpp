// The ns3 backend: every NPU and switch an ns-3 node, every directed link of
// the topology a point-to-point channel, every NPU pair one TCP connection.
//
// The only translation unit that includes ns-3 headers (they compile slowly
// and only as C++17): routing, transport, statistics and the clock bridge are
// all here, each in its own class below.
//
// One clock. Our event queue drives ns-3 (EventQueue::set_peer): before our
// next event at time t, ns-3 runs its events up to t, and stops right after
// any ns-3 event that delivered a message into our queue, so a delivery at
// t' < t is handled by the collective engine before anything later happens in
// either simulator. ns-3 time = our time + the warm-up (the handshakes done
// before our time 0); both count picoseconds.
#include "network/ns3/ns3_network.h"

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/ppp-header.h"

namespace sim {
namespace {

constexpr std::uint16_t kPort = 9;
constexpr std::uint32_t kFirstAddress = 0x0A000001u;  // NPU i is 10.0.0.(i+1) and up

ns3::Ipv4Address address_of(NodeId npu) { return ns3::Ipv4Address(kFirstAddress + npu); }
NodeId npu_of(ns3::Ipv4Address a) { return a.Get() - kFirstAddress; }
std::uint64_t pair_key(NodeId src, NodeId dst) { return (std::uint64_t{src} << 32) | dst; }

// Static routing by (source NPU, destination NPU): every node forwards a
// packet on the link our router chose for that pair, so ns-3 takes exactly
// the routes of the other backends (fat-tree ECMP included, which hashes the
// pair). Stock ns-3 static routing keys on the destination only, hence this.
class PairRouting : public ns3::Ipv4RoutingProtocol {
 public:
  void set_node(NodeId node) { node_ = node; }
  void add(NodeId src, NodeId dst, ns3::Ptr<ns3::NetDevice> out) {
    ns3::Ptr<ns3::Ipv4Route> r = ns3::Create<ns3::Ipv4Route>();
    r->SetSource(address_of(src));
    r->SetDestination(address_of(dst));
    r->SetGateway(address_of(dst));  // any non-zero gateway: point-to-point links need no ARP
    r->SetOutputDevice(out);
    table_[pair_key(src, dst)] = r;
  }

  ns3::Ptr<ns3::Ipv4Route> RouteOutput(ns3::Ptr<ns3::Packet>, const ns3::Ipv4Header& header,
                                       ns3::Ptr<ns3::NetDevice>, ns3::Socket::SocketErrno& err) override {
    ns3::Ptr<ns3::Ipv4Route> r = find(node_, npu_of(header.GetDestination()));
    err = r ? ns3::Socket::ERROR_NOTERROR : ns3::Socket::ERROR_NOROUTETOHOST;
    return r;
  }
  bool RouteInput(ns3::Ptr<const ns3::Packet> p, const ns3::Ipv4Header& header, ns3::Ptr<const ns3::NetDevice> idev,
                  UnicastForwardCallback ucb, MulticastForwardCallback, LocalDeliverCallback lcb,
                  ErrorCallback) override {
    const NodeId dst = npu_of(header.GetDestination());
    if (dst == node_) {
      lcb(p, header, static_cast<std::uint32_t>(ipv4_->GetInterfaceForDevice(idev)));
      return true;
    }
    ns3::Ptr<ns3::Ipv4Route> r = find(npu_of(header.GetSource()), dst);
    if (!r) return false;
    ucb(r, p, header);
    return true;
  }
  void NotifyInterfaceUp(std::uint32_t) override {}
  void NotifyInterfaceDown(std::uint32_t) override {}
  void NotifyAddAddress(std::uint32_t, ns3::Ipv4InterfaceAddress) override {}
  void NotifyRemoveAddress(std::uint32_t, ns3::Ipv4InterfaceAddress) override {}
  void SetIpv4(ns3::Ptr<ns3::Ipv4> ipv4) override { ipv4_ = ipv4; }
  void PrintRoutingTable(ns3::Ptr<ns3::OutputStreamWrapper> stream, ns3::Time::Unit) const override {
    *stream->GetStream() << "pair routes: " << table_.size() << "\n";
  }

 protected:
  void DoDispose() override {
    table_.clear();
    ipv4_ = nullptr;
    ns3::Ipv4RoutingProtocol::DoDispose();
  }

 private:
  ns3::Ptr<ns3::Ipv4Route> find(NodeId src, NodeId dst) const {
    auto it = table_.find(pair_key(src, dst));
    return it == table_.end() ? nullptr : it->second;
  }

  NodeId node_ = 0;
  ns3::Ptr<ns3::Ipv4> ipv4_;
  std::unordered_map<std::uint64_t, ns3::Ptr<ns3::Ipv4Route>> table_;
};

class PairRoutingHelper : public ns3::Ipv4RoutingHelper {
 public:
  PairRoutingHelper* Copy() const override { return new PairRoutingHelper(*this); }
  ns3::Ptr<ns3::Ipv4RoutingProtocol> Create(ns3::Ptr<ns3::Node>) const override {
    return ns3::CreateObject<PairRouting>();
  }
};

// What one directed link saw: traced from its transmitting device and queue.
struct LinkProbe {
  BytesPerSecond rate = 0;  // the device's data rate
  std::uint64_t payload = 0, wire = 0, packets = 0;
  std::uint32_t peak_queue = 0;
  Time busy = 0;

  void on_tx_begin(ns3::Ptr<const ns3::Packet> p) {
    ++packets;
    wire += p->GetSize();
    busy += transfer_time(p->GetSize(), rate);
    payload += tcp_payload(p);
  }
  void on_queue_bytes(std::uint32_t, std::uint32_t now) { peak_queue = now > peak_queue ? now : peak_queue; }

  // A frame's TCP payload: what is left after its PPP, IPv4 and TCP headers.
  static std::uint32_t tcp_payload(ns3::Ptr<const ns3::Packet> p) {
    ns3::Ptr<ns3::Packet> c = p->Copy();
    ns3::PppHeader ppp;
    c->RemoveHeader(ppp);
    ns3::Ipv4Header ip;
    c->RemoveHeader(ip);
    if (ip.GetProtocol() != ns3::TcpL4Protocol::PROT_NUMBER) return 0;
    ns3::TcpHeader tcp;
    c->RemoveHeader(tcp);
    return c->GetSize();
  }
};

void stop_ns3() { ns3::Simulator::Stop(); }

// ns-3's simulator is a process-wide singleton, so one ns3 network lives at a
// time: a sweep running ns3 points on several threads takes turns here (the
// other backends still run in parallel). A second network on the thread that
// holds the turn could never get it: that is a programming error.
std::mutex g_turn;
std::atomic<std::thread::id> g_owner{};

class Ns3Network final : public Network, public ClockPeer {
 public:
  Ns3Network(const Topology& topology, EventQueue& queue, const Ns3Options& options);
  ~Ns3Network() override;

  std::string_view name() const override { return "ns3"; }
  const Topology& topology() const override { return topology_; }
  void send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to) override;
  std::vector<LinkUsage> link_usage() const override;
  bool measures_link_time() const override { return true; }
  bool carries_packets() const override { return true; }
  std::vector<std::pair<std::string, std::uint64_t>> counters() const override;
  void run_until(Time limit) override;

 private:
  // One TCP connection, src -> dst, and the messages riding it in order.
  struct Pair {
    Ns3Network* net = nullptr;
    NodeId src = 0, dst = 0;
    ns3::Ptr<ns3::Socket> tx;
    std::uint64_t unsent = 0;       // handed to us, not yet taken by the socket
    std::uint64_t offered = 0;      // bytes of all messages so far (stream offset of the last end)
    std::uint64_t received = 0;     // stream bytes arrived in order at dst
    struct Message {
      std::uint64_t end;  // stream offset just past its last byte
      Delivery to;
    };
    std::deque<Message> messages;  // sent, not yet delivered
  };

  void build_nodes();
  void build_links();
  ns3::Ptr<ns3::Socket> tcp_socket(NodeId npu);
  Pair& pair(NodeId src, NodeId dst);
  void connect(Pair& p);
  void warm_up();
  bool all_acknowledged() const;
  void reset_probes();
  // ns-3 events and callbacks.
  void inject(Pair* p, std::uint64_t bytes);
  static void pump(Pair* p, ns3::Ptr<ns3::Socket>, std::uint32_t);
  void on_accept(ns3::Ptr<ns3::Socket> s, const ns3::Address& from);
  static void on_receive(Pair* p, ns3::Ptr<ns3::Socket> s);

  const Topology& topology_;
  EventQueue& queue_;
  Ns3Options options_;
  ns3::NodeContainer nodes_;
  std::vector<ns3::Ptr<PairRouting>> routing_;           // per node
  std::vector<ns3::Ptr<ns3::PointToPointNetDevice>> tx_;  // per link: its sending device
  std::vector<LinkProbe> probes_;                         // per link
  std::vector<std::uint64_t> drops_at_start_;             // per link: drops during warm-up
  std::map<std::uint64_t, Pair> pairs_;  // ordered: the warm-up visits pairs in a fixed order
  std::vector<ns3::Ptr<ns3::Socket>> listeners_;
  std::uint64_t accepted_ = 0, awaited_ = 0;
  bool warming_up_ = false;
  Time offset_ = 0;  // ns-3 time at our time 0
  ns3::EventId stopper_;
  Time stopper_at_ = -1;
  std::uint64_t events_at_start_ = 0;
};

Ns3Network::Ns3Network(const Topology& topology, EventQueue& queue, const Ns3Options& options)
    : topology_(topology), queue_(queue), options_(options) {
  if (g_owner.load() == std::this_thread::get_id()) {
    throw std::logic_error("only one ns3 network may exist at a time per thread (ns-3's simulator is global)");
  }
  g_turn.lock();
  g_owner.store(std::this_thread::get_id());
  // Our clock counts picoseconds; so does ns-3's from here on (settable once per process).
  static const bool resolution_set = [] {
    if (ns3::Time::GetResolution() != ns3::Time::PS) ns3::Time::SetResolution(ns3::Time::PS);
    return true;
  }();
  (void)resolution_set;
  try {
    ns3::RngSeedManager::SetSeed(options_.seed);
    ns3::RngSeedManager::SetRun(1);
    build_nodes();
    build_links();
    if (options_.connect_before_start) warm_up();
  } catch (...) {
    pairs_.clear();
    listeners_.clear();
    ns3::Simulator::Destroy();
    g_owner.store(std::thread::id{});
    g_turn.unlock();
    throw;
  }
  events_at_start_ = ns3::Simulator::GetEventCount();
  queue_.set_peer(this);
}

Ns3Network::~Ns3Network() {
  queue_.set_peer(nullptr);
  pairs_.clear();
  listeners_.clear();
  ns3::Simulator::Destroy();
  g_owner.store(std::thread::id{});
  g_turn.unlock();
}

void Ns3Network::build_nodes() {
  nodes_.Create(topology_.node_count());
  ns3::InternetStackHelper stack;
  stack.SetIpv6StackInstall(false);
  stack.SetRoutingHelper(PairRoutingHelper());
  stack.Install(nodes_);
  const ns3::TypeId congestion =
      options_.congestion == "cubic" ? ns3::TcpCubic::GetTypeId() : ns3::TcpNewReno::GetTypeId();
  for (NodeId v = 0; v < topology_.node_count(); ++v) {
    ns3::Ptr<ns3::Ipv4> ipv4 = nodes_.Get(v)->GetObject<ns3::Ipv4>();
    routing_.push_back(ns3::DynamicCast<PairRouting>(ipv4->GetRoutingProtocol()));
    routing_.back()->set_node(v);
    if (v < topology_.npu_count()) {
      nodes_.Get(v)->GetObject<ns3::TcpL4Protocol>()->SetAttribute("SocketType", ns3::TypeIdValue(congestion));
    }
  }
}

// One channel per directed link, so links of a cable may differ in bandwidth
// or latency: the far device of each channel only receives.
void Ns3Network::build_links() {
  const std::vector<Link>& links = topology_.links();
  tx_.resize(links.size());
  probes_.resize(links.size());
  for (LinkId l = 0; l < links.size(); ++l) {
    const BytesPerSecond bw = options_.links.effective(links[l].bandwidth);
    ns3::PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", ns3::DataRateValue(ns3::DataRate(bw * 8)));
    p2p.SetDeviceAttribute("Mtu", ns3::UintegerValue(options_.mtu));
    p2p.SetChannelAttribute("Delay", ns3::TimeValue(ns3::PicoSeconds(links[l].latency)));
    p2p.SetQueue("ns3::DropTailQueue",
                 "MaxSize", ns3::QueueSizeValue(ns3::QueueSize(ns3::QueueSizeUnit::BYTES, options_.queue_bytes)));
    // Without a queue discipline, a device with flow control stops its queue one
    // packet short of full and the traffic-control layer drops the packet where
    // no link counter sees it; without flow control every drop happens in this
    // drop-tail queue, the one the link statistics count.
    p2p.DisableFlowControl();
    ns3::NetDeviceContainer d = p2p.Install(nodes_.Get(links[l].from), nodes_.Get(links[l].to));
    for (std::uint32_t i = 0; i < 2; ++i) {
      ns3::Ptr<ns3::Ipv4> ipv4 = d.Get(i)->GetNode()->GetObject<ns3::Ipv4>();
      ipv4->SetUp(static_cast<std::uint32_t>(ipv4->AddInterface(d.Get(i))));
    }
    tx_[l] = ns3::DynamicCast<ns3::PointToPointNetDevice>(d.Get(0));
    LinkProbe& probe = probes_[l];
    probe.rate = bw;
    tx_[l]->TraceConnectWithoutContext("PhyTxBegin", ns3::MakeCallback(&LinkProbe::on_tx_begin, &probe));
    tx_[l]->GetQueue()->TraceConnectWithoutContext("BytesInQueue", ns3::MakeCallback(&LinkProbe::on_queue_bytes, &probe));
  }
  drops_at_start_.assign(links.size(), 0);
  for (NodeId v = 0; v < topology_.npu_count(); ++v) {
    ns3::Ptr<ns3::Socket> s = tcp_socket(v);
    s->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), kPort));
    s->Listen();
    s->SetAcceptCallback(ns3::MakeNullCallback<bool, ns3::Ptr<ns3::Socket>, const ns3::Address&>(),
                         ns3::MakeCallback(&Ns3Network::on_accept, this));
    listeners_.push_back(s);
  }
}

ns3::Ptr<ns3::Socket> Ns3Network::tcp_socket(NodeId npu) {
  ns3::Ptr<ns3::Socket> s = ns3::Socket::CreateSocket(nodes_.Get(npu), ns3::TcpSocketFactory::GetTypeId());
  // IPv4 20 B + TCP 20 B + timestamp option 12 B: every full segment is one MTU.
  s->SetAttribute("SegmentSize", ns3::UintegerValue(options_.mtu - 52));
  s->SetAttribute("SndBufSize", ns3::UintegerValue(static_cast<std::uint32_t>(options_.tcp_buffer)));
  s->SetAttribute("RcvBufSize", ns3::UintegerValue(static_cast<std::uint32_t>(options_.tcp_buffer)));
  s->SetAttribute("DelAckTimeout", ns3::TimeValue(ns3::PicoSeconds(options_.delayed_ack)));
  s->SetAttribute("MinRto", ns3::TimeValue(ns3::PicoSeconds(options_.min_rto)));
  s->SetAttribute("ClockGranularity", ns3::TimeValue(ns3::NanoSeconds(1)));
  s->SetAttribute("TcpNoDelay", ns3::BooleanValue(true));
  s->SetAttribute("InitialCwnd", ns3::UintegerValue(options_.initial_cwnd));
  return s;
}

// A pair's connection and its routes (both ways: ACKs take the reverse route).
Ns3Network::Pair& Ns3Network::pair(NodeId src, NodeId dst) {
  auto [it, fresh] = pairs_.try_emplace(pair_key(src, dst));
  Pair& p = it->second;
  if (!fresh) return p;
  p.net = this;
  p.src = src;
  p.dst = dst;
  std::vector<LinkId> route;
  for (const auto& [from, to] : {std::pair{src, dst}, std::pair{dst, src}}) {
    route.clear();
    topology_.route(from, to, route);
    for (LinkId l : route) routing_[topology_.links()[l].from]->add(from, to, tx_[l]);
  }
  connect(p);
  return p;
}

void Ns3Network::connect(Pair& p) {
  p.tx = tcp_socket(p.src);
  p.tx->Bind();
  p.tx->Connect(ns3::InetSocketAddress(address_of(p.dst), kPort));
  p.tx->SetSendCallback(ns3::MakeBoundCallback(&Ns3Network::pump, &p));
  ++awaited_;
}

// Every pair's handshake before our time 0, so a first message costs what
// later ones do: our clock starts where the warm-up ended. A handshake leaves
// the sender believing the receiver's window is 64 KiB (a SYN's window is not
// scaled) until the receiver sends it an ordinary segment, so each pair also
// sends one byte and waits for its ACK, which carries the real window.
void Ns3Network::warm_up() {
  const NodeId n = topology_.npu_count();
  for (NodeId s = 0; s < n; ++s) {
    for (NodeId d = 0; d < n; ++d) {
      if (s != d) pair(s, d);
    }
  }
  warming_up_ = true;
  ns3::Simulator::Run();  // on_accept stops it at the last handshake
  warming_up_ = false;
  if (accepted_ != awaited_) {
    throw std::logic_error("ns3 backend: only " + std::to_string(accepted_) + " of " + std::to_string(awaited_) +
                           " TCP connections were established");
  }
  for (auto& [key, p] : pairs_) {
    p.tx->Send(ns3::Create<ns3::Packet>(1));
    p.offered = 1;  // the byte is the stream's first: messages start after it
  }
  const ns3::Time step = ns3::PicoSeconds(options_.delayed_ack + options_.min_rto);
  for (int i = 0; i < 100 && !all_acknowledged(); ++i) {
    ns3::Simulator::Stop(step);
    ns3::Simulator::Run();
  }
  if (!all_acknowledged()) throw std::logic_error("ns3 backend: the warm-up bytes were not all acknowledged");
  offset_ = ns3::Simulator::Now().GetPicoSeconds();
  reset_probes();
}

bool Ns3Network::all_acknowledged() const {
  for (const auto& [key, p] : pairs_) {
    if (p.received != p.offered || p.tx->GetTxAvailable() != options_.tcp_buffer) return false;
  }
  return true;
}

void Ns3Network::reset_probes() {
  for (LinkId l = 0; l < probes_.size(); ++l) {
    probes_[l] = LinkProbe{probes_[l].rate, 0, 0, 0, 0, 0};
    drops_at_start_[l] = tx_[l]->GetQueue()->GetTotalDroppedPackets();
  }
}

void Ns3Network::on_accept(ns3::Ptr<ns3::Socket> s, const ns3::Address& from) {
  const NodeId src = npu_of(ns3::InetSocketAddress::ConvertFrom(from).GetIpv4());
  const NodeId dst = s->GetNode()->GetId();
  Pair& p = pairs_.at(pair_key(src, dst));
  s->SetRecvCallback(ns3::MakeBoundCallback(&Ns3Network::on_receive, &p));
  if (++accepted_ == awaited_ && warming_up_) ns3::Simulator::Stop();
}

void Ns3Network::send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to) {
  if (!admit(src, dst, to, queue_)) return;
  Pair& p = pair(src, dst);
  // A stream has no empty message: one of 0 bytes is carried as 1 byte.
  const std::uint64_t wire = bytes == 0 ? 1 : bytes;
  p.offered += wire;
  p.messages.push_back({p.offered, to});
  const ns3::Time at = ns3::PicoSeconds(queue_.now() + offset_);
  ns3::Simulator::Schedule(at - ns3::Simulator::Now(), &Ns3Network::inject, this, &p, wire);
}

void Ns3Network::inject(Pair* p, std::uint64_t bytes) {
  p->unsent += bytes;
  pump(p, p->tx, 0);
}

// Hands the socket as much as its send buffer takes; called again when it drains.
void Ns3Network::pump(Pair* p, ns3::Ptr<ns3::Socket>, std::uint32_t) {
  while (p->unsent > 0) {
    const std::uint32_t room = p->tx->GetTxAvailable();
    if (room == 0) return;
    const auto n = static_cast<std::uint32_t>(p->unsent < room ? p->unsent : room);
    if (p->tx->Send(ns3::Create<ns3::Packet>(n)) < 0) return;
    p->unsent -= n;
  }
}

// Bytes arrive in order; every message whose last byte is in is delivered now.
void Ns3Network::on_receive(Pair* p, ns3::Ptr<ns3::Socket> s) {
  while (ns3::Ptr<ns3::Packet> packet = s->Recv()) p->received += packet->GetSize();
  Ns3Network& net = *p->net;
  bool delivered = false;
  while (!p->messages.empty() && p->messages.front().end <= p->received) {
    const Delivery to = p->messages.front().to;
    p->messages.pop_front();
    const Time at = ns3::Simulator::Now().GetPicoSeconds() - net.offset_ + net.options_.links.message_latency;
    net.queue_.schedule(at, to.handler, to.kind, to.payload);
    delivered = true;
  }
  // Hand the clock back: our kernel must see this delivery before ns-3 goes on.
  if (delivered) ns3::Simulator::Stop();
}

void Ns3Network::run_until(Time limit) {
  const bool bounded = limit != kNoLimit;
  if (stopper_at_ >= 0 && (!bounded || stopper_at_ != limit)) {
    ns3::Simulator::Remove(stopper_);
    stopper_at_ = -1;
  }
  if (bounded && stopper_at_ < 0) {
    // Scheduled now, it runs after the ns-3 events already due at `limit`.
    stopper_ = ns3::Simulator::Schedule(ns3::PicoSeconds(limit + offset_) - ns3::Simulator::Now(), &stop_ns3);
    stopper_at_ = limit;
  }
  ns3::Simulator::Run();
  if (stopper_at_ >= 0 && stopper_.IsExpired()) stopper_at_ = -1;
}

std::vector<LinkUsage> Ns3Network::link_usage() const {
  std::vector<LinkUsage> out(probes_.size());
  for (LinkId l = 0; l < probes_.size(); ++l) {
    const LinkProbe& p = probes_[l];
    LinkUsage& u = out[l];
    u.bytes = p.payload;
    u.busy = p.busy;
    u.wire_bytes = p.wire;
    u.packets = p.packets;
    u.drops = tx_[l]->GetQueue()->GetTotalDroppedPackets() - drops_at_start_[l];
    u.peak_queue_bytes = p.peak_queue;
  }
  return out;
}

std::vector<std::pair<std::string, std::uint64_t>> Ns3Network::counters() const {
  std::uint64_t packets = 0, drops = 0;
  for (const LinkUsage& u : link_usage()) {
    packets += u.packets;
    drops += u.drops;
  }
  return {{"packet transmissions (all hops)", packets},
          {"packets dropped", drops},
          {"TCP connections", pairs_.size()},
          {"ns-3 events", ns3::Simulator::GetEventCount() - events_at_start_}};
}

}  // namespace

}  // namespace sim

extern "C" sim::Network* sim_ns3_make_network(const sim::Topology& topology, sim::EventQueue& queue,
                                              const sim::Ns3Options& options) {
  return new sim::Ns3Network(topology, queue, options);
}
