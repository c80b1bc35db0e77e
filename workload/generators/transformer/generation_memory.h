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
#include "workload/loader/memory_budget.h"

namespace sim::gen {

// kGraphBytesPerNode and kTraceBytesPerNode: workload/loader/memory_budget.h.

// Lower bound of the nodes the rank with the most layers writes.
std::uint64_t min_nodes_per_rank(const TrainingSpec& spec);

// InputError (exit 2) when `ranks_held` ranks of `bytes_per_node` each
// cannot fit in available_memory(): names `what` (the workload), the
// estimate, the memory available and the options to change.
void check_memory_for_generation(const TrainingSpec& spec, std::uint64_t ranks_held, std::uint64_t bytes_per_node,
                                 const std::string& what);

}  // namespace sim::gen
