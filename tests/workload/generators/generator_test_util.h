// Helpers for the transformer generator's tests: specs from small models
// written to a temporary folder, and sums over generated traces.
#pragma once

#include <fstream>
#include <functional>
#include <string>

#include "core/error.h"
#include "core/time.h"
#include "tests/common/temp_folder.h"
#include "workload/et/et_io.h"
#include "workload/generators/spec/training_spec.h"
#include "workload/generators/transformer/transformer_graph.h"

namespace sim::testing {

class GeneratorTest : public TempFolderTest {
 protected:
  // Writes a model YAML and returns its path.
  std::string model_file(const std::string& name, const std::string& yaml) {
    const std::string p = path(name + ".yml");
    std::ofstream(p) << yaml;
    return p;
  }
  static gen::TrainingOptions options(const std::string& model, const std::string& parallel, std::uint64_t batch,
                                      std::uint64_t seq) {
    gen::TrainingOptions o;
    o.model = model;
    o.parallel = parallel;
    o.global_batch = batch;
    o.seq = seq;
    return o;
  }
  // Calls f(rank, node) for every node of every rank's generated trace.
  static void each_node(const gen::TrainingSpec& spec, const std::function<void(std::uint32_t, const et::Node&)>& f) {
    for (std::uint32_t r = 0; r < spec.plan.world(); ++r) {
      const EtTrace t = gen::transformer_rank_trace(spec, r);
      for (const et::Node& n : t.nodes) f(r, n);
    }
  }
  static bool recomputed(const et::Node& n) { return attr_bool(n, "recompute").value_or(false); }
  // Model FLOPs counted from the nodes (recomputation excluded), and recomputed FLOPs.
  static std::pair<std::uint64_t, std::uint64_t> counted_flops(const gen::TrainingSpec& spec) {
    std::uint64_t model = 0, recompute = 0;
    each_node(spec, [&](std::uint32_t, const et::Node& n) {
      if (n.type() != et::COMP_NODE) return;
      const std::uint64_t ops = static_cast<std::uint64_t>(attr_int(n, "num_ops").value_or(0));
      (recomputed(n) ? recompute : model) += ops;
    });
    return {model, recompute};
  }
};

// A GPT-style model (MHA, 4h GeLU MLP, LayerNorm, biases, tied embeddings).
inline std::string gpt_yaml(std::uint64_t layers, std::uint64_t hidden, std::uint64_t heads, std::uint64_t vocab) {
  return "layers: " + std::to_string(layers) + "\nhidden: " + std::to_string(hidden) +
         "\nffn_hidden: " + std::to_string(4 * hidden) + "\nheads: " + std::to_string(heads) +
         "\nvocab: " + std::to_string(vocab) + "\nmlp: gelu\nnorm: layernorm\nbias: true\ntied_embeddings: true\n";
}

// A Llama-style model (GQA, SwiGLU, RMSNorm, no biases, untied), optionally with experts.
inline std::string llama_yaml(std::uint64_t layers, std::uint64_t hidden, std::uint64_t ffn, std::uint64_t heads,
                              std::uint64_t kv_heads, std::uint64_t vocab, std::uint64_t experts = 0,
                              std::uint64_t top_k = 0) {
  std::string y = "layers: " + std::to_string(layers) + "\nhidden: " + std::to_string(hidden) +
                  "\nffn_hidden: " + std::to_string(ffn) + "\nheads: " + std::to_string(heads) +
                  "\nkv_heads: " + std::to_string(kv_heads) + "\nvocab: " + std::to_string(vocab) +
                  "\nmlp: swiglu\nnorm: rmsnorm\nbias: false\ntied_embeddings: false\n";
  if (experts) y += "moe:\n  experts: " + std::to_string(experts) + "\n  top_k: " + std::to_string(top_k) + "\n";
  return y;
}

// The InputError message of a plan, or "(no error)".
inline std::string error_of(const gen::TrainingOptions& o) {
  try {
    gen::make_training_spec(o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// Megatron-LM's 72 B s l h^2 (1 + s/(6h) + V/(12 l h)), multiplied out so it stays an integer.
inline std::uint64_t megatron_gpt(uint128 B, uint128 s, uint128 l, uint128 h, uint128 V) {
  return static_cast<std::uint64_t>(72 * B * s * l * h * h + 12 * B * s * s * l * h + 6 * B * s * h * V);
}

inline bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace sim::testing
