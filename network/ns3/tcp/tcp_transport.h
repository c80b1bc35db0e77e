// transport: tcp. Every NPU and switch an ns-3 node with an IPv4 stack, every
// directed link a point-to-point channel with a drop-tail queue, every
// ordered NPU pair one TCP connection whose byte stream carries its messages
// back to back (docs/network.md).
#pragma once

#include <memory>

#include "network/ns3/ns3_options.h"
#include "network/ns3/transport.h"

namespace sim {

// Builds the nodes and links and, with connect: before_start, runs the
// handshakes of every pair (ns-3's clock advances: our time 0 is where it ends).
std::unique_ptr<Transport> make_tcp_transport(const Topology& topology, const Ns3Options& options, MessageSink& sink);

}  // namespace sim
