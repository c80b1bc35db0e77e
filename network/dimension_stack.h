// A stack of dimensions: ASTRA-sim's topology building blocks, and every named
// shape (a torus is a stack of rings, a mesh a stack of lines, a hypercube a
// stack of size-2 lines).
//
// NPU id = mixed-radix address, dimension 0 fastest. Dimension d connects the
// NPUs that differ only in coordinate d (a "group") as a bidirectional ring, a
// line, all pairs, or through one switch per group. Link ids are laid out
// arithmetically, so routing needs no per-pair table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"
#include "network/topology.h"

namespace sim {

// DimensionKind (topology.h): kRing, kLine, kFullyConnected or kSwitch here.
struct Dimension {
  DimensionKind kind;
  std::uint32_t size;  // NPUs per group, >= 2
  BytesPerSecond bandwidth;
  Time latency;
  bool in_network_reduction = false;  // kSwitch: its switches reduce and multicast
  // Hosts and roles (TopologyDimension): when no dimension of a stack says
  // (`declared` false on all), dimension 0 is the host (its switches
  // nvswitch) and the others the fabric's levels (leaf, spine, core).
  bool in_host = false;
  NodeRole role = NodeRole::kSwitch;
  bool declared = false;
};

// Builds the graph with dimension-order routing: dimension 0 first; within a
// ring the shorter direction (+1 on a tie), within a line straight, all-pairs
// direct, a switch group through its switch. A ring of 2 gets one pair of links.
// `label` heads the description ("Torus 8x8"); `source` names the file in the
// InputError thrown when the topology is too large to represent.
Topology build_dimension_stack(const std::string& source, const std::string& label,
                               const std::vector<Dimension>& dims);

}  // namespace sim
