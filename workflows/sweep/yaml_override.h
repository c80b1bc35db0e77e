// Setting one key of a network or system YAML file by its path, for sweep
// axes such as `network.bandwidth` or `system.collective.chunks`.
#pragma once

#include <string>
#include <vector>

#include "workflows/sweep/sweep_spec.h"

namespace sim::workflows {

// `text` (the file `source`) with every override applied; the text itself when
// there are none, so error lines still point into the file. A path component
// indexes a map by key or a list by position; a path that names no key in the
// file is an InputError naming the spec file and the axis's line.
std::string apply_overrides(const std::string& text, const std::string& source,
                            const std::vector<PointSettings::Override>& overrides, const std::string& spec_path);

}  // namespace sim::workflows
