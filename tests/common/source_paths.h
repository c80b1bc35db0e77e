// Paths in the checkout (SIM_SOURCE_DIR): the configs shipped in configs/.
#pragma once

#include <string>

namespace sim::testing {

// The folder, with its trailing '/'.
inline const std::string kConfigs = std::string(SIM_SOURCE_DIR) + "/configs/";

// A config shipped in configs/.
inline std::string shipped_config(const std::string& name) { return kConfigs + name; }

}  // namespace sim::testing
