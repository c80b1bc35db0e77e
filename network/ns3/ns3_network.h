// The packet-level backend on Debian's stock ns-3 (3.37): real packets, real TCP.
//
// This header is all the rest of the project sees of it: plain options and a
// factory, no ns-3 type, so only network/ns3/ns3_network.cpp is compiled as
// C++17 against ns-3's headers (which do not compile as C++20) and ns-3 (GPLv2)
// stays in its own module, build/libsim_ns3.so, which the backend registry
// loads (core/plugin.h) only when a run picks the ns3 backend: other runs
// neither map ns-3's libraries nor run its static initialisers.
// docs/network.md describes the model and how the module is found.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/event_queue.h"
#include "network/backend_registry.h"
#include "network/network.h"

namespace sim {

struct Ns3Options {
  LinkModel links;
  std::uint32_t mtu = 9000;                 // IP packet size on every link (jumbo frames)
  std::uint64_t queue_bytes = 4ull << 20;   // drop-tail transmit queue of every link
  std::uint64_t tcp_buffer = 2ull << 20;     // send and receive buffer of every connection
  Time min_rto = 1'000'000'000;             // TCP minimum retransmission timeout (1 ms)
  Time delayed_ack = 10'000'000;            // TCP delayed-ACK timeout (10 us)
  std::uint32_t initial_cwnd = 10;          // TCP initial window in segments (Linux, RFC 6928)
  std::string congestion = "newreno";       // newreno or cubic
  bool connect_before_start = true;         // handshakes of every NPU pair done before time 0
  std::uint32_t seed = 1;                   // ns-3 random streams
};

// The module's file and its one entry point, looked up by name.
inline constexpr const char* kNs3ModuleFile = "libsim_ns3.so";
inline constexpr const char* kNs3EntryPoint = "sim_ns3_make_network";

// Builds the backend; the caller owns the result. Only one may exist at a time
// in a process (ns-3's simulator is global); a second throws std::logic_error.
// Bad options throw InputError; exceptions cross the module boundary as usual
// (one C++ runtime in the process).
using Ns3MakeNetwork = Network*(const Topology& topology, EventQueue& queue, const Ns3Options& options);

}  // namespace sim

extern "C" sim::Ns3MakeNetwork sim_ns3_make_network;
