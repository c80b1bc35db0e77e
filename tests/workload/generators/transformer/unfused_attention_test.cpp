// --attention unfused (Megatron-LM's core attention before fused kernels) and
// the residual stream's memory traffic (bias-dropout-add, its backward, the
// gradient accumulation): FLOPs and bytes of the generated nodes equal their
// closed forms, and bad options are clear errors.
#include <gtest/gtest.h>

#include "core/time.h"
#include "tests/workload/generators/generator_test_util.h"

namespace sim::testing {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

std::string with_dropout(std::string yaml) { return yaml + "dropout: 0.1\n"; }

// Bytes of rank 0's memory-bound nodes whose name contains `part`.
std::uint64_t bytes_of(const gen::TrainingSpec& spec, const char* part) {
  std::uint64_t sum = 0;
  for (const et::Node& n : gen::transformer_rank_trace(spec, 0).nodes) {
    if (n.type() == et::COMP_NODE && contains(n.name(), part) && attr_string(n, "kernel") == "membound") {
      sum += static_cast<std::uint64_t>(attr_int(n, "tensor_size").value_or(0));
    }
  }
  return sum;
}

// The two batched GEMMs carry exactly the attention FLOPs a fused kernel
// stands for: the whole iteration still counts Megatron-LM's formula, with
// and without pipelines, tensor parallelism and recomputation.
TEST_F(GeneratorTest, UnfusedAttentionCountsMegatronsModelFlops) {
  const std::string model = model_file("gpt", with_dropout(gpt_yaml(4, 64, 4, 128)));
  for (const char* plan : {"tp=1,pp=1,dp=1", "tp=2,pp=2,dp=2", "tp=4,pp=1,dp=1,sp"}) {
    gen::TrainingOptions o = options(model, plan, 8, 32);
    o.attention = "unfused";
    const auto [counted, recomputed] = counted_flops(gen::make_training_spec(o));
    EXPECT_EQ(counted, megatron_gpt(8, 32, 4, 64, 128)) << plan;
    EXPECT_EQ(recomputed, 0u) << plan;
  }
  const std::uint64_t B = 8, s = 32, l = 4, h = 64;
  gen::TrainingOptions o = options(model, "tp=2,pp=2,dp=1", B, s);
  o.attention = "unfused";
  o.recompute = "selective";  // the core attention again: its two GEMMs' forward
  auto [counted, recomputed] = counted_flops(gen::make_training_spec(o));
  EXPECT_EQ(counted, megatron_gpt(B, s, l, h, 128));
  EXPECT_EQ(recomputed, B * s * l * 4 * s * h);
  o.recompute = "full";
  std::tie(counted, recomputed) = counted_flops(gen::make_training_spec(o));
  EXPECT_EQ(recomputed, B * s * l * (24 * h * h + 4 * s * h));  // every layer's forward once more
}

// The s x s tensors between the GEMMs, per layer and micro-batch, with
// E = micro-batch x heads/tp x s^2 elements of 2 B: the softmax reads and
// writes them (4E B), dropout also writes its 1 B mask (5E); backward, the
// dropout's reads the gradient and the mask and writes (5E), the softmax's
// reads output and gradient and writes (6E). Full recomputation runs the
// forward twice.
TEST_F(GeneratorTest, UnfusedAttentionMovesTheScoresThroughMemory) {
  const std::uint64_t mb = 2, heads = 4, s = 32, layers = 4;
  for (const auto& [tp, dropout, recompute] :
       {std::tuple{1u, true, "none"}, std::tuple{2u, true, "full"}, std::tuple{2u, false, "selective"}}) {
    std::string yaml = gpt_yaml(layers, 64, heads, 128);
    const std::string model = model_file("gpt", dropout ? with_dropout(yaml) : yaml);
    gen::TrainingOptions o = options(model, "tp=" + std::to_string(tp) + ",pp=1,dp=1", 8, s);
    o.micro_batch = mb;
    o.attention = "unfused";
    o.recompute = recompute;
    const gen::TrainingSpec spec = gen::make_training_spec(o);
    const std::uint64_t E = mb * heads / tp * s * s, microbatches = 8 / mb;
    const std::uint64_t forwards = std::string(recompute) == "none" ? 1 : 2;
    const std::uint64_t fwd = 4 * E + (dropout ? 5 * E : 0), bwd = 6 * E + (dropout ? 5 * E : 0);
    const std::uint64_t want = layers * microbatches * (forwards * fwd + bwd);
    EXPECT_EQ(bytes_of(spec, ".attn.core.softmax") + bytes_of(spec, ".attn.core.dropout"), want)
        << "tp " << tp << ", dropout " << dropout << ", recompute " << recompute;
  }
  // The fused kernel writes none of it.
  const std::string model = model_file("gpt", with_dropout(gpt_yaml(layers, 64, heads, 128)));
  EXPECT_EQ(bytes_of(gen::make_training_spec(options(model, "tp=1,pp=1,dp=1", 8, s)), ".attn.core."), 0u);
}

// Each block's output joins the residual stream over the rank's tokens x
// hidden elements e (the sequence shard with sp): bias-dropout-add reads the
// output and the residual and writes the sum and the mask (7e B; a plain
// add 6e without dropout); backward, the dropout's 5e and the accumulation of
// the two gradients, 6e. Two blocks per layer.
TEST_F(GeneratorTest, ResidualStreamTrafficPerBlock) {
  const std::uint64_t h = 64, s = 32, layers = 4, microbatches = 4;
  for (const auto& [plan, dropout, tokens] : {std::tuple{"tp=2,pp=1,dp=1", true, s}, std::tuple{"tp=2,pp=1,dp=1,sp", true, s / 2},
                                              std::tuple{"tp=1,pp=1,dp=1", false, s}}) {
    std::string yaml = gpt_yaml(layers, h, 4, 128);
    const std::string model = model_file("gpt", dropout ? with_dropout(yaml) : yaml);
    const gen::TrainingSpec spec = gen::make_training_spec(options(model, plan, microbatches, s));
    const std::uint64_t e = tokens * h;
    const std::uint64_t want = layers * microbatches * 2 * ((dropout ? 7 : 6) * e + (dropout ? 5 : 0) * e + 6 * e);
    std::uint64_t got = 0;
    for (const et::Node& n : gen::transformer_rank_trace(spec, 0).nodes) {
      if ((contains(n.name(), ".residual.") || contains(n.name(), "attn.dropout.") || contains(n.name(), "mlp.dropout.")) &&
          !contains(n.name(), ".core.")) {
        got += static_cast<std::uint64_t>(attr_int(n, "tensor_size").value_or(0));
      }
    }
    EXPECT_EQ(got, want) << plan << ", dropout " << dropout;
  }
}

TEST_F(GeneratorTest, UnfusedAttentionAndDropoutOptionsAreChecked) {
  const std::string model = model_file("gpt", gpt_yaml(4, 64, 4, 128));
  gen::TrainingOptions o = options(model, "tp=1,pp=1,dp=1,cp=2", 8, 32);
  o.attention = "unfused";
  EXPECT_EQ(error_of(o),
            "--attention unfused: context parallelism (cp=2) runs the fused attention kernel only (Transformer "
            "Engine's ring attention)");
  o = options(model, "tp=1,pp=1,dp=1", 8, 32);
  o.attention = "flash";
  EXPECT_EQ(error_of(o), "--attention 'flash': expected fused or unfused");
  EXPECT_EQ(gen::parse_training_query("model=m&attention=unfused").attention, "unfused");
  EXPECT_EQ(gen::parse_training_query("model=m").attention, "fused");
  try {
    gen::parse_model(gpt_yaml(4, 64, 4, 128) + "dropout: 1.5\n", "m.yml");
    ADD_FAILURE() << "dropout 1.5 accepted";
  } catch (const InputError& e) {
    EXPECT_TRUE(ends_with(e.what(), "dropout is a probability in [0, 1)")) << e.what();
    EXPECT_TRUE(contains(e.what(), "m.yml:10")) << e.what();
  }
}

}  // namespace
}  // namespace sim::testing
