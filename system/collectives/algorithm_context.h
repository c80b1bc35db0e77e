// What an algorithm factory may know about where its group runs.
//
// A native algorithm used to see only (type, group size, bytes, chunks,
// parameters). Topology-aware algorithms (NCCL's: rings through each node's
// NVSwitch, trees across nodes, reduction in the switch) also need the group's
// NPUs, which of them share a switch domain, the NIC rail of each, the
// dimensions' bandwidths and latencies, and what the network can do (reduce
// and multicast in a switch). The registry builds one context per group
// (make_algorithm_context) and hands it to factories that take one.
//
// Domains. A domain is a host (Topology::host): the NVSwitch of a DGX, the
// fast ring of a TPU slice; by default a topology's dimension 0. Members of
// different hosts are "nodes" apart. A member's rail is its place among its
// host's NPUs (on a rail-optimised fabric, GPU i of every node uses NIC rail i).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "network/topology.h"

namespace sim {

inline constexpr NodeId kNoSwitch = std::numeric_limits<NodeId>::max();

// A GPU's memory as collectives see it: a reduction on the GPU reads its
// local addend at `bandwidth` (HBM; the system file's compute.memory_bandwidth)
// unless the rank's buffer fits its last-level cache of `cache_bytes`
// (compute.kernel_l2_cache, the L2 the kernel model also uses; a buffer swept
// again and again that does not fit an LRU cache misses it throughout).
// bandwidth 0: reductions free.
struct GpuMemory {
  BytesPerSecond bandwidth = 0;
  std::uint64_t cache_bytes = 0;
};

struct AlgorithmContext {
  std::shared_ptr<const std::vector<std::uint32_t>> members;  // global NPU ids by group position (never null)
  const Topology* topology = nullptr;                          // null: unknown (tools, tests)

  // Topology view of the group.
  std::uint32_t domains = 1;
  std::vector<std::uint32_t> domain_of;  // per position: its domain, 0..domains-1 in order of first appearance
  std::vector<std::uint32_t> rail_of;    // per position: its place among its host's NPUs
  std::vector<NodeId> domain_switch;     // per domain: the NVSwitch its members hang off, or kNoSwitch
  std::vector<TopologyDimension> dims;   // the topology's dimensions (empty when unknown)

  // Capabilities.
  bool domain_reduces = false;  // every domain's switch reduces and multicasts (NVLink SHARP)
  bool fabric_reduces = false;  // some dimension above 0 reduces in its switches (InfiniBand SHARP)
  GpuMemory memory;  // what a reduction on the GPU costs (zero: free)
  // Why a capability the topology has is withheld (a line of a hierarchical
  // collective whose switch other lines share); empty when none is.
  std::string withheld;

  std::uint32_t size() const { return static_cast<std::uint32_t>(members->size()); }
  // Positions of each domain, in position order.
  std::vector<std::vector<std::uint32_t>> positions_by_domain() const;
  // The group's members in each domain when every domain holds as many (NCCL's
  // model of a communicator needs it: its system and p2p schedule), else 0.
  std::uint32_t ranks_per_domain() const;
};

// The context of `members` on `topology` (null: every member in one domain, no switch, no capabilities).
std::shared_ptr<const AlgorithmContext> make_algorithm_context(std::shared_ptr<const std::vector<std::uint32_t>> members,
                                                               const Topology* topology,
                                                               GpuMemory memory = {});

// The context of one line of a hierarchical collective: `line` (global NPU
// ids, by line position) inside the whole group `group`. The line runs its
// own phase while the group's other lines run theirs, and a switch operation
// involves every group member under the switch; so a switch the line shares
// with a group member outside it cannot reduce or multicast for the line
// alone: the capability it gives is withheld (and `withheld` says why).
std::shared_ptr<const AlgorithmContext> make_line_context(std::shared_ptr<const std::vector<std::uint32_t>> line,
                                                          const std::vector<std::uint32_t>& group,
                                                          const Topology* topology, GpuMemory memory = {});

// Switches each NPU hangs off, in link order (a dimension stack lists
// dimension 0's first): what switch_translation compares.
std::vector<std::vector<NodeId>> switches_of_npus(const Topology& topology);

// Where a program written for the NPUs `from` addresses switch S, the same
// program run on `to` (same length, position by position) addresses
// translation[S]: the switch that `to[p]` reaches by the link `from[p]`
// reaches S by (its k-th switch link). Throws InputError when that is not one
// switch for one (the lines are not translations of each other).
std::unordered_map<NodeId, NodeId> switch_translation(const std::vector<std::vector<NodeId>>& switches_of,
                                                      const std::vector<std::uint32_t>& from,
                                                      const std::vector<std::uint32_t>& to);

}  // namespace sim
