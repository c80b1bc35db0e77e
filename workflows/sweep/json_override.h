// Setting one key of a JSON input (ASTRA-sim's system JSON) by its path, for
// sweep axes such as `system.active-chunks-per-dimension: [1, 2, 4]` when the
// point's system file is ASTRA-sim's JSON (its network YAML takes the YAML
// overrides of workflows/sweep/yaml_override.h).
#pragma once

#include <string>
#include <vector>

#include "workflows/sweep/sweep_spec.h"

namespace sim::workflows {

// `text` (the JSON file `source`) with every override applied, re-serialized;
// the text itself when there are none. A path component indexes an object by
// key or an array by position. The new value takes the old one's type: a
// number stays a number, a boolean a boolean, a string a string, and a list
// replaces a list. A path naming no key, or a value of the wrong type, is an
// InputError naming the spec file and the axis's line.
std::string apply_json_overrides(const std::string& text, const std::string& source,
                                 const std::vector<PointSettings::Override>& overrides, const std::string& spec_path);

}  // namespace sim::workflows
