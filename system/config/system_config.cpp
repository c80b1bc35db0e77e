#include "system/config/system_config.h"

#include <filesystem>
#include <yaml-cpp/yaml.h>

#include "core/config_reader.h"

namespace sim {

SystemConfig parse_system_config(const std::string& yaml_text, const std::string& source) {
  const ConfigReader r(source);
  const YAML::Node root = r.load(yaml_text);
  SystemConfig cfg;
  if (root.IsNull()) return cfg;
  r.require_map(root, "system config");
  r.check_keys(root, "", {"compute", "memory", "collective", "network"});
  const std::string base = std::filesystem::path(source).parent_path().string();
  // Each section reads (and checks) its own keys: config_sections.h.
  if (const YAML::Node c = root["compute"]) {
    static_cast<ComputeSection&>(cfg) = read_compute_section_of_system(r, c, base);
    cfg.warnings.insert(cfg.warnings.end(), cfg.compute_warnings.begin(), cfg.compute_warnings.end());
  }
  if (const YAML::Node m = root["memory"]) static_cast<MemorySection&>(cfg) = read_memory_section(r, m);
  if (const YAML::Node c = root["collective"]) {
    static_cast<CollectiveSection&>(cfg) = read_collective_section(r, c, base);
  }
  if (const YAML::Node n = root["network"]) cfg.network = read_network_section(r, n, source);
  return cfg;
}

}  // namespace sim
