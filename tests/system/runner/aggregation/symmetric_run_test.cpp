// The representative run (system/runner/aggregation/symmetric_run.h): which
// programs are rank-symmetric, and that one rank's run ends when the
// per-message run of every rank does.
#include "system/runner/aggregation/symmetric_run.h"

#include <gtest/gtest.h>

#include "network/analytical/analytical_network.h"
#include "system/collectives/ring.h"
#include "system/registry/algorithm_registry.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

SymmetricOutcome run_on(const CollectiveProgram& program, const Topology& topo, const SystemConfig& config,
                        const std::vector<std::uint32_t>& members) {
  EventQueue queue;
  AnalyticalNetwork net(topo, queue);
  const auto cost = [&](std::uint32_t peer) {
    const auto c = net.path_cost(members[program.symmetric_origin()], members[peer]);
    return SymmetricPeerCost{c.latency_sum, c.min_bandwidth, c.first_link};
  };
  return run_symmetric(program, config, true, cost);
}

std::vector<std::uint32_t> iota(std::uint32_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::uint32_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// The ring pads its parts to one size, so it is symmetric at any size: every
// rank sends the same bytes at every step, dividing or not.
TEST(SymmetricRun, RingIsSymmetricAtAnySizeItsPartsArePadded) {
  using T = CollectiveType;
  for (T type : {T::kAllReduce, T::kReduceScatter, T::kAllGather, T::kAllToAll}) {
    for (std::uint64_t bytes : {std::uint64_t{8 * 4 * 1000}, std::uint64_t{8 * 4 * 1000 + 1}, std::uint64_t{1001}}) {
      const RingProgram ring(type, 8, bytes, 4);
      EXPECT_TRUE(ring.rank_symmetric()) << collective_name(type) << " " << bytes;
      for (std::uint32_t step = 0; step < ring.steps(); ++step) {
        for (std::uint32_t pos = 1; pos < 8; ++pos) {
          ASSERT_EQ(ring.send_bytes(pos, 3, step), ring.send_bytes(0, 0, step)) << collective_name(type) << " " << bytes;
        }
      }
    }
  }
  EXPECT_FALSE(RingProgram(CollectiveType::kAllReduce, 1, 100, 1).rank_symmetric());
}

TEST(SymmetricRun, RingEndsWhenEveryRankEndsPerMessage) {
  const Topology sw = testing::shape("Switch", 16);
  for (const std::uint32_t chunks : {1u, 4u}) {
    SystemConfig config;
    config.collective_chunks = chunks;
    const RingProgram ring(CollectiveType::kAllReduce, 16, 1 << 24, chunks);
    const SymmetricOutcome out = run_on(ring, sw, config, iota(16));
    ASSERT_TRUE(out.exact) << out.why;
    config.aggregation = false;
    const SimulationResult full = testing::simulate_collective(sw, CollectiveType::kAllReduce, 1 << 24, config);
    EXPECT_EQ(out.duration, full.makespan);
    EXPECT_EQ(out.messages * 16, full.messages);
    ASSERT_EQ(out.peers.size(), 1u);
    EXPECT_EQ(out.peers[0].peer, 1u);
    EXPECT_EQ(out.peers[0].bytes, 2ull * 15 * (1 << 24) / 16);
  }
}

TEST(SymmetricRun, HierarchicalRingOnATorusEndsWhenEveryRankEndsPerMessage) {
  const Topology torus = parse_topology("shape: Torus\ndims: [4, 4, 4]\nbandwidth: 50GB/s\nlatency: 500ns\n", "t");
  for (const std::uint32_t chunks : {1u, 4u}) {
    SCOPED_TRACE(chunks);
    SystemConfig config;
    config.collective_chunks = chunks;
    AlgorithmChoice choice;
    choice.hierarchical = true;
    const auto program = make_hierarchical_program(choice, CollectiveType::kAllReduce, 1 << 26, chunks, iota(64),
                                                   torus.dims(), false, 0);
    ASSERT_TRUE(program->rank_symmetric());
    const SymmetricOutcome out = run_on(*program, torus, config, iota(64));
    ASSERT_TRUE(out.exact) << out.why;
    config.aggregation = false;
    const SimulationResult full = testing::simulate_collective(torus, CollectiveType::kAllReduce, 1 << 26, config);
    EXPECT_EQ(out.duration, full.makespan);
    EXPECT_EQ(out.messages * 64, full.messages);
    EXPECT_EQ(out.peers.size(), 3u);  // one neighbour per dimension
  }
}

}  // namespace
}  // namespace sim
