// The gen:transformer query (`--workload 'gen:transformer?<input>'`) as a run
// reads it: parse_training_query and make_training_spec (every option, the
// quantity limits), then the up-front size estimate and model FLOPs. Only a
// spec whose graphs are tiny by that estimate is generated (every rank into
// its RankGraph, checked as a graph), so each input ends within milliseconds;
// model files are not opened (a path is what the fuzzer would name), only the
// built-in models.
#include <algorithm>

#include "fuzz/harness.h"
#include "workload/generators/spec/model.h"
#include "workload/generators/spec/model_flops.h"
#include "workload/generators/transformer/generation_memory.h"
#include "workload/generators/transformer/transformer_workload.h"

namespace {

constexpr std::uint64_t kMaxGeneratedNodes = 50'000;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  fuzz::expect_clean("gen_query", [&] {
    const std::string query = fuzz::text_of(data, size);
    const gen::TrainingOptions options = gen::parse_training_query(query);
    const std::vector<std::string> builtin = gen::builtin_model_names();
    if (std::find(builtin.begin(), builtin.end(), options.model) == builtin.end()) return;
    const gen::TrainingSpec spec = gen::generated_workload_spec("gen:transformer?" + query);
    (void)gen::model_flops_per_iteration(spec);
    (void)gen::rank_memory(spec, 0);
    (void)gen::rank_memory(spec, spec.plan.world() - 1);
    // Rings (cp, tp overlap) add steps per layer beyond the low bound: count
    // them in.
    const std::uint64_t per_rank =
        gen::min_nodes_per_rank(spec) * (4 + 4 * std::uint64_t{spec.plan.cp} + 8 * std::uint64_t{spec.plan.tp});
    if (spec.plan.world() > 64 || per_rank * spec.plan.world() > kMaxGeneratedNodes) return;
    gen::transformer_rank_graphs(spec, GraphOptions{}, "gen:transformer", 1);
  });
  return 0;
}
