// The `collective:` section of the system config (config_sections.h).
#include <charconv>
#include <filesystem>
#include <set>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/config_reader.h"
#include "system/config/config_sections.h"
#include "workload/et/et_io.h"

namespace sim {

namespace {

// A relative ET source in a config file names a path beside that file. Native
// choices ("ring", "direct:window=4", "ring,direct") are never files, so a
// value is resolved only when something exists there that the registry could
// load: a folder, an .xml file, or a prefix of rank files (an optional
// "@<size>" suffix aside). The registry checks the choice itself.
std::string beside_config(const std::string& value, const std::string& base) {
  if (base.empty() || value.empty() || !std::filesystem::path(value).is_relative()) return value;
  std::string source = value;
  if (const std::size_t at = source.rfind('@'); at != std::string::npos) source.resize(at);
  const std::string joined = (std::filesystem::path(base) / source).string();
  std::error_code ec;
  bool found = std::filesystem::exists(joined, ec);
  if (!found) {
    try {
      found = !resolve_rank_files(joined).empty();
    } catch (const InputError&) {
      found = false;
    }
  }
  return found ? (std::filesystem::path(base) / value).string() : value;
}

// The value of `algorithms.<type>`: a scalar, or a list (one entry per
// dimension, as ASTRA-sim writes them). A one-entry list is that algorithm;
// longer lists need the hierarchical algorithm (not merged yet).
// A name or ET prefix; a list is one algorithm per topology dimension
// (hierarchical; a list of one applies to every dimension).
std::string algorithm_text(const ConfigReader& r, const YAML::Node& node, const std::string& key) {
  if (node.IsSequence()) {
    if (node.size() == 0) r.fail(node, "'" + key + "' must not be an empty list");
    // Appended piece by piece: GCC 12's -Wrestrict misfires on string + string here.
    std::string value = node.size() == 1 ? "hierarchical" : "";
    for (std::size_t i = 0; i < node.size(); ++i) {
      if (!value.empty()) value.append(",");
      value.append(r.text(node[i], key + "[" + std::to_string(i) + "]"));
    }
    return value;
  }
  if (!node.IsScalar()) r.fail(node, "'" + key + "' must be an algorithm name or a Chakra ET prefix");
  return r.text(node, key);
}

std::uint32_t bounded_count(const ConfigReader& r, const YAML::Node& node, const std::string& key,
                            std::uint64_t max) {
  const std::uint64_t k = r.count(node, key);
  if (k < 1 || k > max) r.fail(node, "'" + key + "' must be 1.." + std::to_string(max) + ", got " + std::to_string(k));
  return static_cast<std::uint32_t>(k);
}

}  // namespace

CollectiveSection read_collective_section(const ConfigReader& r, const YAML::Node& c, const std::string& base) {
  CollectiveSection s;
  r.require_map(c, "collective");
  r.check_keys(c, "collective.",
               {"chunks", "reduction_bandwidth", "reduction_latency", "algorithms", "endpoint_delay",
                "dataset_splits", "active_chunks", "local_reduction", "astrasim_quirks",
                "scheduling_policy", "optimization", "active_chunks_per_dimension",
                "dimension_queue", "per_node", "aggregation"});
  if (const YAML::Node o = c["optimization"]) {
    const std::string v = r.text(o, "collective.optimization");
    if (v != "baseline" && v != "localBWAware") {
      r.fail(o, "'collective.optimization' must be localBWAware or baseline, not '" + v + "'");
    }
    s.collective_optimization = v;
  }
  if (const YAML::Node a = c["active_chunks_per_dimension"]) {
    const std::uint64_t k = r.count(a, "collective.active_chunks_per_dimension");
    if (k > 1'000'000) r.fail(a, "'collective.active_chunks_per_dimension' must be 0..1000000 (0 = unlimited)");
    s.active_chunks_per_dimension = static_cast<std::uint32_t>(k);
  }
  if (c["chunks"]) s.collective_chunks = bounded_count(r, c["chunks"], "collective.chunks", 1'000'000);
  if (const YAML::Node n = c["reduction_bandwidth"]) {
    if (r.text(n, "collective.reduction_bandwidth") != "0") {
      s.reduction_bandwidth = r.bandwidth(n, "collective.reduction_bandwidth");
    }
  }
  if (c["reduction_latency"]) s.reduction_latency = r.latency(c["reduction_latency"], "collective.reduction_latency");
  if (c["endpoint_delay"]) s.endpoint_delay = r.latency(c["endpoint_delay"], "collective.endpoint_delay");
  if (c["dataset_splits"]) s.dataset_splits = bounded_count(r, c["dataset_splits"], "collective.dataset_splits", 1 << 20);
  if (c["active_chunks"]) s.active_chunks = bounded_count(r, c["active_chunks"], "collective.active_chunks", 1 << 20);
  if (const YAML::Node n = c["local_reduction"]) {
    s.local_reduction = r.bandwidth(n, "collective.local_reduction");
    if (s.reduction_bandwidth > 0) {
      r.fail(n, "'collective.local_reduction' (ASTRA-sim's model) and 'collective.reduction_bandwidth' "
                "both price reductions: give one");
    }
  }
  if (c["dimension_queue"]) s.dimension_queue = r.flag(c["dimension_queue"], "collective.dimension_queue");
  // Exact step aggregation (docs/system.md): false simulates every message, as --no-aggregation does.
  if (c["aggregation"]) s.aggregation = r.flag(c["aggregation"], "collective.aggregation");
  if (c["astrasim_quirks"]) {
    s.astrasim_quirks = r.flag(c["astrasim_quirks"], "collective.astrasim_quirks");
  }
  if (const YAML::Node n = c["scheduling_policy"]) {
    const std::string p = r.text(n, "collective.scheduling_policy");
    if (p == "LIFO") {
      r.fail(n, "'collective.scheduling_policy': LIFO is not supported: collectives of a rank are not queued "
                "here (they run concurrently, docs/system.md), so only FIFO (issue order) is meaningful");
    }
    if (p != "FIFO") r.fail(n, "'collective.scheduling_policy' must be FIFO, got '" + p + "'");
    s.scheduling_policy = p;
  }
  if (const YAML::Node a = c["algorithms"]) {
    r.require_map(a, "collective.algorithms");
    std::set<std::string> seen;
    for (const auto& kv : a) {
      if (!kv.first.IsScalar()) r.fail(kv.first, "keys must be plain names");
      const std::string key = kv.first.Scalar();
      const std::string where = "collective.algorithms." + key;
      if (!seen.insert(key).second) r.fail(kv.first, "duplicate key '" + where + "'");
      if (key == "send_recv") {  // COMM_SEND / COMM_RECV pairs: not a collective type
        s.point_to_point = r.text(kv.second, where);
        s.point_to_point_where = r.where(kv.second, where);
        continue;
      }
      CollectiveType type;
      if (!parse_collective_name(key, type)) r.fail(kv.first, "'" + where + "': unknown collective type");
      s.algorithms[type] = beside_config(algorithm_text(r, kv.second, where), base);
      s.algorithm_where[type] = r.where(kv.second, where);
    }
  }
  if (const YAML::Node a = c["per_node"]) read_per_node_choices(r, a, "collective.per_node", base, s.per_node_algorithms, &s.per_node_where);
  return s;
}

void read_per_node_choices(const ConfigReader& r, const YAML::Node& map, const std::string& where,
                           const std::string& base, std::map<std::uint64_t, std::string>& out,
                           std::map<std::uint64_t, std::string>* where_out) {
  r.require_map(map, where);
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) r.fail(kv.first, "keys of '" + where + "' must be workload node ids");
    const std::string key = kv.first.Scalar();
    const std::string at = where + "." + key;
    std::uint64_t id = 0;
    const char* end = key.data() + key.size();
    if (key.empty() || std::from_chars(key.data(), end, id).ptr != end) {
      r.fail(kv.first, "'" + at + "': expected a workload node id (0..2^64-1), got '" + key + "'");
    }
    // Checked by the registry (check_algorithm_choices): native names against
    // the node's type when it runs, ETs when the config is loaded.
    if (!out.emplace(id, beside_config(algorithm_text(r, kv.second, at), base)).second) {
      r.fail(kv.first, "'" + at + "': node id given twice");
    }
    if (where_out) (*where_out)[id] = r.where(kv.second, at);
  }
}

}  // namespace sim
