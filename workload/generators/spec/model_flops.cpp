#include "workload/generators/spec/model_flops.h"

#include <algorithm>

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
  const u128 h = m.hidden, s = t.seq, f = m.ffn_hidden, mats = m.mlp_matrices();
  // Every factor is under 2^66; each product and sum is checked.
  u128 attn, x, y;
  bool ok = true;
  if (m.is_mla()) {
    const MlaConfig& a = m.mla;
    const u128 H = m.heads, dq = a.qk_head_dim + a.rope_head_dim, dv = a.v_head_dim;
    // q down and up, kv down (latent and the shared rotary key) and up, scores and values, projection.
    u128 q, kv, core, proj;
    ok = mul(2 * h, a.q_lora_rank, q) && mul(2 * u128{a.q_lora_rank}, H, x) && mul(x, dq, x) && add(q, x, q) &&
         mul(2 * h, u128{a.kv_lora_rank} + a.rope_head_dim, kv) && mul(2 * u128{a.kv_lora_rank}, H, x) &&
         mul(x, u128{a.qk_head_dim} + dv, x) && add(kv, x, kv) && mul(2 * s, H, core) && mul(core, dq + dv, core) &&
         mul(2 * H, dv, proj) && mul(proj, h, proj) && add(q, kv, attn) && add(attn, core, attn) && add(attn, proj, attn);
  } else {
    const u128 hq = m.heads * m.head_dim(), hkv = m.kv_hidden();
    u128 qkv, core, proj;
    ok = mul(2 * h, hq + 2 * hkv, qkv) && mul(4 * s, hq, core) && mul(2 * hq, h, proj) && add(qkv, core, attn) &&
         add(attn, proj, attn);
  }
  // Dense layers: the MLP of ffn_hidden; MoE layers: top_k routed experts, the shared experts, the router.
  u128 dense_mlp, moe_mlp = 0, per_token;
  ok = ok && mul(2 * h, f, dense_mlp) && mul(dense_mlp, mats, dense_mlp);
  if (ok && m.is_moe()) {
    const u128 experts_through = u128{m.moe.top_k} + m.moe.shared_experts;
    ok = mul(2 * h, m.moe.expert_ffn_hidden, moe_mlp) && mul(moe_mlp, mats, moe_mlp) &&
         mul(moe_mlp, experts_through, moe_mlp) && mul(2 * h, m.moe.experts, x) && add(moe_mlp, x, moe_mlp);
  }
  const u128 dense_layers = m.layers - m.moe_layers();
  ok = ok && add(attn, dense_mlp, x) && mul(x, dense_layers, per_token) && add(attn, moe_mlp, y) &&
       mul(y, m.moe_layers(), y) && add(per_token, y, per_token);
  u128 logits = 0;
  if (ok && !t.layers_only) ok = mul(2 * h, m.vocab, logits);
  ok = ok && add(per_token, logits, per_token);
  return ok && mul(3 * u128{t.global_batch}, t.seq, x) && mul(x, per_token, out);
}

double model_flops_double(const TrainingSpec& t) {
  const ModelConfig& m = t.model;
  const double h = static_cast<double>(m.hidden), s = static_cast<double>(t.seq);
  const double f = static_cast<double>(m.ffn_hidden), mats = static_cast<double>(m.mlp_matrices());
  double attn = 0;
  if (m.is_mla()) {
    const MlaConfig& a = m.mla;
    const double H = static_cast<double>(m.heads), dq = static_cast<double>(a.qk_head_dim + a.rope_head_dim);
    const double dv = static_cast<double>(a.v_head_dim), qr = static_cast<double>(a.q_lora_rank);
    const double kr = static_cast<double>(a.kv_lora_rank);
    attn = 2 * h * qr + 2 * qr * H * dq + 2 * h * (kr + static_cast<double>(a.rope_head_dim)) +
           2 * kr * H * (static_cast<double>(a.qk_head_dim) + dv) + 2 * s * H * (dq + dv) + 2 * H * dv * h;
  } else {
    const double hq = static_cast<double>(m.heads * m.head_dim()), hkv = static_cast<double>(m.kv_hidden());
    attn = 2 * h * (hq + 2 * hkv) + 4 * s * hq + 2 * hq * h;
  }
  const double dense = attn + 2 * h * f * mats;
  double moe = 0;
  if (m.is_moe()) {
    moe = attn + 2 * h * static_cast<double>(m.moe.expert_ffn_hidden) * mats *
                     (static_cast<double>(m.moe.top_k) + m.moe.shared_experts) +
          2 * h * m.moe.experts;
  }
  const double moe_layers = static_cast<double>(m.moe_layers());
  const double layers = (static_cast<double>(m.layers) - moe_layers) * dense + moe_layers * moe;
  const double logits = t.layers_only ? 0 : 2 * h * static_cast<double>(m.vocab);
  return 3 * static_cast<double>(t.global_batch) * s * (layers + logits);
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
  return std::uint64_t{t.plan.tp} * t.plan.dp / (std::uint64_t{t.plan.ep} * t.plan.etp) * t.plan.cp;
}

RankParams layer_params(const TrainingSpec& t, std::uint64_t layer) {
  const ModelConfig& m = t.model;
  const CheckedCount h = m.hidden;
  const std::uint64_t tp = t.plan.tp;
  CheckedCount dense = CheckedCount(2) * (m.rmsnorm ? h : CheckedCount(2) * h);  // before attention and the MLP (replicated)
  if (m.is_mla()) {
    // Down-projections whole on every tensor-parallel rank (Megatron-core's MLA
    // keeps them duplicated), with their norms; up-projections and the output
    // projection split by heads.
    const MlaConfig& a = m.mla;
    const CheckedCount H = m.heads;
    dense += h * a.q_lora_rank + h * (CheckedCount(a.kv_lora_rank) + a.rope_head_dim) + a.q_lora_rank + a.kv_lora_rank;
    dense += CheckedCount(a.q_lora_rank) * H * (a.qk_head_dim + a.rope_head_dim) / tp +
             CheckedCount(a.kv_lora_rank) * H * (a.qk_head_dim + a.v_head_dim) / tp + H * a.v_head_dim * h / tp;
  } else {
    const CheckedCount hq = m.heads * m.head_dim(), hkv = m.kv_hidden();
    const CheckedCount qkv_width = hq + CheckedCount(2) * hkv;
    dense += h * qkv_width / tp + hq * h / tp;  // QKV (column-parallel), projection (row-parallel)
    if (m.bias) dense += qkv_width / tp + h;     // QKV bias split, projection bias replicated
  }
  CheckedCount expert = 0;
  auto mlp = [&](std::uint64_t width, std::uint64_t split) {  // one MLP of `width`, split `split` ways
    CheckedCount p = CheckedCount(m.mlp_matrices()) * h * width / split;
    if (m.bias) p += CheckedCount(m.swiglu ? 2 : 1) * width / split + h;
    return p;
  };
  if (m.moe_layer(layer)) {
    dense += h * m.moe.experts;  // router (replicated)
    if (m.moe.shared_experts) dense += mlp(m.shared_ffn(), tp);  // shared experts: tensor-parallel like a dense MLP
    expert = CheckedCount(m.moe.experts / t.plan.ep) * mlp(m.moe.expert_ffn_hidden, t.plan.etp);  // split etp ways
  } else {
    dense += mlp(m.ffn_hidden, tp);
  }
  if (!dense.fits() || !expert.fits()) params_overflow(t, "the parameters of one layer");
  return {dense.value(), expert.value()};
}

RankParams rank_params(const TrainingSpec& t, std::uint32_t rank) {
  const RankCoords c = coords_of(t.plan, rank);
  const ModelConfig& m = t.model;
  // Dense and MoE layers differ: summed per kind (the first layers of a model may be dense).
  std::uint64_t layers = 0, moe = 0;
  for (std::uint32_t k = 0; k < t.chunks; ++k) {
    const std::uint64_t first = t.first_layer(c.pp, k), n = t.layers_in(c.pp, k);
    layers += n;
    if (m.is_moe()) {
      const std::uint64_t from = std::max(first, m.moe.first_dense_layers);
      moe += first + n > from ? first + n - from : 0;
    }
  }
  const RankParams per_dense = layer_params(t, 0), per_moe = m.is_moe() ? layer_params(t, m.layers - 1) : per_dense;
  CheckedCount dense = CheckedCount(per_dense.dense) * (layers - moe) + CheckedCount(per_moe.dense) * moe;
  const CheckedCount expert = CheckedCount(per_dense.expert) * (layers - moe) + CheckedCount(per_moe.expert) * moe;
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
