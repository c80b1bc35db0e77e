// Static IPv4 routing by (source NPU, destination NPU): every node forwards a
// packet on the link our router chose for that pair, so ns-3 takes exactly
// the routes of the other backends (fat-tree ECMP included, which hashes the
// pair). Stock ns-3 static routing keys on the destination only, hence this.
// Included by tcp_transport.cpp only (ns-3 headers).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "network/ns3/routes.h"
#include "ns3/internet-module.h"

namespace sim {

inline constexpr std::uint32_t kFirstAddress = 0x0A000001u;  // NPU i is 10.0.0.(i+1) and up

inline ns3::Ipv4Address address_of(NodeId npu) { return ns3::Ipv4Address(kFirstAddress + npu); }
inline NodeId npu_of(ns3::Ipv4Address a) { return a.Get() - kFirstAddress; }

class Ipv4PairRouting : public ns3::Ipv4RoutingProtocol {
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

class Ipv4PairRoutingHelper : public ns3::Ipv4RoutingHelper {
 public:
  Ipv4PairRoutingHelper* Copy() const override { return new Ipv4PairRoutingHelper(*this); }
  ns3::Ptr<ns3::Ipv4RoutingProtocol> Create(ns3::Ptr<ns3::Node>) const override {
    return ns3::CreateObject<Ipv4PairRouting>();
  }
};

}  // namespace sim
