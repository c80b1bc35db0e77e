// `sim --system DIR`: a folder `sim system gen` wrote stands for its
// system.yml, and for its network.yml too when --network is not given.
#pragma once

#include <string>

namespace sim::presets {

// Rewrites `system` (and an empty `network`) when `system` names a folder;
// throws InputError when that folder has no system.yml. Anything else is
// left as it is (the readers report a missing file).
void use_system_folder(std::string& system, std::string& network);

}  // namespace sim::presets
