#include "system/astrasim/astrasim_system.h"

#include "core/config_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/input_file.h"
#include "core/strict_json.h"
#include "system/registry/algorithm_registry.h"

namespace sim {

namespace {

using nlohmann::json;

// Messages name the file, the line of the key and the key.
class JsonPlace {
 public:
  JsonPlace(std::string source, const std::string& text) : source_(std::move(source)), text_(text) {}
  // "<file>:<line>: key '<key>'" for the n-th occurrence (0-based) of the key.
  std::string at(const std::string& key, std::size_t occurrence = 0) const {
    return json_key_place(text_, source_, key, occurrence) + ": key '" + key + "'";
  }
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError(at(key) + ": " + message);
  }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  const std::string& text_;
};

std::uint64_t whole(const JsonPlace& p, const std::string& key, const json& v, std::uint64_t min, std::uint64_t max) {
  if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() < 0)) {
    p.fail(key, "must be a whole number, got " + v.dump());
  }
  const auto n = v.get<std::uint64_t>();
  if (n < min || n > max) p.fail(key, "must be " + std::to_string(min) + ".." + std::to_string(max) + ", got " + v.dump());
  return n;
}

double positive(const JsonPlace& p, const std::string& key, const json& v) {
  if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) {
    p.fail(key, "must be a number > 0, got " + v.dump());
  }
  return v.get<double>();
}

bool zero_or_one(const JsonPlace& p, const std::string& key, const json& v) {
  if (v.is_boolean()) return v.get<bool>();
  return whole(p, key, v, 0, 1) == 1;
}

std::string text(const JsonPlace& p, const std::string& key, const json& v) {
  if (!v.is_string()) p.fail(key, "must be a string, got " + v.dump());
  return v.get<std::string>();
}

// One entry of an ASTRA-sim *-implementation list as our algorithm choice;
// `flat` is set for the one* variants (one algorithm over all NPUs).
std::string native_entry(const JsonPlace& p, const std::string& key, const std::string& entry, bool& flat) {
  std::string name = entry;
  flat = false;
  if (name.rfind("one", 0) == 0 && name.size() > 3) {
    flat = true;
    name = name.substr(3);
    name[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[0])));
  }
  if (name == "ring" || name == "halvingDoubling" || name == "doubleBinaryTree") {
    if (flat && name == "doubleBinaryTree") p.fail(key, "'oneDoubleBinaryTree' is not an ASTRA-sim algorithm");
    return name;
  }
  if (name.rfind("direct", 0) == 0) {
    const std::string window = name.substr(6);
    if (window.empty()) return "direct";
    if (window.find_first_not_of("0123456789") == std::string::npos && window.size() <= 7 && std::stoul(window) > 0) {
      return "direct:window=" + window;
    }
  }
  p.fail(key, "unknown algorithm '" + entry +
                  "' (ASTRA-sim's native algorithms: ring, direct, directN, halvingDoubling, doubleBinaryTree, "
                  "oneRing, oneDirect, oneDirectN, oneHalvingDoubling)");
}

// A list of more than one algorithm (not one*): one per dimension, run by the
// hierarchical algorithm; its string is made once the file is read (it needs
// preferred-dataset-splits, active-chunks-per-dimension and collective-optimization).
struct PerDimension {
  std::string key;
  std::vector<std::string> choices;
};

void implementation(const JsonPlace& p, const std::string& key, const json& v, CollectiveType type, SystemConfig& cfg,
                    std::map<CollectiveType, PerDimension>& per_dimension) {
  if (!v.is_array() || v.empty()) p.fail(key, "must be a non-empty list of algorithms, one per dimension");
  std::vector<std::string> choices;
  std::set<bool> flats;
  for (const json& e : v) {
    bool flat = false;
    choices.push_back(native_entry(p, key, text(p, key, e), flat));
    flats.insert(flat);
  }
  per_dimension.erase(type);
  if (flats.size() > 1) p.fail(key, "mixes flattened one* algorithms with per-dimension ones (" + v.dump() + ")");
  const bool flat = *flats.begin();
  bool same = true;
  for (const std::string& c : choices) same = same && c == choices.front();
  if (flat && !same) p.fail(key, "different flattened one* algorithms (" + v.dump() + ")");
  if (!flat) cfg.algorithm_dims[type] = static_cast<std::uint32_t>(v.size());
  if (!flat && choices.size() > 1) {
    // ASTRA-sim fails only when such a collective runs; so do we.
    for (const std::string& c : choices) {
      const NativeAlgorithm* algo = find_native_algorithm(c.substr(0, c.find(':')));
      if (!algo->supports(type)) {
        cfg.unavailable[type] = p.at(key) + ": algorithm '" + algo->name + "' does not implement " + collective_name(type);
        cfg.algorithms.erase(type);
        return;
      }
    }
    per_dimension[type] = PerDimension{key, choices};
    cfg.unavailable.erase(type);
    return;
  }
  std::string choice = choices.front();
  // ASTRA-sim's flat halving-doubling all-reduce exchanges with the nearest
  // partner first (docs/collectives.md); reduce-scatter and all-gather, and
  // the per-dimension phases above, keep our order (contiguous pieces).
  if (choice == "halvingDoubling" && type == CollectiveType::kAllReduce) choice += ":order=nearest";
  const NativeAlgorithm* algo = find_native_algorithm(choice.substr(0, choice.find(':')));
  if (!algo->supports(type)) {
    cfg.unavailable[type] = p.at(key) + ": algorithm '" + algo->name + "' does not implement " + collective_name(type);
    cfg.algorithms.erase(type);
    return;
  }
  cfg.algorithms[type] = choice;
  cfg.unavailable.erase(type);
  if (flat) cfg.algorithm_dims.erase(type);
}

const std::map<std::string, CollectiveType>& implementation_keys() {
  static const std::map<std::string, CollectiveType> keys = {
      {"all-reduce-implementation", CollectiveType::kAllReduce},
      {"all-gather-implementation", CollectiveType::kAllGather},
      {"reduce-scatter-implementation", CollectiveType::kReduceScatter},
      {"all-to-all-implementation", CollectiveType::kAllToAll}};
  return keys;
}

}  // namespace

SystemConfig parse_astrasim_system(const std::string& json_text, const std::string& source) {
  const JsonPlace p(source, json_text);
  json root = parse_json_strict(json_text, source);
  if (!root.is_object()) throw InputError(source + ": an ASTRA-sim system file must be a JSON object");

  SystemConfig cfg;
  // ASTRA-sim's defaults for what a file may leave out (Sys::initialize_sys).
  cfg.dataset_splits = 1;
  cfg.active_chunks = 1;
  cfg.astrasim_quirks = true;
  cfg.scheduling_policy = "LIFO";
  cfg.astrasim_lifo = true;
  for (const auto& [key, type] : implementation_keys()) {
    if (!root.contains(key)) {
      cfg.unavailable[type] = source + ": no '" + key + "' (ASTRA-sim has no algorithm for " +
                              std::string(collective_name(type)) + " without it)";
    }
  }
  bool roofline = false;
  double peak_tflops = 0, local_mem_bw = 0;
  bool shared_bus = false;
  std::vector<std::string> loggp;
  std::map<CollectiveType, PerDimension> per_dimension;
  std::string optimization = "localBWAware";
  for (const auto& [key, v] : root.items()) {
    if (const auto it = implementation_keys().find(key); it != implementation_keys().end()) {
      SystemConfig scratch;
      std::map<CollectiveType, PerDimension> unused;
      if (root.contains(key + "-custom")) {
        implementation(p, key, v, it->second, scratch, unused);
      } else {
        implementation(p, key, v, it->second, cfg, per_dimension);
      }
    } else if (key.size() > 7 && key.rfind("-custom") == key.size() - 7 &&
               implementation_keys().count(key.substr(0, key.size() - 7))) {
      const CollectiveType type = implementation_keys().at(key.substr(0, key.size() - 7));
      if (!v.is_array() || v.size() != 1) p.fail(key, "must be a list of exactly one Chakra ET prefix");
      const std::string prefix = text(p, key, v[0]);  // relative to the working directory, as in ASTRA-sim
      try {
        parse_algorithm_choice(prefix, type);
      } catch (const InputError& e) {
        p.fail(key, e.what());
      }
      cfg.algorithms[type] = prefix;
      cfg.unavailable.erase(type);
      cfg.algorithm_dims.erase(type);
    } else if (key == "scheduling-policy") {
      const std::string s = text(p, key, v);
      if (s == "FIFO") {
        cfg.scheduling_policy = "FIFO";
        cfg.astrasim_lifo = false;
      } else if (s == "LIFO") {
        cfg.scheduling_policy = "LIFO";
        cfg.astrasim_lifo = true;
      } else if (s == "EXPLICIT") {
        p.fail(key, "EXPLICIT (order by the nodes' comm_priority) is not supported: collectives of a rank are "
                    "not queued here");
      } else {
        p.fail(key, "must be LIFO, FIFO or EXPLICIT, got '" + s + "'");
      }
    } else if (key == "collective-optimization") {
      const std::string s = text(p, key, v);
      if (s != "baseline" && s != "localBWAware") p.fail(key, "must be baseline or localBWAware, got '" + s + "'");
      optimization = s;  // the same schedule on one dimension
    } else if (key == "endpoint-delay") {
      cfg.endpoint_delay = static_cast<Time>(whole(p, key, v, 0, 1'000'000'000)) * kNanosecond;
    } else if (key == "preferred-dataset-splits") {
      cfg.dataset_splits = static_cast<std::uint32_t>(whole(p, key, v, 1, 1 << 20));
    } else if (key == "active-chunks-per-dimension") {
      cfg.active_chunks = static_cast<std::uint32_t>(whole(p, key, v, 1, 1 << 20));
    } else if (key == "local-mem-bw") {
      local_mem_bw = positive(p, key, v);  // GB/s, used as bytes per ns
    } else if (key == "peak-perf") {
      peak_tflops = positive(p, key, v);
    } else if (key == "roofline-enabled") {
      roofline = zero_or_one(p, key, v);
    } else if (key == "local-reduction-delay") {
      if (whole(p, key, v, 0, UINT32_MAX) != 0) {
        p.fail(key, "a non-zero local-reduction-delay is not supported (reductions are priced by local-mem-bw)");
      }
    } else if (key == "model-shared-bus") {
      shared_bus = zero_or_one(p, key, v);
      if (shared_bus) p.fail(key, "the LogGP shared-bus model (model-shared-bus: 1) is not supported");
    } else if (key == "L" || key == "o" || key == "g" || key == "G") {
      if (!v.is_number()) p.fail(key, "must be a number, got " + v.dump());
      loggp.push_back(key);
    } else if (key == "trace-enabled") {
      if (zero_or_one(p, key, v)) {
        cfg.warnings.push_back(p.at(key) + ": ASTRA-sim's per-node trace log is not written; use --timeline");
      }
    } else if (key == "replay-only") {
      if (zero_or_one(p, key, v)) p.fail(key, "replay-only: 1 (replay every node's duration) is not supported");
    } else if (key == "track-local-mem") {
      if (zero_or_one(p, key, v)) p.fail(key, "track-local-mem: 1 (local memory occupancy trace) is not supported");
    } else if (key == "local-mem-trace-filename") {
      text(p, key, v);
      cfg.warnings.push_back(p.at(key) + ": ignored (no local memory trace is written)");
    } else if (key == "per-node-custom-implementation") {
      // A YAML file {<Chakra node id>: <ET prefix>}; paths relative to the
      // working directory, as in ASTRA-sim. It wins over the type's choice.
      const std::string path = text(p, key, v);
      std::ifstream in(path);
      if (!in || !std::filesystem::is_regular_file(path)) p.fail(key, "cannot read '" + path + "'");
      std::stringstream yaml;
      yaml << in.rdbuf();
      const ConfigReader r(path);
      read_per_node_choices(r, r.load(yaml.str()), "per-node-custom-implementation", "", cfg.per_node_algorithms);
    } else if (key == "boost-mode" || key == "intra-dimension-scheduling" || key == "inter-dimension-scheduling") {
      cfg.warnings.push_back(p.at(key) + ": ignored (ASTRA-sim 2.x does not read it either)");
    } else {
      p.fail(key, "unknown key (ASTRA-sim would ignore it silently; check the spelling)");
    }
  }
  // Per-dimension lists: the hierarchical algorithm with ASTRA-sim's chunking
  // (its splits are the hierarchical chunks, not ChunkedProgram splits) and
  // one window per dimension, served in one order on every rank.
  for (const auto& [type, pd] : per_dimension) {
    std::string list = "hierarchical:chunks=" + std::to_string(cfg.dataset_splits) +
                       ",active_chunks=" + std::to_string(cfg.active_chunks) + ",dimension_queue=1,optimization=" +
                       optimization;
    for (const std::string& c : pd.choices) list += "," + c;
    try {
      parse_algorithm_choice(list, type);
    } catch (const InputError& e) {
      p.fail(pd.key, e.what());
    }
    cfg.algorithms[type] = list;
  }
  if (!loggp.empty()) {
    std::string list;
    for (const std::string& k : loggp) list += (list.empty() ? "" : ", ") + k;
    cfg.warnings.push_back(source + ": LogGP keys " + list + " ignored (ASTRA-sim uses them only with model-shared-bus: 1)");
  }
  if (local_mem_bw > 0) cfg.local_reduction = static_cast<BytesPerSecond>(std::llround(local_mem_bw * 1e9));
  if (roofline) {
    if (peak_tflops <= 0 || local_mem_bw <= 0) {
      p.fail("roofline-enabled", "the roofline needs peak-perf and local-mem-bw");
    }
    cfg.peak_flops = peak_tflops * 1e12;
    cfg.compute_memory_bandwidth = cfg.local_reduction;
  }
  return cfg;
}

void check_astrasim_remote_memory(const std::string& path) {
  check_astrasim_remote_memory_text(read_input_file(path, "remote-memory file"), path);
}

void check_astrasim_remote_memory_text(const std::string& json_text, const std::string& path) {
  const JsonPlace p(path, json_text);
  json root = parse_json_strict(json_text, path);
  if (!root.is_object() || !root.contains("memory-type")) throw InputError(path + ": expected {\"memory-type\": ...}");
  for (const auto& [key, v] : root.items()) {
    if (key == "memory-type") {
      const std::string t = text(p, key, v);
      if (t != "NO_MEMORY_EXPANSION") {
        p.fail(key, "'" + t + "' is not supported: only NO_MEMORY_EXPANSION (remote memory pools are not modelled; "
                    "MEM_LOAD/MEM_STORE use the system config's memory model)");
      }
    } else if (key == "remote-mem-latency" || key == "remote-mem-bw" || key == "num-nodes" || key == "num-npus-per-node") {
      // Read by ASTRA-sim only for the expansion types.
    } else {
      p.fail(key, "unknown key");
    }
  }
}

}  // namespace sim
