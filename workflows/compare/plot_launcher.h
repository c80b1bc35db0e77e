// Runs scripts/plot_results.py (Debian's python3-matplotlib) for `sim plot`
// and `sim compare --plot`. The script is found through $SIM_PLOT_SCRIPT,
// else next to the binary (<exe>/../scripts/ or <exe>/../../scripts/), else
// in the source tree the binary was built from.
#pragma once

#include <string>
#include <vector>

namespace sim::workflows {

std::string plot_script_path();
// Runs `/usr/bin/python3 <script> --prog <prog> args...` (else python3 on
// PATH); returns its exit code (throws InputError when the script or python3
// cannot be found). The script's messages speak as `prog` ("sim plot"), the
// command the user typed, not as the script.
int run_plot_script(const std::string& prog, const std::vector<std::string>& args);

}  // namespace sim::workflows
