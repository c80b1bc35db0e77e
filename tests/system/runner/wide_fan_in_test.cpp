// A node with more parents than the 2-byte pending counter holds (0xffff or
// more): its count lives in a side table and it starts exactly when its last
// parent ends (system/runner/simulation_run.h).
#include <gtest/gtest.h>

#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;

TEST(WideFanIn, NodeWith70000ParentsStartsAfterTheLast) {
  // 70,000 independent 1 us COMP nodes share the GPU, so they end at 70,000 us;
  // the join (1 us) depends on all of them and ends at 70,001 us.
  constexpr std::uint64_t kParents = 70000;
  const auto traces = make_traces(1, [](int) {
    std::vector<et::Node> nodes;
    std::vector<std::uint64_t> all;
    for (std::uint64_t i = 1; i <= kParents; ++i) {
      nodes.push_back(comp_node(i, 1));
      all.push_back(i);
    }
    nodes.push_back(comp_node(kParents + 1, 1, all));
    nodes.push_back(comp_node(kParents + 2, 1, {kParents + 1}));  // and its child after it
    return nodes;
  });
  const auto res = simulate(traces, load_topology(source_dir() + "/configs/ring8.yml"));
  EXPECT_EQ(res.makespan, static_cast<Time>(kParents + 2) * kMicrosecond);
  EXPECT_EQ(res.ranks[0].nodes, kParents + 2);
}

}  // namespace
}  // namespace sim
