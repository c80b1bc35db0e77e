#include <yaml-cpp/yaml.h>
#include "workflows/sweep/yaml_override.h"

#include "core/error.h"
#include "core/config_reader.h"

namespace sim::workflows {

namespace {

bool is_index(const std::string& s) {
  return !s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos;
}

// The node at `path` under `root`, which must exist.
YAML::Node find(YAML::Node root, const PointSettings::Override& o, const std::string& source,
                const std::string& spec_path) {
  // Node::reset, not assignment: assigning to a node that refers into the
  // tree would overwrite that part of the tree.
  YAML::Node at;
  at.reset(root);
  std::string walked;
  for (const std::string& key : o.path) {
    walked.append(walked.empty() ? "" : ".").append(key);
    YAML::Node next;
    bool found = false;
    if (at.IsMap()) {
      for (auto kv : at) {
        if (kv.first.IsScalar() && kv.first.Scalar() == key) {
          next.reset(kv.second);
          found = true;
        }
      }
    } else if (at.IsSequence() && is_index(key) && std::stoul(key) < at.size()) {
      next.reset(at[std::stoul(key)]);
      found = true;
    }
    if (!found) {
      throw InputError(spec_path + ":" + std::to_string(o.line) + ": axis '" + o.axis + "': " + source +
                       " has no key '" + walked + "'");
    }
    at.reset(next);
  }
  return at;
}

}  // namespace

std::string apply_overrides(const std::string& text, const std::string& source,
                            const std::vector<PointSettings::Override>& overrides, const std::string& spec_path) {
  if (overrides.empty()) return text;
  const ConfigReader reader(source);
  YAML::Node root = YAML::Clone(reader.load(text));
  for (const PointSettings::Override& o : overrides) {
    YAML::Node target = find(root, o, source, spec_path);
    target = YAML::Clone(o.value);  // assigning to a node found by lookup replaces it in place
  }
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

}  // namespace sim::workflows
