// The system config (--system YAML): compute, memory and collective models.
//
//   compute:
//     peak_tflops: 312            # with memory_bandwidth: roofline for COMP nodes
//     memory_bandwidth: 2039GB/s  #   that carry num_ops and tensor_size; per dtype
//     kernels: kernels/h100       #   ({bf16: 989, fp8: 1979}), measured kernels:
//                                 #   compute/compute_config.h, docs/compute.md
//   memory:                       # MEM_LOAD / MEM_STORE: latency + bytes / bandwidth
//     latency: 100ns
//     bandwidth: 100GB/s
//   collective:
//     chunks: 1                   # pipelined chunks per collective
//     reduction_bandwidth: 0      # reduce steps cost latency + bytes / bandwidth
//     reduction_latency: 0ns      #   (0 = free, so closed forms hold exactly)
//     algorithms:                 # per collective type: a native algorithm, optionally
//       all_reduce: ring          #   with parameters (direct:window=4,chunks=2), or a
//       all_to_all: direct        #   Chakra ET prefix (system/registry/algorithm_registry.h),
//       all_gather: [ring, direct] #  or a list: hierarchical, one per topology dimension
//     per_node:                   # a choice for one workload node id (every rank),
//       "12": algos/tuned_ar      #   over `algorithms` (ASTRA-sim's per-node-custom-implementation)
//     optimization: localBWAware  # hierarchical all-reduce: localBWAware (default) | baseline
//     active_chunks_per_dimension: 0  # hierarchical: chunks per phase at once (0 = unlimited)
//     dimension_queue: false      # hierarchical: that window per dimension (ASTRA-sim's), not per phase
//     endpoint_delay: 10ns        # ASTRA-sim semantics, all off by default:
//     dataset_splits: 4           #   per-message sender delay, serial chunks,
//     active_chunks: 1            #   chunks in flight per rank,
//     local_reduction: 1600GB/s   #   3 x floor(m / bw) ns per reducing step,
//     astrasim_quirks: true  # halvingDoubling: log2(n)-1 reductions per chunk
//     scheduling_policy: FIFO     #   (LIFO is rejected: docs/system.md)
//   network:
//     backend: flow               # analytical (default) | flow
//     nic_bandwidth: 400Gbps      # the backend's own options (sim --help lists them)
//
// Unknown keys, duplicate keys, wrong types, lenient numbers and non-positive
// rates are errors naming the file, line and key (network/config_reader.h).
// ASTRA-sim's system JSON is read by system/astrasim/astrasim_system.h; the
// choice between the two forms is made above both (system/scenario/system_files.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "compute/compute_model.h"
#include "core/time.h"
#include "network/backend_registry.h"
#include "workload/rank_graph.h"

namespace sim {

struct SystemConfig {
  // Roofline (both set, or neither).
  double peak_flops = 0;  // FLOP/s (bf16's, or the scalar / default peak)
  BytesPerSecond compute_memory_bandwidth = 0;
  // What times COMP nodes when the `compute:` section gives a model (the
  // roofline, or measured kernels: compute/compute_config.h); null: the
  // roofline of the two fields above if set (ASTRA-sim's JSON sets them).
  std::shared_ptr<const ComputeModel> compute_model;
  // compute.efficiency: model-timed COMP nodes take their time / this.
  double compute_efficiency = 1;

  // MEM_LOAD / MEM_STORE model; without it those nodes replay their duration.
  bool has_memory_model = false;
  Time memory_latency = 0;
  BytesPerSecond memory_bandwidth = 0;

  std::uint32_t collective_chunks = 1;
  BytesPerSecond reduction_bandwidth = 0;  // 0: reduction is free
  Time reduction_latency = 0;

  // ASTRA-sim's system semantics (docs/system.md); all off by default.
  Time endpoint_delay = 0;           // per message, at the sender before injection; and once per split
  std::uint32_t dataset_splits = 0;  // 0: off; k: k chunks (ChunkedProgram), size-enlargement rule
  std::uint32_t active_chunks = 0;   // splits in flight per rank; 0: all
  BytesPerSecond local_reduction = 0;  // > 0: a reduce of m bytes costs 3 x floor(m / bw) whole ns
  bool astrasim_quirks = false;  // halvingDoubling's first reduction per chunk is free
  std::string scheduling_policy = "FIFO";
  // Set by the ASTRA-sim JSON reader.
  bool astrasim_lifo = false;  // its file asked for LIFO (warned about when collectives of a rank overlap)
  std::map<CollectiveType, std::string> unavailable;  // type -> why no algorithm runs it
  std::map<CollectiveType, std::uint32_t> algorithm_dims;  // per-dimension list lengths
  std::vector<std::string> warnings;  // about keys read but not modelled

  // Collective type -> a native algorithm choice ("ring", "direct:window=4")
  // or an ET prefix/folder (relative paths resolved against the config
  // file's folder); unlisted types take their default algorithm.
  std::map<CollectiveType, std::string> algorithms;
  // Workload node id -> a choice as above, for that node on every rank
  // (ASTRA-sim's per-node-custom-implementation); it overrides `algorithms`.
  std::map<std::uint64_t, std::string> per_node_algorithms;
  // Where each choice above was read ("file:line: 'key'"); the registry
  // checks the choices (system/registry/algorithm_choices.h) and names it.
  std::map<CollectiveType, std::string> algorithm_where;
  std::map<std::uint64_t, std::string> per_node_where;
  // Hierarchical collectives (system/collectives/hierarchical.h): the
  // all-reduce scheme ("localBWAware" or "baseline") and how many chunks one
  // phase of one dimension runs at once (0: unlimited).
  std::string collective_optimization = "localBWAware";
  std::uint32_t active_chunks_per_dimension = 0;
  // The window above per dimension (all its phases, both directions, in one
  // fixed order, ASTRA-sim's) rather than per phase.
  bool dimension_queue = false;

  // The `network:` section: backend and its options (network/backend_registry.h).
  NetworkConfig network;

  // Exact step aggregation (system/runner/aggregation/): a symmetric
  // collective advanced as one event for all its ranks, with results
  // identical to simulating every message. `--no-aggregation` turns it off.
  bool aggregation = true;

  bool roofline() const { return peak_flops > 0 && compute_memory_bandwidth > 0; }
  // Cost of reducing `bytes` received from a peer into the local buffer.
  Time reduction_time(std::uint64_t bytes) const {
    if (local_reduction > 0) {  // ASTRA-sim: two reads and a write, each truncated to whole ns
      const uint128 ns = static_cast<uint128>(bytes) * 1'000'000'000u / local_reduction;
      if (ns > static_cast<uint128>(kMaxTime / kNanosecond / 3)) {
        throw TimeLimitError("a reduction of " + std::to_string(bytes) + " B takes longer than the largest "
                             "representable time, " + describe_time_limit());
      }
      return add_time(reduction_latency, static_cast<Time>(3 * ns) * kNanosecond, "a reduction's end");
    }
    if (reduction_bandwidth == 0) return reduction_latency;
    return add_time(reduction_latency, transfer_time(bytes, reduction_bandwidth), "a reduction's end");
  }
};

// Reads a YAML system config. Algorithm choices are stored as written (ET
// paths resolved beside the file) and checked by the registry
// (check_algorithm_choices); a file of either form (this YAML or ASTRA-sim's
// JSON) is read by load_system_config (system/scenario/system_files.h).
SystemConfig parse_system_config(const std::string& yaml_text, const std::string& source);

// Reads a map {<node id>: <choice>} (collective.per_node, or ASTRA-sim's
// per-node-custom-implementation file) into `out` (and where each was read
// into `where_out`); relative ET paths resolve against `base` (empty: the
// working directory). Errors name file, line, key.
class ConfigReader;
void read_per_node_choices(const ConfigReader& r, const YAML::Node& map, const std::string& where,
                           const std::string& base, std::map<std::uint64_t, std::string>& out,
                           std::map<std::uint64_t, std::string>* where_out = nullptr);

}  // namespace sim
