// Closed forms of one training iteration: model FLOPs as Megatron-LM counts
// them, and the parameters, gradients and optimizer state each rank holds.
//
// Model FLOPs (Narayanan et al., SC'21, appendix): a GEMM of m x n x k is
// 2 m n k FLOPs; the backward pass is twice the forward; attention scores and
// values are counted over the full s x s matrix (as Megatron does, causal or
// not); recomputation is not counted. Per token, forward, per layer:
//   QKV        2 h (h_q + 2 h_kv)     (h_q = heads x d, h_kv = kv_heads x d)
//   attention  4 s h_q
//   projection 2 h_q h
//   MLP        2 h f x (2 for GeLU, 3 for SwiGLU); an MoE layer instead (top_k +
//              shared) experts of 2 h f_e x that, plus the router 2 h E
// and the logits 2 h V per token. An iteration is 3 B s (sum of layers + 2 h V).
// Multi-head latent attention (MLA) instead of QKV, attention and projection:
//   2 h r_q + 2 r_q H (d_qk + d_r) + 2 h (r_kv + d_r) + 2 r_kv H (d_qk + d_v)
//   + 2 s H (d_qk + d_r + d_v) + 2 H d_v h.
// For GPT (h_q = h_kv = h, f = 4h, GeLU) this is 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
#pragma once

#include <cstdint>

#include "workload/generators/spec/training_spec.h"

namespace sim::gen {

// Model FLOPs of one iteration (all ranks): exact in 128 bits, as a double
// (computed in floating point past 2^128); model_flops_exact throws
// InputError past 2^63 - 1 (~9.2e18 FLOPs per iteration).
double model_flops_per_iteration(const TrainingSpec& spec);
std::uint64_t model_flops_exact(const TrainingSpec& spec);
// Whether model_flops_exact(spec) is in range (below 2^63).
bool model_flops_fit_64_bits(const TrainingSpec& spec);

// Parameter and byte counts below throw InputError naming the model's sizes
// when they would pass 2^64 - 1.
// Parameters `rank` holds (before ZeRO sharding): its stage's layers (split
// by tp, experts by ep), the word embedding on the first stage, the output
// layer (and final norm) on the last; a tied output on the last stage holds
// its own copy when pp > 1. Norm weights and row-parallel biases are
// replicated over tp.
struct RankParams {
  std::uint64_t dense = 0;   // sharded over data x context parallelism
  std::uint64_t expert = 0;  // sharded over expert-data parallelism
  std::uint64_t total() const { return dense + expert; }
};
RankParams rank_params(const TrainingSpec& spec, std::uint32_t rank);
// Parameters of layer `layer` on one rank (no embedding): dense and MoE
// layers differ.
RankParams layer_params(const TrainingSpec& spec, std::uint64_t layer);

// Bytes a rank holds, mixed precision as in the ZeRO paper (Rajbhandari et
// al., SC'20, section 3.1): bf16 parameters (2 B) and gradients (2 B), and
// 12 B of fp32 optimizer state per parameter (master copy, Adam's m and v).
// ZeRO 1 shards the optimizer state over the data-parallel group, 2 also the
// gradients, 3 also the parameters (rounded up when the group does not divide).
struct RankMemory {
  std::uint64_t param_bytes = 0, grad_bytes = 0, optimizer_bytes = 0;
};
RankMemory rank_memory(const TrainingSpec& spec, std::uint32_t rank);

// Ranks that share parameters: data x context (dense) and expert-data parallel.
std::uint64_t dense_dp_size(const TrainingSpec& spec);
std::uint64_t expert_dp_size(const TrainingSpec& spec);

}  // namespace sim::gen
