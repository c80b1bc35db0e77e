// PFC's thresholds at every node that buffers forwarded data (docs/network.md).
//
// Headroom of one ingress port: what can still arrive after it crosses XOFF.
// Following the delay components of IEEE 802.1Qbb-2011 (Annex N): the
// PAUSE's trip up the cable and the data already on the cable coming down
// (2 x rate x latency), a maximum frame the upstream sender has begun when
// the PAUSE arrives plus the maximum frame whose arrival crossed XOFF
// (2 x max frame), and the PAUSE frame itself (64 B); the model's MAC and PHY
// react at once, so the standard's response-time terms are zero. Each port's
// XOFF is its share of the buffer left after every port's headroom; XON is
// two maximum frames lower. With several priorities (traffic_classes) the
// headroom and the share are per port and priority.
#pragma once

#include <cstdint>
#include <vector>

#include "network/ns3/ns3_options.h"
#include "network/topology.h"

namespace sim {

struct PfcThresholds {
  std::uint64_t xoff = 0;  // ingress bytes of one port above which it is paused
  std::uint64_t xon = 0;   // and at or below which it is resumed
};

// Headroom of a port fed at `rate` over a cable of `latency`.
std::uint64_t pfc_headroom(BytesPerSecond rate, Time latency, std::uint32_t max_frame);

// Per node. InputError when PFC is on and a node that forwards (a switch, or
// an NPU with two or more links in) has no room left above its headroom, or
// when the configured thresholds do not fit.
std::vector<PfcThresholds> pfc_thresholds(const Topology& topology, const Ns3Options& options, std::uint32_t max_frame);

}  // namespace sim
