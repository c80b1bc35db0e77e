// The presets themselves (presets/preset.h has what a preset is).
#pragma once

#include <vector>

#include "presets/preset.h"

namespace sim::presets {

const std::vector<Preset>& catalog();

}  // namespace sim::presets
