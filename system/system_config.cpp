#include "system/system_config.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <set>

#include "core/error.h"
#include "core/units.h"
#include "system/algorithm_registry.h"
#include "workload/et_io.h"

namespace sim {

namespace {

std::string at(const std::string& source, const YAML::Node& node, const std::string& key) {
  std::string s = source + ": key '" + key + "'";
  if (node.Mark().line >= 0) s += " (line " + std::to_string(node.Mark().line + 1) + ")";
  return s;
}

void check_keys(const std::string& source, const YAML::Node& map, const std::string& prefix,
                const std::set<std::string>& allowed) {
  if (!map.IsMap()) throw InputError(at(source, map, prefix) + ": expected a mapping");
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw InputError(at(source, kv.first, prefix.empty() ? key : prefix + "." + key) +
                       ": unknown key (known: " + list + ")");
    }
  }
}

template <typename F>
auto parse_value(const std::string& source, const YAML::Node& node, const std::string& key, F&& parse) {
  if (!node.IsScalar()) throw InputError(at(source, node, key) + ": expected a scalar");
  try {
    return parse(node.as<std::string>());
  } catch (const std::invalid_argument& e) {
    throw InputError(at(source, node, key) + ": " + e.what());
  }
}

BytesPerSecond positive_bandwidth(const std::string& source, const YAML::Node& node, const std::string& key) {
  const BytesPerSecond bw = parse_value(source, node, key, [](const std::string& s) { return parse_bandwidth(s); });
  if (bw == 0) throw InputError(at(source, node, key) + ": bandwidth must be > 0");
  return bw;
}

}  // namespace

SystemConfig parse_system_config(const std::string& yaml_text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(source + ": not valid YAML: " + e.what());
  }
  SystemConfig cfg;
  if (root.IsNull()) return cfg;
  check_keys(source, root, "", {"compute", "memory", "collective", "network"});
  const std::string base = std::filesystem::path(source).parent_path().string();

  if (const YAML::Node c = root["compute"]) {
    check_keys(source, c, "compute", {"peak_tflops", "memory_bandwidth"});
    if (c["peak_tflops"]) {
      const double tf = parse_value(source, c["peak_tflops"], "compute.peak_tflops",
                                    [](const std::string& s) { return std::stod(s); });
      if (!(tf > 0)) throw InputError(at(source, c["peak_tflops"], "compute.peak_tflops") + ": must be > 0");
      cfg.peak_flops = tf * 1e12;
    }
    if (c["memory_bandwidth"]) {
      cfg.compute_memory_bandwidth = positive_bandwidth(source, c["memory_bandwidth"], "compute.memory_bandwidth");
    }
    if ((cfg.peak_flops > 0) != (cfg.compute_memory_bandwidth > 0)) {
      throw InputError(at(source, c, "compute") + ": roofline needs both peak_tflops and memory_bandwidth");
    }
  }
  if (const YAML::Node m = root["memory"]) {
    check_keys(source, m, "memory", {"latency", "bandwidth"});
    if (!m["bandwidth"]) throw InputError(at(source, m, "memory.bandwidth") + ": missing");
    cfg.has_memory_model = true;
    cfg.memory_bandwidth = positive_bandwidth(source, m["bandwidth"], "memory.bandwidth");
    if (m["latency"]) {
      cfg.memory_latency = parse_value(source, m["latency"], "memory.latency", [](const std::string& s) { return parse_time(s); });
    }
  }
  if (const YAML::Node c = root["collective"]) {
    check_keys(source, c, "collective", {"chunks", "reduction_bandwidth", "reduction_latency", "algorithms",
                                         "optimization", "active_chunks_per_dimension"});
    if (const YAML::Node o = c["optimization"]) {
      const std::string v = parse_value(source, o, "collective.optimization", [](const std::string& s) { return s; });
      if (v != "baseline" && v != "localBWAware") {
        throw InputError(at(source, o, "collective.optimization") + ": must be localBWAware or baseline, not '" + v + "'");
      }
      cfg.collective_optimization = v;
    }
    if (const YAML::Node a = c["active_chunks_per_dimension"]) {
      const long long k = parse_value(source, a, "collective.active_chunks_per_dimension",
                                      [](const std::string& s) { return std::stoll(s); });
      if (k < 0 || k > 1'000'000) {
        throw InputError(at(source, a, "collective.active_chunks_per_dimension") + ": must be 0..1000000 (0 = unlimited)");
      }
      cfg.active_chunks_per_dimension = static_cast<std::uint32_t>(k);
    }
    if (c["chunks"]) {
      const long long k = parse_value(source, c["chunks"], "collective.chunks",
                                      [](const std::string& s) { return std::stoll(s); });
      if (k < 1 || k > 1'000'000) throw InputError(at(source, c["chunks"], "collective.chunks") + ": must be 1..1000000");
      cfg.collective_chunks = static_cast<std::uint32_t>(k);
    }
    if (c["reduction_bandwidth"]) {
      const YAML::Node n = c["reduction_bandwidth"];
      const std::string text = n.as<std::string>();
      if (text != "0") cfg.reduction_bandwidth = positive_bandwidth(source, n, "collective.reduction_bandwidth");
    }
    if (c["reduction_latency"]) {
      cfg.reduction_latency = parse_value(source, c["reduction_latency"], "collective.reduction_latency",
                                          [](const std::string& s) { return parse_time(s); });
    }
    if (const YAML::Node a = c["algorithms"]) {
      if (!a.IsMap()) throw InputError(at(source, a, "collective.algorithms") + ": expected a mapping");
      for (const auto& kv : a) {
        const std::string key = kv.first.as<std::string>();
        CollectiveType type;
        if (!parse_collective_name(key, type)) {
          throw InputError(at(source, kv.first, "collective.algorithms." + key) + ": unknown collective type");
        }
        std::string value;
        if (kv.second.IsSequence()) {
          // A list: one algorithm per topology dimension (hierarchical).
          for (const auto& item : kv.second) {
            if (!item.IsScalar()) throw InputError(at(source, item, "collective.algorithms." + key) + ": expected algorithm names");
            value += (value.empty() ? "" : ",") + item.as<std::string>();
          }
          if (value.empty()) throw InputError(at(source, kv.second, "collective.algorithms." + key) + ": empty list");
          if (kv.second.size() == 1) value = "hierarchical," + value;  // a list of one is still hierarchical
        } else {
          value = kv.second.as<std::string>();
        }
        if (!names_native_algorithm(value) && !base.empty() && std::filesystem::path(value).is_relative()) {
          value = (std::filesystem::path(base) / value).string();
        }
        try {
          parse_algorithm_choice(value, type);
        } catch (const InputError& e) {
          throw InputError(at(source, kv.second, "collective.algorithms." + key) + ": " + e.what());
        }
        cfg.algorithms[type] = value;
      }
    }
  }
  if (const YAML::Node n = root["network"]) {
    if (!n.IsMap()) throw InputError(at(source, n, "network") + ": expected a mapping");
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
      if (!kv.second.IsScalar()) throw InputError(at(source, kv.second, "network." + key) + ": expected a scalar");
      if (key == "backend") {
        cfg.network.backend = kv.second.as<std::string>();
      } else if (!cfg.network.options.emplace(key, OptionValue{kv.second.as<std::string>(), at(source, kv.first, "network." + key)}).second) {
        throw InputError(at(source, kv.first, "network." + key) + ": given twice");
      }
    }
  }
  return cfg;
}

SystemConfig load_system_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot open system config '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_system_config(ss.str(), path);
}

void apply_collective_option(SystemConfig& config, const std::string& option) {
  const auto eq = option.find('=');
  if (eq == std::string::npos) {
    // The collective it implements is recorded in the ET's metadata (our
    // writer and MSCCL-derived converters record it); all-reduce otherwise.
    CollectiveType type = CollectiveType::kAllReduce;
    const EtTrace first = read_et(resolve_rank_files(option).front());
    if (const auto name = metadata_string(first.metadata, "collective")) {
      if (!parse_collective_name(*name, type)) {
        throw InputError("--collective " + option + ": metadata 'collective' = '" + *name + "' is not a collective type");
      }
    }
    config.algorithms[type] = option;
    return;
  }
  CollectiveType type;
  if (!parse_collective_name(option.substr(0, eq), type)) {
    throw InputError("--collective " + option + ": unknown collective type '" + option.substr(0, eq) + "'");
  }
  const std::string value = option.substr(eq + 1);
  try {
    parse_algorithm_choice(value, type);
  } catch (const InputError& e) {
    throw InputError("--collective " + option + ": " + e.what());
  }
  config.algorithms[type] = value;
}

}  // namespace sim
