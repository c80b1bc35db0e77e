// What the report says a folded run stood for: replicas, or with context-
// parallel ranks folded as copies (system/groups/replica_folding.h) the
// copies of each rank, split into data-parallel replicas and context ranks,
// in the summary line and the JSON report.
#include <gtest/gtest.h>

#include <sstream>

#include "report/report.h"

namespace sim {
namespace {

SimulationResult folded(std::uint32_t copies, std::uint32_t ring) {
  SimulationResult r;
  r.ranks.resize(4);
  r.folded_replicas = copies;
  r.context_ring = ring;
  return r;
}

TEST(FoldedSummary, ContextRanksFoldedAsCopiesAreNamedAsSuch) {
  std::ostringstream text, json;
  const SimulationResult r = folded(32, 4);
  print_summary(text, r, RunInfo{});
  write_json_report(json, r, RunInfo{});
  EXPECT_NE(text.str().find("replicas folded: 32 copies of each rank (8 data-parallel replicas x 4 context-parallel "
                            "ranks) simulated as one (4 of 128 ranks;"),
            std::string::npos)
      << text.str();
  EXPECT_NE(json.str().find("\"folded_replicas\": 32"), std::string::npos) << json.str();
  EXPECT_NE(json.str().find("\"folded_context_ranks\": 4"), std::string::npos) << json.str();
}

TEST(FoldedSummary, ReplicasAloneAreReplicas) {
  std::ostringstream text, json;
  const SimulationResult r = folded(8, 1);
  print_summary(text, r, RunInfo{});
  write_json_report(json, r, RunInfo{});
  EXPECT_NE(text.str().find("replicas folded: 8 identical replicas simulated as one (4 of 32 ranks;"),
            std::string::npos)
      << text.str();
  EXPECT_EQ(json.str().find("folded_context_ranks"), std::string::npos) << json.str();
}

}  // namespace
}  // namespace sim
