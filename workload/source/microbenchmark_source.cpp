// gen:collectives?..., gen:chain?..., gen:p2p-ring?...: a microbenchmark
// generated in memory (workload/generators/workload_generator.h), no files.
#include "workload/generators/workload_generator.h"
#include "workload/source/scheme_sources.h"

namespace sim::source {
namespace {

class MicrobenchmarkSource final : public WorkloadSource {
 public:
  MicrobenchmarkSource(const std::string& text, UnevenSize uneven)
      : WorkloadSource(text), mb_(parse_microbenchmark_workload(text, uneven)) {}

  std::string_view scheme() const override { return "gen"; }
  std::optional<std::uint32_t> rank_count() const override { return mb_.npus(); }
  // Ranks with the same trace share one graph's nodes and edges, as identical
  // ET files do when loaded.
  std::vector<RankGraph> graphs(const GraphOptions& options, unsigned /*threads*/) const override {
    std::vector<RankGraph> out;
    out.reserve(mb_.npus());
    for (std::uint32_t r = 0; r < mb_.npus(); ++r) {
      if (r > 0 && mb_.identical_ranks()) {
        out.emplace_back(out.front(), static_cast<int>(r), text());
      } else {
        out.emplace_back(microbenchmark_trace(mb_, r, text()), static_cast<int>(r), options);
      }
    }
    return out;
  }
  std::optional<IdenticalRanks> identical_ranks(const GraphOptions& options) const override {
    if (!mb_.identical_ranks() || mb_.npus() < 2) return std::nullopt;
    return IdenticalRanks{RankGraph(microbenchmark_trace(mb_, 0, text()), 0, options), mb_.npus()};
  }

 private:
  Microbenchmark mb_;
};

}  // namespace

std::shared_ptr<const WorkloadSource> open_microbenchmark(const std::string& text, UnevenSize uneven) {
  return std::make_shared<const MicrobenchmarkSource>(text, uneven);
}

}  // namespace sim::source
