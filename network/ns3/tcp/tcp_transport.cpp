// transport: tcp (network/ns3/transport.h). The only translation unit of the TCP
// model: it includes ns-3's internet and point-to-point modules, which
// compile slowly.
#include "network/ns3/transport.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "network/ns3/routes.h"
#include "network/ns3/tcp/ipv4_pair_routing.h"
#include "network/ns3/tcp/tcp_link_probe.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

namespace sim {
namespace {

constexpr std::uint16_t kPort = 9;

class TcpTransport final : public Transport {
 public:
  TcpTransport(const Topology& topology, const Ns3Options& options, MessageSink& sink);

  // One connection per NPU pair: `connection` does not change it.
  void send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to, Time at, Connection connection) override;
  std::vector<LinkUsage> link_usage() const override;
  std::vector<std::pair<std::string, std::uint64_t>> counters() const override {
    return {{"TCP connections", pairs_.size()}};
  }

 private:
  // One TCP connection, src -> dst, and the messages riding it in order.
  struct Pair {
    TcpTransport* net = nullptr;
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
  Ns3Options options_;
  MessageSink& sink_;
  PairRoutes routes_;
  ns3::NodeContainer nodes_;
  std::vector<ns3::Ptr<Ipv4PairRouting>> routing_;       // per node
  std::vector<ns3::Ptr<ns3::PointToPointNetDevice>> tx_;  // per link: its sending device
  std::vector<TcpLinkProbe> probes_;                      // per link
  std::vector<std::uint64_t> drops_at_start_;             // per link: drops during warm-up
  std::map<std::uint64_t, Pair> pairs_;  // ordered: the warm-up visits pairs in a fixed order
  std::vector<ns3::Ptr<ns3::Socket>> listeners_;
  std::uint64_t accepted_ = 0, awaited_ = 0;
  bool warming_up_ = false;
};

TcpTransport::TcpTransport(const Topology& topology, const Ns3Options& options, MessageSink& sink)
    : topology_(topology), options_(options), sink_(sink), routes_(topology) {
  ns3::RngSeedManager::SetSeed(options_.seed);
  ns3::RngSeedManager::SetRun(1);
  build_nodes();
  build_links();
  if (options_.connect_before_start) warm_up();
}

void TcpTransport::build_nodes() {
  nodes_.Create(topology_.node_count());
  ns3::InternetStackHelper stack;
  stack.SetIpv6StackInstall(false);
  stack.SetRoutingHelper(Ipv4PairRoutingHelper());
  stack.Install(nodes_);
  const ns3::TypeId congestion =
      options_.congestion == "cubic" ? ns3::TcpCubic::GetTypeId() : ns3::TcpNewReno::GetTypeId();
  for (NodeId v = 0; v < topology_.node_count(); ++v) {
    ns3::Ptr<ns3::Ipv4> ipv4 = nodes_.Get(v)->GetObject<ns3::Ipv4>();
    routing_.push_back(ns3::DynamicCast<Ipv4PairRouting>(ipv4->GetRoutingProtocol()));
    routing_.back()->set_node(v);
    if (v < topology_.npu_count()) {
      nodes_.Get(v)->GetObject<ns3::TcpL4Protocol>()->SetAttribute("SocketType", ns3::TypeIdValue(congestion));
    }
  }
}

// One channel per directed link, so links of a cable may differ in bandwidth
// or latency: the far device of each channel only receives.
void TcpTransport::build_links() {
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
    TcpLinkProbe& probe = probes_[l];
    probe.stats.rate = bw;
    tx_[l]->TraceConnectWithoutContext("PhyTxBegin", ns3::MakeCallback(&TcpLinkProbe::on_tx_begin, &probe));
    tx_[l]->GetQueue()->TraceConnectWithoutContext("BytesInQueue", ns3::MakeCallback(&TcpLinkProbe::on_queue_bytes, &probe));
  }
  drops_at_start_.assign(links.size(), 0);
  for (NodeId v = 0; v < topology_.npu_count(); ++v) {
    ns3::Ptr<ns3::Socket> s = tcp_socket(v);
    s->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), kPort));
    s->Listen();
    s->SetAcceptCallback(ns3::MakeNullCallback<bool, ns3::Ptr<ns3::Socket>, const ns3::Address&>(),
                         ns3::MakeCallback(&TcpTransport::on_accept, this));
    listeners_.push_back(s);
  }
}

ns3::Ptr<ns3::Socket> TcpTransport::tcp_socket(NodeId npu) {
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
TcpTransport::Pair& TcpTransport::pair(NodeId src, NodeId dst) {
  auto [it, fresh] = pairs_.try_emplace(pair_key(src, dst));
  Pair& p = it->second;
  if (!fresh) return p;
  p.net = this;
  p.src = src;
  p.dst = dst;
  for (const auto& [from, to] : {std::pair{src, dst}, std::pair{dst, src}}) {
    for (LinkId l : routes_.route(from, to)) routing_[topology_.links()[l].from]->add(from, to, tx_[l]);
  }
  connect(p);
  return p;
}

void TcpTransport::connect(Pair& p) {
  p.tx = tcp_socket(p.src);
  p.tx->Bind();
  p.tx->Connect(ns3::InetSocketAddress(address_of(p.dst), kPort));
  p.tx->SetSendCallback(ns3::MakeBoundCallback(&TcpTransport::pump, &p));
  ++awaited_;
}

// Every pair's handshake before our time 0, so a first message costs what
// later ones do: our clock starts where the warm-up ended. A handshake leaves
// the sender believing the receiver's window is 64 KiB (a SYN's window is not
// scaled) until the receiver sends it an ordinary segment, so each pair also
// sends one byte and waits for its ACK, which carries the real window.
void TcpTransport::warm_up() {
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
    // ns-3's TCP gives up a handshake after its SYN retries (links too slow
    // for a SYN to cross before its timers run out): the run cannot start.
    throw IncompleteError("ns3 backend (transport tcp): only " + std::to_string(accepted_) + " of " +
                          std::to_string(awaited_) +
                          " TCP connections could be opened: their handshakes ran out of retries (links too slow or "
                          "too long for TCP's timers; transport: roce or ib has no handshake)");
  }
  for (auto& [key, p] : pairs_) {
    p.tx->Send(ns3::Create<ns3::Packet>(1));
    p.offered = 1;  // the byte is the stream's first: messages start after it
  }
  // Each wait covers a delayed ACK, a retransmission timeout and the longest
  // route's round trip (a fixed step gave up on routes of 50 ms a hop).
  Time longest = 0;
  for (const auto& [key, p] : pairs_) {
    Time route = 0;
    for (LinkId l : routes_.route(p.src, p.dst)) route += topology_.links()[l].latency;
    longest = std::max(longest, route);
  }
  const ns3::Time step = ns3::PicoSeconds(options_.delayed_ack + options_.min_rto + 2 * longest);
  for (int i = 0; i < 100 && !all_acknowledged(); ++i) {
    ns3::Simulator::Stop(step);
    ns3::Simulator::Run();
  }
  if (!all_acknowledged()) {
    throw IncompleteError("ns3 backend (transport tcp): the connections' first bytes were not all acknowledged "
                          "within 100 round trips and retransmission timeouts (links too slow or too long for TCP's "
                          "timers; transport: roce or ib)");
  }
  reset_probes();
}

bool TcpTransport::all_acknowledged() const {
  for (const auto& [key, p] : pairs_) {
    if (p.received != p.offered || p.tx->GetTxAvailable() != options_.tcp_buffer) return false;
  }
  return true;
}

void TcpTransport::reset_probes() {
  for (LinkId l = 0; l < probes_.size(); ++l) {
    probes_[l].stats = LinkStats{};
    probes_[l].stats.rate = options_.links.effective(topology_.links()[l].bandwidth);
    drops_at_start_[l] = tx_[l]->GetQueue()->GetTotalDroppedPackets();
  }
}

void TcpTransport::on_accept(ns3::Ptr<ns3::Socket> s, const ns3::Address& from) {
  const NodeId src = npu_of(ns3::InetSocketAddress::ConvertFrom(from).GetIpv4());
  const NodeId dst = s->GetNode()->GetId();
  Pair& p = pairs_.at(pair_key(src, dst));
  s->SetRecvCallback(ns3::MakeBoundCallback(&TcpTransport::on_receive, &p));
  if (++accepted_ == awaited_ && warming_up_) ns3::Simulator::Stop();
}

void TcpTransport::send(NodeId src, NodeId dst, std::uint64_t bytes, const Delivery& to, Time at, Connection) {
  Pair& p = pair(src, dst);
  // A stream has no empty message: one of 0 bytes is carried as 1 byte.
  const std::uint64_t wire = bytes == 0 ? 1 : bytes;
  p.offered += wire;
  p.messages.push_back({p.offered, to});
  ns3::Simulator::Schedule(ns3::PicoSeconds(at) - ns3::Simulator::Now(), &TcpTransport::inject, this, &p, wire);
}

void TcpTransport::inject(Pair* p, std::uint64_t bytes) {
  p->unsent += bytes;
  pump(p, p->tx, 0);
}

// Hands the socket as much as its send buffer takes; called again when it drains.
void TcpTransport::pump(Pair* p, ns3::Ptr<ns3::Socket>, std::uint32_t) {
  while (p->unsent > 0) {
    const std::uint32_t room = p->tx->GetTxAvailable();
    if (room == 0) return;
    const auto n = static_cast<std::uint32_t>(p->unsent < room ? p->unsent : room);
    if (p->tx->Send(ns3::Create<ns3::Packet>(n)) < 0) return;
    p->unsent -= n;
  }
}

// Bytes arrive in order; every message whose last byte is in is delivered now.
void TcpTransport::on_receive(Pair* p, ns3::Ptr<ns3::Socket> s) {
  while (ns3::Ptr<ns3::Packet> packet = s->Recv()) p->received += packet->GetSize();
  while (!p->messages.empty() && p->messages.front().end <= p->received) {
    const Delivery to = p->messages.front().to;
    p->messages.pop_front();
    p->net->sink_.delivered(to);
  }
}

std::vector<LinkUsage> TcpTransport::link_usage() const {
  std::vector<LinkUsage> out(probes_.size());
  for (LinkId l = 0; l < probes_.size(); ++l) {
    out[l] = probes_[l].stats.usage();
    out[l].drops = tx_[l]->GetQueue()->GetTotalDroppedPackets() - drops_at_start_[l];
  }
  return out;
}

}  // namespace

std::unique_ptr<Transport> make_tcp_transport(const Topology& topology, const Ns3Options& options, MessageSink& sink) {
  return std::make_unique<TcpTransport>(topology, options, sink);
}

}  // namespace sim
