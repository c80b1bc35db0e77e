// A topology-aware collective synthesizer in the TACOS style.
//
// All-gather: greedy link-chunk matching on the time-expanded network of the
// topology's channels (ten_matcher.h). Reduce-scatter: the all-gather of the
// transposed network run backwards in time, so each chunk's broadcast tree
// becomes a reduction tree into its owner over the real links. All-reduce:
// that reduce-scatter, then the all-gather. The schedule becomes a per-rank
// DAG of sends, receives and reductions (a DagProgram) that the ET writer
// turns into Chakra ETs with chunk attributes. docs/synthesizer.md.
//
// Channels: NPU u -> NPU v when the topology's route from u to v passes no
// other NPU: a direct link, or a path through switches only (switch, fat tree,
// explicit graphs with switches). A transfer holds every link of the route, so
// on a switch an NPU's up-link and down-link are the matched resources.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "network/topology.h"
#include "system/program/collective_program.h"
#include "system/producers/ten_matcher.h"
#include "workload/rank_graph.h"

namespace sim {

struct SynthOptions {
  CollectiveType type = CollectiveType::kAllGather;  // ALL_GATHER, REDUCE_SCATTER or ALL_REDUCE
  std::uint32_t chunks = 1;                          // chunks per NPU's share
  std::uint64_t bytes = 1 << 20;                     // collective size the link costs are priced at
  std::uint64_t seed = 1;                            // tie-breaking; same seed, same algorithm
};

struct Synthesis {
  std::shared_ptr<const CollectiveProgram> program;
  Time predicted = 0;            // the schedule's length at `bytes` (each chunk holds its route latency + chunk time)
  std::uint64_t transfers = 0;   // chunk moves over channels
  std::uint64_t channels = 0;
};

// The most chunk transfers a schedule may hold (N(N-1)k, twice for an
// all-reduce): 2^21, the 1,024-NPU all-reduce at one chunk (2,095,104).
// There a 64-NPU all-reduce of 256 chunks (2,064,384) takes about 15 s of
// CPU and 800 MB, ETs written; the time grows faster than the transfers
// (each offer scans the N k chunks), and 512 chunks ran past a minute.
inline constexpr std::uint64_t kMaxSynthTransfers = std::uint64_t{1} << 21;

// Whether the synthesizer writes `type` (all-gather, reduce-scatter, all-reduce).
bool synthesizer_supports(CollectiveType type);

// Throws InputError for an unsupported type, zero chunks or bytes, a
// schedule past kMaxSynthTransfers, or a topology whose channels do not
// connect every NPU.
Synthesis synthesize(const Topology& topology, const SynthOptions& options);

// The channels of `topology` with costs for chunks of `chunk_bytes`.
std::vector<TenChannel> npu_channels(const Topology& topology, std::uint64_t chunk_bytes);

// The smallest total bandwidth of the links into one NPU: an all-gather (or
// all-reduce, by the busbw definition) can reach at most this bus bandwidth.
BytesPerSecond min_npu_ingress(const Topology& topology);

}  // namespace sim
