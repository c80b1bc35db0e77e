// A collective timed alone: the private run behind a stand-in
// (system/runner/aggregation/stand_in.h). It is a run of this folder's engine,
// so it lives beside the engine; the stand-in bookkeeping below it includes
// nothing of the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "network/topology.h"
#include "system/config/system_config.h"
#include "system/program/collective_program.h"
#include "system/runner/aggregation/stand_in.h"

namespace sim {

// Runs `program` on `members`, every member joining at time 0, alone on a
// fresh network of `config.network`'s backend over `topology`.
StandInTiming time_alone(const std::shared_ptr<const CollectiveProgram>& program,
                         const std::shared_ptr<const std::vector<std::uint32_t>>& members, const Topology& topology,
                         const SystemConfig& config);

}  // namespace sim
