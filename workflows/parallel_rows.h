// The rows of a reference simulated side by side: each row is its own
// simulation (its own topology, system and workload, nothing shared that a
// thread changes, as a sweep's points), so `sim calibrate` and `sim compare
// --preset` run them on several threads with the same results as one.
#pragma once

#include <cstddef>
#include <functional>

namespace sim::workflows {

// Calls fn(i) for every i below n on up to `jobs` threads (0: one per core).
// When calls throw, the exception of the lowest i is rethrown once all have
// finished, so the error does not depend on the threads' timing.
void for_each_row(std::size_t n, unsigned jobs, const std::function<void(std::size_t)>& fn);

}  // namespace sim::workflows
