// One explicit-graph topology routed from several threads at once (the points
// of a sweep share it) gives the routes a single thread computes.
#include <gtest/gtest.h>

#include <thread>

#include "network/topology.h"

namespace sim {
namespace {

// Two switches, 16 NPUs, and a chord: shortest paths with ties.
std::string graph_yaml() {
  std::string y = "npus: 16\nswitches: 2\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n";
  for (int n = 0; n < 16; ++n) {
    y.append("  - {src: npu").append(std::to_string(n)).append(", dst: sw").append(n < 8 ? "0" : "1").append("}\n");
  }
  y += "  - {src: sw0, dst: sw1}\n  - {src: npu3, dst: npu12}\n";
  return y;
}

std::vector<std::vector<LinkId>> all_routes(const Topology& t, unsigned threads) {
  const std::uint32_t n = t.npu_count();
  std::vector<std::vector<LinkId>> routes(n * n);
  auto work = [&](unsigned me) {
    // Every thread routes every pair (so tables are built concurrently) and
    // keeps its share.
    for (std::uint32_t dst = 0; dst < n; ++dst) {
      for (std::uint32_t src = 0; src < n; ++src) {
        std::vector<LinkId> r;
        if (src != dst) t.route(src, dst, r);
        if ((src * n + dst) % threads == me) routes[src * n + dst] = std::move(r);
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned k = 0; k < threads; ++k) pool.emplace_back(work, k);
  for (auto& th : pool) th.join();
  return routes;
}

TEST(ShortestPathRouterThreads, ConcurrentRoutingEqualsSerialRouting) {
  const Topology serial = parse_topology(graph_yaml(), "graph");
  const auto expected = all_routes(serial, 1);
  for (int round = 0; round < 20; ++round) {
    const Topology shared = parse_topology(graph_yaml(), "graph");  // fresh: no table built yet
    ASSERT_EQ(all_routes(shared, 4), expected) << "round " << round;
  }
  EXPECT_EQ(expected[3 * 16 + 12].size(), 1u);  // the chord
}

}  // namespace
}  // namespace sim
