// Mixture-of-experts models: the built-in Mixtral 8x7B, 8x22B and
// DeepSeek-V3-like models' model FLOPs against closed forms worked out by
// hand, the generated nodes summing to them; shared experts, first dense
// layers, multi-head latent attention; the capacity factor and seeded Zipf
// routing (workload/generators/transformer/expert_load.h); the model keys' checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "tests/workload/generators/generator_test_util.h"
#include "workload/generators/spec/model.h"
#include "workload/generators/spec/model_flops.h"
#include "workload/generators/spec/parallel_plan.h"
#include "workload/generators/transformer/expert_load.h"

namespace sim::testing {
namespace {

class MoeModelTest : public GeneratorTest {};

// Mixtral 8x7B at seq 4096, one sequence. Per token and layer, forward:
//   QKV 2 x 4096 x (4096 + 2 x 1024)            =  50,331,648
//   attention 4 x 4096 x 4096                   =  67,108,864
//   projection 2 x 4096 x 4096                  =  33,554,432
//   experts 2 x (3 x 2 x 4096 x 14336)          = 704,643,072
//   router 2 x 4096 x 8                         =      65,536
// layer 855,703,552; x 32 layers + logits 2 x 4096 x 32000 (262,144,000)
// = 27,644,657,664 per token; x 3 x 4096 tokens.
TEST_F(MoeModelTest, Mixtral8x7bModelFlopsByHand) {
  const gen::TrainingSpec spec = gen::make_training_spec(options("mixtral-8x7b", "tp=1,pp=1,dp=1", 1, 4096));
  EXPECT_EQ(gen::model_flops_exact(spec), 339'697'553'375'232u);
  EXPECT_EQ(counted_flops(spec).first, 339'697'553'375'232u);
}

// Mixtral 8x22B: QKV 2 x 6144 x (6144 + 2 x 1024) = 100,663,296; attention
// 4 x 4096 x 6144 = 100,663,296; projection 2 x 6144^2 = 75,497,472; experts
// 2 x 6 x 6144 x 16384 = 1,207,959,552; router 2 x 6144 x 8 = 98,304: layer
// 1,484,881,920; x 56 + logits 2 x 6144 x 32768 (402,653,184) =
// 83,556,040,704 per token; x 3 x 4096.
TEST_F(MoeModelTest, Mixtral8x22bModelFlopsByHand) {
  const gen::TrainingSpec spec = gen::make_training_spec(options("mixtral-8x22b", "tp=1,pp=1,dp=1", 1, 4096));
  EXPECT_EQ(gen::model_flops_exact(spec), 1'026'736'628'170'752u);
  EXPECT_EQ(counted_flops(spec).first, 1'026'736'628'170'752u);
}

// DeepSeek-V3-like, seq 4096. MLA per token and layer, forward:
//   q: 2 x 7168 x 1536 + 2 x 1536 x 128 x (128 + 64)          =  97,517,568
//   kv: 2 x 7168 x (512 + 64) + 2 x 512 x 128 x (128 + 128)   =  41,811,968
//   core: 2 x 4096 x 128 x (128 + 64 + 128)                   = 335,544,320
//   projection: 2 x 128 x 128 x 7168                          = 234,881,024
//   attention 709,754,880.
// MoE layer: (8 routed + 1 shared) x 6 x 7168 x 2048 + router 2 x 7168 x 256
//   = 792,723,456 + 3,670,016 = 796,393,472.
// Dense layer MLP: 6 x 7168 x 18432 = 792,723,456.
// 3 dense + 58 MoE layers + logits 2 x 7168 x 129280 (1,853,358,080)
//   = 93,717,397,504 per token; x 3 x 4096.
TEST_F(MoeModelTest, DeepSeekV3ModelFlopsByHand) {
  const gen::TrainingSpec spec = gen::make_training_spec(options("deepseek-v3", "tp=1,pp=1,dp=1", 1, 4096));
  EXPECT_EQ(gen::model_flops_exact(spec), 1'151'599'380'529'152u);
  EXPECT_EQ(counted_flops(spec).first, 1'151'599'380'529'152u);
  EXPECT_TRUE(spec.model.moe_layer(3));
  EXPECT_FALSE(spec.model.moe_layer(2));
}

// A small DeepSeek-style model: shared experts, a dense first layer, MLA.
std::string small_deepseek(const std::string& extra_moe = "") {
  return "layers: 4\nhidden: 64\nffn_hidden: 96\nheads: 4\nvocab: 128\nmlp: swiglu\nnorm: rmsnorm\n"
         "mla: {q_lora_rank: 24, kv_lora_rank: 16, qk_head_dim: 8, rope_head_dim: 4, v_head_dim: 8}\n"
         "moe:\n  experts: 8\n  top_k: 2\n  expert_ffn_hidden: 16\n  shared_experts: 2\n  first_dense_layers: 1\n" +
         extra_moe;
}

// Per token: q 2*64*24 + 2*24*4*12 = 5,376; kv 2*64*20 + 2*16*4*16 = 4,608;
// core 2*32*4*(8 + 4 + 8) = 5,120; projection 2*4*8*64 = 4,096: attention 19,200.
// Dense layer MLP 6*64*96 = 36,864; MoE layer (2 + 2) x 6*64*16 + router
// 2*64*8 = 24,576 + 1,024 = 25,600. 1 dense + 3 MoE + logits 2*64*128
// (16,384) = 19,200 x 4 + 36,864 + 76,800 + 16,384 = 206,848; x 3 x 8 x 32.
// The MLA down-projections run whole on every tensor-parallel rank: with
// tp = 2 the nodes also carry their second copy, (2 x 64 x 24 + 2 x 64 x 20)
// x 4 layers x 3 x 8 x 32 = 17,301,504 FLOPs of work beyond the model's.
TEST_F(MoeModelTest, SharedExpertsDenseLayersAndLatentAttentionCountedNodeByNode) {
  const std::string model = model_file("ds", small_deepseek());
  for (const char* plan : {"tp=1,pp=1,dp=1", "tp=2,pp=2,dp=2,ep=4,sp", "tp=1,pp=4,dp=4,ep=2", "tp=2,pp=1,dp=4,ep=8,sp"}) {
    gen::TrainingOptions o = options(model, plan, 8, 32);
    const gen::TrainingSpec spec = gen::make_training_spec(o);
    const std::uint64_t duplicated = spec.plan.tp == 2 ? 17'301'504u : 0u;
    EXPECT_EQ(gen::model_flops_exact(spec), 158'859'264u) << plan;
    EXPECT_EQ(counted_flops(spec).first, 158'859'264u + duplicated) << plan;
  }
  gen::TrainingOptions o = options(model, "tp=2,pp=2,dp=2,ep=2,sp", 8, 32);
  o.recompute = "full";
  EXPECT_EQ(counted_flops(gen::make_training_spec(o)).first, 158'859'264u + 17'301'504u);
}

// Parameters: the MoE layer holds the router, the shared experts split by tp
// and its E/ep experts whole; the dense first layer its MLP split by tp.
TEST_F(MoeModelTest, ParametersOfDenseAndExpertLayers) {
  const gen::TrainingSpec spec = gen::make_training_spec(options(model_file("ds", small_deepseek()), "tp=2,pp=1,dp=4,ep=4,sp", 8, 32));
  // Norms 2 x 64; MLA: down 64 x 24 + 64 x 20 + their norms 24 + 16, up 24 x 4 x 12 / 2 + 16 x 4 x 16 / 2,
  // projection 4 x 8 x 64 / 2.
  const std::uint64_t attn = 128 + 1536 + 1280 + 40 + 576 + 512 + 1024;
  EXPECT_EQ(gen::layer_params(spec, 0).dense, attn + 3 * 64 * 96 / 2);
  EXPECT_EQ(gen::layer_params(spec, 0).expert, 0u);
  EXPECT_EQ(gen::layer_params(spec, 1).dense, attn + 64 * 8 + 3 * 64 * 32 / 2);
  EXPECT_EQ(gen::layer_params(spec, 1).expert, 2u * 3 * 64 * 16);
}

// Zipf routing: loads are fixed by (seed, layer), sum to every assignment,
// hold no expert past one per token, and differ between layers and seeds.
TEST_F(MoeModelTest, ZipfRoutingIsSeededAndSumsToEveryToken) {
  const std::string model = model_file("ds", small_deepseek("  routing: {distribution: zipf, exponent: 1.2, seed: 7}\n"));
  const gen::TrainingSpec spec = gen::make_training_spec(options(model, "tp=1,pp=1,dp=4,ep=4", 8, 32));
  const std::uint64_t N = 32 * 2 * 4;  // tokens x top_k x ep
  const std::vector<std::uint64_t> a = gen::expert_tokens(spec, 1), b = gen::expert_tokens(spec, 1);
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::accumulate(a.begin(), a.end(), std::uint64_t{0}), N);
  EXPECT_LE(*std::max_element(a.begin(), a.end()), N / 2);
  EXPECT_GT(*std::max_element(a.begin(), a.end()), N / 8);  // skewed
  EXPECT_NE(gen::expert_tokens(spec, 2), a);
  // Shares 1/i^1.2 over 8 experts (sum 2.3331) of 256: 109.73, 47.76, 29.36,
  // 20.79, 15.91, 12.78, 10.62, 9.05; floors place 251, the 5 largest
  // fractions (.91, .79, .78, .76, .73) one more each.
  std::vector<std::uint64_t> sorted = a;
  std::sort(sorted.rbegin(), sorted.rend());
  EXPECT_EQ(sorted, (std::vector<std::uint64_t>{110, 48, 29, 21, 16, 13, 10, 9}));
  gen::TrainingOptions o = options(model, "tp=1,pp=1,dp=4,ep=4", 8, 32);
  o.routing = "zipf:1.2:8";
  EXPECT_NE(gen::expert_tokens(gen::make_training_spec(o), 1), a);
  o.routing = "uniform";
  EXPECT_EQ(gen::expert_tokens(gen::make_training_spec(o), 1), std::vector<std::uint64_t>(8, N / 8));
  // Model FLOPs as Megatron counts them; the nodes carry the same sum: dropless.
  EXPECT_EQ(counted_flops(spec).first, gen::model_flops_exact(spec));
}

// Skewed ranks compute their own experts' tokens, and every all-to-all is
// sized by the group's most loaded rank.
TEST_F(MoeModelTest, SkewedLoadsSizeEachRanksExpertsAndTheAllToAll) {
  const std::string model = model_file("ds", small_deepseek("  routing: {distribution: zipf, exponent: 1.0, seed: 3}\n"));
  const gen::TrainingSpec spec = gen::make_training_spec(options(model, "tp=1,pp=1,dp=4,ep=4", 8, 32));
  const std::vector<std::uint64_t> load = gen::expert_tokens(spec, 1);
  std::uint64_t heaviest = 0;
  for (std::uint32_t j = 0; j < 4; ++j) heaviest = std::max(heaviest, load[2 * j] + load[2 * j + 1]);
  for (std::uint32_t r = 0; r < 4; ++r) {
    const EtTrace t = gen::transformer_rank_trace(spec, r);
    for (const et::Node& n : t.nodes) {
      if (n.name() == "layer1.mlp.experts.fc1.fwd mb0") {
        EXPECT_EQ(attr_int(n, "num_ops").value_or(0), static_cast<std::int64_t>(2 * (load[2 * r] + load[2 * r + 1]) * 32 * 64)) << r;
      }
      if (n.name() == "layer1.mlp.ep_dispatch.fwd mb0") {
        EXPECT_EQ(attr_int(n, "comm_size").value_or(0), static_cast<std::int64_t>(heaviest * 64 * 2)) << r;
      }
    }
  }
}

// A capacity factor caps each expert at ceil(cf x N / E) tokens; the rest are dropped.
TEST_F(MoeModelTest, CapacityFactorDropsWhatPassesIt) {
  const std::string model = model_file(
      "ds", small_deepseek("  capacity_factor: 1.25\n  routing: {distribution: zipf, exponent: 1.2, seed: 7}\n"));
  const gen::TrainingSpec spec = gen::make_training_spec(options(model, "tp=1,pp=1,dp=4,ep=4", 8, 32));
  const std::vector<std::uint64_t> load = gen::expert_tokens(spec, 1);
  EXPECT_EQ(*std::max_element(load.begin(), load.end()), 40u);  // ceil(1.25 x 256 / 8)
  EXPECT_LT(std::accumulate(load.begin(), load.end(), std::uint64_t{0}), 256u);
  EXPECT_LT(counted_flops(spec).first, gen::model_flops_exact(spec));  // dropped tokens are not computed
}

// Expert tensor parallelism: etp consecutive (tp, dp) positions split each
// expert; expert-parallel groups take one of each of ep such groups.
TEST_F(MoeModelTest, ExpertTensorParallelGroupsFlopsAndParameters) {
  const gen::ParallelPlan p = gen::parse_parallel_plan("tp=2,pp=1,dp=4,ep=2,etp=2,sp");
  EXPECT_EQ(p.describe(), "tp=2,pp=1,dp=4,ep=2,etp=2,sp");
  EXPECT_EQ(gen::group_of(p, gen::Dim::kExpertTp, 0).ranks, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(gen::group_of(p, gen::Dim::kEp, 0).ranks, (std::vector<std::uint32_t>{0, 2}));
  EXPECT_EQ(gen::group_of(p, gen::Dim::kExpertDp, 0).ranks, (std::vector<std::uint32_t>{0, 4}));
  EXPECT_EQ(gen::group_of(p, gen::Dim::kExpertTp, 3).ranks, (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(gen::group_of(p, gen::Dim::kEp, 3).ranks, (std::vector<std::uint32_t>{1, 3}));
  EXPECT_EQ(gen::group_of(p, gen::Dim::kExpertDp, 3).ranks, (std::vector<std::uint32_t>{3, 7}));
  EXPECT_EQ(gen::group_of(p, gen::Dim::kExpertTp, 3).name, "etp:1");
  EXPECT_EQ(gen::group_of(p, gen::Dim::kEp, 3).name, "ep:1");

  const std::string model = model_file("ds", small_deepseek());
  for (const char* plan : {"tp=2,pp=1,dp=4,ep=2,etp=2,sp", "tp=1,pp=2,dp=4,ep=2,etp=2", "tp=2,pp=2,dp=2,ep=1,etp=4,sp"}) {
    const gen::TrainingSpec spec = gen::make_training_spec(options(model, plan, 8, 32));
    const std::uint64_t duplicated = spec.plan.tp == 2 ? 17'301'504u : 0u;  // MLA's down-projections, as above
    EXPECT_EQ(counted_flops(spec).first, 158'859'264u + duplicated) << plan;
    // E/ep experts of 3 x 64 x 16, split etp ways.
    EXPECT_EQ(gen::layer_params(spec, 1).expert, 8u / spec.plan.ep * 3 * 64 * 16 / spec.plan.etp) << plan;
    EXPECT_EQ(gen::expert_dp_size(spec), std::uint64_t{spec.plan.tp} * spec.plan.dp / (spec.plan.ep * spec.plan.etp)) << plan;
  }
  // The etp all-gather carries the rank's dispatched tokens, the reduce-scatter etp times that.
  const gen::TrainingSpec spec = gen::make_training_spec(options(model, "tp=2,pp=1,dp=4,ep=2,etp=2,sp", 8, 32));
  std::int64_t gathered = 0, scattered = 0;
  for (const et::Node& n : gen::transformer_rank_trace(spec, 0).nodes) {
    if (n.name() == "layer1.mlp.experts.tp_allgather.fwd mb0") gathered = attr_int(n, "comm_size").value_or(0);
    if (n.name() == "layer1.mlp.experts.tp_reduce_scatter.fwd mb0") scattered = attr_int(n, "comm_size").value_or(0);
  }
  EXPECT_EQ(gathered, 16 * 2 * 64 * 2);  // 16 tokens x top 2 x ep 2 / 8 experts x 4 local x 64 x 2 B
  EXPECT_EQ(scattered, 2 * gathered);
  EXPECT_NE(error_of(options(model, "tp=2,pp=1,dp=16,ep=1,etp=32,sp", 32, 32)).find("etp=32 must divide the experts' width 16"),
            std::string::npos);
  EXPECT_NE(error_of(options(model, "tp=2,pp=1,dp=4,ep=1,etp=32,sp", 8, 32)).find("ep x etp = 32 must divide tp x dp = 8"),
            std::string::npos);
  EXPECT_NE(error_of(options(model_file("llama", llama_yaml(2, 64, 96, 4, 2, 128)), "tp=1,pp=1,dp=2,etp=2", 8, 32))
                .find("etp=2 but"),
            std::string::npos);
}

TEST_F(MoeModelTest, BadMoeKeysAreErrorsNamingTheKey) {
  const std::string base = "layers: 4\nhidden: 64\nffn_hidden: 96\nheads: 4\nvocab: 128\n";
  auto error = [&](const std::string& yaml) {
    try {
      gen::parse_model(yaml, "m.yml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error(base + "moe: {experts: 8, top_k: 2, shared: 1}\n").find("shared"), std::string::npos);
  EXPECT_NE(error(base + "moe: {experts: 8, top_k: 2, first_dense_layers: 4}\n").find("moe.first_dense_layers (4) must be below layers (4)"),
            std::string::npos);
  EXPECT_NE(error(base + "moe: {experts: 8, top_k: 2, capacity_factor: 0}\n").find("moe.capacity_factor"), std::string::npos);
  EXPECT_NE(error(base + "moe: {experts: 8, top_k: 2, expert_ffn_hidden: 0}\n").find("expert_ffn_hidden must be at least 1"),
            std::string::npos);
  EXPECT_NE(error(base + "moe: {experts: 8, top_k: 2, shared_experts: 4294967296}\n").find("moe.shared_experts must be at most"),
            std::string::npos);
  EXPECT_NE(error(base + "moe: {experts: 8, top_k: 2, routing: {distribution: pareto}}\n").find("uniform or zipf"),
            std::string::npos);
  EXPECT_NE(error(base + "moe: {experts: 8, top_k: 2, routing: {distribution: zipf}}\n").find("exponent"), std::string::npos);
  EXPECT_NE(error(base + "moe: {experts: 8, top_k: 2, routing: {distribution: uniform, seed: 3}}\n").find("go with distribution: zipf"),
            std::string::npos);
  EXPECT_NE(error(base + "mla: {q_lora_rank: 8, kv_lora_rank: 8, qk_head_dim: 8, rope_head_dim: 4}\n").find("v_head_dim"),
            std::string::npos);
  EXPECT_NE(error(base + "kv_heads: 2\nmla: {q_lora_rank: 8, kv_lora_rank: 8, qk_head_dim: 8, rope_head_dim: 4, v_head_dim: 8}\n")
                .find("kv_heads"),
            std::string::npos);
  EXPECT_NE(error(base + "mla: {q_lora_rank: 8, kv_lora_rank: 8, qk_head_dim: 8, rope_head_dim: 4, v_head_dim: 8, x: 1}\n").find("x"),
            std::string::npos);

  const std::string model = model_file("ds", small_deepseek());
  gen::TrainingOptions o = options(model, "tp=1,pp=1,dp=4,ep=4", 8, 32);
  o.routing = "zipf:0";
  EXPECT_NE(error_of(o).find("expected uniform or zipf:S[:SEED]"), std::string::npos) << error_of(o);
  o.routing = "zipf:1.1:x";
  EXPECT_NE(error_of(o).find("--routing 'zipf:1.1:x'"), std::string::npos) << error_of(o);
  o.routing = "zipf:1.1";
  EXPECT_EQ(error_of(o), "(no error)");
  o.parallel = "tp=2,pp=1,dp=2,cp=2,sp";
  o.routing = "";
  EXPECT_NE(error_of(o).find("multi-head latent attention"), std::string::npos) << error_of(o);
  gen::TrainingOptions dense = options(model_file("llama", llama_yaml(2, 64, 96, 4, 2, 128)), "tp=1,pp=1,dp=1", 8, 32);
  dense.routing = "uniform";
  EXPECT_NE(error_of(dense).find("has no experts"), std::string::npos) << error_of(dense);
  // The query spells it routing= and validates it the same way.
  EXPECT_THROW(gen::parse_training_query("model=x&routing=zipf:1&routing=uniform"), InputError);
  EXPECT_EQ(gen::parse_training_query("model=x&routing=zipf:1.5:9").routing, "zipf:1.5:9");
}

}  // namespace
}  // namespace sim::testing
