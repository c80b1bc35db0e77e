#include "report/physical_bounds.h"
#include "report/report.h"

#include <gtest/gtest.h>

#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;

TEST(PhysicalBounds, RealCollectivesStayUnderTheirPorts) {
  const Topology t = load_topology(source_dir() + "/configs/ring8.yml");
  for (const std::string backend : {"analytical", "flow"}) {
    SystemConfig c;
    c.network.backend = backend;
    const SimulationResult r = simulate_collective(t, CollectiveType::kAllReduce, 1 << 30, c);
    EXPECT_TRUE(physical_bound_warnings(r, t).empty()) << backend;
  }
}

// A gather into one NPU of a switch: under the analytical backend its 7
// senders each have the receiver's one link whole (no contention inside the
// network), so the link carries 7 MiB in the time of one: 700% of what it
// can, warned about; the flow backend shares the link and stays under 100%.
TEST(PhysicalBounds, ALinkCarryingMoreThanItCanIsWarnedAbout) {
  const Topology t = load_topology(source_dir() + "/configs/switch8.yml");
  SystemConfig c;
  c.algorithms[CollectiveType::kGather] = "direct";
  c.network.backend = "analytical";
  const auto w = physical_bound_warnings(simulate_collective(t, CollectiveType::kGather, 1 << 20, c), t);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("-> npu0 (50 GB/s) carried 7 MiB (7340032 B) in "), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("the analytical backend models no contention inside the network"), std::string::npos) << w[0];
  c.network.backend = "flow";
  EXPECT_TRUE(physical_bound_warnings(simulate_collective(t, CollectiveType::kGather, 1 << 20, c), t).empty());
}

TEST(PhysicalBounds, ABusBandwidthAboveThePortsIsWarnedOncePerKind) {
  // ring8: every NPU has two 50 GB/s links out and two in, so 100 GB/s at most.
  const Topology t = load_topology(source_dir() + "/configs/ring8.yml");
  SimulationResult r;
  CollectiveRecord c;
  c.type = CollectiveType::kAllGather;
  c.bytes = 1'000'000;  // busbw = 7 * 1e6 B / t
  c.group_size = 8;
  c.algorithm = "et:x";
  c.duration = 70'000'000;  // 70 us: busbw exactly 100 GB/s, allowed
  for (std::uint32_t rank = 0; rank < 8; ++rank) {
    c.rank = rank;
    r.collectives.push_back(c);
  }
  EXPECT_TRUE(physical_bound_warnings(r, t).empty());
  r.collectives[3].duration = 35'000'000;  // 200 GB/s
  r.collectives[5].duration = 50'000'000;  // 140 GB/s
  const auto w = physical_bound_warnings(r, t);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("busbw 200.00 GB/s on rank 3 exceeds"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("(100 GB/s over all its links)"), std::string::npos) << w[0];
}

// A barrier's messages are 1 byte whatever its comm_size: its bandwidth was
// comm_size over its time (1 MiB barrier: busbw 1048 GB/s, "not physical",
// exit 2 under --strict). It has none, and no bound to break.
TEST(PhysicalBounds, ABarrierHasNoBandwidth) {
  const Topology t = load_topology(source_dir() + "/configs/ring8.yml");
  SimulationResult r;
  CollectiveRecord c;
  c.type = CollectiveType::kBarrier;
  c.bytes = 1 << 20;
  c.group_size = 8;
  c.algorithm = "direct";
  c.duration = 1'000'000;  // 1 us
  r.collectives.push_back(c);
  EXPECT_EQ(algbw_gbps(c), 0);
  EXPECT_EQ(busbw_gbps(c), 0);
  EXPECT_TRUE(physical_bound_warnings(r, t).empty());
  r.collectives[0].duration = 0;
  EXPECT_TRUE(physical_bound_warnings(r, t).empty());
}

// An injected algorithm that sends nothing ended an all-reduce of 1 MiB in
// 0 ps: algbw and busbw printed as 0.00 GB/s, no warning, exit 0 under --strict.
TEST(PhysicalBounds, BytesMovedInNoTimeAreWarned) {
  const Topology t = load_topology(source_dir() + "/configs/ring8.yml");
  SimulationResult r;
  CollectiveRecord c;
  c.type = CollectiveType::kAllReduce;
  c.bytes = 1 << 20;
  c.group_size = 8;
  c.algorithm = "et:x";
  c.duration = 0;
  c.rank = 2;
  c.npu = 2;
  r.collectives.push_back(c);
  const auto w = physical_bound_warnings(r, t);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "ALL_REDUCE of 1 MiB (1048576 B) on 8 ranks [et:x]: it ends in 0 ps on rank 2, faster than its NPU "
                  "can send or receive (100 GB/s over all its links): the result is not physical; check the algorithm "
                  "and its sizes");
  // Nothing to move, or no one to move it to: 0 ps is right.
  r.collectives[0].bytes = 0;
  EXPECT_TRUE(physical_bound_warnings(r, t).empty());
  r.collectives[0].bytes = 1 << 20;
  r.collectives[0].group_size = 1;
  EXPECT_TRUE(physical_bound_warnings(r, t).empty());
}

}  // namespace
}  // namespace sim
