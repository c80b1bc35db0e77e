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
//   moe:                     # optional: every layer's MLP is a mixture of experts
//     experts: 8
//     top_k: 2
//     capacity_factor: 1.0   # sizes the all-to-all buffers (>= 1)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sim::gen {

struct MoeConfig {
  std::uint32_t experts = 0;  // 0: dense
  std::uint32_t top_k = 0;
  double capacity_factor = 1.0;
};

struct ModelConfig {
  std::string name;
  std::string source;  // file (or "built-in <name>") for messages
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

  bool is_moe() const { return moe.experts > 0; }
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
