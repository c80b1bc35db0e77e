#include "astrasim_cli.h"
#include "run_outputs.h"

#include "system/groups/process_groups.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/input_file.h"
#include "core/time.h"
#include "core/config_reader.h"
#include "network/topology.h"
#include "system/astrasim/astrasim_system.h"
#include "system/scenario/scenario.h"
#include "workflows/run/run.h"
#include "system/scenario/system_files.h"
#include "system/groups/comm_group_file.h"
#include "report/report.h"
#include "system/runner/simulation.h"
#include "workload/loader/workload_loader.h"

namespace sim {

namespace {

constexpr const char* kPrefix = "--";

// ASTRA-sim's network YAML with its "GB/s" read as 2^30 B/s, unless the file says otherwise.
Topology load_astrasim_network(const std::string& path) {
  std::string text = read_input_file(path, "network configuration");
  bool astrasim_form = false, has_unit = false;
  try {
    const YAML::Node root = ConfigReader(path).load(text);
    astrasim_form = root.IsMap() && root["topology"] && root["npus_count"];
    has_unit = root.IsMap() && root["bandwidth_unit"];
  } catch (const InputError&) {
    // parse_topology reports it with the line.
  }
  if (astrasim_form && !has_unit) {
    spdlog::info("{}: ASTRA-sim network file: bare bandwidths read as GiB/s (ASTRA-sim converts its \"GB/s\" with 2^30)",
                 path);
    text += "\nbandwidth_unit: GiB/s\n";
  }
  return parse_topology(text, path);
}

double number_value(const std::string& option, const std::string& value) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || !std::isfinite(v)) {
    throw InputError("--" + option + ": expected a number, got '" + value + "'");
  }
  return v;
}

}  // namespace

bool is_astrasim_invocation(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    for (const char* o : {"--workload-configuration", "--system-configuration", "--network-configuration"}) {
      if (a == o || a.rfind(std::string(o) + "=", 0) == 0) return true;
    }
  }
  return false;
}

int run_astrasim_cli(int argc, char** argv) {
  const auto wall_start = std::chrono::steady_clock::now();
  std::map<std::string, std::string> opt;
  static const char* const kKnown[] = {
      "workload-configuration", "system-configuration", "network-configuration", "remote-memory-configuration",
      "comm-group-configuration", "logging-configuration", "logging-folder", "num-queues-per-dim", "compute-scale",
      "comm-scale", "injection-scale", "rendezvous-protocol", "report", "csv", "egress"};
  bool no_aggregation = false;  // ours: simulate every message (results are the same, docs/system.md)
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--no-aggregation") {
      no_aggregation = true;
      continue;
    }
    if (a.rfind(kPrefix, 0) != 0) throw InputError("unexpected argument '" + a + "' (ASTRA-sim options are --name=value)");
    a = a.substr(2);
    std::string name = a, value;
    if (const auto eq = a.find('='); eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw InputError("--" + name + " needs a value");
    }
    bool known = false;
    for (const char* k : kKnown) known = known || name == k;
    if (!known) {
      std::string list;
      for (const char* k : kKnown) list += std::string(list.empty() ? "--" : ", --") + k;
      throw InputError("unknown option --" + name + " in ASTRA-sim mode (ASTRA-sim would ignore it silently; known: " +
                       list + ")");
    }
    if (!opt.emplace(name, value).second) throw InputError("--" + name + " given twice");
  }
  for (const char* required : {"workload-configuration", "system-configuration", "network-configuration"}) {
    if (!opt.count(required)) throw InputError(std::string("ASTRA-sim mode needs --") + required);
  }
  const auto given = [&](const std::string& k) { return opt.count(k) && opt[k] != "empty"; };

  // Options ASTRA-sim reads, one by one.
  if (given("logging-configuration") || opt.count("logging-folder")) {
    spdlog::warn("--logging-configuration / --logging-folder ignored: warnings and errors go to stderr");
  }
  if (opt.count("num-queues-per-dim") && number_value("num-queues-per-dim", opt["num-queues-per-dim"]) != 1) {
    throw InputError("--num-queues-per-dim other than 1 is not supported (one queue per dimension)");
  }
  for (const char* k : {"compute-scale", "comm-scale"}) {
    if (opt.count(k)) {
      number_value(k, opt[k]);
      spdlog::warn("--{} ignored (ASTRA-sim parses it but never uses it either)", k);
    }
  }
  if (opt.count("rendezvous-protocol")) {
    const std::string v = opt["rendezvous-protocol"];
    if (v == "true" || v == "1") throw InputError("--rendezvous-protocol=true (an 8 KiB handshake before every message) is not supported");
    if (v != "false" && v != "0") throw InputError("--rendezvous-protocol: expected true or false, got '" + v + "'");
  }

  SystemConfig config = load_system_config(opt["system-configuration"]);
  if (opt.count("injection-scale")) {  // ASTRA-sim scales the endpoint delay only
    const double s = number_value("injection-scale", opt["injection-scale"]);
    if (!(s > 0)) throw InputError("--injection-scale must be > 0");
    // Checked before rounding: llround of a product past 2^63 is negative (a mutation-campaign finding).
    const double scaled = static_cast<double>(config.endpoint_delay) * s;
    if (!(scaled < static_cast<double>(kMaxTime))) {
      throw InputError(std::string("--injection-scale ")
                           .append(opt["injection-scale"])
                           .append(": the endpoint delay scaled by it would pass the largest representable time, ")
                           .append(describe_time_limit()));
    }
    config.endpoint_delay = static_cast<Time>(std::llround(scaled));
  }
  // Ours, not ASTRA-sim's: --egress=overlap charges every message as if alone
  // on the network, as ASTRA-sim's congestion-unaware backend does (its tree
  // and direct numbers need it; they can exceed what a port can carry).
  if (opt.count("egress")) config.network.options["egress"] = OptionValue{opt["egress"], "--egress"};
  if (no_aggregation) config.aggregation = false;
  if (given("remote-memory-configuration")) check_astrasim_remote_memory(opt["remote-memory-configuration"]);
  ScenarioSpec spec;
  spec.topology = std::make_shared<const Topology>(load_astrasim_network(opt["network-configuration"]));
  spec.system_config = std::make_shared<const SystemConfig>(std::move(config));
  const std::string workload = opt["workload-configuration"];
  spec.jobs.push_back(JobInput{"", workload,
                               given("comm-group-configuration") ? opt["comm-group-configuration"] : ""});

  OutputPaths paths;  // opened before loading: a bad path fails at once (docs/reports.md)
  if (opt.count("report")) paths.report = opt["report"];
  if (opt.count("csv")) paths.csv = opt["csv"];
  RunOutputs outputs(paths);

  RunHooks hooks;
  hooks.wall_start = wall_start;
  hooks.log_warnings = true;
  const RunOutcome run = sim::run(spec, hooks);
  const SimulationResult& result = run.result;
  const RunInfo& info = run.info;
  outputs.write(result, info);
  print_summary(std::cout, result, info);
  // ASTRA-sim's per-rank lines (cycles = ns, truncated to whole ns as ASTRA-sim counts them).
  for (std::size_t r = 0; r < result.ranks.size(); ++r) {
    const RankStats& s = result.ranks[r];
    std::cout << "sys[" << r << "] finished, " << s.finish / kNanosecond << " cycles, exposed communication "
              << (s.finish - s.compute) / kNanosecond << " cycles\n";
  }
  return kExitOk;
}

}  // namespace sim
