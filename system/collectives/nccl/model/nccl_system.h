// NCCL's view of a group: ranks, nodes, the per-GPU bandwidths NCCL's
// topology detection would see, and the channel graphs its search would find.
//
// NCCL does not use a link's spec rate: it gives an NVLink of each GPU
// generation a fixed bandwidth (src/graph/topo.h: SM70/SM80 20.0 GB/s,
// SM90 20.6 GB/s per link and direction, against 25 GB/s on the spec sheet)
// and a NIC its port speed. Its search (src/graph/search.cc) then tries speeds
// per channel from a per-generation list, highest first, and keeps the most
// channels x speed the links can carry. We redo that search on what the
// topology says of each host (Topology::host, role): its GPUs' NVLink, and
// the NICs they reach the network through (one per GPU, shared by several,
// or several merged into one device per GPU); docs/nccl.md says what is
// approximated.
#pragma once

#include <string>
#include <vector>

#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/model/nccl_tuner.h"

namespace sim::nccl {

struct NcclSystem {
  int ranks = 0;
  int nodes = 1;
  int per_node = 0;          // ranks per node (NCCL needs the same count on every node)
  Arch arch = Arch::kHopper;
  double gpu_bw = 0;         // GB/s per GPU and direction inside the node, NCCL's view
  double nic_bw = 0;         // GB/s of one network device (0: one node)
  int nics = 0;              // network devices per node (NCCL's count; 0: one node)
  bool nvls = false;         // the node switches reduce and multicast
  bool collnet = false;      // the fabric reduces
  std::array<Graph, kAlgos> graphs;
  int run_channels = 0;      // the CTAs a ring or tree runs on (run_channels below)
};

// NCCL's per-link NVLink bandwidth of `arch` over the spec rate (25 GB/s per
// link and direction for NVLink 2, 3 and 4): 20/25 (Volta, Ampere), 20.6/25 (Hopper).
double nvlink_efficiency(Arch arch);

// Builds the view; throws InputError when the group has different numbers of
// ranks on different nodes (NCCL's graphs assume one count).
NcclSystem describe_system(const AlgorithmContext& ctx, Arch arch);

// The search alone, for tests: graphs of `ranks` GPUs, `nodes` nodes of
// `gpu_bw` GB/s NVLink and `nics` network devices of `nic_bw` GB/s per node
// (0: one per GPU).
std::array<Graph, kAlgos> search_graphs(Arch arch, int ranks, int nodes, double gpu_bw, double nic_bw, bool nvls,
                                        bool collnet, int nics = 0);

// The channels (CTAs) NCCL runs a ring or tree on, from the search's graphs
// (src/graph/connect.cc, ncclTopoPostset; kRunChannelsMax and the rules beside
// it): NCCL's model prices the graph's channels, its kernels run these.
int run_channels(const std::array<Graph, kAlgos>& graphs, Arch arch, int ranks, int nodes);

// How a host's GPUs reach the network, as NCCL counts it: `devices` network
// devices of `speed` GB/s each. A NIC one GPU alone reaches is merged with
// that GPU's others into one device (aws-ofi-nccl's rails, NCCL's merged
// NICs); a NIC several GPUs share is a device of its own. Without NIC nodes,
// each GPU's first link out of its host is its NIC (with its others to
// switches of the same role). devices = 0 when nothing leaves the host.
struct NetworkDevices {
  int devices = 0;
  double speed = 0;  // GB/s, the slowest device's
};
// `host_npus`: the GPUs of one host NCCL's communicator holds.
NetworkDevices network_devices(const Topology& topology, const std::vector<std::uint32_t>& host_npus);
// GB/s NVLink of the fastest GPU of `host_npus` to its host: its links to the
// host's other GPUs and NVSwitches (its PCIe switches where it has neither);
// 0 when it has none.
double host_bandwidth(const Topology& topology, const std::vector<std::uint32_t>& host_npus);

}  // namespace sim::nccl
