// The packet-level backend on Debian's stock ns-3 (3.37): real packets, over
// TCP or RoCEv2 (network.transport).
//
// This header is all the rest of the project sees of it: plain options
// (ns3_options.h) and a factory, no ns-3 type, so only the module's own files
// are compiled as C++17 against ns-3's headers (which do not compile as C++20)
// and ns-3 (GPLv2) stays in its own module, build/libsim_ns3.so, which the
// backend registry loads (core/plugin.h) only when a run picks the ns3
// backend: other runs neither map ns-3's libraries nor run its static
// initialisers. docs/network.md describes the model and how the module is found.
#pragma once

#include "core/event_queue.h"
#include "network/network.h"
#include "network/ns3/ns3_options.h"

namespace sim {

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
