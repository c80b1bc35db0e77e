// Context parallelism as Megatron-LM and Transformer Engine run it: ring
// attention over a sequence cut into 2 cp chunks (rank r holding chunks r and
// 2 cp - 1 - r). Checked against closed forms: the kernels each rank runs, the
// causal query-key pairs they compute (each pair of a sequence exactly once in
// the CP group, 1/cp on every rank), and the K/V bytes exchanged.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "tests/workload/generators/generator_test_util.h"

namespace sim::testing {
namespace {

struct AttentionKernel {
  std::int64_t batch, heads, seq;
  bool causal;
};

AttentionKernel kernel_of(const et::Node& n) {
  return {*attr_int(n, "attn_batch"), *attr_int(n, "attn_heads"), *attr_int(n, "attn_seq"),
          *attr_bool(n, "attn_causal")};
}

// Query-key pairs an attention kernel computes: all of them, or under the
// causal mask those with the key not after the query.
std::int64_t pairs(const AttentionKernel& k) {
  return k.batch * k.heads * (k.causal ? k.seq * (k.seq + 1) / 2 : k.seq * k.seq);
}

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

TEST_F(GeneratorTest, RingAttentionComputesEveryCausalPairOnceSharedEvenlyByTheCpRanks) {
  // 4 layers, hidden 64, 8 heads of 8, 2 key/value heads; micro-batch 2 of seq 64.
  const std::string model = model_file("llama", llama_yaml(4, 64, 176, 8, 2, 256));
  const std::int64_t b = 2, s = 64, heads_per_rank = 8 / 2;
  for (const std::uint32_t cp : {2u, 4u}) {
    gen::TrainingOptions o = options(model, "tp=2,pp=1,dp=1,cp=" + std::to_string(cp), 4, s);
    o.micro_batch = b;
    const gen::TrainingSpec spec = gen::make_training_spec(o);
    const std::int64_t local = s / cp;
    // (rank, pass) -> pairs over one layer and micro-batch (layer0 mb0).
    std::map<std::pair<std::uint32_t, std::string>, std::int64_t> per_rank;
    std::map<std::uint32_t, std::int64_t> blocks;
    each_node(spec, [&](std::uint32_t rank, const et::Node& n) {
      if (n.type() != et::COMP_NODE || attr_string(n, "kernel") != "attention") return;
      if (!starts_with(n.name(), "layer0.attn.core.block")) return;
      if (n.name().find(" mb0") == std::string::npos) return;
      const AttentionKernel k = kernel_of(n);
      const std::string pass = *attr_string(n, "attn_pass");
      // Step 0 (the rank's own K/V): causal over its s/cp tokens; later steps
      // half an (s/cp)^2 block without a mask, written as 2b x (s/2cp)^2.
      const bool step0 = starts_with(n.name(), "layer0.attn.core.block0.");
      EXPECT_EQ(k.causal, step0) << n.name();
      EXPECT_EQ(k.batch, step0 ? b : 2 * b) << n.name();
      EXPECT_EQ(k.seq, step0 ? local : local / 2) << n.name();
      EXPECT_EQ(k.heads, heads_per_rank) << n.name();
      // Model FLOPs stay Megatron's count: every step 4 b (s/cp)^2 heads d (x2 backward).
      EXPECT_EQ(*attr_int(n, "num_ops"), (pass == "bwd" ? 2 : 1) * 4 * b * local * local * heads_per_rank * 8)
          << n.name();
      per_rank[{rank, pass}] += pairs(k);
      if (pass == "fwd") ++blocks[rank];
    });
    ASSERT_EQ(per_rank.size(), 2u * spec.plan.world()) << cp;
    // A sequence's causal pairs, b s (s + 1) / 2 per head, each computed on one
    // CP rank and split evenly: s (s + 1) / (2 cp) is whole because 2 cp divides s.
    const std::int64_t each = b * heads_per_rank * s * (s + 1) / 2 / cp;
    for (const auto& [key, p] : per_rank) EXPECT_EQ(p, each) << "cp " << cp << ", rank " << key.first << " " << key.second;
    for (const auto& [rank, n] : blocks) EXPECT_EQ(n, cp) << "cp " << cp << ", rank " << rank;
  }
}

TEST_F(GeneratorTest, RingAttentionPassesTheKeyValueBlockOnCpMinusOneTimes) {
  const std::string model = model_file("llama", llama_yaml(4, 64, 176, 8, 2, 256));
  const std::uint64_t b = 2, s = 64, layers = 4, kv_per_rank = 2 / 2 * 8;  // kv heads / tp x head dim
  for (const std::uint32_t cp : {2u, 4u}) {
    gen::TrainingOptions o = options(model, "tp=2,pp=1,dp=1,cp=" + std::to_string(cp), 4, s);
    o.micro_batch = b;
    const gen::TrainingSpec spec = gen::make_training_spec(o);
    // K and V of the rank's s/cp tokens in bf16; the backward pass sends dK, dV with them.
    const std::uint64_t kv_block = b * (s / cp) * 2 * kv_per_rank * 2;
    std::map<std::uint32_t, std::uint64_t> fwd, bwd;
    each_node(spec, [&](std::uint32_t rank, const et::Node& n) {
      if (n.type() != et::COMM_SEND_NODE || n.name().find(".cp_send") == std::string::npos) return;
      const std::uint64_t bytes = static_cast<std::uint64_t>(*attr_int(n, "comm_size"));
      (n.name().find(".bwd ") != std::string::npos ? bwd : fwd)[rank] += bytes;
    });
    ASSERT_EQ(fwd.size(), spec.plan.world());
    const std::uint64_t per_pass = layers * spec.microbatches * (cp - 1);
    for (std::uint32_t r = 0; r < spec.plan.world(); ++r) {
      EXPECT_EQ(fwd[r], per_pass * kv_block) << "cp " << cp << ", rank " << r;
      EXPECT_EQ(bwd[r], per_pass * 2 * kv_block) << "cp " << cp << ", rank " << r;
    }
  }
}

}  // namespace
}  // namespace sim::testing
