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

#include "core/output_file.h"
#include "report/training_report.h"
#include "system/runner/simulation.h"

namespace sim {

struct RunInfo {
  std::string workload;   // what ran, for the report header
  std::string topology;   // Topology::description()
  std::string backend;
  double wall_seconds = 0;      // the whole run, loading included
  double simulate_seconds = 0;  // the event loop alone
  // A training iteration's summary (report/training_report.h), when the run has one.
  const TrainingSummary* training = nullptr;
};

double algbw_gbps(const CollectiveRecord& c);
double busbw_gbps(const CollectiveRecord& c);

// A link's average load over the run: bytes / (bandwidth x simulated time), in [0, 1].
double link_utilization(const LinkRecord& link, Time makespan);
// "npu3" or "sw0" (switch ids count from the first switch).
std::string node_label(NodeId node, std::uint32_t npu_count);

void print_summary(std::ostream& out, const SimulationResult& result, const RunInfo& info);

// Each output is streamed record by record from the result (never built as
// one document in memory). The stream forms write to an open output; the
// path forms open `path` by the rules of core/output_file.h (atomic for a
// regular file, "-" for stdout) and throw InputError on I/O failure.
void write_json_report(std::ostream& out, const SimulationResult& result, const RunInfo& info);
void write_json_report(const std::string& path, const SimulationResult& result, const RunInfo& info);
void write_csv_report(std::ostream& out, const SimulationResult& result);
void write_csv_report(const std::string& path, const SimulationResult& result);
// Every link: endpoints, bandwidth, bytes, busy time, utilisation, peak flows.
void write_link_stats(std::ostream& out, const SimulationResult& result);
void write_link_stats(const std::string& path, const SimulationResult& result);
// The timeline is written while the run goes: report/timeline_writer.h.

// Writes `content` to `path` by the rules of core/output_file.h.
inline void write_file_atomically(const std::string& path, const std::string& content) {
  write_output_file(path, content);
}

}  // namespace sim
