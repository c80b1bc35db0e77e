// The outcome of one sweep point: its status and one row per collective.
// Serialized as JSON for the result cache, MPI transfers and merges; times
// are integer picoseconds, so a result read back prints exactly as computed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/time.h"
#include "report/training_report.h"
#include "system/runner/simulation.h"

namespace sim::workflows {

// One collective of a point: every rank's instance of one COMM_COLL node
// (same node id, type, size, group size, algorithm), timed by its slowest rank.
struct CollectiveRow {
  std::string collective;  // ALL_REDUCE
  std::uint64_t bytes = 0;
  std::uint32_t group_size = 0;
  std::string algorithm;
  std::uint64_t node_id = 0;
  std::uint32_t ranks = 0;  // ranks that ran it
  Time duration = 0;        // slowest rank
  double algbw_gbps = 0, busbw_gbps = 0;
};

struct PointResult {
  std::size_t index = 0;
  std::string key;
  int exit_code = 0;     // 0 ok, 1 internal error, 2 bad input, 3 cannot complete
  std::string message;   // why it failed
  Time sim_time = 0;     // makespan
  std::uint64_t events = 0;
  std::uint32_t npus = 0;
  std::vector<CollectiveRow> collectives;
  std::vector<std::string> warnings;
  // A generated training iteration: what the training report says (its
  // collectives are not listed: an iteration issues thousands), and how its
  // ranks were folded (the notes `sim` prints).
  std::optional<TrainingSummary> training;
  std::vector<std::string> notes;
  double wall_seconds = 0;  // load + simulate, this run or the one cached
  bool from_cache = false;  // not serialized
  bool ok() const { return exit_code == 0; }
};

// Rows of a finished simulation (CollectiveRecord per rank -> one row per node).
std::vector<CollectiveRow> collective_rows(const SimulationResult& result);

nlohmann::json to_json(const PointResult& r);
// Throws std::exception on a malformed document.
PointResult point_result_from_json(const nlohmann::json& j);

}  // namespace sim::workflows
