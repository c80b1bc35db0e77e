#include "workload/generators/spec/quantity_limits.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/checked_count.h"
#include "core/error.h"
#include "workload/generators/spec/model_flops.h"

namespace sim::gen {
namespace {

std::string num(std::uint64_t v) { return std::to_string(v); }

// "(hidden 4096, vocab 128256 of built-in model llama3-8b)".
std::string model_keys(const ModelConfig& m, const std::vector<const char*>& keys) {
  std::string s;
  for (const char* k : keys) {
    const std::string key(k);
    const std::uint64_t v = key == "layers"       ? m.layers
                            : key == "hidden"     ? m.hidden
                            : key == "ffn_hidden" ? m.ffn_hidden
                            : key == "heads"      ? m.heads
                            : key == "kv_heads"   ? m.kv_heads
                            : key == "vocab"      ? m.vocab
                                                  : m.moe.experts;
    s += (s.empty() ? "" : ", ") + key + " " + num(v);
  }
  return "(" + s + " of " + m.source + ")";
}

class Limits {
 public:
  explicit Limits(const TrainingSpec& t) : t_(t) {}

  // `value` must be at most 2^63 - 1; else InputError: what it is, how it is
  // made, and what to change.
  void require(const CheckedCount& value, const std::string& what, const std::string& remedy) const {
    if (value.fits(kMaxTraceInt)) return;
    const std::string size = value.overflowed() ? "passes 2^64 - 1" : "is " + num(value.value()) + ", past 2^63 - 1";
    throw InputError(what + " " + size + ", the most a trace's int64 holds: " + remedy);
  }
  std::string opt(const char* key) const { return t_.option(key); }
  std::string given(const char* key, std::uint64_t v) const { return option_given(t_.spelling, key, num(v)); }
  // "seq=67108864 with micro-batch=1" (and cp, when it splits the sequence).
  std::string tokens_given() const {
    std::string s = given("seq", t_.seq) + " with " + given("micro-batch", t_.micro_batch);
    if (t_.plan.cp > 1) s += " and cp=" + num(t_.plan.cp);
    return s;
  }
  std::string tokens_remedy() const { return "lower " + opt("seq") + " or " + opt("micro-batch"); }

 private:
  const TrainingSpec& t_;
};

// A GEMM of m x n x k (batch of them): its FLOPs and the bytes it moves
// (at most 2 B per element of both inputs and the output).
CheckedCount gemm_size(CheckedCount m, CheckedCount n, CheckedCount k, CheckedCount batch = 1) {
  const CheckedCount flops = CheckedCount(2) * batch * m * n * k;
  const CheckedCount bytes = CheckedCount(2) * batch * (m * k + k * n + m * n);
  if (!flops.fits() || !bytes.fits()) return CheckedCount(kMaxTraceInt) * 4;  // overflowed
  return std::max(flops.value(), bytes.value());
}

}  // namespace

std::uint64_t max_stage_layers(const TrainingSpec& t) {
  std::uint64_t most = 0;
  for (std::uint32_t s = 0; s < t.plan.pp; ++s) {
    std::uint64_t layers = 0;
    for (std::uint32_t c = 0; c < t.chunks; ++c) layers += t.layers_in(s, c);
    most = std::max(most, layers);
  }
  return most;
}

void check_quantity_limits(const TrainingSpec& t) {
  const Limits l(t);
  const ModelConfig& m = t.model;
  const ParallelPlan& p = t.plan;
  const std::uint64_t tp = p.tp;
  const CheckedCount b = t.micro_batch, s = t.seq_local(), h = m.hidden, d = m.head_dim();
  const CheckedCount tok = b * s;
  const CheckedCount sp_tok = p.sp ? tok / tp : tok;
  const CheckedCount heads = m.heads / tp, hq = CheckedCount(m.heads / tp) * d;
  const CheckedCount qkv_out = (CheckedCount(m.heads) * d + CheckedCount(2) * m.kv_hidden()) / tp;
  const CheckedCount f = m.ffn_hidden / tp, fc1_out = CheckedCount(m.ffn_hidden) * (m.swiglu ? 2 : 1) / tp;
  const std::string tokens = l.tokens_given();
  const bool dense_mlp = !m.is_moe() || m.moe.first_dense_layers > 0;

  // Nodes first: the count that grows with layers and micro-batches, whatever
  // the sizes.
  const std::uint64_t stage_layers = max_stage_layers(t);
  const CheckedCount nodes = CheckedCount(kMinNodesPerLayerAndMicrobatch) * stage_layers * t.microbatches;
  if (!nodes.fits(0xffffffffu)) {
    throw InputError(
        l.given("global-batch", t.global_batch) + ": a rank would hold at least " +
        (nodes.overflowed() ? "2^64" : num(nodes.value())) + " nodes (" + num(kMinNodesPerLayerAndMicrobatch) +
        " per layer and micro-batch x " + num(stage_layers) + " layers on a stage x " + num(t.microbatches) +
        " micro-batches), more than a rank holds (2^32 - 1): lower " + l.opt("global-batch") + ", raise " +
        l.opt("micro-batch") + " or pp in " + l.opt("parallel") + ", or use fewer layers " + model_keys(m, {"layers"}));
  }

  // Core attention: FLOPs as Megatron counts them over the full (seq / cp)^2
  // scores.
  if (t.unfused_attention) {
    const CheckedCount e = b * heads * s * s;
    l.require(gemm_size(s, s, d, b * heads),
              tokens +
                  ": one attention score GEMM's FLOPs (2 x micro-batch x "
                  "heads / tp x seq^2 x head dim)",
              l.tokens_remedy() + " " + model_keys(m, {"hidden", "heads"}));
    l.require(CheckedCount(7) * e,
              tokens +
                  ": the bytes of one softmax over the attention scores "
                  "(micro-batch x heads / tp x seq^2)",
              l.tokens_remedy() + " " + model_keys(m, {"heads"}));
  } else if (m.is_mla()) {
    const CheckedCount dims = CheckedCount(m.mla.qk_head_dim) + m.mla.rope_head_dim + m.mla.v_head_dim;
    l.require(CheckedCount(4) * b * s * s * heads * dims,
              tokens + ": one attention kernel's FLOPs (4 x micro-batch x (seq / cp)^2 x heads / tp x (qk + rope + v head dims))",
              l.tokens_remedy() + " " + model_keys(m, {"heads"}));
  } else {
    // The all-gather form's kernel of whole blocks counts cp - 1 ring steps.
    if (t.cp_all_gather) {
      l.require(CheckedCount(8) * b * s * s * hq * (p.cp - 1),
                tokens + ": the attention kernel of whole blocks' FLOPs (8 x micro-batch x (seq / cp)^2 x hidden / tp x (cp - 1))",
                l.tokens_remedy() + " " + model_keys(m, {"hidden"}));
    }
    l.require(CheckedCount(8) * b * s * s * hq,
              tokens +
                  ": one attention kernel's FLOPs (8 x micro-batch x (seq / "
                  "cp)^2 x hidden / tp = 8 x " +
                  num(t.micro_batch) + " x " + num(t.seq_local()) + "^2 x " + num(hq.value()) + ")",
              l.tokens_remedy() + ", or raise cp in " + l.opt("parallel") + " " + model_keys(m, {"hidden"}));
  }

  // GEMMs over the micro-batch's tokens (their weight gradients are the same
  // products).
  struct Gemm {
    const char* name;
    CheckedCount n, k;
    std::vector<const char*> keys;
  };
  const Gemm gemms[] = {
      {"QKV", qkv_out, h, {"hidden", "heads", "kv_heads"}},
      {"attention projection", h, hq, {"hidden"}},
      {"MLP FC1", dense_mlp ? fc1_out : CheckedCount(0), h, {"hidden", "ffn_hidden"}},
      {"MLP FC2", dense_mlp ? h : CheckedCount(0), f, {"hidden", "ffn_hidden"}},
      {"shared experts' FC1", CheckedCount(m.shared_ffn()) * (m.swiglu ? 2 : 1) / tp, h, {"hidden", "experts"}},
      {"MLA up-projection", m.is_mla() ? CheckedCount(m.heads) * (m.mla.qk_head_dim + m.mla.rope_head_dim + m.mla.qk_head_dim + m.mla.v_head_dim) / tp : CheckedCount(0),
       CheckedCount(std::max(m.mla.q_lora_rank, m.mla.kv_lora_rank)) + h, {"hidden", "heads"}},
      {"output layer", t.layers_only ? CheckedCount(0) : CheckedCount(m.vocab / tp), h, {"hidden", "vocab"}},
  };
  for (const Gemm& g : gemms) {
    if (g.n.fits() && g.n.value() == 0) continue;  // not in this model (MoE MLP, --layers-only)
    l.require(gemm_size(tok, g.n, g.k),
              tokens + ": the " + g.name + " GEMM's FLOPs or bytes (tokens x its width x hidden)",
              l.tokens_remedy() + ", or raise tp in " + l.opt("parallel") + " " + model_keys(m, g.keys));
  }
  // Memory-bound ops: the loss over the vocabulary, the activation, fp8 casts,
  // residual adds.
  if (!t.layers_only) {
    l.require(CheckedCount(4) * tok * (m.vocab / tp), tokens + ": the bytes of the loss over the vocabulary",
              l.tokens_remedy() + " " + model_keys(m, {"vocab"}));
  }
  l.require(CheckedCount(10) * tok * f, tokens + ": the bytes of the MLP activation",
            l.tokens_remedy() + " " + model_keys(m, {"ffn_hidden"}));
  l.require(CheckedCount(7) * sp_tok * h + CheckedCount(4) * tok * h + CheckedCount(4) * tok * qkv_out,
            tokens +
                ": the bytes of a norm, residual add or fp8 cast over the "
                "activations",
            l.tokens_remedy() + " " + model_keys(m, {"hidden"}));
  if (t.fp8) {
    l.require(CheckedCount(4) * tok * fc1_out + CheckedCount(4) * h * fc1_out, tokens + ": the bytes of an fp8 cast",
              l.tokens_remedy() + " " + model_keys(m, {"hidden", "ffn_hidden"}));
  }
  if (m.is_moe()) {
    // Every token of the expert-parallel group routed to this rank's experts
    // bounds what any routing (skewed or not) hands one rank.
    const CheckedCount routed = sp_tok * m.moe.top_k * p.ep;
    const CheckedCount f1 = CheckedCount(m.moe.expert_ffn_hidden) * (m.swiglu ? 2 : 1);
    l.require(gemm_size(sp_tok, m.moe.experts, h), tokens + ": the MoE router GEMM's FLOPs",
              l.tokens_remedy() + " " + model_keys(m, {"hidden", "experts"}));
    l.require(gemm_size(routed, f1, h) + CheckedCount(10) * routed * m.moe.expert_ffn_hidden,
              tokens + ": the experts' grouped GEMM's FLOPs or bytes",
              l.tokens_remedy() + " " + model_keys(m, {"hidden", "ffn_hidden", "experts"}));
    l.require(routed * h * 2,
              tokens + ": the bytes of one expert all-to-all (tokens x top_k x ep x hidden x 2 B at most)",
              l.tokens_remedy() + " " + model_keys(m, {"hidden"}));
  }

  // Parameters: the optimizer step moves 28 B per parameter a rank updates.
  const RankParams first = layer_params(t, 0), last = layer_params(t, m.layers - 1);  // dense and MoE layers
  const RankParams per{std::max(first.dense, last.dense), std::max(first.expert, last.expert)};
  const CheckedCount embedding = CheckedCount(m.vocab) * m.hidden / tp;
  const CheckedCount dense = CheckedCount(per.dense) * stage_layers + CheckedCount(2) * embedding + CheckedCount(2) * h;
  const CheckedCount expert = CheckedCount(per.expert) * stage_layers;
  const std::uint64_t dd = dense_dp_size(t), ed = expert_dp_size(t);
  const CheckedCount updated = t.zero >= 1 ? dense / dd + expert / ed + 2 : dense + expert;
  l.require(CheckedCount(28) * updated,
            "the optimizer step's bytes on a rank (28 B x its parameters: " + num(stage_layers) + " layers on a stage)",
            "raise pp or tp in " + l.opt("parallel") + " (or shard with " + l.opt("zero") +
                "1), or use a smaller model " + model_keys(m, {"layers", "hidden", "ffn_hidden", "vocab"}));

  // Message tags of the ring exchanges (context parallelism, tp overlap):
  // numbered by layer, micro-batch and step after the pipeline's tags.
  if (p.cp > 1 || t.tp_comm_overlap) {
    const CheckedCount mb = t.microbatches;
    const CheckedCount tags = CheckedCount(2) * t.chunks * mb +
                              (CheckedCount(4) * p.cp + CheckedCount(8) * tp) * (CheckedCount(m.layers) + 1) * (mb + 1);
    l.require(tags,
              l.given("global-batch", t.global_batch) +
                  ": the ring exchanges' message tags (layers x micro-batches "
                  "x (4 cp + 8 tp))",
              "lower " + l.opt("global-batch") + " or use fewer layers " + model_keys(m, {"layers"}));
  }
}

}  // namespace sim::gen
