// ASTRA-sim's command line, as a drop-in:
//
//   sim --workload-configuration=<prefix> --system-configuration=<system.json>
//       --network-configuration=<network.yml> --remote-memory-configuration=<mem.json>
//       [--comm-group-configuration=<groups.json>] [--report=<json>] [--csv=<csv>]
//
// runs ASTRA-sim's files unchanged: the network YAML's bare bandwidths are
// read as ASTRA-sim means them (GB/s = 2^30 B/s, i.e. `bandwidth_unit:
// GiB/s`), the system JSON as system/astrasim/astrasim_system.h maps it. It prints our
// summary, then one line per rank in ASTRA-sim's format for scripts that
// parse it: "sys[<rank>] finished, <ns> cycles, exposed communication <ns> cycles".
// ASTRA-sim's other options are honoured, rejected or warned about (docs/system.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sim {

// Whether argv uses ASTRA-sim's options (--workload-configuration, ...).
bool is_astrasim_invocation(int argc, char** argv);
// Runs it; returns the exit code (throws SimError like the rest of the CLI).
int run_astrasim_cli(int argc, char** argv);


}  // namespace sim
