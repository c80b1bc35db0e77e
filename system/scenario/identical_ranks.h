// Ranks whose traces are the same, simulated once.
//
// A workload whose every rank runs the same trace (a microbenchmark, a
// data-parallel step written once per rank) does the same thing on every rank
// at the same picosecond when its ranks meet only in collectives over all of
// them, each rank-symmetric (ring), on a network where every NPU sees the same
// routes: one Switch dimension. Then rank 0 alone runs, its collectives
// mirrored onto its copies (system/groups/replica_folding.h), and the result
// is written for every rank (ReplicaFolding::expand_copies), so reports equal
// those of the full run (--no-aggregation) byte for byte apart from event
// counts and wall time. Anything else, and the run simulates every rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "network/topology.h"
#include "system/config/system_config.h"
#include "workload/rank_graph.h"

namespace sim {

// Whether a rank running `graph`, copied onto all `world` NPUs of `topology`,
// can be folded: a single Switch dimension, no point-to-point nodes, every
// collective over all ranks (no pg_name, no involved_dim) and run by a
// rank-symmetric native algorithm, no ignored dependencies.
bool identical_ranks_fold(const RankGraph& graph, std::uint32_t world, const SystemConfig& config,
                          const Topology& topology);

}  // namespace sim
