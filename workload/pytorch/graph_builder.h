// One rank's Chakra ET from its linked host and device traces.
//
// Nodes, in issue order (rf_id):
//  - METADATA "process_group:init": the rank's process groups;
//  - a CPU COMP node (is_cpu_op) per host operator that is not an annotation
//    (record_function scope), a trace root or part of communication (inside
//    a c10d operator, or on a backend's worker thread), lasting
//    its exclusive time: its Kineto duration less its children's and less the
//    GPU synchronisations it waited in (those waits are edges here);
//  - a GPU COMP node per kernel / memcpy / memset, lasting its measured time;
//    a matrix product's (aten::mm, addmm, bmm, baddbmm) longest kernel also
//    carries its shape: kernel "gemm", gemm_m/n/k/batch, dtype, num_ops
//    (2mnk per product) and tensor_size (the three matrices' bytes);
//  - a COMM_COLL / COMM_SEND / COMM_RECV node per communication op.
// Edges (all data_deps, the edges sim follows):
//  - control order: every CPU node after the previous one (sim runs one CPU
//    per rank, so the host threads' operators are replayed in issue order);
//  - launch: a GPU node after the CPU node (or collective) that launched it;
//  - stream order: a GPU node after the previous one on its stream;
//  - a collective after the GPU work launched before it (its input), and
//    after the previous collective of its process group (a group runs its
//    collectives in issue order, and every member must see that order);
//  - a blocking collective (async_op false, or a barrier) before the next CPU
//    node (gloo, host-side waits) or the next GPU node on each stream (NCCL:
//    the stream waits); an async one before the first CPU operator that reads
//    a tensor storage it wrote (tensor ids from the host trace);
//  - synchronisation (cudaDeviceSynchronize, cudaStreamSynchronize,
//    cudaEventSynchronize, cudaMemcpy): the next CPU node after the GPU work
//    launched before the call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workload/et/et_io.h"
#include "workload/pytorch/comm_ops.h"
#include "workload/pytorch/host_trace.h"
#include "workload/pytorch/kineto_trace.h"
#include "workload/pytorch/process_group_sources.h"
#include "workload/pytorch/trace_linker.h"

namespace sim::pytorch {

struct BuildStats {
  std::size_t cpu_nodes = 0, gpu_nodes = 0, comm_nodes = 0;
  std::size_t cpu_without_duration = 0;  // CPU nodes with no measured duration (0 µs)
  std::size_t gpu_placed_by_time = 0;    // GPU activities with no launching operator, placed by their time
  std::size_t sync_points = 0;
  std::size_t worker_thread_ops = 0;     // operators on a backend worker thread: part of communication
};

// `groups` and comm.ops (their pg_name filled) as process_group_sources.h leaves them.
EtTrace build_rank_graph(const HostTrace& host, const KinetoTrace* kineto, const TraceLinks& links,
                         const CommExtraction& comm, const RankGroups& groups, int rank, BuildStats& stats);

}  // namespace sim::pytorch
