// transport: roce. RoCEv2 over a lossless (or lossy) Ethernet fabric, modelled
// on ns-3's simulator with our own ports, switches and NICs (no IP stack):
// every NPU pair's messages on one queue pair, MTU-sized packets, PFC at
// switch ingress, ECN marking at switch egress, DCQCN at the NICs and
// go-back-N when a packet is lost (docs/network.md).
#pragma once

#include <memory>

#include "network/ns3/ns3_options.h"
#include "network/ns3/transport.h"

namespace sim {

std::unique_ptr<Transport> make_roce_transport(const Topology& topology, const Ns3Options& options, MessageSink& sink);

// transport: ib. The same fabric and queue pairs with InfiniBand's link-level
// flow control instead: a sender sends a data packet only when the far end's
// input buffer has credits for it (one data virtual lane; ACKs on their own,
// never blocked), so nothing is dropped or paused; no ECN, no DCQCN;
// InfiniBand's 26 B of headers per packet.
std::unique_ptr<Transport> make_ib_transport(const Topology& topology, const Ns3Options& options, MessageSink& sink);

}  // namespace sim
