// The direct algorithm against its closed forms on the analytical backend
// (exact, in ps). The backend serializes a sender's messages at its first
// link (egress): on a switch every message of a rank leaves through one
// link, on FullyConnected each destination has its own.
//
// With k chunks, m = the per-message bytes, t = transfer time of m and a the
// path latency, a rank that sends M messages at once finishes at M*t + a.
// All-reduce (reduce-scatter then all-gather of chunk c once chunk c's
// pieces are in) with E = the time one chunk's phase holds an egress
// (switch: (N-1)*t, FullyConnected: t):
//   T = (k+1)*E + a + max((k-1)*E, a)
// A window w with w*t < t + a stalls the egress: send i starts at
// floor((i-1)/w)*(t+a) + ((i-1) mod w)*t, so T = start(N-1) + t + a.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/system/test_util.h"

namespace sim {
namespace {

using testing::shape;
using testing::simulate_collective;
using testing::tt;

SimulationResult run_direct(const Topology& topo, CollectiveType type, std::uint64_t bytes, std::uint32_t k,
                            const std::string& algorithm = "direct") {
  SystemConfig cfg;
  cfg.collective_chunks = k;
  cfg.algorithms[type] = algorithm;
  return simulate_collective(topo, type, bytes, cfg);
}

TEST(DirectCollective, SwitchEgressSerializesEveryMessage) {
  const Time a = 1000 * kNanosecond;  // two links of 500 ns
  for (std::uint32_t n : {2u, 4u, 8u}) {
    const Topology topo = shape("Switch", n);
    for (std::uint32_t k : {1u, 2u, 4u}) {
      const std::uint64_t s = std::uint64_t{n} * k * 65536;  // every split exact
      const Time piece = tt(s / (n * k));
      const std::string at = "n=" + std::to_string(n) + " k=" + std::to_string(k);
      EXPECT_EQ(run_direct(topo, CollectiveType::kAllToAll, s, k).makespan, (n - 1) * k * piece + a) << at;
      EXPECT_EQ(run_direct(topo, CollectiveType::kReduceScatter, s, k).makespan, (n - 1) * k * piece + a) << at;
      EXPECT_EQ(run_direct(topo, CollectiveType::kAllGather, s, k).makespan, (n - 1) * k * tt(s / k) + a) << at;
      EXPECT_EQ(run_direct(topo, CollectiveType::kScatter, s, k).makespan, (n - 1) * k * piece + a) << at;
      EXPECT_EQ(run_direct(topo, CollectiveType::kBroadcast, s, k).makespan, (n - 1) * k * tt(s / k) + a) << at;
      // Gather and reduce: the root only receives; each sender has k messages.
      EXPECT_EQ(run_direct(topo, CollectiveType::kGather, s, k).makespan, k * tt(s / k) + a) << at;
      EXPECT_EQ(run_direct(topo, CollectiveType::kReduce, s, k).makespan, k * tt(s / k) + a) << at;
      const Time e = (n - 1) * piece;
      const auto ar = run_direct(topo, CollectiveType::kAllReduce, s, k);
      EXPECT_EQ(ar.makespan, (k + 1) * e + a + std::max<Time>((k - 1) * e, a)) << at;
      EXPECT_EQ(ar.collectives[0].algorithm, "direct");
    }
    // Barrier: N-1 one-byte messages, whatever the size.
    EXPECT_EQ(run_direct(topo, CollectiveType::kBarrier, 0, 1).makespan, (n - 1) * tt(1) + a);
  }
}

TEST(DirectCollective, FullyConnectedSendsInParallel) {
  const Time a = 500 * kNanosecond;
  for (std::uint32_t n : {3u, 5u, 8u}) {
    const Topology topo = shape("FullyConnected", n);
    for (std::uint32_t k : {1u, 3u}) {
      const std::uint64_t s = std::uint64_t{n} * k * 65536;
      const Time piece = tt(s / (n * k));
      EXPECT_EQ(run_direct(topo, CollectiveType::kAllToAll, s, k).makespan, k * piece + a);
      EXPECT_EQ(run_direct(topo, CollectiveType::kAllGather, s, k).makespan, k * tt(s / k) + a);
      const Time e = piece;
      EXPECT_EQ(run_direct(topo, CollectiveType::kAllReduce, s, k).makespan,
                (k + 1) * e + a + std::max<Time>((k - 1) * e, a))
          << "n=" << n << " k=" << k;
    }
  }
}

TEST(DirectCollective, RingOfThreeIsNeighboursOnly) {
  // On a bidirectional ring of 3 both peers are neighbours, on separate links.
  const Topology topo = shape("Ring", 3);
  const std::uint64_t s = 3 * 65536;
  EXPECT_EQ(run_direct(topo, CollectiveType::kAllToAll, s, 1).makespan, tt(s / 3) + 500 * kNanosecond);
}

TEST(DirectCollective, WindowLimitsMessagesInFlight) {
  const Time a = 1000 * kNanosecond;
  for (std::uint32_t n : {4u, 8u}) {
    const Topology topo = shape("Switch", n);
    for (std::uint32_t w : {1u, 2u, 3u}) {
      for (std::uint64_t s : {std::uint64_t{n} * 4096, std::uint64_t{n} * 4'194'304}) {
        const Time t = tt(s / n);
        Time expected;
        if (w * t >= t + a) {
          expected = (n - 1) * t + a;
        } else {
          const std::uint64_t i = n - 1;
          expected = (i - 1) / w * (t + a) + (i - 1) % w * t + t + a;
        }
        const auto r = run_direct(topo, CollectiveType::kAllToAll, s, 1, "direct:window=" + std::to_string(w));
        EXPECT_EQ(r.makespan, expected) << "n=" << n << " w=" << w << " s=" << s;
        EXPECT_EQ(r.collectives[0].algorithm, "direct(window=" + std::to_string(w) + ")");
      }
    }
  }
}

}  // namespace
}  // namespace sim
