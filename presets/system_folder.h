// `sim --system DIR`: a folder `sim system gen` wrote stands for its
// system.yml, and for its network.yml too when --network is not given.
#pragma once

#include <string>

namespace sim::presets {

// Rewrites `system` (and an empty `network`) when `system` names a folder;
// throws InputError when that folder has no system.yml, or when `system`
// names nothing at all. A folder with no network.yml, `network` not given,
// is named in `folder_without_network` (for the message that asks for one).
// A file is left as it is (its reader reports what is wrong in it).
void use_system_folder(std::string& system, std::string& network, std::string& folder_without_network);

}  // namespace sim::presets
