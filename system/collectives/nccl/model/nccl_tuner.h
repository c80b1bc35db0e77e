// NCCL's tuning model: how NCCL predicts the time of a collective for each
// algorithm and protocol, and picks the fastest.
//
// NCCL (src/graph/tuning.cc, ncclTopoTuneModel and ncclTopoGetAlgoTime) keeps,
// per collective, algorithm and protocol, a latency (us) and a bandwidth
// (GB/s, of the user buffer) and predicts
//
//   time(S) = latency + S / (1000 * bandwidth)    [us, S in bytes]
//
// then runs the algorithm/protocol of least time. The bandwidths start from
// its topology search (graph: channels x GB/s per channel, the intra-node and
// inter-node rates) and are refined per algorithm and protocol; latencies are
// a base latency plus per-hop hardware latencies by link type. Every constant
// here is NCCL's, from NVIDIA/nccl src/graph/tuning.cc of the release the
// input names (2.20.3 at commit b6475625 for 2.17-2.20, with NVLS, NVLS-tree
// and CollNet direct/chain; what 2.21 and 2.23 changed, through 2.27); see
// docs/nccl.md for the tables and what each means; the tables themselves are
// in nccl_constants.h. The code is ours.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "system/collectives/nccl/model/nccl_constants.h"
#include "workload/rank_graph.h"

namespace sim::nccl {

// NCCL's order (NCCL_ALGO_*, NCCL_PROTO_*): ties go to the first.
enum class Algo : std::uint8_t { kTree = 0, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree };
enum class Proto : std::uint8_t { kLL = 0, kLL128, kSimple };

const char* algo_name(Algo a);    // "ring", "tree", "collnetdirect", "collnetchain", "nvls", "nvlstree"
const char* proto_name(Proto p);  // "ll", "ll128", "simple"

// GPU generation: selects NCCL's per-generation caps (compCapIndex).
enum class Arch : std::uint8_t { kVolta = 0, kAmpere = 1, kHopper = 2 };

// Link class of a hop (NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET).
enum class Hw : std::uint8_t { kNvlink = 0, kPci = 1, kNet = 2 };

// One algorithm's channel graph, as NCCL's topology search leaves it.
struct Graph {
  int channels = 0;          // 0: the algorithm is not available
  double bw_intra = 0;       // GB/s per channel inside a node
  double bw_inter = 0;       // GB/s per channel across nodes
  bool nvlink_intra = true;  // typeIntra == LINK_NVL (else PCI)
  double latency_inter = 0;  // us, graph->latencyInter (0 unless set by a plugin)
};

struct TuneInput {
  CollectiveType type = CollectiveType::kAllReduce;
  int ranks = 0;
  int nodes = 1;
  Arch arch = Arch::kHopper;
  bool amd_cpu = false;          // selects llMaxBws and the net overhead (Intel 1 us, AMD 2 us)
  bool ll128 = true;             // LL128 enabled (NCCL: NVLink inside, Volta/Ampere/Hopper)
  bool collnet = false;          // the fabric reduces (CollNet / SHARP)
  int version = kDefaultTablesVersion;  // NCCL's release, 200 + minor: its tables and formulas
  std::array<Graph, kAlgos> graphs;
};

// NCCL's latency (us) and bandwidth (GB/s of buffer) per algorithm/protocol
// for one collective type; bandwidth 0 = not available.
struct TuneTable {
  double latency[kAlgos][kProtos] = {};
  double bandwidth[kAlgos][kProtos] = {};
};

TuneTable tune(const TuneInput& in);

// NCCL's base latency and per-hop latency of a link class in release
// `version`, us (baseLat, hwLat).
double base_latency(Algo a, Proto p, int version);
double hop_latency(Hw hw, Algo a, Proto p, int version);
// busBw / algBw of an algorithm as NCCL converts them (ring n/nsteps, tree 1/2, NVLS 5/6).
double bus_to_alg_ratio(Algo a, CollectiveType type, int ranks);

// ncclTopoGetAlgoTime: predicted time in us, or -1 when unavailable.
// `channels` > 0 scales the bandwidth to that many channels (NCCL's
// info->nChannels); 0 keeps the graph's.
double algo_time(const TuneInput& in, const TuneTable& table, Algo a, Proto p, std::uint64_t bytes, int channels = 0);

struct Choice {
  Algo algo = Algo::kRing;
  Proto proto = Proto::kSimple;
  double time_us = -1;
};
// The fastest available pair (NCCL's getAlgoInfo, strict <: ties to the first
// in NCCL's order), among the algorithms `allowed` marks (by Algo index).
Choice choose(const TuneInput& in, const TuneTable& table, std::uint64_t bytes,
              const std::array<bool, kAlgos>& allowed);

}  // namespace sim::nccl
