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
//       send_recv: nccl:proxy=2us  #  COMM_SEND / COMM_RECV as NCCL's send and receive
//                                  #  (docs/nccl.md; absent or `network`: one message each)
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
// rates are errors naming the file, line and key (core/config_reader.h).
// ASTRA-sim's system JSON is read by system/astrasim/astrasim_system.h; the
// choice between the two forms is made above both (system/scenario/system_files.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "system/config/config_sections.h"
#include "workload/rank_graph.h"

namespace sim {

// The four sections (config_sections.h), each with its own reader and keys.
struct SystemConfig : ComputeSection, MemorySection, CollectiveSection {
  // The `network:` section: backend and its options (network/backend_registry.h).
  NetworkConfig network;
  std::vector<std::string> warnings;  // about keys read but not modelled (ASTRA-sim's JSON)
};

// Reads a YAML system config. Algorithm choices are stored as written (ET
// paths resolved beside the file) and checked by the registry
// (check_algorithm_choices); a file of either form (this YAML or ASTRA-sim's
// JSON) is read by load_system_config (system/scenario/system_files.h).
SystemConfig parse_system_config(const std::string& yaml_text, const std::string& source);



}  // namespace sim
