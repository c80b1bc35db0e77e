// `--dtype fp8` as NeMo/Megatron-core with Transformer Engine runs it: the
// GEMMs of TE's modules (QKV, projection, MLP, experts) take fp8 inputs; the
// output layer (Megatron's own ColumnParallelLinear) and the MoE router (a
// plain linear) stay bf16, as does the attention core. Checked on every
// generated node: its dtype and its bytes (inputs 1 B in fp8, 2 B in bf16;
// the output 2 B).
#include <gtest/gtest.h>

#include "tests/workload/generators/generator_test_util.h"

namespace sim::testing {
namespace {

bool outside_transformer_engine(const std::string& name) {
  return name.rfind("output.logits.", 0) == 0 || name.find(".mlp.router.") != std::string::npos;
}

TEST_F(GeneratorTest, Fp8CoversTransformerEnginesGemmsNotTheOutputLayerOrRouter) {
  const std::string dense = model_file("llama", llama_yaml(4, 64, 176, 8, 2, 256));
  const std::string moe = model_file("moe", llama_yaml(2, 64, 96, 4, 2, 128, 4, 2));
  for (const auto& [model, plan] : {std::pair{dense, "tp=2,pp=2,dp=1,sp"}, std::pair{moe, "tp=2,pp=1,dp=2,ep=2,sp"}}) {
    for (const char* dtype : {"fp8", "bf16"}) {
      gen::TrainingOptions o = options(model, plan, 8, 32);
      o.dtype = dtype;
      const gen::TrainingSpec spec = gen::make_training_spec(o);
      std::uint64_t gemms = 0, bf16_gemms = 0, logits = 0, router = 0;
      each_node(spec, [&](std::uint32_t, const et::Node& n) {
        if (n.type() != et::COMP_NODE) return;
        const std::string kernel = attr_string(n, "kernel").value_or("");
        if (kernel == "attention") {
          EXPECT_EQ(attr_string(n, "dtype"), "bf16") << n.name();
        }
        if (kernel != "gemm") return;
        ++gemms;
        const bool fp8 = std::string(dtype) == "fp8" && !outside_transformer_engine(n.name());
        EXPECT_EQ(attr_string(n, "dtype"), fp8 ? "fp8" : "bf16") << dtype << " " << n.name();
        const std::int64_t m = *attr_int(n, "gemm_m"), nn = *attr_int(n, "gemm_n"), k = *attr_int(n, "gemm_k");
        const std::int64_t batch = attr_int(n, "gemm_batch").value_or(1);
        std::int64_t bytes = -1;
        for (const et::AttributeProto& a : n.attr()) {
          if (a.name() == "tensor_size") bytes = static_cast<std::int64_t>(a.uint64_val());
        }
        EXPECT_EQ(bytes, batch * ((m * k + k * nn) * (fp8 ? 1 : 2) + m * nn * 2)) << dtype << " " << n.name();
        if (!fp8) ++bf16_gemms;
        if (n.name().rfind("output.logits.", 0) == 0) ++logits;
        if (n.name().find(".mlp.router.") != std::string::npos) ++router;
      });
      // The output layer's forward, data and weight gradients on each last-stage rank; the router's likewise per layer.
      EXPECT_GT(logits, 0u) << plan;
      if (model == moe) {
        EXPECT_GT(router, 0u) << plan;
      }
      EXPECT_EQ(bf16_gemms, std::string(dtype) == "fp8" ? logits + router : gemms) << dtype << " " << plan;
    }
  }
}

// Under fp8 with sequence parallelism, what Transformer Engine all-gathers
// over the tensor-parallel group is already fp8: a layer's norm output before
// QKV and FC1 (forward, and again for the weight gradient) and the gradient
// before the projection's and FC2's data gradient, 1 B per element; the
// output layer's input and the embedding's gradient (outside TE) stay bf16.
// With TE's ring exchange the shards it passes on are fp8 the same way.
TEST_F(GeneratorTest, Fp8AllGathersInsideTransformerEngineCarryOneBytePerElement) {
  const std::uint64_t h = 64, s = 32, tp = 2;
  const std::string model = model_file("llama", llama_yaml(4, h, 176, 8, 2, 256));
  for (const bool overlap : {false, true}) {
    for (const char* dtype : {"fp8", "bf16"}) {
      gen::TrainingOptions o = options(model, "tp=2,pp=1,dp=1,sp", 4, s);
      o.dtype = dtype;
      o.tp_comm_overlap = overlap;
      const gen::TrainingSpec spec = gen::make_training_spec(o);
      const std::uint64_t shard = s / tp * h;  // elements of a sequence shard
      const std::uint64_t layer_bytes = std::string(dtype) == "fp8" ? 1 : 2;
      std::size_t layer_gathers = 0, other_gathers = 0, ring_sends = 0;
      for (const et::Node& n : gen::transformer_rank_trace(spec, 0).nodes) {
        const std::int64_t size = attr_int(n, "comm_size").value_or(-1);
        const bool in_layer = n.name().rfind("layer", 0) == 0;
        if (n.type() == et::COMM_COLL_NODE && n.name().find(".tp_allgather") != std::string::npos) {
          const bool outside = !in_layer;  // output.tp_allgather, embedding.grad.tp_allgather
          EXPECT_EQ(size, static_cast<std::int64_t>(shard * (outside ? 2 : layer_bytes))) << dtype << " " << n.name();
          (outside ? other_gathers : layer_gathers) += 1;
        }
        if (n.type() == et::COMM_SEND_NODE && n.name().find(".tp_send") != std::string::npos) {
          EXPECT_EQ(size, static_cast<std::int64_t>(shard * layer_bytes)) << dtype << " " << n.name();
          ++ring_sends;
        }
      }
      EXPECT_GT(layer_gathers, 0u) << dtype << (overlap ? ", overlap" : "");
      EXPECT_GT(other_gathers, 0u) << dtype << (overlap ? ", overlap" : "");
      EXPECT_EQ(ring_sends > 0, overlap) << dtype;
    }
  }
}

}  // namespace
}  // namespace sim::testing
