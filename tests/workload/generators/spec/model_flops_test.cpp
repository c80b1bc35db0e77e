// Model FLOPs of a generated iteration, counted node by node, equal the
// closed forms (Megatron-LM's for GPT, extended term by term), exactly.
#include <gtest/gtest.h>

#include "tests/workload/generators/generator_test_util.h"
#include "core/time.h"
#include "workload/generators/spec/model_flops.h"

namespace sim::testing {
namespace {

using Flops = uint128;  // core/time.h

// Term by term: QKV with GQA, attention over s, projection, SwiGLU (3 matrices) or top-k SwiGLU experts
// plus the router, logits; forward + backward = 3 x forward.
std::uint64_t llama_closed_form(Flops B, Flops s, Flops l, Flops h, Flops f, Flops heads, Flops kv_heads, Flops V,
                                Flops experts = 0, Flops top_k = 0) {
  const Flops d = h / heads, hq = heads * d, hkv = kv_heads * d;
  const Flops mlp = experts ? top_k * 6 * h * f + 2 * h * experts : 6 * h * f;
  const Flops layer = 2 * h * (hq + 2 * hkv) + 4 * s * hq + 2 * hq * h + mlp;
  return static_cast<std::uint64_t>(3 * B * s * (l * layer + 2 * h * V));
}

TEST_F(GeneratorTest, GptModelFlopsEqualMegatronsFormula) {
  const std::string model = model_file("gpt", gpt_yaml(4, 64, 4, 128));
  for (const char* plan : {"tp=1,pp=1,dp=1", "tp=2,pp=2,dp=2", "tp=4,pp=4,dp=1,sp", "tp=2,pp=1,dp=2,cp=2"}) {
    const gen::TrainingSpec spec = gen::make_training_spec(options(model, plan, 8, 32));
    const auto [counted, recomputed] = counted_flops(spec);
    EXPECT_EQ(counted, megatron_gpt(8, 32, 4, 64, 128)) << plan;
    EXPECT_EQ(recomputed, 0u) << plan;
    EXPECT_EQ(gen::model_flops_exact(spec), megatron_gpt(8, 32, 4, 64, 128)) << plan;
  }
}

TEST_F(GeneratorTest, BuiltinGpt3ModelFlopsEqualMegatronsFormula) {
  gen::TrainingOptions o = options("gpt3-175b", "tp=8,pp=8,dp=1", 8, 2048);
  const gen::TrainingSpec spec = gen::make_training_spec(o);
  EXPECT_EQ(counted_flops(spec).first, megatron_gpt(8, 2048, 96, 12288, 51200));
}

TEST_F(GeneratorTest, LlamaModelFlopsEqualTheClosedFormTermByTerm) {
  const std::string model = model_file("llama", llama_yaml(4, 64, 176, 8, 2, 256));
  for (const char* plan : {"tp=2,pp=2,dp=1", "tp=2,pp=2,dp=2,sp", "tp=2,pp=1,dp=1,cp=4"}) {
    gen::TrainingOptions o = options(model, plan, 4, 64);
    o.micro_batch = 2;
    const gen::TrainingSpec spec = gen::make_training_spec(o);
    EXPECT_EQ(counted_flops(spec).first, llama_closed_form(4, 64, 4, 64, 176, 8, 2, 256)) << plan;
  }
}

TEST_F(GeneratorTest, MoeModelFlopsCountTopKExpertsAndTheRouter) {
  const std::string model = model_file("moe", llama_yaml(2, 64, 96, 4, 2, 128, 4, 2));
  for (const char* plan : {"tp=1,pp=1,dp=1", "tp=2,pp=2,dp=2,ep=4,sp", "tp=1,pp=1,dp=4,ep=2"}) {
    const gen::TrainingSpec spec = gen::make_training_spec(options(model, plan, 8, 32));
    EXPECT_EQ(counted_flops(spec).first, llama_closed_form(8, 32, 2, 64, 96, 4, 2, 128, 4, 2)) << plan;
  }
}

TEST_F(GeneratorTest, RecomputationIsNotModelFlops) {
  const std::string model = model_file("llama", llama_yaml(4, 64, 176, 8, 2, 256));
  const std::uint64_t B = 4, s = 64, l = 4, h = 64, f = 176, hkv = 16;
  const std::uint64_t layer_forward = 2 * h * (h + 2 * hkv) + 4 * s * h + 2 * h * h + 6 * h * f;  // per token
  gen::TrainingOptions o = options(model, "tp=2,pp=2,dp=1", B, s);
  o.recompute = "full";
  auto [counted, recomputed] = counted_flops(gen::make_training_spec(o));
  EXPECT_EQ(counted, llama_closed_form(B, s, l, h, f, 8, 2, 256));
  EXPECT_EQ(recomputed, B * s * l * layer_forward);  // every layer's forward once more
  o.recompute = "selective";
  std::tie(counted, recomputed) = counted_flops(gen::make_training_spec(o));
  EXPECT_EQ(counted, llama_closed_form(B, s, l, h, f, 8, 2, 256));
  EXPECT_EQ(recomputed, B * s * l * 4 * s * h);  // core attention only
  const std::string moe = model_file("moe", llama_yaml(2, 64, 96, 4, 2, 128, 4, 2));
  o = options(moe, "tp=2,pp=1,dp=2,ep=2,sp", 8, 32);
  o.recompute = "full";
  EXPECT_EQ(counted_flops(gen::make_training_spec(o)).first, llama_closed_form(8, 32, 2, 64, 96, 4, 2, 128, 4, 2));
}

// Llama 3 405B's plan in small: an interleaved schedule whose first and last
// stages hold one layer fewer (14 layers as if 16 on 4 stages x 2 chunks): the
// first chunk of stage 0 and the last chunk of stage 3 lose the layer, every
// layer is placed once, in order, and the FLOPs are the closed form's.
TEST_F(GeneratorTest, InterleavedWithShorterFirstAndLastStagesPlacesEveryLayerOnce) {
  const std::string model = model_file("llama14", llama_yaml(14, 64, 176, 8, 2, 256));
  gen::TrainingOptions o = options(model, "tp=2,pp=4,dp=1", 4, 64);
  o.schedule = "interleaved:2";
  o.first_stage_layers = 3;
  o.last_stage_layers = 3;
  const gen::TrainingSpec spec = gen::make_training_spec(o);
  // (stage, chunk) -> layers; chunk c of stage s follows chunk c of stage s - 1.
  const std::vector<std::uint64_t> layers = {1, 2, 2, 2, 2, 2, 2, 1};
  EXPECT_EQ(spec.chunk_layers, layers);
  std::uint64_t next = 0;
  for (std::uint32_t c = 0; c < 2; ++c) {
    for (std::uint32_t s = 0; s < 4; ++s) {
      EXPECT_EQ(spec.first_layer(s, c), next) << "stage " << s << " chunk " << c;
      next += spec.layers_in(s, c);
    }
  }
  EXPECT_EQ(next, 14u);
  EXPECT_EQ(counted_flops(spec).first, llama_closed_form(4, 64, 14, 64, 176, 8, 2, 256));
  // A chunk may be left with none (the embedding alone), not fewer.
  o.first_stage_layers = 2;
  o.last_stage_layers = 4;
  EXPECT_EQ(error_of(o), "(no error)");
  o.first_stage_layers = 1;
  o.last_stage_layers = 5;
  EXPECT_EQ(error_of(o), "--schedule interleaved:2 with --first-stage-layers 1 and --last-stage-layers 5: needs "
                         "pp >= 3, the inner stages' layers (4) a multiple of 2 chunks, and the first and last stages "
                         "at most one chunk (2 layers) short of them");
}

}  // namespace
}  // namespace sim::testing
