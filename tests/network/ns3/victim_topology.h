// Test helper: the head-of-line blocking case's fabric. NPUs 0-3 on switch
// sw0, NPUs 4 and 5 on sw1, 50 GB/s links and one 200 GB/s link sw0 -> sw1
// that an incast into NPU 4 and a victim flow from NPU 3 to NPU 5 share.
#pragma once

#include "network/topology.h"

namespace sim::testing_support {

inline Topology victim_topology() {
  return parse_topology(
      "npus: 6\nswitches: 2\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n"
      "  - {src: npu0, dst: sw0}\n  - {src: npu1, dst: sw0}\n  - {src: npu2, dst: sw0}\n  - {src: npu3, dst: sw0}\n"
      "  - {src: npu4, dst: sw1}\n  - {src: npu5, dst: sw1}\n  - {src: sw0, dst: sw1, bandwidth: 200GB/s}\n",
      "victim.yml");
}

}  // namespace sim::testing_support
