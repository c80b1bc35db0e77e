// Context parallelism as Megatron-LM and Transformer Engine run it: ring
// attention over a sequence cut into 2 cp chunks (rank r holding chunks r and
// 2 cp - 1 - r). Checked against closed forms: the kernels each rank runs, the
// causal query-key pairs they compute (each pair of a sequence exactly once in
// the CP group, 1/cp on every rank), and the K/V bytes exchanged. The
// all-gather form (cp-comm=all-gather, the Llama 3 paper's) computes the same
// pairs and model FLOPs, and gathers K and V over the cp group instead.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "tests/workload/generators/generator_test_util.h"
#include "workload/rank_graph.h"

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

// K/V all-gathered: per layer and micro-batch, every rank runs two kernels
// per pass (the two causal diagonal blocks; the 2 cp - 1 whole blocks of
// (s/2cp)^2) that compute exactly the ring's causal pairs and carry its
// model FLOPs; the forward pass gathers K and V (each rank's b s/cp tokens),
// the backward gathers them again and reduce-scatters dK and dV.
TEST_F(GeneratorTest, AllGatheredKeysAndValuesComputeTheRingsPairsAndFlops) {
  const std::string model = model_file("llama", llama_yaml(4, 64, 176, 8, 2, 256));
  const std::int64_t b = 2, s = 64, heads_per_rank = 8 / 2, kv_per_rank = 2 / 2 * 8;
  for (const std::uint32_t cp : {2u, 4u}) {
    gen::TrainingOptions o = options(model, "tp=2,pp=1,dp=1,cp=" + std::to_string(cp), 4, s);
    o.micro_batch = b;
    o.cp_comm = "all-gather";
    const gen::TrainingSpec spec = gen::make_training_spec(o);
    ASSERT_TRUE(spec.cp_all_gather);
    const std::int64_t local = s / cp;
    std::map<std::pair<std::uint32_t, std::string>, std::int64_t> pairs_of, flops_of, kernels_of;
    std::map<std::tuple<std::uint32_t, std::string, int>, std::int64_t> comm;  // (rank, pass, type) -> bytes
    each_node(spec, [&](std::uint32_t rank, const et::Node& n) {
      if (n.name().find(" mb0") == std::string::npos || !starts_with(n.name(), "layer0.attn.core.")) return;
      EXPECT_EQ(n.name().find(".block"), std::string::npos) << n.name();
      EXPECT_EQ(n.name().find(".cp_send"), std::string::npos) << n.name();
      const std::string pass = n.name().find(".bwd ") != std::string::npos ? "bwd" : "fwd";
      if (n.type() == et::COMM_COLL_NODE) {
        EXPECT_TRUE(starts_with(*attr_string(n, "pg_name"), "cp:")) << n.name();
        comm[{rank, pass, static_cast<int>(*attr_int(n, "comm_type"))}] += *attr_int(n, "comm_size");
        return;
      }
      if (n.type() != et::COMP_NODE || attr_string(n, "kernel") != "attention") return;
      const AttentionKernel k = kernel_of(n);
      const bool diagonal = n.name().find(".diagonal") != std::string::npos;
      EXPECT_EQ(k.causal, diagonal) << n.name();
      EXPECT_EQ(k.batch, diagonal ? 2 * b : (2 * cp - 1) * b) << n.name();
      EXPECT_EQ(k.seq, local / 2) << n.name();
      pairs_of[{rank, pass}] += pairs(k);
      flops_of[{rank, pass}] += *attr_int(n, "num_ops");
      ++kernels_of[{rank, pass}];
    });
    ASSERT_EQ(pairs_of.size(), 2u * spec.plan.world()) << cp;
    // The ring's pairs: a sequence's causal pairs split evenly over the cp
    // ranks, each pair once; its model FLOPs, cp steps of 4 b (s/cp)^2 heads d.
    const std::int64_t each = b * heads_per_rank * s * (s + 1) / 2 / cp;
    const std::int64_t fwd_flops = cp * 4 * b * local * local * heads_per_rank * 8;
    for (const auto& [key, p] : pairs_of) {
      EXPECT_EQ(p, each) << "cp " << cp << ", rank " << key.first << " " << key.second;
      EXPECT_EQ(flops_of[key], (key.second == "bwd" ? 2 : 1) * fwd_flops) << "cp " << cp << ", rank " << key.first;
      EXPECT_EQ(kernels_of[key], 2) << "cp " << cp << ", rank " << key.first;
    }
    // K, V: b s/cp tokens x kv heads / tp x head dim in bf16, each gathered
    // once per pass; dK, dV reduce-scattered from the whole sequence's.
    const std::int64_t one = b * local * kv_per_rank * 2;
    const int gather = static_cast<int>(sim::CollectiveType::kAllGather), scatter = static_cast<int>(sim::CollectiveType::kReduceScatter);
    for (std::uint32_t r = 0; r < spec.plan.world(); ++r) {
      EXPECT_EQ((comm[{r, "fwd", gather}]), 2 * one) << "cp " << cp << ", rank " << r;
      EXPECT_EQ((comm[{r, "bwd", gather}]), 2 * one) << "cp " << cp << ", rank " << r;
      EXPECT_EQ((comm[{r, "bwd", scatter}]), 2 * one * cp) << "cp " << cp << ", rank " << r;
      EXPECT_EQ((comm[{r, "fwd", scatter}]), 0) << "cp " << cp << ", rank " << r;
    }
  }
  gen::TrainingOptions bad = options(model, "tp=2,pp=1,dp=1,cp=2", 4, s);
  bad.cp_comm = "a2a";
  EXPECT_EQ(error_of(bad), "--cp-comm 'a2a': expected p2p or all-gather");
  EXPECT_EQ(gen::parse_training_query("model=llama3-8b&parallel=tp=1,cp=2&cp-comm=all-gather").cp_comm, "all-gather");
  // Without context parallelism there is nothing to gather: the option was ignored, silently.
  gen::TrainingOptions no_cp = options(model, "tp=2,pp=1,dp=2", 4, s);
  no_cp.cp_comm = "all-gather";
  EXPECT_EQ(error_of(no_cp), "--cp-comm all-gather: needs context parallelism (cp > 1 in --parallel; with cp = 1 there "
                             "is no K/V to exchange)");
}

}  // namespace
}  // namespace sim::testing
