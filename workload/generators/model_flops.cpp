#include "workload/generators/model_flops.h"

#include "core/checked_count.h"
#include "core/error.h"
#include "core/time.h"

namespace sim::gen {
namespace {

using u128 = uint128;  // core/time.h

// a * b, or false when it would pass 2^128 - 1.
bool mul(u128 a, u128 b, u128& out) { return !__builtin_mul_overflow(a, b, &out); }
bool add(u128 a, u128 b, u128& out) { return !__builtin_add_overflow(a, b, &out); }

// Model FLOPs of one iteration in 128 bits, or false past 2^128 - 1 (a
// billion layers of a wide model at a huge batch): the double form is then
// computed in floating point.
bool model_flops_wide(const TrainingSpec& t, u128& out) {
  const ModelConfig& m = t.model;
  const u128 h = m.hidden, hq = m.heads * m.head_dim(), hkv = m.kv_hidden(), s = t.seq, f = m.ffn_hidden;
  // Every factor is under 2^66; each product and sum is checked.
  u128 qkv, attn, proj, mlp, flops, x;
  bool ok = mul(2 * h, hq + 2 * hkv, qkv) && mul(4 * s, hq, attn) && mul(2 * hq, h, proj) && mul(2 * h, f, mlp) &&
            mul(mlp, m.mlp_matrices(), mlp) && add(qkv, attn, flops) && add(flops, proj, flops);
  if (ok && m.is_moe()) ok = mul(mlp, m.moe.top_k, mlp) && mul(2 * h, m.moe.experts, x) && add(mlp, x, mlp);
  ok = ok && add(flops, mlp, flops);
  u128 per_token, logits = 0;
  if (ok && !t.layers_only) ok = mul(2 * h, m.vocab, logits);
  ok = ok && mul(m.layers, flops, per_token) && add(per_token, logits, per_token);
  return ok && mul(3 * u128{t.global_batch}, t.seq, x) && mul(x, per_token, out);
}

double model_flops_double(const TrainingSpec& t) {
  const ModelConfig& m = t.model;
  const double h = static_cast<double>(m.hidden), hq = static_cast<double>(m.heads * m.head_dim());
  const double hkv = static_cast<double>(m.kv_hidden()), s = static_cast<double>(t.seq);
  const double f = static_cast<double>(m.ffn_hidden);
  double layer = 2 * h * (hq + 2 * hkv) + 4 * s * hq + 2 * hq * h;
  const double mlp = 2 * h * f * static_cast<double>(m.mlp_matrices());
  layer += m.is_moe() ? m.moe.top_k * mlp + 2 * h * m.moe.experts : mlp;
  const double logits = t.layers_only ? 0 : 2 * h * static_cast<double>(m.vocab);
  return 3 * static_cast<double>(t.global_batch) * s * (static_cast<double>(m.layers) * layer + logits);
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

// A parameter count that passed 2^64 - 1: the model's sizes, named.
[[noreturn]] void params_overflow(const TrainingSpec& t, const std::string& what) {
  const ModelConfig& m = t.model;
  throw InputError(what + " pass 2^64 - 1 (layers " + std::to_string(m.layers) + ", hidden " +
                   std::to_string(m.hidden) + ", ffn_hidden " + std::to_string(m.ffn_hidden) + ", vocab " +
                   std::to_string(m.vocab) + " of " + m.source + ")");
}

}  // namespace

std::uint64_t model_flops_exact(const TrainingSpec& t) {
  u128 f = 0;
  if (!model_flops_wide(t, f) || (f >> 63) != 0) {
    throw InputError("the model FLOPs of one iteration exceed 2^63 (a counter's range)");
  }
  return static_cast<std::uint64_t>(f);
}

bool model_flops_fit_64_bits(const TrainingSpec& t) {
  u128 f = 0;
  return model_flops_wide(t, f) && (f >> 63) == 0;
}

double model_flops_per_iteration(const TrainingSpec& t) {
  u128 f = 0;
  return model_flops_wide(t, f) ? static_cast<double>(f) : model_flops_double(t);
}

std::uint64_t dense_dp_size(const TrainingSpec& t) { return std::uint64_t{t.plan.dp} * t.plan.cp; }
std::uint64_t expert_dp_size(const TrainingSpec& t) {
  return std::uint64_t{t.plan.tp} * t.plan.dp / t.plan.ep * t.plan.cp;
}

RankParams layer_params(const TrainingSpec& t) {
  const ModelConfig& m = t.model;
  const CheckedCount h = m.hidden, hq = m.heads * m.head_dim(), hkv = m.kv_hidden(), f = m.ffn_hidden;
  const std::uint64_t tp = t.plan.tp;
  const CheckedCount qkv_width = hq + CheckedCount(2) * hkv;
  CheckedCount dense = CheckedCount(2) * (m.rmsnorm ? h : CheckedCount(2) * h);  // before attention and the MLP (replicated)
  dense += h * qkv_width / tp + hq * h / tp;  // QKV (column-parallel), projection (row-parallel)
  if (m.bias) dense += qkv_width / tp + h;     // QKV bias split, projection bias replicated
  CheckedCount expert = 0;
  const CheckedCount biases = CheckedCount(m.swiglu ? 2 : 1) * f;
  if (m.is_moe()) {
    dense += h * m.moe.experts;  // router (replicated)
    const CheckedCount local = m.moe.experts / t.plan.ep;
    expert = local * m.mlp_matrices() * h * f;
    if (m.bias) expert += local * (biases + h);
  } else {
    dense += CheckedCount(m.mlp_matrices()) * h * f / tp;
    if (m.bias) dense += biases / tp + h;
  }
  if (!dense.fits() || !expert.fits()) params_overflow(t, "the parameters of one layer");
  return {dense.value(), expert.value()};
}

RankParams rank_params(const TrainingSpec& t, std::uint32_t rank) {
  const RankCoords c = coords_of(t.plan, rank);
  const ModelConfig& m = t.model;
  std::uint64_t layers = 0;
  for (std::uint32_t k = 0; k < t.chunks; ++k) layers += t.layers_in(c.pp, k);
  const RankParams per = layer_params(t);
  CheckedCount dense = CheckedCount(per.dense) * layers;
  const CheckedCount expert = CheckedCount(per.expert) * layers;
  const CheckedCount embedding = CheckedCount(m.vocab) * m.hidden / t.plan.tp;
  if (!t.layers_only) {
    if (c.pp == 0) dense += embedding;
    if (c.pp == t.plan.pp - 1) {
      dense += m.rmsnorm ? CheckedCount(m.hidden) : CheckedCount(2) * m.hidden;  // final norm
      if (!m.tied_embeddings || t.plan.pp > 1) dense += embedding;  // output layer (a tied one's copy)
    }
  }
  if (!dense.fits() || !expert.fits()) params_overflow(t, "the parameters on rank " + std::to_string(rank));
  return {dense.value(), expert.value()};
}

RankMemory rank_memory(const TrainingSpec& t, std::uint32_t rank) {
  const RankParams p = rank_params(t, rank);
  const std::uint64_t dd = dense_dp_size(t), ed = expert_dp_size(t);
  auto shard = [&](std::uint64_t bytes_per_param, bool sharded) {
    const CheckedCount b = sharded ? CheckedCount(bytes_per_param) * (CheckedCount(ceil_div(p.dense, dd)) + ceil_div(p.expert, ed))
                                   : CheckedCount(bytes_per_param) * (CheckedCount(p.dense) + p.expert);
    if (!b.fits()) params_overflow(t, "the bytes of parameters and optimizer state on rank " + std::to_string(rank));
    return b.value();
  };
  RankMemory r;
  r.param_bytes = shard(2, t.zero >= 3);
  r.grad_bytes = shard(2, t.zero >= 2);
  r.optimizer_bytes = shard(12, t.zero >= 1);
  return r;
}

}  // namespace sim::gen
