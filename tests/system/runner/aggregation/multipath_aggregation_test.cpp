// Exact step aggregation on the flow backend over a multi-path fabric
// (network.routing, docs/network.md "Multi-path routing"): random small
// workloads on a leaf-spine give the same reports, link statistics and
// timelines with and without it under every routing; it still happens under
// ecmp-hash with one QP per connection (each pair's messages one flow on its
// route), and is refused where a pair's messages spread over several paths.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "random_workloads.h"

namespace sim {
namespace {

using testing::Case;
using testing::random_case;

using MultipathAggregation = testing::AggregationRuns;

TEST_F(MultipathAggregation, RandomWorkloadsAreIdenticalWithAndWithoutUnderEveryRouting) {
  std::mt19937_64 rng(20261202);
  static const char* kRouting[] = {"ecmp-hash", "spray", "adaptive"};
  int hashed_aggregated = 0, spread_aggregated = 0;
  constexpr int kCases = 90;
  for (int i = 0; i < kCases; ++i) {
    Case c = random_case(rng, i, /*flow_only=*/true);
    // The same ranks on 2 leaves of ceil(n/2) NPUs, with 2 to 4 spines.
    const std::uint32_t ranks = static_cast<std::uint32_t>(c.traces.size());
    const std::uint32_t spines = 2 + static_cast<std::uint32_t>(rng() % 3);
    c.topology = "shape: FatTree\nleaves: 2\nnpus_per_leaf: " + std::to_string((ranks + 1) / 2) +
                 "\nspines: " + std::to_string(spines) + "\nbandwidth: 50GB/s\nlatency: 500ns\n";
    const std::string routing = kRouting[i % 3];
    const std::string qps = rng() % 3 == 0 ? "2" : "1";
    c.config.network.options["routing"] = OptionValue{routing, "test"};
    c.config.network.options["qps_per_connection"] = OptionValue{qps, "test"};
    c.config.network.options["ecmp_seed"] = OptionValue{std::to_string(rng() % 100), "test"};
    SCOPED_TRACE(c.name + ", FatTree 2 leaves, " + std::to_string(spines) + " spines, " + routing + ", " + qps + " QPs");
    const std::uint64_t n = same_with_and_without(c);
    if (routing == "ecmp-hash" && qps == "1") {
      hashed_aggregated += n > 0 ? 1 : 0;
    } else {
      spread_aggregated += n > 0 ? 1 : 0;
    }
  }
  EXPECT_GT(hashed_aggregated, 0);   // not vacuous: a pair's messages on one path still aggregate
  EXPECT_EQ(spread_aggregated, 0);   // spread over paths: refused, every message simulated
  std::printf("multi-path flow: %d cases aggregated under ecmp-hash with one QP\n", hashed_aggregated);
}

}  // namespace
}  // namespace sim
