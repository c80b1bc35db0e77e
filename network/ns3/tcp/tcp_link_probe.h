// What one directed link saw under TCP: traced from its transmitting device
// and queue. Included by tcp_transport.cpp only (ns-3 headers).
#pragma once

#include <cstdint>

#include "network/ns3/link_stats.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/ppp-header.h"

namespace sim {

struct TcpLinkProbe {
  LinkStats stats;

  void on_tx_begin(ns3::Ptr<const ns3::Packet> p) { stats.transmitted(p->GetSize(), tcp_payload(p)); }
  void on_queue_bytes(std::uint32_t, std::uint32_t now) { stats.queue_at(now); }

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

}  // namespace sim
