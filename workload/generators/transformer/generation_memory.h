// Before generating a training iteration: do its graphs fit in the memory
// this process can get? Estimated from the spec alone (nodes per rank, in
// closed form, times the ranks held at once), so that a workload far too
// large is refused at once with the estimate and the option to change,
// instead of generating for minutes until memory runs out.
//
// Like workload/loader/memory_budget.h's check of trace files, the estimate is a
// deliberate lower bound: a run is refused only when it clearly cannot fit.
#pragma once

#include <cstdint>
#include <string>

#include "workload/generators/spec/training_spec.h"

namespace sim::gen {

// Bytes per node at least: a rank's graph in memory (2 B shape index, 4 B
// first child, 2 B parent count, 4 B per edge: workload/rank_graph.h) and
// the run's pending count (2 B) with its share of the shapes and names
// (measured: 73 B per node at the peak of a 15-million-node run, loading
// and simulation included), and a rank's decoded trace while it is written
// to a file (a protobuf node with its name and a handful of attributes).
inline constexpr std::uint64_t kGraphBytesPerNode = 16;
inline constexpr std::uint64_t kTraceBytesPerNode = 100;

// Lower bound of the nodes the rank with the most layers writes.
std::uint64_t min_nodes_per_rank(const TrainingSpec& spec);

// InputError (exit 2) when `ranks_held` ranks of `bytes_per_node` each
// cannot fit in available_memory(): names `what` (the workload), the
// estimate, the memory available and the options to change.
void check_memory_for_generation(const TrainingSpec& spec, std::uint64_t ranks_held, std::uint64_t bytes_per_node,
                                 const std::string& what);

}  // namespace sim::gen
