// Transformer Engine's fp8 casts under `--dtype fp8`, as TE runs them for
// Megatron-core's layer spec (docs/generators.md): every cast node's bytes
// equal the closed form of what it reads (bf16, 2 B) and writes (fp8, 1 B per
// copy), node by node and in number; none under bf16; model FLOPs unchanged.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/workload/generators/generator_test_util.h"
#include "workload/generators/spec/model_flops.h"
#include "workload/kernel_shape.h"

namespace sim::testing {
namespace {

std::uint64_t tensor_size(const et::Node& n) {
  for (const et::AttributeProto& a : n.attr()) {
    if (a.name() == "tensor_size") return a.uint64_val();
  }
  return 0;
}
bool is_cast(const et::Node& n) { return attr_string(n, "membound_op").value_or("").rfind("fp8_", 0) == 0; }
// "layer3.attn.proj.cast.fwd mb2" -> "attn.proj.cast.fwd"; "" for a node outside the layers.
std::string role(const std::string& name) {
  if (name.rfind("layer", 0) != 0) return "";
  const std::size_t dot = name.find('.'), space = name.find(' ');
  return name.substr(dot + 1, space - dot - 1);
}

// The small Llama of the generator tests: hidden 64, 8 heads of 8, 2 KV heads, SwiGLU 176.
constexpr std::uint64_t kLayers = 4, kHidden = 64, kFfn = 176, kHeads = 8, kKvHeads = 2;

struct Expected {
  std::uint64_t bytes = 0;  // per node
  std::uint64_t nodes = 0;  // over all ranks
};

// The closed form of a dense layer's casts: each node's bytes (elements of its
// tensor x bytes per element: cast 2 + 1, cast with transpose 2 + 2, transpose
// 1 + 1) and how many such nodes the iteration has over all ranks.
std::map<std::string, Expected> closed_form(std::uint64_t tp, std::uint64_t cp, std::uint64_t dp, bool sp,
                                            std::uint64_t microbatches, bool recompute) {
  const std::uint64_t tok = 32 / cp, h = kHidden, d = kHidden / kHeads;
  const bool te_sp = sp && tp > 1;
  const std::uint64_t shard = te_sp ? tok / tp : tok;
  const std::uint64_t hq = kHeads * d / tp, qkv = (kHeads + 2 * kKvHeads) * d / tp, f = kFfn / tp, fc1 = 2 * f;
  const std::uint64_t ranks = tp * cp * dp;  // per layer: every rank of its stage
  const std::uint64_t per_layer = ranks * microbatches;
  std::map<std::string, Expected> e;
  // Weights: the fp8 copy and its transpose, once per iteration (in its chunk's first micro-batch).
  e["attn.qkv.weight_cast.fwd"] = {4 * h * qkv, ranks * kLayers};
  e["attn.proj.weight_cast.fwd"] = {4 * hq * h, ranks * kLayers};
  e["mlp.fc1.weight_cast.fwd"] = {4 * h * fc1, ranks * kLayers};
  e["mlp.fc2.weight_cast.fwd"] = {4 * f * h, ranks * kLayers};
  // Inputs of the plain Linears (projection, FC2): cast alone with TE's sequence parallelism, else with the
  // transpose; under full recomputation the first forward (without gradients) casts alone.
  const std::uint64_t in_bytes = te_sp ? 3 : 4;
  e["attn.proj.cast.fwd"] = {tok * hq * (recompute ? 3 : in_bytes), kLayers * per_layer};
  e["mlp.fc2.cast.fwd"] = {tok * f * (recompute ? 3 : in_bytes), kLayers * per_layer};
  if (recompute) {
    e["attn.proj.cast.recompute"] = {tok * hq * in_bytes, kLayers * per_layer};
    e["mlp.fc2.cast.recompute"] = {tok * f * in_bytes, kLayers * per_layer};
  }
  // Gradients: the column-parallel (LayerNormLinear) ones cast with their transpose, the norm output transposed.
  e["attn.qkv.grad_cast.bwd"] = {4 * tok * qkv, kLayers * per_layer};
  e["mlp.fc1.grad_cast.bwd"] = {4 * tok * fc1, kLayers * per_layer};
  e["attn.qkv.input_transpose.bwd"] = {2 * tok * h, kLayers * per_layer};
  e["mlp.fc1.input_transpose.bwd"] = {2 * tok * h, kLayers * per_layer};
  // Row-parallel: the gradient's shard cast, gathered in fp8, transposed; the kept fp8 input transposed.
  e["attn.proj.grad_cast.bwd"] = {shard * h * (te_sp ? 3 : 4), kLayers * per_layer};
  e["mlp.fc2.grad_cast.bwd"] = {shard * h * (te_sp ? 3 : 4), kLayers * per_layer};
  if (te_sp) {
    e["attn.proj.grad_transpose.bwd"] = {2 * tok * h, kLayers * per_layer};
    e["mlp.fc2.grad_transpose.bwd"] = {2 * tok * h, kLayers * per_layer};
    e["attn.proj.input_transpose.bwd"] = {2 * tok * hq, kLayers * per_layer};
    e["mlp.fc2.input_transpose.bwd"] = {2 * tok * f, kLayers * per_layer};
  }
  return e;
}

TEST_F(GeneratorTest, Fp8CastsMoveTheBytesTransformerEngineMovesAndNoModelFlops) {
  const std::string model = model_file("llama", llama_yaml(kLayers, kHidden, kFfn, kHeads, kKvHeads, 256));
  struct Case {
    const char* plan;
    std::uint64_t tp, cp, dp;
    bool sp;
    const char* schedule;
    const char* recompute;
    bool overlap;
  };
  for (const Case& c : {Case{"tp=2,pp=2,dp=1,sp", 2, 1, 1, true, "1f1b", "none", false},
                        Case{"tp=2,pp=2,dp=1,sp", 2, 1, 1, true, "interleaved:2", "full", false},
                        Case{"tp=2,pp=1,dp=2,sp", 2, 1, 2, true, "1f1b", "none", true},
                        Case{"tp=2,pp=1,dp=1", 2, 1, 1, false, "1f1b", "selective", false},
                        Case{"tp=1,pp=1,dp=2,cp=2", 1, 2, 2, false, "1f1b", "none", false}}) {
    const std::string label = std::string(c.plan) + " " + c.schedule + " recompute " + c.recompute;
    gen::TrainingOptions o = options(model, c.plan, 8, 32);
    o.schedule = c.schedule;
    o.recompute = c.recompute;
    o.tp_comm_overlap = c.overlap;
    o.dtype = "bf16";
    const gen::TrainingSpec bf16 = gen::make_training_spec(o);
    o.dtype = "fp8";
    const gen::TrainingSpec fp8 = gen::make_training_spec(o);
    const std::map<std::string, Expected> want =
        closed_form(c.tp, c.cp, c.dp, c.sp, fp8.microbatches, std::string(c.recompute) == "full");

    std::map<std::string, std::uint64_t> seen;
    each_node(fp8, [&](std::uint32_t, const et::Node& n) {
      if (n.type() != et::COMP_NODE || !is_cast(n)) return;
      const std::string r = role(n.name());
      ++seen[r];
      auto it = want.find(r);
      if (it == want.end()) {
        ADD_FAILURE() << label << ": unexpected cast " << n.name();
        return;
      }
      EXPECT_EQ(tensor_size(n), it->second.bytes) << label << " " << n.name();
      EXPECT_EQ(attr_int(n, "num_ops").value_or(-1), 0) << n.name();
      EXPECT_EQ(recomputed(n), r.ends_with(".recompute")) << n.name();
      // The kernel model times the node from its shape: the same bytes.
      KernelShape s;
      s.kind = KernelKind::kMembound;
      s.op = *attr_string(n, "membound_op");
      s.dtype = *attr_string(n, "dtype");
      s.elements = *attr_int(n, "elements");
      EXPECT_DOUBLE_EQ(s.bytes(), static_cast<double>(tensor_size(n))) << n.name();
    });
    for (const auto& [r, e] : want) EXPECT_EQ(seen[r], e.nodes) << label << " " << r;

    each_node(bf16, [&](std::uint32_t, const et::Node& n) {
      EXPECT_FALSE(is_cast(n)) << label << ": a cast under bf16: " << n.name();
    });
    // Casts are not model FLOPs: the count is the same as bf16's and the closed form's.
    EXPECT_EQ(counted_flops(fp8).first, counted_flops(bf16).first) << label;
    EXPECT_EQ(counted_flops(fp8).first, gen::model_flops_exact(fp8)) << label;
  }
}

// The experts are TE Linears on their routed tokens: each casts its input and
// its gradient with the transpose, and its weights once per iteration.
TEST_F(GeneratorTest, Fp8CastsOfTheExpertsFollowTheirRoutedTokens) {
  const std::string model = model_file("moe", llama_yaml(2, 64, 96, 4, 2, 128, 4, 2));
  gen::TrainingOptions o = options(model, "tp=2,pp=1,dp=2,ep=2,sp", 8, 32);
  o.dtype = "fp8";
  const gen::TrainingSpec spec = gen::make_training_spec(o);
  // Per rank and micro-batch: 32 / tp = 16 tokens, top 2 of 4 experts, 2 local: 16 x 2 x 2 / 4 = 16 per expert.
  const std::uint64_t local = 2, te = 16, h = 64, f = 96, f1 = 192;
  const std::map<std::string, std::uint64_t> want{
      {"mlp.experts.fc1.cast.fwd", 4 * local * te * h},       {"mlp.experts.fc2.cast.fwd", 4 * local * te * f},
      {"mlp.experts.fc1.grad_cast.bwd", 4 * local * te * f1}, {"mlp.experts.fc2.grad_cast.bwd", 4 * local * te * h},
      {"mlp.experts.fc1.weight_cast.fwd", 4 * local * h * f1}, {"mlp.experts.fc2.weight_cast.fwd", 4 * local * f * h}};
  std::map<std::string, std::uint64_t> seen;
  each_node(spec, [&](std::uint32_t, const et::Node& n) {
    if (n.type() != et::COMP_NODE || !is_cast(n)) return;
    const std::string r = role(n.name());
    EXPECT_EQ(r.find("router"), std::string::npos) << n.name();  // the router stays bf16: no cast
    if (!want.contains(r)) return;
    ++seen[r];
    EXPECT_EQ(tensor_size(n), want.at(r)) << n.name();
  });
  // 4 ranks x 2 layers x 4 micro-batches; the weights once per layer.
  ASSERT_EQ(spec.microbatches, 4u);
  for (const auto& [r, bytes] : want) EXPECT_EQ(seen[r], r.find("weight") != std::string::npos ? 8u : 32u) << r;
}

}  // namespace
}  // namespace sim::testing
