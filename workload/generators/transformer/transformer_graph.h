// One rank's Chakra ET of a Megatron-style training iteration.
//
// The rank's GPU stream is one chain of nodes in the order the pipeline
// schedule runs them (workload/generators/spec/pipeline_schedule.h): per
// micro-batch and model chunk, the embedding (first stage), every layer's
// attention (norm, QKV, core attention, projection) and MLP (norm, FC1,
// activation, FC2; or router, all-to-all, experts, all-to-all), the output
// layer and loss (last stage), then the backward passes in reverse, with
// separate data-gradient and weight-gradient GEMMs. Blocking communication
// sits in the chain (tensor-parallel all-reduce, or reduce-scatter/all-gather
// with sp; expert all-to-all); communication that overlaps is off the chain:
// pipeline receives are posted at the start and waited for by the pass that
// needs them, sends leave when their activation is ready, the backward
// tensor-parallel all-reduce overlaps the weight-gradient GEMM, data-parallel
// gradient buckets start as the last micro-batch's backward produces them,
// ZeRO-3 parameter all-gathers run one layer ahead.
//
// is_cpu_op is left out (absent means false, as Chakra reads it).
// Nodes are named like a profile: "layer12.attn.qkv.fwd mb3",
// "layer12.mlp.fc2.bwd_weight mb3", "dp.grad_reduce_scatter bucket2".
// COMP nodes carry num_ops (model FLOPs; 0 for memory-bound ops), tensor_size
// (bytes moved) and the kernel attributes compute/ models read (kernel,
// gemm_m/n/k/batch, attn_*, membound_op, elements, dtype); recomputed nodes
// carry recompute = true. Every communicator is defined by a METADATA node
// (PyTorch's process-group form) with a name that says its dimension.
#pragma once

#include <cstdint>
#include <functional>

#include "workload/et/et_io.h"
#include "workload/generators/spec/training_spec.h"

namespace sim::gen {

// Builds rank `rank`'s trace (no I/O); `path` only names it in messages.
EtTrace transformer_rank_trace(const TrainingSpec& spec, std::uint32_t rank, const std::string& path = "");
// The same into `into`, reusing its storage (for a thread generating many ranks).
void transformer_rank_trace(const TrainingSpec& spec, std::uint32_t rank, EtTrace& into, const std::string& path);
// The same nodes handed to `sink` one at a time, each once it is complete (it
// is then reused for the next): no trace is held, for building a RankGraph in
// memory. The GlobalMetadata is not written.
void transformer_rank_stream(const TrainingSpec& spec, std::uint32_t rank,
                             const std::function<void(const et::Node&)>& sink);

}  // namespace sim::gen
