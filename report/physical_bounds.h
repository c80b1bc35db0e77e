// Sanity of results against what the hardware can do at all.
//
// Without in-network reduction, every rank of a collective must move at
// least busbw x time bytes through its own ports (the nccl-tests bus bandwidth
// is defined so), so a collective's busbw can never exceed what one NPU can
// inject or eject: the sum of its outgoing (incoming) link bandwidths. A
// result above that bound means the model or its input is wrong (e.g. an
// algorithm ET written for a smaller size than it runs at), and is warned about.
#pragma once

#include <string>
#include <vector>

#include "network/topology.h"
#include "system/runner/simulation.h"

namespace sim {

// One warning per kind of collective (type, size, group, algorithm) whose
// busbw on some rank exceeds that rank's NPU port bandwidth.
std::vector<std::string> physical_bound_warnings(const SimulationResult& result, const Topology& topology);

}  // namespace sim
