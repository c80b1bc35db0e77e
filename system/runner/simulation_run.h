// Simulation's per-rank run state, shared by simulation.cpp and
// simulation_diagnosis.cpp (not part of the interface).
#pragma once

#include <functional>
#include <cstdint>
#include <queue>
#include <unordered_map>
#include <vector>

#include "system/runner/rank_stats.h"

namespace sim {

// Min-heap of (node id, node index): ready nodes in ascending id.
using ReadyHeap = std::priority_queue<std::pair<std::uint64_t, std::uint32_t>,
                                      std::vector<std::pair<std::uint64_t, std::uint32_t>>, std::greater<>>;

// Fields every node's start and completion touch come first, so they share
// two or three cache lines (1,024 ranks' states do not all stay in L1).
struct alignas(64) RankRun {
  // Unfinished parents per node: 2 B each (4.1 M nodes in benchmark (p)); a
  // node with 0xffff or more parents holds 0xffff here and its count in
  // big_pending until it reaches 0.
  std::vector<std::uint16_t> pending;
  ReadyHeap ready;
  bool busy[kLimitedResources] = {false, false, false};
  bool draining = false;
  std::uint32_t waiting_nodes = 0;  // in all of waiting[]
  // Activity counters for the time breakdown.
  std::uint32_t active_compute = 0, active_comm = 0, active_mem = 0;
  std::uint32_t active_cpu = 0;  // of active_compute, the COMP nodes with is_cpu_op
  Time last = 0;
  std::uint64_t done = 0;
  RankStats stats;
  // Seldom touched.
  ReadyHeap waiting[kLimitedResources];
  std::unordered_map<std::uint32_t, std::uint32_t> big_pending;
  std::vector<Time> started;           // issue time per node (only for the timeline)
  std::vector<std::uint64_t> coll_seq;  // per communicator (global group id)
  std::unordered_map<std::uint32_t, std::size_t> coll_record;  // COMM_COLL node index -> report row
  std::unordered_map<std::uint32_t, std::uint64_t> coll_running;  // COMM_COLL node index -> its sequence number
};

}  // namespace sim
