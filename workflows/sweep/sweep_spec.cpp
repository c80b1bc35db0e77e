#include "workflows/sweep/sweep_spec.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <yaml-cpp/yaml.h>

#include "core/config_reader.h"
#include "core/error.h"
#include "system/registry/algorithm_registry.h"
#include "workflows/sweep/content_hash.h"
#include "workflows/sweep/generated_algorithm.h"
#include "workload/generators/spec/model.h"
#include "workload/generators/workload_generator.h"
#include "workload/source/workload_source.h"

namespace sim::workflows {

namespace {

namespace fs = std::filesystem;

std::string resolve(const std::string& folder, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(folder) / path).lexically_normal().string();
}

// A --collective value with its ET prefix or MSCCL-IR file (if it names one)
// resolved against the spec's folder; native, hierarchical and generated
// (gen:, synth) choices are kept as written. Throws InputError for a bad
// generated choice.
std::string resolve_collective(const std::string& folder, const std::string& option) {
  if (parse_generated_algorithm(option)) return option;
  const auto eq = option.find('=');
  const std::string type = eq == std::string::npos ? "" : option.substr(0, eq + 1);
  const std::string value = eq == std::string::npos ? option : option.substr(eq + 1);
  const bool native = names_native_algorithm(value) || value.find(',') != std::string::npos ||
                      value.rfind("hierarchical", 0) == 0;
  return native ? option : type + resolve(folder, value);
}

// A model file a transformer's query names (`model=` not a built-in model),
// resolved against the spec's folder like the spec's other paths.
std::string model_value(const std::string& folder, const std::string& model) {
  const auto names = gen::builtin_model_names();
  if (std::find(names.begin(), names.end(), model) != names.end()) return model;
  return resolve(folder, model);
}

// The value of query key `key` in `uri` ('gen:NAME?k=v&...'), or nothing.
std::optional<std::string> query_value(const std::string& uri, const std::string& key) {
  const std::size_t q = uri.find('?');
  if (q == std::string::npos) return std::nullopt;
  std::size_t start = q + 1;
  while (start <= uri.size()) {
    const std::size_t amp = std::min(uri.find('&', start), uri.size());
    const std::string part = uri.substr(start, amp - start);
    const std::size_t eq = part.find('=');
    if (eq != std::string::npos && part.substr(0, eq) == key) return part.substr(eq + 1);
    start = amp + 1;
  }
  return std::nullopt;
}

std::string with_query_value(const std::string& uri, const std::string& key, const std::string& value);

// A workload value: a generated one ('gen:transformer?...') as written but for
// its model file, resolved as below; a path resolved against the spec's folder. PyTorch traces are not read by a
// sweep (their key would need every trace file): 'pytorch:DIR' was taken as a
// path and failed every point with "no files <spec folder>/pytorch:DIR.<rank>.et".
std::string workload_value(const ConfigReader& r, const YAML::Node& at, const std::string& folder,
                           const std::string& value) {
  if (value.rfind("pytorch:", 0) == 0) {
    r.fail(at, "workload '" + value + "': a sweep runs Chakra ETs or a gen: workload, not PyTorch traces; import "
               "them once (sim workload import pytorch --host-et DIR -o PREFIX) and name PREFIX");
  }
  if (!is_generated(value)) return resolve(folder, value);
  if (value.rfind("gen:transformer?", 0) == 0) {
    if (const auto model = query_value(value, "model")) return with_query_value(value, "model", model_value(folder, *model));
  }
  return value;
}

// `uri` ('gen:NAME?k=v&...') with query key `key` set to `value`: replaced
// where the query has it, appended where it does not.
std::string with_query_value(const std::string& uri, const std::string& key, const std::string& value) {
  const std::size_t q = uri.find('?');
  std::string out = q == std::string::npos ? uri : uri.substr(0, q);
  std::string query = q == std::string::npos ? "" : uri.substr(q + 1);
  std::string rebuilt;
  bool set = false;
  std::size_t start = 0;
  while (start <= query.size() && !query.empty()) {
    const std::size_t amp = std::min(query.find('&', start), query.size());
    std::string part = query.substr(start, amp - start);
    const std::size_t eq = part.find('=');
    if (part.substr(0, eq) == key) {
      part = key + "=" + value;
      set = true;
    }
    if (!part.empty()) rebuilt += (rebuilt.empty() ? "" : "&") + part;
    start = amp + 1;
  }
  if (!set) rebuilt += (rebuilt.empty() ? "" : "&") + key + "=" + value;
  return out + "?" + rebuilt;
}

std::string label_of(const YAML::Node& value) {
  if (value.IsScalar()) return value.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << value;
  return out.c_str();
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1) {
    parts.push_back(path.substr(start, dot - start));
  }
  parts.push_back(path.substr(start));
  return parts;
}

struct SpecReader {
  const ConfigReader& r;
  const std::string& folder;

  std::string collective(const YAML::Node& node, const std::string& key) const {
    const std::string value = r.text(node, key);
    try {
      return resolve_collective(folder, value);
    } catch (const InputError& e) {  // a bad gen:/synth choice
      r.fail(node, key + ": " + e.what());
    }
  }

  std::vector<std::string> collectives(const YAML::Node& node, std::string_view key) const {
    std::vector<std::string> out;
    if (node.IsScalar()) {
      out.push_back(collective(node, std::string(key)));
    } else if (node.IsSequence()) {
      for (std::size_t i = 0; i < node.size(); ++i) {
        out.push_back(collective(node[i], std::string(key) + "[" + std::to_string(i) + "]"));
      }
    } else {
      r.fail(node, std::string(key) + ": expected a --collective value or a list of them");
    }
    return out;
  }

  // A microbenchmark's size, checked as `--workload gen:collectives?size=`
  // checks it (at least 1 byte, at most 2^63 - 1: what comm_size holds).
  std::string size(const YAML::Node& node, std::string_view key) const {
    const std::string text = r.text(node, key);
    WorkloadGenOptions o;
    o.kind = "collectives";
    o.npus = 1;
    o.size_text = text;
    try {
      make_microbenchmark(o, gen::OptionSpelling::kQuery);
    } catch (const InputError& e) {
      // Its message names the query's key ("gen:collectives: size: "); the spec's key replaces it.
      const std::string what = e.what(), query_key = "gen:collectives: size: ";
      r.fail(node, std::string(key) + ": " + (what.rfind(query_key, 0) == 0 ? what.substr(query_key.size()) : what));
    }
    return text;
  }

  // 1..2^20 NPUs, as `sim workload gen --npus`: a bigger count must not wrap
  // into a small one (4294967297 is not 1 NPU).
  std::uint32_t npus(const YAML::Node& node, const std::string& key) const {
    const std::uint64_t n = r.count(node, key);
    if (n == 0 || n > (1u << 20)) r.fail(node, key + ": expected 1..1048576 NPUs, got " + std::to_string(n));
    return static_cast<std::uint32_t>(n);
  }

  Microbenchmark microbenchmark(const YAML::Node& node) const {
    r.require_map(node, "base.microbenchmark");
    r.check_keys(node, "base.microbenchmark.", {"npus", "collectives", "size"});
    Microbenchmark m;
    m.npus = npus(r.require(node, "npus"), "base.microbenchmark.npus");
    const YAML::Node colls = node["collectives"];
    if (!colls) {
      m.collectives = {"allreduce"};
    } else {
      if (colls.IsScalar()) m.collectives.push_back(r.text(colls, "base.microbenchmark.collectives"));
      for (std::size_t i = 0; colls.IsSequence() && i < colls.size(); ++i) {
        m.collectives.push_back(r.text(colls[i], "base.microbenchmark.collectives[" + std::to_string(i) + "]"));
      }
      if (m.collectives.empty()) r.fail(colls, "base.microbenchmark.collectives: expected a collective or a list of them");
    }
    for (const std::string& c : m.collectives) {
      CollectiveType t;
      if (!parse_collective_name(c, t)) r.fail(colls, "base.microbenchmark.collectives: unknown collective '" + c + "'");
    }
    m.size = node["size"] ? size(node["size"], "base.microbenchmark.size") : "1MiB";
    return m;
  }

  PointSettings base(const YAML::Node& node) const {
    r.require_map(node, "base");
    r.check_keys(node, "base.", {"workload", "microbenchmark", "network", "system", "backend", "collective"});
    PointSettings s;
    if (node["workload"]) s.workload = workload_value(r, node["workload"], folder, r.text(node["workload"], "base.workload"));
    if (node["microbenchmark"]) s.microbenchmark = microbenchmark(node["microbenchmark"]);
    if (node["workload"] && node["microbenchmark"]) {
      r.fail(node["microbenchmark"], "base: give either 'workload' or 'microbenchmark', not both");
    }
    if (node["network"]) s.network = resolve(folder, r.text(node["network"], "base.network"));
    if (node["system"]) s.system = resolve(folder, r.text(node["system"], "base.system"));
    if (node["backend"]) s.backend = r.text(node["backend"], "base.backend");
    if (node["collective"]) s.collectives = collectives(node["collective"], "base.collective");
    return s;
  }

  void check_axis(const Axis& a, const YAML::Node& key, const PointSettings& base) const {
    static const std::set<std::string> plain = {"workload", "network", "system", "backend", "collective", "size", "npus"};
    const bool keyed = a.name.rfind("network.", 0) == 0 || a.name.rfind("system.", 0) == 0;
    const bool query = a.name.rfind("workload.", 0) == 0;
    if (!plain.count(a.name) && !keyed && !query) {
      r.fail(key, "axes: unknown axis '" + a.name +
                      "' (expected workload, network, system, backend, collective, size, npus, a key path "
                      "network.<key>[.<key>...] / system.<key>[.<key>...], or workload.<key> of a generated "
                      "workload's query)");
    }
    if (query) {
      const std::string k = a.name.substr(9);
      if (k.empty() || k.find_first_of(".?&=") != std::string::npos) {
        r.fail(key, "axes: '" + a.name + "' must name one key of the generated workload's query (e.g. workload.parallel)");
      }
      if (!is_generated(base.workload)) {
        r.fail(key, "axes." + a.name + ": varies a generated workload's query, but base.workload is not one "
                    "('gen:transformer?...')");
      }
    }
    if (keyed) {
      for (const std::string& part : split_path(a.name)) {
        if (part.empty()) r.fail(key, "axes: '" + a.name + "' has an empty key in its path");
      }
    }
    if ((a.name == "size" || a.name == "npus") && !base.microbenchmark) {
      r.fail(key, "axes." + a.name + ": varies a generated microbenchmark, but base has no 'microbenchmark'");
    }
  }

  Axis axis(const YAML::Node& key, const YAML::Node& values, const PointSettings& base) const {
    Axis a;
    a.name = key.Scalar();
    a.line = key.Mark().line + 1;
    check_axis(a, key, base);
    if (!values.IsSequence() || values.size() == 0) {
      r.fail(values, "axes." + a.name + ": expected a non-empty list of values");
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const YAML::Node v = values[i];
      const std::string where = "axes." + a.name + "[" + std::to_string(i) + "]";
      if (!v.IsScalar() && !v.IsSequence()) r.fail(v, where + ": expected a value or a list");
      if (a.name == "size") size(v, where);
      if (a.name == "npus") npus(v, where);
      if (a.name == "collective") collectives(v, where);
      if (a.name.rfind("workload.", 0) == 0 &&
          (!v.IsScalar() || v.Scalar().empty() || v.Scalar().find_first_of("&?") != std::string::npos)) {
        r.fail(v, where + ": expected one query value (no '&' or '?')");
      }
      a.values.push_back(v);
      a.labels.push_back(label_of(v));
      if (!seen.insert(a.labels.back()).second) r.fail(v, where + ": '" + a.labels.back() + "' is listed twice");
    }
    return a;
  }
};

void apply_axis(const Axis& axis, const YAML::Node& value, const std::string& folder, const ConfigReader& r,
                PointSettings& s) {
  const SpecReader reader{r, folder};
  const std::string& name = axis.name;
  if (name == "workload") {
    s.workload = workload_value(r, value, folder, value.Scalar());
    s.microbenchmark.reset();
  } else if (name.rfind("workload.", 0) == 0) {
    const std::string key = name.substr(9);
    const bool model = key == "model" && s.workload.rfind("gen:transformer?", 0) == 0;
    s.workload = with_query_value(s.workload, key, model ? model_value(folder, value.Scalar()) : value.Scalar());
  } else if (name == "network") {
    s.network = resolve(folder, value.Scalar());
  } else if (name == "system") {
    s.system = resolve(folder, value.Scalar());
  } else if (name == "backend") {
    s.backend = value.Scalar();
  } else if (name == "collective") {
    s.collectives = reader.collectives(value, "axes.collective");
  } else if (name == "size") {
    s.microbenchmark->size = value.Scalar();
  } else if (name == "npus") {
    s.microbenchmark->npus = reader.npus(value, "axes.npus");
  } else {
    std::vector<std::string> path = split_path(name);
    const bool network = path.front() == "network";
    path.erase(path.begin());
    (network ? s.network_overrides : s.system_overrides).push_back({path, value, axis.line, name});
  }
}

}  // namespace

SweepSpec parse_sweep_spec(const std::string& yaml_text, const std::string& path) {
  const ConfigReader r(path);
  const YAML::Node root = r.load(yaml_text);
  if (!root.IsMap()) r.fail(root, "a sweep spec must be a map with 'base' and 'axes'");
  r.check_keys(root, "", {"base", "axes", "zip"});
  SweepSpec spec;
  spec.path = path;
  spec.folder = fs::path(path).parent_path().string();
  spec.digest = sha256_hex(yaml_text);
  const SpecReader reader{r, spec.folder};
  spec.base = reader.base(r.require(root, "base"));

  const YAML::Node axes = r.require(root, "axes");
  if (!axes.IsMap() || axes.size() == 0) r.fail(axes, "axes: expected a map of axis name -> list of values");
  std::set<std::string> names;
  for (const auto& kv : axes) {
    spec.axes.push_back(reader.axis(kv.first, kv.second, spec.base));
    if (!names.insert(spec.axes.back().name).second) r.fail(kv.first, "axes: '" + spec.axes.back().name + "' twice");
  }
  const bool varies_workload = names.count("workload") > 0;
  if (spec.base.workload.empty() && !spec.base.microbenchmark && !varies_workload) {
    r.fail(root["base"], "base: needs 'workload' or 'microbenchmark' (or a 'workload' axis)");
  }
  if (spec.base.network.empty() && !names.count("network")) {
    r.fail(root["base"], "base: needs 'network' (or a 'network' axis)");
  }

  if (const YAML::Node zip = root["zip"]) {
    if (!zip.IsSequence()) r.fail(zip, "zip: expected a list of lists of axis names");
    std::set<std::size_t> zipped;
    for (std::size_t g = 0; g < zip.size(); ++g) {
      const YAML::Node group = zip[g];
      if (!group.IsSequence() || group.size() < 2) r.fail(group, "zip[" + std::to_string(g) + "]: expected a list of 2 or more axis names");
      std::vector<std::size_t> members;
      for (std::size_t i = 0; i < group.size(); ++i) {
        const std::string name = r.text(group[i], "zip[" + std::to_string(g) + "]");
        std::size_t k = 0;
        while (k < spec.axes.size() && spec.axes[k].name != name) ++k;
        if (k == spec.axes.size()) r.fail(group[i], "zip: '" + name + "' is not an axis");
        if (!zipped.insert(k).second) r.fail(group[i], "zip: axis '" + name + "' is in more than one group");
        if (spec.axes[k].values.size() != spec.axes[members.empty() ? k : members.front()].values.size()) {
          r.fail(group[i], "zip: axis '" + name + "' has " + std::to_string(spec.axes[k].values.size()) +
                               " values but '" + spec.axes[members.front()].name + "' has " +
                               std::to_string(spec.axes[members.front()].values.size()));
        }
        members.push_back(k);
      }
      spec.zips.push_back(members);
    }
  }
  return spec;
}

SweepSpec load_sweep_spec(const std::string& path) {
  if (!fs::is_regular_file(path)) throw InputError(path + ": no such sweep spec file");
  return parse_sweep_spec(read_file_text(path), path);
}

std::vector<SweepPoint> expand_points(const SweepSpec& spec) {
  // Dimensions of the product: each zip group is one, led by its first axis.
  std::vector<std::vector<std::size_t>> dims;
  std::vector<bool> placed(spec.axes.size(), false);
  for (std::size_t k = 0; k < spec.axes.size(); ++k) {
    if (placed[k]) continue;
    std::vector<std::size_t> dim{k};
    for (const auto& group : spec.zips) {
      if (group.front() == k || std::find(group.begin(), group.end(), k) != group.end()) dim = group;
    }
    for (std::size_t m : dim) placed[m] = true;
    dims.push_back(dim);
  }
  // A product past any sweep one would run is a mistake in the spec, and
  // allocating it would take the machine's memory (or wrap): say so instead.
  constexpr std::size_t kMaxPoints = 1'000'000;
  std::size_t total = 1;
  std::string sizes;
  for (const auto& d : dims) {
    const std::size_t n = spec.axes[d.front()].values.size();
    sizes.append(sizes.empty() ? "" : " x ").append(std::to_string(n));
    total = total > kMaxPoints / n ? kMaxPoints + 1 : total * n;
  }
  if (total > kMaxPoints) {
    throw InputError(spec.path + ": the axes make " + sizes + " points, more than " + std::to_string(kMaxPoints) +
                     " (a sweep that large is a mistake; split it, or zip axes that advance together)");
  }

  const ConfigReader r(spec.path);
  std::vector<SweepPoint> points(total);
  for (std::size_t index = 0; index < total; ++index) {
    SweepPoint& p = points[index];
    p.index = index;
    p.choice.assign(spec.axes.size(), 0);
    std::size_t rest = index;
    for (std::size_t d = dims.size(); d-- > 0;) {  // last dimension fastest
      const std::size_t n = spec.axes[dims[d].front()].values.size();
      for (std::size_t m : dims[d]) p.choice[m] = rest % n;
      rest /= n;
    }
    p.settings = spec.base;
    for (std::size_t k = 0; k < spec.axes.size(); ++k) {
      apply_axis(spec.axes[k], spec.axes[k].values[p.choice[k]], spec.folder, r, p.settings);
    }
  }
  return points;
}

}  // namespace sim::workflows
