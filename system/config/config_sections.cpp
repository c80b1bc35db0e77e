// The `compute:`, `memory:` and `network:` sections of the system config
// (config_sections.h); `collective:` has a file of its own.
#include "compute/compute_config.h"
#include "core/error.h"
#include "core/config_reader.h"
#include "system/config/config_sections.h"

#include <set>
#include <yaml-cpp/yaml.h>

namespace sim {

ComputeSection read_compute_section_of_system(const ConfigReader& r, const YAML::Node& c, const std::string& base) {
  ComputeSection s;
  const ComputeConfig compute = read_compute_section(r, c, base);  // its keys: compute/compute_config.h
  if (compute.roofline) {
    const auto& p = compute.params;
    const auto bf16 = p.peak_flops_by_dtype.find("bf16");
    s.peak_flops = bf16 != p.peak_flops_by_dtype.end() ? bf16->second : p.default_peak_flops;
    s.peak_flops_by_dtype = p.peak_flops_by_dtype;
    s.compute_memory_bandwidth = static_cast<BytesPerSecond>(p.memory_bandwidth);
  }
  if (!compute.kernel_files.empty()) s.compute_l2_bytes = static_cast<std::uint64_t>(compute.kernel_options.l2_bytes);
  s.compute_model = compute.model;
  s.compute_efficiency = compute.efficiency;
  s.compute_kernel_files = compute.kernel_files;
  s.compute_warnings = compute.warnings;
  return s;
}

MemorySection read_memory_section(const ConfigReader& r, const YAML::Node& m) {
  MemorySection s;
  r.require_map(m, "memory");
  r.check_keys(m, "memory.", {"latency", "bandwidth"});
  if (!m["bandwidth"]) r.fail(m, "missing key 'memory.bandwidth'");
  s.has_memory_model = true;
  s.memory_bandwidth = r.bandwidth(m["bandwidth"], "memory.bandwidth");
  if (m["latency"]) s.memory_latency = r.latency(m["latency"], "memory.latency");
  return s;
}

NetworkConfig read_network_section(const ConfigReader& r, const YAML::Node& n, const std::string& source) {
  NetworkConfig s;
  r.require_map(n, "network");
  std::set<std::string> seen;
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) r.fail(kv.first, "keys must be plain names");
    const std::string key = kv.first.Scalar();
    const std::string where = "network." + key;
    if (!seen.insert(key).second) r.fail(kv.first, "duplicate key '" + where + "'");
    if (kv.second.IsMap()) {
      // Options for one backend only, applied when it runs (a preset's
      // `ns3: {transport: roce}` leaves the other backends as they are).
      if (!find_backend(key)) {
        std::string known;
        for (const BackendInfo& b : network_backends()) known += (known.empty() ? "" : ", ") + b.name;
        r.fail(kv.first, "'" + where + "' holds a section, but only a backend's name does (" + known +
                             "): its options apply when that backend runs");
      }
      for (const auto& opt : kv.second) {
        if (!opt.first.IsScalar()) r.fail(opt.first, "keys must be plain names");
        const std::string name = key + "." + opt.first.Scalar();
        const std::string at_where = "network." + name;
        const std::string text = r.text(opt.second, at_where);
        const YAML::Mark m = opt.first.Mark();
        std::string at = source;
        if (!m.is_null()) at.append(":").append(std::to_string(m.line + 1));
        at.append(": ").append(at_where);
        if (!s.options.emplace(name, OptionValue{text, at}).second) r.fail(opt.first, "duplicate key '" + at_where + "'");
      }
      continue;
    }
    const std::string value = r.text(kv.second, where);
    const YAML::Mark mark = kv.first.Mark();
    std::string at = source;
    if (!mark.is_null()) at.append(":").append(std::to_string(mark.line + 1));
    at.append(": ").append(where);
    if (key == "backend") {
      s.backend = value;
    } else {
      s.options.emplace(key, OptionValue{value, at});
    }
  }
  return s;
}

}  // namespace sim
