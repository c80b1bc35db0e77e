#include "workflows/sweep/point_runner.h"

#include <chrono>
#include <map>

#include "core/error.h"
#include "system/scenario/scenario.h"
#include "workflows/run/run.h"
#include "workflows/sweep/generated_algorithm.h"
#include "workload/source/workload_source.h"
#include "workload/loader/workload_loader.h"
#include "system/registry/algorithm_source.h"

namespace sim::workflows {

namespace {

std::vector<RankGraph> load_workload(const PointInputs& in) {
  const GraphOptions options;
  if (in.microbenchmark) {
    std::vector<RankGraph> graphs;
    const std::vector<EtTrace> traces = collectives_workload(*in.microbenchmark);
    for (std::size_t r = 0; r < traces.size(); ++r) graphs.emplace_back(traces[r], static_cast<int>(r), options);
    return graphs;
  }
  return load_rank_graphs(in.workload_files, options, /*threads=*/1);  // points already run in parallel
}

// The --collective value that runs: a generated algorithm (gen:, synth)
// becomes the prefix of its ETs, written once per sweep. `labels` maps the
// algorithm name the simulator reports ("et:<prefix>") to one without the
// output folder ("et:gen:ring"), so every shard and rerun writes the same CSV.
std::string runnable_collective(const std::string& value, const PointInputs& in, const Topology& topology,
                                std::uint32_t npus, SharedInputs& shared, std::map<std::string, std::string>& labels) {
  const std::optional<GeneratedAlgorithm> g = parse_generated_algorithm(value);
  if (!g) return value;
  const auto prefix = shared.generated.get(generated_algorithm_id(*g, npus, in.network_digest), [&] {
    return write_generated_algorithm(*g, npus, topology, in.network_digest, shared.generated_folder);
  });
  labels["et:" + *prefix] = "et:" + value.substr(value.find('=') + 1);
  return g->type_text + "=" + *prefix;
}

// A generated workload, run as `sim --workload 'gen:...'` runs it: a training
// iteration folded where exact, stand-ins where replicas do not mirror (the
// command line's default), every rank otherwise, with the training report's
// figures; a microbenchmark's identical ranks folded, with its collectives'.
void simulate_generated(const PointInputs& in, ScenarioSpec spec, const std::map<std::string, std::string>& labels,
                        PointResult& out) {
  spec.jobs = {JobInput{"", in.generated_workload, ""}};
  spec.stand_ins = true;
  spec.load_threads = 1;  // points already run in parallel
  RunHooks hooks;
  hooks.note = [&](const std::string& why) { out.notes.push_back(why); };
  RunOutcome run = sim::run(spec, hooks);
  if (run.info.training) {
    out.training = *run.info.training;
  } else {
    out.collectives = collective_rows(run.result);
    for (CollectiveRow& row : out.collectives) {
      if (const auto it = labels.find(row.algorithm); it != labels.end()) row.algorithm = it->second;
    }
  }
  out.sim_time = run.result.makespan;
  out.events = run.result.events;
  out.npus = static_cast<std::uint32_t>(run.result.ranks.size()) * run.result.folded_replicas;
  out.warnings = std::move(run.result.warnings);
}

void simulate(const PointInputs& in, SharedInputs& shared, PointResult& out) {
  const auto topology = shared.topologies.get(
      in.network_digest, [&] { return parse_topology(in.network_text, in.network_source); });
  ScenarioSpec spec;
  spec.topology = topology;
  spec.system_config = in.system;
  spec.backend = in.backend;
  spec.load_algorithm = [&shared](const std::string& source, CollectiveType type) {
    return shared.algorithms.get(source + "\n" + collective_name(type),
                                 [&] { return load_et_algorithm(source, type); });
  };
  if (!in.generated_workload.empty()) {
    // Generated algorithms (gen:, synth) are written for the world's size.
    // Opened once, as a sweep opens it (a microbenchmark's sizes rounded as nccl-tests rounds them).
    spec.sources = {open_swept_workload(in.generated_workload)};
    const auto world = *spec.sources[0]->rank_count();
    std::map<std::string, std::string> labels;
    for (const std::string& c : in.collectives) {
      spec.collectives.push_back(runnable_collective(c, in, *topology, world, shared, labels));
    }
    simulate_generated(in, std::move(spec), labels, out);
    return;
  }
  const auto graphs = shared.workloads.get(in.workload_key, [&] { return load_workload(in); });
  const auto npus = static_cast<std::uint32_t>(graphs->size());
  std::map<std::string, std::string> labels;
  for (const std::string& c : in.collectives) spec.collectives.push_back(runnable_collective(c, in, *topology, npus, shared, labels));
  spec.graphs = graphs;
  spec.graphs_identical = in.microbenchmark.has_value();  // every rank runs the same collectives
  RunOutcome run = sim::run(spec);
  SimulationResult& result = run.result;
  out.sim_time = result.makespan;
  out.events = result.events;
  out.npus = static_cast<std::uint32_t>(result.ranks.size());
  out.collectives = collective_rows(result);
  for (CollectiveRow& row : out.collectives) {
    if (const auto it = labels.find(row.algorithm); it != labels.end()) row.algorithm = it->second;
  }
  out.warnings = std::move(result.warnings);
}

PointResult failed(std::size_t index, const std::string& key, int code, std::string message) {
  PointResult r;
  r.index = index;
  r.key = key;
  r.exit_code = code;
  r.message = std::move(message);
  return r;
}

}  // namespace

PointResult run_point(std::size_t index, const PointInputs& inputs, SharedInputs& shared) {
  const auto start = std::chrono::steady_clock::now();
  PointResult out;
  out.index = index;
  out.key = inputs.key;
  if (!inputs.failure.empty()) {
    out.exit_code = inputs.failure_code;
    out.message = inputs.failure;
    return out;
  }
  try {
    simulate(inputs, shared, out);
  } catch (const SimError& e) {
    out = failed(index, inputs.key, e.exit_code(), e.what());
  } catch (const std::exception& e) {
    out = failed(index, inputs.key, 1, std::string("internal error: ") + e.what());
  }
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace sim::workflows
