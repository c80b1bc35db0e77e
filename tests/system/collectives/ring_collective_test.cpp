// Native ring collectives against their alpha-beta closed forms (exact, in ps).
//
// With k chunks and the analytical backend's egress serialization, a ring of
// K steps with per-message transfer time t and path latency a finishes at
//   T = (K - 1) * max(k * t, t + a) + k * t + a
// (each rank's egress either stays busy, k*t per step, or waits for the
// previous step's message, t + a). For k = 1 this is K * (a + t).
#include <gtest/gtest.h>

#include <algorithm>

#include "report/report.h"
#include "system/collectives/ring.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using testing::shape;
using testing::simulate_collective;

Time ring_closed_form(std::uint32_t steps, std::uint32_t chunks, Time t, Time a) {
  return (steps - 1) * std::max<Time>(chunks * t, t + a) + chunks * t + a;
}

struct Case {
  const char* topology;
  Time hop_latency;  // latency of one ring neighbour path
};

const Case kTopologies[] = {{"Switch", 1000 * kNanosecond}, {"Ring", 500 * kNanosecond},
                            {"FullyConnected", 500 * kNanosecond}};

TEST(RingCollective, AllReduce1MiBOn8NpusSwitchMatchesIssueNumber) {
  // 14 x (1,000 ns + 131,072 B / 50 GB/s) = 50,700.16 ns.
  const auto r = simulate_collective(shape("Switch", 8), CollectiveType::kAllReduce, 1 << 20);
  EXPECT_EQ(r.makespan, 50'700'160);
  ASSERT_EQ(r.collectives.size(), 8u);
  EXPECT_EQ(r.collectives[0].duration, 50'700'160);
  EXPECT_EQ(r.collectives[0].algorithm, "ring");
}

TEST(RingCollective, EveryTypeMatchesClosedFormAcrossTopologiesSizesAndChunks) {
  const std::uint64_t sizes[] = {1 << 12, 1 << 20, 1ull << 26};
  const CollectiveType types[] = {CollectiveType::kAllReduce, CollectiveType::kReduceScatter,
                                  CollectiveType::kAllGather};
  for (const Case& c : kTopologies) {
    for (std::uint32_t n : {2u, 4u, 8u}) {
      const Topology topo = shape(c.topology, n);
      for (CollectiveType type : types) {
        for (std::uint64_t bytes : sizes) {
          for (std::uint32_t k : {1u, 2u, 4u}) {
            SystemConfig cfg;
            cfg.collective_chunks = k;
            const auto r = simulate_collective(topo, type, bytes, cfg);
            const std::uint32_t steps = type == CollectiveType::kAllReduce ? 2 * (n - 1) : n - 1;
            // All-gather's comm_size is the per-rank input, moved whole each step.
            const std::uint64_t msg = type == CollectiveType::kAllGather ? bytes / k : bytes / (n * k);
            const Time t = transfer_time(msg, 50'000'000'000);
            EXPECT_EQ(r.makespan, ring_closed_form(steps, k, t, c.hop_latency))
                << c.topology << " n=" << n << " " << collective_name(type) << " bytes=" << bytes << " k=" << k;
          }
        }
      }
    }
  }
}

TEST(RingCollective, AllToAllStepsShrinkAndMatchClosedForm) {
  // Step s forwards the N-1-s blocks still in flight: sum over j=1..N-1 of (a + t(j * S/N)).
  for (const Case& c : kTopologies) {
    for (std::uint32_t n : {2u, 4u, 8u}) {
      const std::uint64_t bytes = 1 << 20;
      const auto r = simulate_collective(shape(c.topology, n), CollectiveType::kAllToAll, bytes);
      Time expected = 0;
      for (std::uint32_t j = 1; j < n; ++j) expected += c.hop_latency + transfer_time(j * bytes / n, 50'000'000'000);
      EXPECT_EQ(r.makespan, expected) << c.topology << " n=" << n;
    }
  }
}

TEST(RingCollective, BusBandwidthApproachesButNeverExceedsLinkRate) {
  const double link_gbps = 50.0;
  double previous = 0;
  for (std::uint64_t bytes = 1 << 10; bytes <= (1ull << 30); bytes <<= 4) {
    for (std::uint32_t k : {1u, 8u}) {
      SystemConfig cfg;
      cfg.collective_chunks = k;
      const auto r = simulate_collective(shape("Switch", 8), CollectiveType::kAllReduce, bytes, cfg);
      const double busbw = busbw_gbps(r.collectives[0]);
      EXPECT_LE(busbw, link_gbps) << "bytes=" << bytes << " k=" << k;
      if (k == 1) {
        EXPECT_GT(busbw, previous);
        previous = busbw;
      }
    }
  }
  EXPECT_GT(previous, 0.99 * link_gbps);  // 1 GiB: within 1% of the link rate
}

TEST(RingCollective, UnevenSizesArePaddedToEqualParts) {
  // 1,000,003 B on 8 ranks and 3 chunks: 24 parts of ceil(1,000,003 / 24) =
  // 41,667 B, 5 B more than the buffer in all (at most parts - 1 = 23).
  const RingProgram ring(CollectiveType::kReduceScatter, 8, 1'000'003, 3);
  std::uint64_t total = 0;
  for (std::uint32_t c = 0; c < 3; ++c) {
    for (std::uint32_t pos = 0; pos < 8; ++pos) {
      EXPECT_EQ(ring.send_bytes(pos, c, 0), 41'667u);
      total += ring.send_bytes(pos, c, 0);
    }
  }
  EXPECT_EQ(total, 1'000'008u);  // step 0: every rank sends a different piece of every chunk
  // All-gather: each rank's input cut into 3 chunks of ceil(1,000,003 / 3) = 333,335 B.
  EXPECT_EQ(RingProgram(CollectiveType::kAllGather, 8, 1'000'003, 3).send_bytes(5, 2, 4), 333'335u);
  // All-to-all: step s forwards N-1-s blocks of ceil(S / (N k)).
  EXPECT_EQ(RingProgram(CollectiveType::kAllToAll, 8, 1'000'003, 3).send_bytes(2, 1, 2), 5 * 41'667u);
}

// Sizes that do not divide: the closed form with every message one padded
// part, ceil(S / (N k)) bytes (all-gather: ceil(S / k)).
TEST(RingCollective, UnevenSizesMatchTheClosedFormOfPaddedParts) {
  const CollectiveType types[] = {CollectiveType::kAllReduce, CollectiveType::kReduceScatter,
                                  CollectiveType::kAllGather};
  for (const Case& c : kTopologies) {
    for (std::uint32_t n : {3u, 5u, 8u}) {
      const Topology topo = shape(c.topology, n);
      for (CollectiveType type : types) {
        for (std::uint64_t bytes : {std::uint64_t{1'000'003}, (std::uint64_t{1} << 26) + 7}) {
          for (std::uint32_t k : {1u, 3u}) {
            SystemConfig cfg;
            cfg.collective_chunks = k;
            const auto r = simulate_collective(topo, type, bytes, cfg);
            const std::uint32_t steps = type == CollectiveType::kAllReduce ? 2 * (n - 1) : n - 1;
            const std::uint64_t parts = type == CollectiveType::kAllGather ? k : std::uint64_t{n} * k;
            const std::uint64_t msg = (bytes + parts - 1) / parts;
            const Time t = transfer_time(msg, 50'000'000'000);
            EXPECT_EQ(r.makespan, ring_closed_form(steps, k, t, c.hop_latency))
                << c.topology << " n=" << n << " " << collective_name(type) << " bytes=" << bytes << " k=" << k;
          }
        }
      }
    }
  }
}

TEST(RingCollective, ReductionCostIsChargedPerReducingStep) {
  SystemConfig cfg;
  cfg.reduction_bandwidth = 100'000'000'000;  // 100 GB/s
  cfg.reduction_latency = 100 * kNanosecond;
  const auto r = simulate_collective(shape("Switch", 8), CollectiveType::kAllReduce, 1 << 20, cfg);
  const Time t = transfer_time(131072, 50'000'000'000);
  const Time reduce = 100 * kNanosecond + transfer_time(131072, 100'000'000'000);
  EXPECT_EQ(r.makespan, 14 * (1000 * kNanosecond + t) + 7 * reduce);
}

TEST(RingCollective, SingleRankGroupCompletesAtOnce) {
  const auto r = simulate_collective(shape("Switch", 2), CollectiveType::kAllReduce, 1 << 20);
  EXPECT_GT(r.makespan, 0);
  const auto traces = testing::make_traces(1, [](int) {
    return std::vector<et::Node>{testing::coll_node(1, CollectiveType::kAllReduce, 1 << 20)};
  });
  const auto one = testing::simulate(traces, shape("Switch", 2));
  EXPECT_EQ(one.makespan, 0);
}

}  // namespace
}  // namespace sim
