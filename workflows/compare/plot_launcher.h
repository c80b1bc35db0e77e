// Runs scripts/plot_results.py (Debian's python3-matplotlib) for `sim plot`
// and `sim compare --plot`. The script is found through $SIM_PLOT_SCRIPT,
// else next to the binary (<exe>/../scripts/ or <exe>/../../scripts/), else
// in the source tree the binary was built from.
#pragma once

#include <string>
#include <vector>

namespace sim::workflows {

std::string plot_script_path();
// Runs `/usr/bin/python3 <script> args...` (else python3 on PATH); returns its exit code (throws InputError
// when the script or python3 cannot be found).
int run_plot_script(const std::vector<std::string>& args);

}  // namespace sim::workflows
