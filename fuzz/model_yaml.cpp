// A model YAML (configs/models/*.yml, `--model FILE`): parse_model, then a
// one-rank spec of it (the quantity limits of its sizes) and, when that is
// tiny by the up-front estimate, its rank generated into a RankGraph.
#include "fuzz/harness.h"
#include "workload/generators/spec/model.h"
#include "workload/generators/spec/model_flops.h"
#include "workload/generators/transformer/generation_memory.h"
#include "workload/generators/transformer/transformer_graph.h"
#include "workload/rank_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  fuzz::expect_clean("model_yaml", [&] {
    const gen::ModelConfig model = gen::parse_model(fuzz::text_of(data, size), "fuzz/model.yml");
    gen::TrainingOptions o;
    o.model = "fuzz/model.yml";
    o.parallel = model.is_moe()
                     ? "tp=1,pp=1,dp=" + std::to_string(model.moe.experts) + ",ep=" + std::to_string(model.moe.experts)
                     : "tp=1";
    o.global_batch = model.is_moe() ? model.moe.experts : 1;
    o.seq = 16;
    const gen::TrainingSpec spec = gen::make_training_spec(o, model);
    (void)gen::model_flops_per_iteration(spec);
    if (gen::min_nodes_per_rank(spec) > 5'000 || spec.plan.world() > 8) return;
    const RankGraph g(0, "fuzz/model.yml", GraphOptions{},
                      [&](const RankGraph::NodeSink& sink) { gen::transformer_rank_stream(spec, 0, sink); });
  });
  return 0;
}
