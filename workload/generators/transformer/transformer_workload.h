// A generated training iteration as a workload: written as per-rank ET files
// (`sim workload gen transformer ... -o PREFIX`), or built in memory straight
// into the graphs a simulation runs (`--workload gen:transformer?...`), one
// rank at a time so no decoded trace of another rank is held meanwhile.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "workload/generators/spec/training_spec.h"
#include "workload/rank_graph.h"

namespace sim::gen {

// Writes <prefix>.<rank>.et for every rank (creating the parent folder) on up
// to `threads` threads (0: one per core) and a summary to `out`. Returns the
// exit code; InputError for bad options or an unwritable path.
int write_transformer_workload(const TrainingOptions& options, const std::string& prefix, std::ostream& out,
                               unsigned threads = 0);

// Every rank's graph, generated in memory (no files). `name` names the
// workload in messages (as a path would).
std::vector<RankGraph> transformer_rank_graphs(const TrainingSpec& spec, const GraphOptions& options,
                                               const std::string& name, unsigned threads = 0);
// The graphs of `ranks` only (graph i is rank ranks[i], peers and groups
// named by rank as in the full set): one data-parallel replica for folding.
std::vector<RankGraph> transformer_rank_graphs(const TrainingSpec& spec, const GraphOptions& options,
                                               const std::string& name, const std::vector<std::uint32_t>& ranks,
                                               unsigned threads = 0);

// Data-parallel replicas that can be simulated as one (system/groups/replica_folding.h):
// the ranks of replica 0 in ascending order, with rank r of replica k being
// r + k x stride. Empty when the plan has no such replicas: dp = 1; cp > 1
// (gradient groups are data x context, joining ranks inside a replica too).
// A mixture of experts: expert_replicas.
struct Replicas {
  std::vector<std::uint32_t> replica0;
  std::uint32_t count = 1, stride = 0;
  // Copies come in cycles of `ring` (context_copies: copy k = c + ring x d
  // is context rank c of replica d); 1: no cycle.
  std::uint32_t ring = 1;
};
Replicas data_parallel_replicas(const TrainingSpec& spec);
// A dense model with context parallelism (cp > 1): every rank's context ranks
// and data-parallel replicas are its copies, cp x dp of them, tp apart
// (copy k of rank r is r + k x tp: rank = tp + tp (cp + cp (dp + dp pp))), in
// cycles of cp (the ring attention's K/V exchanges go from context rank c to
// c + 1 mod cp, the same at every c). Simulated: the ranks with cp = dp = 0.
// Empty for a mixture of experts or cp = 1.
Replicas context_copies(const TrainingSpec& spec);
// A mixture of experts' replicas: blocks of lcm(tp, ep x etp) / tp data-parallel
// replicas (whole expert-parallel groups), any cp; empty when dp holds fewer
// than two such blocks.
Replicas expert_replicas(const TrainingSpec& spec);
// A mixture of experts whose routing is uniform: every data-parallel replica
// is a copy of replica 0 (stride tp x cp), though it holds other experts,
// since every expert-parallel position sees the same load. An expert-parallel
// group then joins several replicas' ranks, which a period of replicas folds
// (system/groups/replica_folding.h): far fewer ranks than a block when a block
// spans nodes. Empty when routing is skewed (positions differ) or a block is
// one replica (expert_replicas is the same fold).
Replicas expert_copies(const TrainingSpec& spec);

// The spec a "gen:transformer?model=...&parallel=..." workload names
// (InputError for anything else or bad options); workload/source/ opens it.
TrainingSpec generated_workload_spec(const std::string& workload);

}  // namespace sim::gen
