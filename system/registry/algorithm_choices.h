// Checking the algorithm choices a system config holds, and adding one from
// the command line (--collective). The config readers store each choice as
// text with where it was read (system/config/system_config.h); this layer
// knows the algorithms, so it is the one that judges them.
#pragma once

#include <string>

#include "system/config/system_config.h"

namespace sim {

// Parses every choice in `config` (collective.algorithms, collective.per_node)
// as the registry will; throws InputError naming where the bad one was read.
// Per-node native names are checked against the node's type when it runs;
// their ETs must exist now.
void check_algorithm_choices(const SystemConfig& config);

// Parses one --collective value: "prefix" (applies to the type recorded in the
// ET metadata, else all-reduce) or "type=prefix" / "type=<native algorithm>"
// (e.g. allreduce=halvingDoubling, alltoall=direct:window=4).
void apply_collective_option(SystemConfig& config, const std::string& option);

}  // namespace sim
