// A transformer model as a training-workload generator needs it: the shapes
// that fix every GEMM, attention and communication size of one iteration.
//
// Read from YAML (configs/models/*.yml; every key below, unknown keys are
// errors naming file, line and key):
//   name: llama3-8b
//   layers: 32
//   hidden: 4096
//   ffn_hidden: 14336        # MLP inner width (per expert for MoE)
//   heads: 32
//   kv_heads: 8              # grouped-query attention; default heads
//   vocab: 128256
//   mlp: swiglu              # gelu (two matrices) | swiglu (three)
//   norm: rmsnorm            # layernorm (weight + bias) | rmsnorm (weight)
//   bias: false              # linear layers carry biases (GPT-3: true)
//   tied_embeddings: false   # output layer shares the input embedding
//   dropout: 0.1             # attention and hidden dropout in training (Megatron-LM's
//                            # --attention-dropout, --hidden-dropout); default 0
//   moe:                     # optional: the MLPs are mixtures of experts
//     experts: 8             # routed experts
//     top_k: 2               # routed experts per token
//     expert_ffn_hidden: 2048  # one expert's MLP width; default ffn_hidden
//     shared_experts: 1      # experts every token passes through (DeepSeek); default 0
//     first_dense_layers: 3  # the first N layers keep a dense MLP of ffn_hidden; default 0
//     capacity_factor: 1.25  # tokens per expert capped at cf x N x top_k / experts; default none (dropless)
//     routing:               # default uniform
//       distribution: zipf   # uniform | zipf (expert of popularity rank i gets a share ~ 1/i^s)
//       exponent: 1.0        # s > 0
//       seed: 1              # which experts are popular, per layer
//   mla:                     # optional: multi-head latent attention (DeepSeek-V2/V3)
//     q_lora_rank: 1536      # query down-projection width
//     kv_lora_rank: 512      # key/value down-projection width
//     qk_head_dim: 128       # per-head query/key width without position (nope)
//     rope_head_dim: 64      # per-head query/key width with rotary position
//     v_head_dim: 128        # per-head value width
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sim::gen {

// How tokens spread over the routed experts (workload/generators/transformer/expert_load.h).
struct RoutingConfig {
  bool zipf = false;  // false: uniform
  double exponent = 0;
  std::uint64_t seed = 1;
  std::string describe() const;  // "uniform", "zipf:1.2:7"
};

struct MoeConfig {
  std::uint32_t experts = 0;  // routed experts; 0: dense
  std::uint32_t top_k = 0;
  std::uint64_t expert_ffn_hidden = 0;  // one expert's MLP width (routed and shared)
  std::uint32_t shared_experts = 0;
  std::uint64_t first_dense_layers = 0;
  double capacity_factor = 0;  // 0: none (dropless)
  RoutingConfig routing;
};

// Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434, section 2.1):
// low-rank query and key/value projections, per-head keys of qk + rope
// widths, values of v width. 0 ranks: not MLA.
struct MlaConfig {
  std::uint64_t q_lora_rank = 0, kv_lora_rank = 0, qk_head_dim = 0, rope_head_dim = 0, v_head_dim = 0;
};

struct ModelConfig {
  std::string name;
  std::string source;  // file (or "built-in <name>") for messages
  std::string file;    // the YAML file it was read from; empty for a built-in model
  std::uint64_t layers = 0;
  std::uint64_t hidden = 0;
  std::uint64_t ffn_hidden = 0;
  std::uint64_t heads = 0;
  std::uint64_t kv_heads = 0;
  std::uint64_t vocab = 0;
  bool swiglu = false;
  bool rmsnorm = false;
  bool bias = false;
  bool tied_embeddings = false;
  // Dropout probability of the attention probabilities and of each block's
  // output; its masks are memory traffic (transformer_graph.cpp), not FLOPs.
  double dropout = 0;
  MoeConfig moe;
  MlaConfig mla;

  bool is_moe() const { return moe.experts > 0; }
  bool is_mla() const { return mla.kv_lora_rank > 0; }
  // Layer l's MLP is a mixture of experts (the first first_dense_layers are dense).
  bool moe_layer(std::uint64_t l) const { return is_moe() && l >= moe.first_dense_layers; }
  std::uint64_t moe_layers() const { return is_moe() ? layers - moe.first_dense_layers : 0; }
  // Width of the shared experts' one MLP (Megatron-core's SharedExpertMLP): shared x expert width.
  std::uint64_t shared_ffn() const { return std::uint64_t{moe.shared_experts} * moe.expert_ffn_hidden; }
  std::uint64_t head_dim() const { return hidden / heads; }
  std::uint64_t kv_hidden() const { return kv_heads * head_dim(); }
  // Weight matrices of one MLP (gelu: 2, swiglu: 3).
  std::uint64_t mlp_matrices() const { return swiglu ? 3 : 2; }
};

// Parses YAML text; InputError "<source>:<line>: ..." for any problem.
ModelConfig parse_model(const std::string& yaml_text, const std::string& source);
// A built-in name (gpt3-175b, llama3-8b, ...) or a YAML file path. `given`
// names the option in messages as written ("model=x"); empty: "--model: 'x'".
ModelConfig load_model(const std::string& name_or_path, const std::string& given = "");
// Names of the built-in models (configs/models/*.yml, compiled in).
std::vector<std::string> builtin_model_names();

}  // namespace sim::gen
