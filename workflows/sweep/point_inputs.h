// What one sweep point reads, gathered before it runs: the network text with
// its overrides, the parsed system config, the workload's files, and the
// point's key (SHA-256 over the sim version, the module file of a backend
// built as one (ns3), and the content of every input).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "system/config/system_config.h"
#include "workflows/sweep/content_hash.h"
#include "workflows/sweep/sweep_spec.h"
#include "workload/generators/workload_generator.h"

namespace sim::workflows {

struct PointInputs {
  std::string key;  // hex SHA-256; equal keys compute equal results
  // Set when an input could not be read: the point fails with this message
  // and exit code (2 bad input) without running.
  std::string failure;
  int failure_code = 0;

  std::string network_text, network_source, network_digest;
  std::shared_ptr<const SystemConfig> system;  // parsed once per distinct text
  std::string backend;
  std::vector<std::string> collectives;        // --collective values
  std::vector<std::string> workload_files;     // per rank; empty with a microbenchmark or a generated workload
  std::string generated_workload;              // 'gen:transformer?...', checked; or ""

  std::optional<CollectivesSpec> microbenchmark;
  std::string workload_key;                    // names the loaded workload for sharing
};

// Reads the inputs of a sweep's points, keeping each file's text, digest and
// each parsed system config once. Not thread-safe: used before points run.
class InputReader {
 public:
  explicit InputReader(const SweepSpec& spec) : spec_(spec) {}

  // A key path naming no key throws InputError (the spec is wrong); any other
  // unreadable input is recorded in PointInputs::failure.
  PointInputs read(const PointSettings& settings);

 private:
  // The file's text (InputError naming `what` for a folder, device or missing file).
  const std::string& text_of(const std::string& path, const std::string& what);
  void read_network(const PointSettings& s, PointInputs& in, std::string& key);
  void read_system(const PointSettings& s, PointInputs& in, std::string& key);
  void read_backend_module(PointInputs& in, std::string& key);
  void read_workload(const PointSettings& s, PointInputs& in, std::string& key);
  void read_collectives(const PointSettings& s, PointInputs& in, std::string& key);
  std::string rank_files_digest(const std::string& prefix);

  const SweepSpec& spec_;
  FileDigests digests_;
  std::map<std::string, std::string> texts_;
  std::map<std::string, std::shared_ptr<const SystemConfig>> systems_;  // by source + text digest
  std::map<std::string, std::pair<std::vector<std::string>, std::string>> rank_files_;  // prefix -> files, digest
};

// What keys results to the simulator: "0.1.0+<digest of this executable>",
// so a rebuilt simulator with other code recomputes every point.
const std::string& sim_version();

}  // namespace sim::workflows
