// Reports for people (stdout summary) and machines (JSON, CSV).
//
// Bandwidths follow nccl-tests: algbw = S / t in GB/s (1e9 B/s), where S is
// the buffer for ALL_REDUCE / BROADCAST / REDUCE, and the total gathered or
// scattered buffer (comm_size * group size for ALL_GATHER, whose comm_size is
// the per-rank input; comm_size for REDUCE_SCATTER and ALL_TO_ALL);
// busbw = algbw * factor: 2(n-1)/n for ALL_REDUCE, (n-1)/n for ALL_GATHER,
// REDUCE_SCATTER and ALL_TO_ALL, 1 otherwise.
#pragma once

#include <ostream>
#include <string>

#include "system/simulation.h"

namespace sim {

struct RunInfo {
  std::string workload;   // what ran, for the report header
  std::string topology;   // Topology::description()
  std::string backend;
  double wall_seconds = 0;      // the whole run, loading included
  double simulate_seconds = 0;  // the event loop alone
};

double algbw_gbps(const CollectiveRecord& c);
double busbw_gbps(const CollectiveRecord& c);

// A link's average load over the run: bytes / (bandwidth x simulated time), in [0, 1].
double link_utilization(const LinkRecord& link, Time makespan);
// "npu3" or "sw0" (switch ids count from the first switch).
std::string node_label(NodeId node, std::uint32_t npu_count);

void print_summary(std::ostream& out, const SimulationResult& result, const RunInfo& info);
// Both write atomically (temporary file, then rename); throw InputError on I/O failure.
void write_json_report(const std::string& path, const SimulationResult& result, const RunInfo& info);
void write_csv_report(const std::string& path, const SimulationResult& result);
// Every link: endpoints, bandwidth, bytes, busy time, utilisation, peak flows.
void write_link_stats(const std::string& path, const SimulationResult& result);
// Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev): one process per
// rank, one thread per resource lane, one complete event per node.
void write_timeline(const std::string& path, const SimulationResult& result);

// Writes `content` to `path` through a temporary file and a rename, so a
// reader never sees half a file. Throws InputError naming the path.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace sim
