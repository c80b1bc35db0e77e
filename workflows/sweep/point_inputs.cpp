#include "workflows/sweep/point_inputs.h"

#include <filesystem>
#include <yaml-cpp/yaml.h>

#include "compute/kernel_table.h"
#include "core/error.h"
#include "core/input_file.h"
#include "core/plugin.h"
#include "core/units.h"
#include "network/backend_registry.h"
#include "system/registry/algorithm_choices.h"
#include "system/registry/algorithm_registry.h"
#include "system/producers/msccl_import.h"
#include "system/astrasim/astrasim_system.h"
#include "workflows/sweep/generated_algorithm.h"
#include "workflows/sweep/json_override.h"
#include "workflows/sweep/yaml_override.h"
#include "workload/et/et_io.h"
#include "workload/source/workload_source.h"

namespace sim::workflows {

const std::string& sim_version() {
  // The release number alone would let a rebuilt simulator with changed
  // models reuse old results; the digest of the running binary changes with
  // any change to the code (and costs one read of the file per sweep).
  static const std::string version = [] {
    try {
      return std::string(SIM_VERSION) + "+" + sha256_hex(read_file_text("/proc/self/exe")).substr(0, 16);
    } catch (const InputError&) {
      return std::string(SIM_VERSION);
    }
  }();
  return version;
}

namespace {

// A --collective value or system-config choice that names files (ETs or an
// MSCCL-IR XML; not a native, hierarchical or generated algorithm): the
// prefix or file, without a `@<size>` suffix; else empty.
std::string et_prefix_of(const std::string& choice) {
  // A system config's choice has no `<type>=`: its own '=' are parameters ("nccl:overhead=0us").
  if (names_native_algorithm(choice)) return "";
  const auto eq = choice.find('=');
  const std::string value = eq == std::string::npos ? choice : choice.substr(eq + 1);
  if (names_native_algorithm(value) || value.find(',') != std::string::npos || value.rfind("hierarchical", 0) == 0 ||
      parse_generated_algorithm(choice)) {
    return "";
  }
  if (const std::size_t at = value.rfind('@'); at != std::string::npos && value.find('/', at) == std::string::npos) {
    return value.substr(0, at);  // `<prefix>@<size>`: the size is part of the value, hashed with it
  }
  return value;
}

std::string summary(const PointSettings::Override& o) {
  YAML::Emitter e;
  e << YAML::Flow << o.value;
  return o.axis + "=" + e.c_str();
}

}  // namespace

const std::string& InputReader::text_of(const std::string& path, const std::string& what) {
  auto it = texts_.find(path);
  // Regular files only: a folder used to read as an empty (default) config.
  if (it == texts_.end()) it = texts_.emplace(path, read_input_file(path, what)).first;
  return it->second;
}

std::string InputReader::rank_files_digest(const std::string& prefix) {
  if (is_msccl_xml_path(prefix)) return digests_.of(prefix);  // one file holds every rank
  auto it = rank_files_.find(prefix);
  if (it == rank_files_.end()) {
    std::vector<std::string> files = resolve_rank_files(prefix);
    std::string all;
    for (const std::string& f : files) all += digests_.of(f) + "\n";
    it = rank_files_.emplace(prefix, std::pair{std::move(files), sha256_hex(all)}).first;
  }
  return it->second.second;
}

void InputReader::read_network(const PointSettings& s, PointInputs& in, std::string& key) {
  in.network_source = s.network;
  for (const auto& o : s.network_overrides) in.network_source += " [" + summary(o) + "]";
  // A missing key is the spec's fault (rethrown), not this point's.
  in.network_text = apply_overrides(text_of(s.network, "network"), s.network, s.network_overrides, spec_.path);
  in.network_digest = sha256_hex(in.network_text);
  key += "network " + in.network_digest + "\n";
}

void InputReader::read_system(const PointSettings& s, PointInputs& in, std::string& key) {
  if (s.system.empty()) {
    static const auto defaults = std::make_shared<const SystemConfig>();
    in.system = defaults;
    key += "system defaults\n";
    return;
  }
  // A folder `sim system gen` wrote stands for its system.yml, as `sim --system DIR` takes it.
  std::string path = s.system;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec) && std::filesystem::is_regular_file(path + "/system.yml", ec)) {
    path += "/system.yml";
  }
  const bool json = path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  std::string source = path;
  for (const auto& o : s.system_overrides) source += " [" + summary(o) + "]";
  // ASTRA-sim's system JSON takes key paths as JSON; our system YAML as YAML.
  const std::string& file = text_of(path, "system config");
  const std::string text = json ? apply_json_overrides(file, path, s.system_overrides, spec_.path)
                                : apply_overrides(file, path, s.system_overrides, spec_.path);
  const std::string digest = sha256_hex(text);
  auto it = systems_.find(source + "\n" + digest);
  if (it == systems_.end()) {
    // parse_system_config resolves relative ET paths against the file's folder.
    SystemConfig config = json ? parse_astrasim_system(text, path) : parse_system_config(text, path);
    check_algorithm_choices(config);
    it = systems_.emplace(source + "\n" + digest, std::make_shared<const SystemConfig>(std::move(config))).first;
  }
  in.system = it->second;
  key += "system " + digest + "\n";
  // Files the config reads besides its text: its kernel tables (a built-in
  // one is part of the executable, which sim_version digests).
  for (const std::string& f : in.system->compute_kernel_files) {
    if (!is_builtin_kernel_table(f)) key += "kernel-table " + f + " " + digests_.of(f) + "\n";
  }
  for (const auto& [type, choice] : in.system->algorithms) {
    if (const std::string prefix = et_prefix_of(choice); !prefix.empty()) {
      key += "system-algorithm " + std::string(collective_name(type)) + " " + prefix + " " + rank_files_digest(prefix) + "\n";
    }
  }
}

void InputReader::read_backend_module(PointInputs& in, std::string& key) {
  // A backend built as a module (ns3: libsim_ns3.so) is not in sim_version's
  // digest of the executable: its own file keys the point, so a rebuilt
  // module recomputes the points that used it, and only those.
  const BackendInfo* b = find_backend(in.backend.empty() ? in.system->network.backend : in.backend);
  if (!b || b->module.empty()) return;
  const std::string path = find_module(b->module);
  key += "module " + b->module + " " + (path.empty() ? std::string("absent") : digests_.of(path)) + "\n";
}

void InputReader::read_workload(const PointSettings& s, PointInputs& in, std::string& key) {
  if (s.microbenchmark) {
    CollectivesSpec mb;
    mb.npus = s.microbenchmark->npus;
    for (const std::string& c : s.microbenchmark->collectives) {
      CollectiveType t;
      parse_collective_name(c, t);  // checked with the spec
      mb.collectives.push_back(t);
    }
    mb.bytes = parse_size(s.microbenchmark->size);
    // A sweep walks sizes over rank counts: nccl-tests' rounding, not an error
    // per point (the `bytes` column says what ran); 0 B after it fails the point.
    mb.uneven = UnevenSize::kRoundDown;
    check_collective_sizes(mb, "size", s.microbenchmark->size);
    in.workload_key = "microbenchmark npus=" + std::to_string(mb.npus) + " bytes=" + std::to_string(mb.bytes) + " collectives=";
    for (CollectiveType t : mb.collectives) in.workload_key += std::string(collective_name(t)) + ",";
    in.microbenchmark = mb;
    key += in.workload_key + "\n";
    return;
  }
  if (is_generated(s.workload)) {
    // A bad query fails the point (InputError), as a missing file does.
    const std::shared_ptr<const WorkloadSource> source = open_swept_workload(s.workload);
    in.generated_workload = s.workload;
    in.workload_key = "generated " + s.workload;
    // A model named by its file (model=my.yml) is that file's content, not its name.
    if (const gen::TrainingSpec* t = source->training_spec(); t && !t->model.file.empty()) {
      in.workload_key += " model " + digests_.of(t->model.file);
    }
    key += in.workload_key + "\n";
    return;
  }
  const std::string digest = rank_files_digest(s.workload);
  in.workload_files = rank_files_.at(s.workload).first;
  in.workload_key = "workload " + digest;
  key += in.workload_key + "\n";
}

void InputReader::read_collectives(const PointSettings& s, PointInputs& in, std::string& key) {
  in.collectives = s.collectives;
  for (const std::string& c : s.collectives) {
    key += "collective " + c;
    if (const std::string prefix = et_prefix_of(c); !prefix.empty()) key.append(" ").append(rank_files_digest(prefix));
    key += "\n";
  }
}

PointInputs InputReader::read(const PointSettings& s) {
  PointInputs in;
  in.backend = s.backend;
  std::string key = std::string("sim ").append(sim_version()).append("\nbackend ").append(s.backend).append("\n");
  try {
    read_network(s, in, key);
    read_system(s, in, key);
    read_backend_module(in, key);
    read_workload(s, in, key);
    read_collectives(s, in, key);
  } catch (const SimError& e) {
    const std::string what = e.what();
    if (what.rfind(spec_.path + ":", 0) == 0) throw;  // the spec itself is wrong
    in.failure = what;
    in.failure_code = e.exit_code();
    key += "unreadable " + what + "\n";
  }
  in.key = sha256_hex(key);
  return in;
}

}  // namespace sim::workflows
