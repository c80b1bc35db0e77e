// A Kineto device trace (torch.profiler's Chrome-trace JSON): what ran when,
// on the host (operators, CUDA runtime calls) and on the GPU (kernels,
// copies, sets), with the ids that tie them together: an operator's
// "Record function id" is the host trace's rf_id, its "External id" is carried
// by the runtime calls it made, and a runtime call's "correlation" is carried
// by the GPU activity it launched.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sim::pytorch {

// An operator or annotation (cat cpu_op / user_annotation) on a host thread.
struct KinetoOp {
  double ts = 0, dur = 0;  // µs
  std::int64_t tid = 0;
  std::int64_t external_id = -1;
  std::uint64_t rf_id = 0;
  bool has_rf_id = false;
  std::string name;
};

// A CUDA runtime or driver call (cat cuda_runtime / cuda_driver).
struct KinetoRuntime {
  double ts = 0, dur = 0;
  std::int64_t tid = 0;
  std::int64_t external_id = -1;
  std::int64_t correlation = -1;
  std::string name;
  bool is_sync() const;  // waits for the GPU: cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, cudaMemcpy
};

// Work on the GPU (cat kernel / gpu_memcpy / gpu_memset).
struct KinetoGpuOp {
  double ts = 0, dur = 0;
  std::int64_t device = 0;
  std::int64_t stream = 0;
  std::int64_t correlation = -1;
  std::int64_t external_id = -1;
  std::string name;
  std::string category;  // kernel, gpu_memcpy, gpu_memset
};

struct KinetoTrace {
  std::string path;
  std::int64_t pid = -1;   // the host process (from its operators)
  int rank = -1;           // distributedInfo.rank, -1 when absent
  std::int64_t world_size = -1;
  std::string backend;     // distributedInfo.backend
  std::string trace_id;
  nlohmann::json pg_config;  // distributedInfo.pg_config (null when absent)
  std::vector<KinetoOp> ops;
  std::vector<KinetoRuntime> runtime;
  std::vector<KinetoGpuOp> gpu;
  // ProfilerStep#N spans on the host (ts, dur), in file order.
  std::vector<std::pair<double, double>> profiler_steps;
};

// Reads the trace. Errors (InputError) name the file, rank and event index
// and field: no traceEvents, an X event of a category used without ts/dur,
// a GPU activity without stream, distributedInfo of the wrong form.
KinetoTrace read_kineto_trace(const std::string& path, int rank);

}  // namespace sim::pytorch
