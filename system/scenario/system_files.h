// Reading a system config file of either form: this project's YAML
// (system/config/system_config.h) or ASTRA-sim's system JSON
// (system/astrasim/astrasim_system.h). The choice sits above both readers.
#pragma once

#include <string>

#include "system/config/system_config.h"

namespace sim {

// A path ending in .json, or a file whose first non-blank character is '{',
// is ASTRA-sim's JSON; anything else is YAML. The path must be a regular
// file. The algorithm choices are checked (check_algorithm_choices), so a bad
// one is an error naming the file and line before anything runs.
SystemConfig load_system_config(const std::string& path);

// The same for text already read (`source` names it in messages).
SystemConfig parse_system_text(const std::string& text, const std::string& source);

}  // namespace sim
