// Where a run used a model outside the range that measurements check it in.
//
// A simulated time is only as good as the model behind it, and some models
// are checked against measurements only over part of the sizes a workload may
// issue. Where a run goes below that part, it says so, once per model, with
// the smallest case it ran, so that a result is read as what it is rather than
// as a prediction the model was never shown to make:
//
// - NCCL's all-to-all across nodes (`nccl:p2p`) with parts below
//   nccl::kMeasuredFromPartBytes a peer: measured all-to-alls there mostly
//   take longer than the model gives, so its times are lower bounds.
#pragma once

#include <string>
#include <vector>

#include "system/runner/simulation.h"

namespace sim {

std::vector<std::string> model_range_warnings(const SimulationResult& result);

}  // namespace sim
