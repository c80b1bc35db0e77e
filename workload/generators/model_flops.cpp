#include "workload/generators/model_flops.h"

#include "core/error.h"
#include "core/time.h"

namespace sim::gen {
namespace {

using u128 = uint128;  // core/time.h

u128 layer_forward_per_token(const TrainingSpec& t) {
  const ModelConfig& m = t.model;
  const u128 h = m.hidden, hq = m.heads * m.head_dim(), hkv = m.kv_hidden(), s = t.seq, f = m.ffn_hidden;
  u128 flops = 2 * h * (hq + 2 * hkv) + 4 * s * hq + 2 * hq * h;
  const u128 mlp = 2 * h * f * m.mlp_matrices();
  flops += m.is_moe() ? m.moe.top_k * mlp + 2 * h * m.moe.experts : mlp;
  return flops;
}

u128 model_flops_wide(const TrainingSpec& t) {
  const u128 logits = t.layers_only ? 0 : 2 * u128{t.model.hidden} * t.model.vocab;
  const u128 per_token = t.model.layers * layer_forward_per_token(t) + logits;
  return 3 * u128{t.global_batch} * t.seq * per_token;
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

}  // namespace

std::uint64_t model_flops_exact(const TrainingSpec& t) {
  const u128 f = model_flops_wide(t);
  if (f >> 63) throw InputError("the model FLOPs of one iteration exceed 2^63 (a counter's range)");
  return static_cast<std::uint64_t>(f);
}

bool model_flops_fit_64_bits(const TrainingSpec& t) { return (model_flops_wide(t) >> 63) == 0; }

double model_flops_per_iteration(const TrainingSpec& t) { return static_cast<double>(model_flops_wide(t)); }

std::uint64_t dense_dp_size(const TrainingSpec& t) { return std::uint64_t{t.plan.dp} * t.plan.cp; }
std::uint64_t expert_dp_size(const TrainingSpec& t) {
  return std::uint64_t{t.plan.tp} * t.plan.dp / t.plan.ep * t.plan.cp;
}

RankParams layer_params(const TrainingSpec& t) {
  const ModelConfig& m = t.model;
  const std::uint64_t h = m.hidden, hq = m.heads * m.head_dim(), hkv = m.kv_hidden(), f = m.ffn_hidden, tp = t.plan.tp;
  RankParams p;
  const std::uint64_t norm = m.rmsnorm ? h : 2 * h;
  p.dense = 2 * norm;                          // before attention and before the MLP (replicated)
  p.dense += h * (hq + 2 * hkv) / tp + hq * h / tp;  // QKV (column-parallel), projection (row-parallel)
  if (m.bias) p.dense += (hq + 2 * hkv) / tp + h;  // QKV bias split, projection bias replicated
  if (m.is_moe()) {
    p.dense += h * m.moe.experts;  // router (replicated)
    p.expert = m.moe.experts / t.plan.ep * m.mlp_matrices() * h * f;
    if (m.bias) p.expert += m.moe.experts / t.plan.ep * ((m.swiglu ? 2 : 1) * f + h);
  } else {
    p.dense += m.mlp_matrices() * h * f / tp;
    if (m.bias) p.dense += (m.swiglu ? 2 : 1) * f / tp + h;
  }
  return p;
}

RankParams rank_params(const TrainingSpec& t, std::uint32_t rank) {
  const RankCoords c = coords_of(t.plan, rank);
  const ModelConfig& m = t.model;
  std::uint64_t layers = 0;
  for (std::uint32_t k = 0; k < t.chunks; ++k) layers += t.layers_in(c.pp, k);
  const RankParams per = layer_params(t);
  RankParams p{per.dense * layers, per.expert * layers};
  const std::uint64_t embedding = m.vocab * m.hidden / t.plan.tp;
  if (t.layers_only) return p;
  if (c.pp == 0) p.dense += embedding;
  if (c.pp == t.plan.pp - 1) {
    p.dense += m.rmsnorm ? m.hidden : 2 * m.hidden;  // final norm
    if (!m.tied_embeddings || t.plan.pp > 1) p.dense += embedding;  // output layer (a tied one's copy)
  }
  return p;
}

RankMemory rank_memory(const TrainingSpec& t, std::uint32_t rank) {
  const RankParams p = rank_params(t, rank);
  const std::uint64_t dd = dense_dp_size(t), ed = expert_dp_size(t);
  auto shard = [&](std::uint64_t bytes_per_param, bool sharded) {
    return sharded ? bytes_per_param * (ceil_div(p.dense, dd) + ceil_div(p.expert, ed))
                   : bytes_per_param * p.total();
  };
  RankMemory r;
  r.param_bytes = shard(2, t.zero >= 3);
  r.grad_bytes = shard(2, t.zero >= 2);
  r.optimizer_bytes = shard(12, t.zero >= 1);
  return r;
}

}  // namespace sim::gen
