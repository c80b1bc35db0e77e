#include "workflows/point_runner.h"

#include <chrono>

#include "core/error.h"
#include "system/physical_bounds.h"
#include "workload/workload_loader.h"

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

void simulate(const PointInputs& in, SharedInputs& shared, PointResult& out) {
  SystemConfig config = *in.system;
  for (const std::string& c : in.collectives) apply_collective_option(config, c);
  if (!in.backend.empty()) {
    if (!find_backend(in.backend)) throw InputError("unknown network backend '" + in.backend + "'");
    config.network.backend = in.backend;
  }
  const auto topology = shared.topologies.get(
      in.network_digest, [&] { return parse_topology(in.network_text, in.network_source); });
  const auto graphs = shared.workloads.get(in.workload_key, [&] { return load_workload(in); });
  SimulationOptions options;
  options.load_algorithm = [&shared](const std::string& source, CollectiveType type) {
    return shared.algorithms.get(source + "\n" + collective_name(type),
                                 [&] { return load_et_algorithm(source, type); });
  };
  Simulation simulation(graphs, *topology, config, std::move(options));
  SimulationResult result = simulation.run();
  for (const std::string& w : physical_bound_warnings(result, *topology)) result.warnings.push_back(w);
  out.sim_time = result.makespan;
  out.events = result.events;
  out.npus = static_cast<std::uint32_t>(result.ranks.size());
  out.collectives = collective_rows(result);
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
