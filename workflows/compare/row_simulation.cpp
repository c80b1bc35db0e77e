#include "workflows/compare/row_simulation.h"

#include <memory>
#include <vector>

#include "core/error.h"
#include "network/topology.h"
#include "system/scenario/scenario.h"
#include "system/scenario/system_files.h"
#include "workflows/run/run.h"
#include "report/report.h"
#include "workload/generators/workload_generator.h"

namespace sim::workflows {

std::uint64_t simulate_collective(const std::string& network_text, const std::string& network_source,
                                  const std::string& system_text, const std::string& system_source,
                                  const std::string& collective, std::uint64_t bytes, double* busbw_gbps) {
  ScenarioSpec s;
  s.topology = std::make_shared<const Topology>(parse_topology(network_text, network_source));
  s.system_config = std::make_shared<const SystemConfig>(parse_system_text(system_text, system_source));
  CollectiveType type;
  if (!parse_collective_name(collective, type)) throw InputError("unknown collective '" + collective + "'");
  CollectivesSpec spec;
  spec.npus = s.topology->npu_count();
  spec.collectives = {type};
  spec.bytes = bytes;
  auto graphs = std::make_shared<std::vector<RankGraph>>();
  const std::vector<EtTrace> traces = collectives_workload(spec);
  for (std::size_t r = 0; r < traces.size(); ++r) graphs->emplace_back(traces[r], static_cast<int>(r), s.graph_options);
  s.graphs = std::move(graphs);
  s.graphs_identical = true;  // one collective on every rank
  const SimulationResult result = run(s).result;
  // One collective on every rank: its slowest rank's record.
  const CollectiveRecord* slowest = nullptr;
  for (const CollectiveRecord& c : result.collectives) {
    if (slowest != nullptr && c.node_id != slowest->node_id) {
      throw InputError("calibration point: expected one collective, got several");
    }
    if (slowest == nullptr || c.duration > slowest->duration) slowest = &c;
  }
  if (slowest == nullptr) throw InputError("calibration point: expected one collective, got none");
  if (busbw_gbps) *busbw_gbps = sim::busbw_gbps(*slowest);
  return static_cast<std::uint64_t>(slowest->duration);
}

std::uint64_t simulator_bytes(const Curve& curve, const CurvePoint& p, std::uint32_t npus) {
  if (curve.format == "reference-curve" && p.collective == "ALL_GATHER") {
    if (p.bytes % npus != 0) {
      throw InputError(p.where + ": all-gather size " + std::to_string(p.bytes) + " B (the gathered total) is not a " +
                       "multiple of the network's " + std::to_string(npus) + " NPUs");
    }
    return p.bytes / npus;
  }
  CollectiveType type;
  if (parse_collective_name(p.collective, type) && nccl_tests_bytes(type, p.bytes, npus) != p.bytes) {
    // A measured row is a call that ran: NCCL has none of this size (nccl-tests prints the
    // size it rounded down to), so the row cannot be simulated as written.
    throw InputError(p.where + ": " + p.collective + " size " + std::to_string(p.bytes) +
                     " B is not a multiple of the " + std::to_string(npus) +
                     " ranks it runs on (NCCL splits its buffer into " + std::to_string(npus) +
                     " equal parts; nccl-tests prints the size it ran, a multiple): " +
                     nearest_split_sizes(p.bytes, npus));
  }
  return p.bytes;
}

}  // namespace sim::workflows
