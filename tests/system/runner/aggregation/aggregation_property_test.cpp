// Exact step aggregation (system/runner/aggregation/): random small workloads
// give the same results with and without it, byte for byte: the JSON and CSV
// reports, the link statistics and the timeline (events counts aside, which
// are what aggregation saves). The workloads mix collective types, sizes
// that do and do not divide evenly, sub-groups, late ranks, compute, and
// point-to-point traffic that crosses the collectives' links at the same
// time, on the analytical backend (both egress rules) and the flow backend.
#include <gtest/gtest.h>

#include <cstdio>

#include "random_workloads.h"

namespace sim {
namespace {

using testing::Case;
using testing::Outputs;
using testing::random_case;

using AggregationProperty = testing::AggregationRuns;

TEST_F(AggregationProperty, RandomWorkloadsAreIdenticalWithAndWithout) {
  std::mt19937_64 rng(20261127);
  std::uint64_t aggregated = 0;
  int cases_aggregated = 0, splits_aggregated = 0;
  constexpr int kCases = 400;
  for (int i = 0; i < kCases; ++i) {
    const Case c = random_case(rng, i);
    SCOPED_TRACE(c.name);
    const std::uint64_t n = same_with_and_without(c);
    aggregated += n;
    cases_aggregated += n > 0 ? 1 : 0;
    if (c.config.dataset_splits > 0 && n > 0) ++splits_aggregated;
  }
  // Not vacuous: a good share of the cases did aggregate collectives.
  EXPECT_GT(cases_aggregated, kCases / 5);
  EXPECT_GT(aggregated, 100u);
  EXPECT_GT(splits_aggregated, 0);  // ASTRA-sim's splits (ChunkedProgram) too
  std::printf("aggregated %llu collectives in %d of %d cases (%d with ASTRA-sim's splits)\n",
              static_cast<unsigned long long>(aggregated), cases_aggregated, kCases, splits_aggregated);
}

}  // namespace
}  // namespace sim
