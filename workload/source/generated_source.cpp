// gen:transformer?...: a training iteration generated in memory, no files.
#include "workload/generators/spec/model_flops.h"
#include "workload/generators/transformer/transformer_workload.h"
#include "workload/source/scheme_sources.h"

namespace sim::source {
namespace {

class GeneratedSource final : public WorkloadSource {
 public:
  explicit GeneratedSource(const std::string& text)
      : WorkloadSource(text), spec_(gen::generated_workload_spec(text)) {}

  std::string_view scheme() const override { return "gen"; }
  std::optional<std::uint32_t> rank_count() const override { return spec_.plan.world(); }
  std::vector<RankGraph> graphs(const GraphOptions& options, unsigned threads) const override {
    return gen::transformer_rank_graphs(spec_, options, "gen:transformer", threads);
  }
  const gen::TrainingSpec* training_spec() const override { return &spec_; }
  std::optional<TrainingFacts> training_facts() const override {
    return TrainingFacts{gen::model_flops_per_iteration(spec_), spec_.plan.pp, spec_.fp8 ? "fp8" : "bf16"};
  }

 private:
  gen::TrainingSpec spec_;
};

}  // namespace

std::shared_ptr<const WorkloadSource> open_generated(const std::string& text) {
  return std::make_shared<const GeneratedSource>(text);
}

}  // namespace sim::source
