// Runs one sweep point in this process: the same steps as `sim --workload
// ... --network ...` (system config, --collective options, backend, one
// Simulation, the physical-bound warnings), on inputs shared with other points.
#pragma once

#include "workflows/sweep/point_inputs.h"
#include "workflows/sweep/point_result.h"
#include "workflows/sweep/shared_inputs.h"

namespace sim::workflows {

// Never throws for the point's own errors: a failing point is a PointResult
// with its exit code (2 bad input, 3 cannot complete, 1 internal) and message.
PointResult run_point(std::size_t index, const PointInputs& inputs, SharedInputs& shared);

}  // namespace sim::workflows
