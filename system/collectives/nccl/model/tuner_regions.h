// Tuner plugins: a platform's own choice of algorithm and protocol, which
// replaces NCCL's tuning model where the plugin has one.
//
// aws-ofi-nccl (the EFA network plugin AWS ships on its GPU instances) has a
// "region" tuner: per platform and collective, polygons over the plane of
// (nBytes, nRanks), both linear, each labelled with an algorithm and protocol;
// the first polygon that holds the point (its edges included) and whose
// choice NCCL can run wins, and outside every polygon NCCL's own model chooses.
// `nccl:tuner=aws-p5` applies the tables of p5.48xlarge / p5e (8 H100 per
// node, 32 x 100 Gb/s EFA): aws/aws-ofi-nccl src/tuner/nccl_ofi_regions.cpp,
// region_init_internal_p5_p5e (commit 228fa0ea): all-reduce for groups of 8,
// 2 and 1 ranks per node, all-gather and reduce-scatter for 1 rank per node.
// Every other group and collective, and any group on two nodes or fewer, falls
// back to NCCL, as in the plugin.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "system/collectives/nccl/model/nccl_tuner.h"
#include "workload/rank_graph.h"

namespace sim::nccl {

enum class TunerPlugin : std::uint8_t { kNone = 0, kAwsP5 = 1 };

// "none" or "aws-p5" (throws InputError otherwise).
TunerPlugin tuner_plugin(const std::string& name);
const char* tuner_plugin_name(TunerPlugin t);

struct TunerPick {
  Algo algo = Algo::kRing;
  Proto proto = Proto::kSimple;
};

// The plugin's pick for a collective of `n_bytes` (NCCL's nBytes) on `ranks`
// ranks over `nodes` nodes, or none where NCCL's model decides. `available`
// (when given) says which choices the group can run; the others' regions are
// passed over.
std::optional<TunerPick> tuner_pick(TunerPlugin t, CollectiveType type, std::uint64_t n_bytes, int ranks, int nodes,
                                   const std::function<bool(Algo, Proto)>& available = {});

}  // namespace sim::nccl
