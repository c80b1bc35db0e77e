// The system config (--system YAML): compute, memory and collective models.
//
//   compute:
//     peak_tflops: 312            # with memory_bandwidth: roofline for COMP nodes
//     memory_bandwidth: 2039GB/s  #   that carry num_ops and tensor_size
//   memory:                       # MEM_LOAD / MEM_STORE: latency + bytes / bandwidth
//     latency: 100ns
//     bandwidth: 100GB/s
//   collective:
//     chunks: 1                   # pipelined chunks per collective
//     reduction_bandwidth: 0      # reduce steps cost latency + bytes / bandwidth
//     reduction_latency: 0ns      #   (0 = free, so closed forms hold exactly)
//     algorithms:                 # per collective type: a native algorithm, optionally
//       all_reduce: ring          #   with parameters (direct:window=4,chunks=2), or a
//       all_to_all: direct        #   Chakra ET prefix (system/algorithm_registry.h),
//       all_gather: [ring, direct] #  or a list: hierarchical, one per topology dimension
//     optimization: localBWAware  # hierarchical all-reduce: localBWAware (default) | baseline
//     active_chunks_per_dimension: 0  # hierarchical: chunks per phase at once (0 = unlimited)
//   network:
//     backend: flow               # analytical (default) | flow
//     nic_bandwidth: 400Gbps      # the backend's own options (sim --help lists them)
//
// Unknown keys, wrong types and non-positive rates are errors naming the key.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/time.h"
#include "network/backend_registry.h"
#include "workload/rank_graph.h"

namespace sim {

struct SystemConfig {
  // Roofline (both set, or neither).
  double peak_flops = 0;  // FLOP/s
  BytesPerSecond compute_memory_bandwidth = 0;

  // MEM_LOAD / MEM_STORE model; without it those nodes replay their duration.
  bool has_memory_model = false;
  Time memory_latency = 0;
  BytesPerSecond memory_bandwidth = 0;

  std::uint32_t collective_chunks = 1;
  BytesPerSecond reduction_bandwidth = 0;  // 0: reduction is free
  Time reduction_latency = 0;

  // Collective type -> a native algorithm choice ("ring", "direct:window=4")
  // or an ET prefix/folder (relative paths resolved against the config
  // file's folder); unlisted types take their default algorithm.
  std::map<CollectiveType, std::string> algorithms;
  // Hierarchical collectives (system/collectives/hierarchical.h): the
  // all-reduce scheme ("localBWAware" or "baseline") and how many chunks one
  // phase of one dimension runs at once (0: unlimited).
  std::string collective_optimization = "localBWAware";
  std::uint32_t active_chunks_per_dimension = 0;

  // The `network:` section: backend and its options (network/backend_registry.h).
  NetworkConfig network;

  bool roofline() const { return peak_flops > 0 && compute_memory_bandwidth > 0; }
  // Cost of reducing `bytes` received from a peer into the local buffer.
  Time reduction_time(std::uint64_t bytes) const {
    if (reduction_bandwidth == 0) return reduction_latency;
    return reduction_latency + transfer_time(bytes, reduction_bandwidth);
  }
};

SystemConfig load_system_config(const std::string& path);
SystemConfig parse_system_config(const std::string& yaml_text, const std::string& source);

// Parses one --collective value: "prefix" (applies to the type recorded in the
// ET metadata, else all-reduce) or "type=prefix" / "type=<native algorithm>"
// (e.g. allreduce=halvingDoubling, alltoall=direct:window=4).
void apply_collective_option(SystemConfig& config, const std::string& option);

}  // namespace sim
