// One reference row simulated: the row's collective and size on every NPU of
// a network with a system file, as a microbenchmark. What calibration and
// comparison against a reference curve both cost per row.
#pragma once

#include <cstdint>
#include <string>

#include "workflows/compare/curve_table.h"

namespace sim::workflows {

// The rank's buffer as the simulator counts it for a curve's row on `npus`
// ranks: a reference-curve CSV's all-gather size is the gathered total
// (nccl-tests' size), the simulator's the input (InputError when it does not
// divide). A reduce-scatter's or all-to-all's size must be a multiple of
// `npus` (InputError otherwise: no NCCL call has that size).
std::uint64_t simulator_bytes(const Curve& curve, const CurvePoint& p, std::uint32_t npus);

// Simulated time (ps) of one collective of `bytes` per rank on every NPU of
// the network, with the given files: what a calibration point costs.
std::uint64_t simulate_collective(const std::string& network_text, const std::string& network_source,
                                  const std::string& system_text, const std::string& system_source,
                                  const std::string& collective, std::uint64_t bytes, double* busbw_gbps = nullptr);

}  // namespace sim::workflows
