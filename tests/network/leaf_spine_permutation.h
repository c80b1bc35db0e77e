// multipath_routing_test.cpp's fabric and traffic, which roce_multipath_test.cpp
// runs on ns3 too: a 1:1 leaf-spine of 2 leaves with U NPUs each and U spines,
// every link B = 50 GB/s and 500 ns; U messages of S bytes start together, NPU i
// on leaf 0 to a distinct NPU of leaf 1 (a permutation). One per uplink would be
// the bound, S / B + 4 latencies each.
#pragma once

#include <cstdint>
#include <string>

#include "core/time.h"
#include "network/topology.h"

namespace sim::testing_support {

inline constexpr BytesPerSecond kB = 50'000'000'000;
inline constexpr std::uint64_t kS = 1'048'576;  // divisible by every U used here
inline constexpr Time kLat = 500'000;
inline constexpr Time kBound = 4 * kLat + 20'971'520;  // S / B + 4 links' latency

inline Topology leaf_spine(std::uint32_t u) {
  const std::string yaml = "shape: FatTree\nleaves: 2\nnpus_per_leaf: " + std::to_string(u) +
                           "\nspines: " + std::to_string(u) + "\nbandwidth: 50GB/s\nlatency: 500ns\n";
  return parse_topology(yaml, "leaf-spine.yml");
}

}  // namespace sim::testing_support
