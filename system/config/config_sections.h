// The sections of the system config, each a struct with the reader that
// knows its keys (system_config.h lists them all; docs/system.md explains
// them). SystemConfig is the four together.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compute/compute_model.h"
#include "core/config_reader.h"
#include "core/time.h"
#include "core/units.h"
#include "network/backend_registry.h"
#include "workload/rank_graph.h"

namespace sim {

// `compute:` -- what times COMP nodes (its keys: compute/compute_config.h).
struct ComputeSection {
  // Roofline (both set, or neither).
  double peak_flops = 0;  // FLOP/s (bf16's, or the scalar / default peak)
  // compute.peak_tflops per dtype, in FLOP/s (empty: one scalar peak). MFU
  // divides by the peak of the iteration's GEMM dtype (fp8 runs by fp8's).
  std::map<std::string, double, std::less<>> peak_flops_by_dtype;
  BytesPerSecond compute_memory_bandwidth = 0;
  // The GPU's L2 (compute.kernel_l2_cache, or the kernel model's default)
  // when kernels are given; 0 otherwise. Collectives' reductions read from
  // HBM only buffers larger than this (system/collectives/algorithm_context.h).
  std::uint64_t compute_l2_bytes = 0;
  // What times COMP nodes when the `compute:` section gives a model (the
  // roofline, or measured kernels: compute/compute_config.h); null: the
  // roofline of the two fields above if set (ASTRA-sim's JSON sets them).
  std::shared_ptr<const ComputeModel> compute_model;
  // compute.efficiency: model-timed COMP nodes take their time / this.
  double compute_efficiency = 1;
  // The kernel tables compute.kernels read (resolved paths, builtin:<gpu>/...
  // names for shipped ones): files the config depends on besides its own
  // text, so a sweep keys its points on their content too.
  std::vector<std::string> compute_kernel_files;
  std::vector<std::string> compute_warnings;  // about the kernel tables (compute/compute_config.h)

  bool roofline() const { return peak_flops > 0 && compute_memory_bandwidth > 0; }
};
// `base`: the config file's folder (relative kernel tables resolve there).
ComputeSection read_compute_section_of_system(const ConfigReader& r, const YAML::Node& node, const std::string& base);

// `memory:` -- MEM_LOAD / MEM_STORE: latency + bytes / bandwidth; without it
// those nodes replay their duration. Keys: latency, bandwidth.
struct MemorySection {
  bool has_memory_model = false;
  Time memory_latency = 0;
  BytesPerSecond memory_bandwidth = 0;
};
MemorySection read_memory_section(const ConfigReader& r, const YAML::Node& node);

// `collective:` -- how collectives run: chunks, reduction cost, algorithm
// choices, ASTRA-sim's semantics, step aggregation.
struct CollectiveSection {
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
  // How COMM_SEND / COMM_RECV pairs run (`algorithms.send_recv`): empty or
  // "network", one message on the network; "nccl:..." NCCL's send and receive (docs/nccl.md,
  // "Send and receive"): the registry checks it, naming where it was read.
  std::string point_to_point;
  std::string point_to_point_where;
  // Hierarchical collectives (system/collectives/hierarchical.h): the
  // all-reduce scheme ("localBWAware" or "baseline") and how many chunks one
  // phase of one dimension runs at once (0: unlimited).
  std::string collective_optimization = "localBWAware";
  std::uint32_t active_chunks_per_dimension = 0;
  // The window above per dimension (all its phases, both directions, in one
  // fixed order, ASTRA-sim's) rather than per phase.
  bool dimension_queue = false;

  // Exact step aggregation (system/runner/aggregation/): a symmetric
  // collective advanced as one event for all its ranks, with results
  // identical to simulating every message. `--no-aggregation` turns it off.
  bool aggregation = true;

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
// `base`: the config file's folder (ET choices beside it resolve there).
CollectiveSection read_collective_section(const ConfigReader& r, const YAML::Node& node, const std::string& base);

// Reads a map {<node id>: <choice>} (collective.per_node, or ASTRA-sim's
// per-node-custom-implementation file) into `out` (and where each was read
// into `where_out`); relative ET paths resolve against `base` (empty: the
// working directory). Errors name file, line, key.
void read_per_node_choices(const ConfigReader& r, const YAML::Node& map, const std::string& where,
                           const std::string& base, std::map<std::uint64_t, std::string>& out,
                           std::map<std::uint64_t, std::string>* where_out = nullptr);

// `network:` -- the backend and its own options (the backend declares its
// keys: network/backend_registry.h). `source` names the file in option origins.
NetworkConfig read_network_section(const ConfigReader& r, const YAML::Node& node, const std::string& source);

}  // namespace sim
