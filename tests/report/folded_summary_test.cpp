// What the report says a folded run stood for: replicas, or with context-
// parallel ranks folded as copies (system/groups/replica_folding.h) the
// copies of each rank, split into data-parallel replicas and context ranks,
// in the summary line and the JSON report, and whether the fold is exact.
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

// A mixture of experts' copies whose routes queue past their ports are approximate, and say so.
TEST(FoldedSummary, CopiesThroughSharedQueuesSayTheyAreApproximate) {
  std::ostringstream text, json, exact;
  SimulationResult r = folded(16, 1);
  r.replica_period = 4;
  r.folded_replicas = 4;
  print_summary(exact, r, RunInfo{});
  EXPECT_NE(exact.str().find("(4 of 16 ranks; exact, --no-aggregation simulates all;"), std::string::npos) << exact.str();
  r.queued_past_port_routes = 24;
  print_summary(text, r, RunInfo{});
  write_json_report(json, r, RunInfo{});
  EXPECT_NE(text.str().find("replicas folded: 16 identical replicas simulated as 4, replica k standing for every "
                            "replica k + 4 j (4 of 16 ranks; approximate: 24 mirrored routes queue past their port"),
            std::string::npos)
      << text.str();
  EXPECT_NE(json.str().find("\"folding_approximate_routes\": 24"), std::string::npos) << json.str();
}

}  // namespace
}  // namespace sim
