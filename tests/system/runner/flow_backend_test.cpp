// Whole workloads on the flow backend: agreement with the analytical backend
// where no link is shared, and bisection bounds where links are.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/common/source_paths.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;

// Direct all-to-all as point-to-point traffic: every rank sends bytes/N to
// every other rank at once, and receives from each.
std::vector<EtTrace> direct_all_to_all(int n, std::uint64_t bytes) {
  return make_traces(n, [&](int r) {
    std::vector<et::Node> nodes;
    std::uint64_t id = 1;
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      nodes.push_back(p2p_node(id++, true, p, bytes / n));
      nodes.push_back(p2p_node(id++, false, p, bytes / n));
    }
    return nodes;
  });
}

// Lower bound on an all-to-all's time from one cut of the NPUs into `side`
// and the rest: the bytes that must cross it one way over the links that
// cross it that way. Computed from the topology's links, not by hand.
double cut_bound_seconds(const Topology& t, const std::vector<bool>& side, std::uint64_t per_pair) {
  double capacity = 0;
  for (const Link& l : t.links()) {
    if (l.from < t.npu_count() && l.to < t.npu_count() && side[l.from] && !side[l.to]) {
      capacity += static_cast<double>(l.bandwidth);
    }
  }
  std::uint64_t a = 0;
  for (std::uint32_t i = 0; i < t.npu_count(); ++i) a += side[i] ? 1 : 0;
  const double crossing = static_cast<double>(a * (t.npu_count() - a) * per_pair);
  return crossing / capacity;
}

double all_to_all_busbw_gbps(std::uint64_t bytes, std::uint32_t n, Time t) {
  return static_cast<double>(bytes) / (static_cast<double>(t) / kSecond) * (n - 1) / n / 1e9;
}

void expect_no_link_above_bandwidth(const SimulationResult& r) {
  ASSERT_TRUE(r.link_time_known);
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    const LinkRecord& l = r.links[i];
    const auto max_bytes = static_cast<uint128>(l.bandwidth) * static_cast<std::uint64_t>(l.usage.busy) / kSecond;
    EXPECT_LE(l.usage.bytes, max_bytes) << "link " << i;
  }
}

TEST(FlowBackend, RingAllReduceEqualsAnalyticalWhereNoLinkIsShared) {
  for (const std::string name : {"ring8.yml", "switch8.yml", "switch64.yml", "torus4x4x4.yml"}) {
    const Topology t = load_topology(kConfigs + name);
    for (const std::uint64_t bytes : {std::uint64_t{1000}, std::uint64_t{1} << 20, std::uint64_t{3} << 28}) {
      for (const CollectiveType type : {CollectiveType::kAllReduce, CollectiveType::kAllGather}) {
        // Pipelined chunks go to the same neighbour: one after another on both backends.
        for (const std::uint32_t chunks : {1u, 4u}) {
        SCOPED_TRACE(name + " " + std::to_string(bytes) + " B " + collective_name(type) + " chunks " + std::to_string(chunks));
        const SimulationResult a = simulate_collective(t, type, bytes, on("analytical", chunks));
        const SimulationResult f = simulate_collective(t, type, bytes, on("flow", chunks));
        EXPECT_EQ(f.makespan, a.makespan);
        ASSERT_EQ(f.collectives.size(), a.collectives.size());
        for (std::size_t i = 0; i < a.collectives.size(); ++i) EXPECT_EQ(f.collectives[i].duration, a.collectives[i].duration);
        expect_no_link_above_bandwidth(f);
        }
      }
    }
  }
}

TEST(FlowBackend, DirectAllToAllOnMeshReachesItsBisectionBound) {
  const Topology t = load_topology(kConfigs + "mesh8x8.yml");
  const std::uint32_t n = t.npu_count();
  const std::uint64_t bytes = 16ull << 20;  // per rank
  // Cut between x = 3 and x = 4 (NPU id = x + 8y).
  std::vector<bool> left(n);
  for (std::uint32_t i = 0; i < n; ++i) left[i] = i % 8 < 4;
  const double bound_busbw = all_to_all_busbw_gbps(bytes, n, static_cast<Time>(cut_bound_seconds(t, left, bytes / n) * kSecond));
  EXPECT_NEAR(bound_busbw, 24.6, 0.05);  // the cut bound: B/2 * 63/64

  const SimulationResult flow = simulate(direct_all_to_all(static_cast<int>(n), bytes), t, on("flow"));
  const double busbw = all_to_all_busbw_gbps(bytes, n, flow.makespan);
  EXPECT_LE(busbw, bound_busbw);
  EXPECT_GE(busbw, 0.9 * bound_busbw);
  expect_no_link_above_bandwidth(flow);

  // Without contention the same traffic "beats" the bisection.
  const SimulationResult analytical = simulate(direct_all_to_all(static_cast<int>(n), bytes), t, on("analytical"));
  EXPECT_GT(all_to_all_busbw_gbps(bytes, n, analytical.makespan), bound_busbw);
}

TEST(FlowBackend, DirectAllToAllOnRing64StaysUnderItsBound) {
  const Topology t = load_topology(kConfigs + "ring64.yml");
  const std::uint32_t n = t.npu_count();
  const std::uint64_t bytes = 4ull << 20;
  std::vector<bool> half(n);
  for (std::uint32_t i = 0; i < n; ++i) half[i] = i < n / 2;
  const double bound_busbw = all_to_all_busbw_gbps(bytes, n, static_cast<Time>(cut_bound_seconds(t, half, bytes / n) * kSecond));
  EXPECT_NEAR(bound_busbw, 6.15, 0.01);
  const SimulationResult flow = simulate(direct_all_to_all(static_cast<int>(n), bytes), t, on("flow"));
  const double busbw = all_to_all_busbw_gbps(bytes, n, flow.makespan);
  EXPECT_LE(busbw, bound_busbw);
  EXPECT_GE(busbw, 0.8 * bound_busbw);
  expect_no_link_above_bandwidth(flow);
}

TEST(FlowBackend, LinkStatisticsAddUp) {
  const Topology t = load_topology(kConfigs + "switch8.yml");
  const SimulationResult r = simulate_collective(t, CollectiveType::kAllReduce, 8 << 20, on("flow"));
  ASSERT_EQ(r.links.size(), t.links().size());
  std::uint64_t bytes = 0;
  for (const LinkRecord& l : r.links) {
    bytes += l.usage.bytes;
    EXPECT_LE(l.usage.busy, r.makespan);
    EXPECT_LE(l.usage.peak_flows, 1u);  // ring neighbours: one flow per link at a time
  }
  // Ring all-reduce: 2(N-1) steps of S/N per rank, each over two links (up and down the switch).
  EXPECT_EQ(bytes, 8ull * 2 * 7 * (1 << 20) * 2);
  const SimulationResult a = simulate_collective(t, CollectiveType::kAllReduce, 8 << 20, on("analytical"));
  ASSERT_EQ(a.links.size(), r.links.size());
  for (std::size_t i = 0; i < a.links.size(); ++i) EXPECT_EQ(a.links[i].usage.bytes, r.links[i].usage.bytes);
  EXPECT_FALSE(a.link_time_known);
}

}  // namespace
}  // namespace sim
