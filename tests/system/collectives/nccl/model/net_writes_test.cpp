// The network device's cost per write (nccl/model/net_writes.h): a message
// across nodes in stripes of at least min_stripe, one per rail at most, each
// costing its rail `net_write_cost` beyond its bytes, carried as bytes at the
// rail's rate. Closed forms where the NIC sets the time; none inside a node;
// the channel's pacer does not see it.
#include <gtest/gtest.h>

#include <string>

#include "../nccl_test_cluster.h"
#include "system/collectives/nccl/model/net_writes.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;

TEST(NetWrites, StripesAreAtLeastTheLeastWriteAndADivisorOfTheRails) {
  nccl::NetWrites w;
  w.cost = 2 * kMicrosecond;
  w.rails = 4;
  w.device_rate = 50'000'000'000;  // 4 x 100 Gb/s
  EXPECT_EQ(w.stripes(100 << 10), 1u);
  EXPECT_EQ(w.stripes(256 << 10), 2u);
  EXPECT_EQ(w.stripes(384 << 10), 2u);  // 3 stripes would not divide 4 rails
  EXPECT_EQ(w.stripes(512 << 10), 4u);
  EXPECT_EQ(w.stripes(8 << 20), 4u);
  // A write costs 2 us of a 12.5 GB/s rail: 25,000 bytes.
  EXPECT_EQ(w.extra(512 << 10, 1), 4u * 25'000);
  EXPECT_EQ(w.extra(2 << 20, 4), 16u * 25'000);  // four 512 KiB messages
  EXPECT_EQ(w.extra(128 << 10, 1), 25'000u);
  w.cost = 0;
  EXPECT_EQ(w.extra(512 << 10, 1), 0u);
}

TEST(NetWrites, AnAllToAllAcrossNodesKeepsTheNicBusyForEachWrite) {
  // Two nodes of two GPUs, NVLink too fast to matter, a 50 GB/s NIC per GPU,
  // no latency: each NIC carries its rail's two 1 MiB parts (its GPU's and,
  // relayed, its neighbour's: PXN), sixteen 128 KiB chunks
  // (NCCL_P2P_NET_CHUNKSIZE), one write each on one rail costing 2 us x 50
  // GB/s = 100,000 bytes of the NIC's time.
  const Topology topo = nccl_cluster(2, 2, "1000000000GB/s", "50GB/s", "0ns", "0ns", false, false);
  const std::string base = "nccl:net_latency=0ns";
  const auto time = [&](const std::string& extra) {
    return simulate_collective(topo, CollectiveType::kAllToAll, 4 << 20, choose(CollectiveType::kAllToAll, base + extra))
        .makespan;
  };
  const auto nic = [](std::uint64_t bytes) { return transfer_time(bytes, 50'000'000'000); };
  const Time plain = time("");
  EXPECT_GE(plain, nic(2 << 20));
  EXPECT_EQ(time(",net_write_cost=2us") - plain, nic((2 << 20) + 16 * 100'000) - nic(2 << 20));
  // Four rails of 12.5 GB/s: a 128 KiB chunk is one write on one rail, 25,000 bytes of the device's time.
  EXPECT_EQ(time(",net_write_cost=2us,net_rails=4") - plain, nic((2 << 20) + 16 * 25'000) - nic(2 << 20));
  // 64 KiB stripes: two writes a chunk on two of the four rails.
  EXPECT_EQ(time(",net_write_cost=2us,net_rails=4,min_stripe=64KiB") - plain,
            nic((2 << 20) + 32 * 25'000) - nic(2 << 20));
}

TEST(NetWrites, NoneInsideANodeAndNotInTheChannelsPace) {
  // Inside one node no message crosses the network device: the same time.
  const Topology node = parse_topology("shape: Switch\nnpus: 8\nbandwidth: 450GB/s\nlatency: 0ns\n", "node");
  const std::string ring = "nccl:algo=ring,proto=simple";
  EXPECT_EQ(simulate_collective(node, CollectiveType::kAllReduce, 64 << 20, choose(CollectiveType::kAllReduce, ring))
                .makespan,
            simulate_collective(node, CollectiveType::kAllReduce, 64 << 20,
                                choose(CollectiveType::kAllReduce, ring + ",net_write_cost=2us"))
                .makespan);
  // Across nodes on links too fast to matter, the ring runs at its channels'
  // pace (NCCL's model). A write of 1 ps on these NICs is a million bytes of
  // their time, which the channel's pacer must not take at its own rate: the
  // same time to a few picoseconds.
  const Topology fast = nccl_cluster(2, 4, "1000000000GB/s", "1000000000GB/s", "0ns", "0ns", false, false);
  const Time paced =
      simulate_collective(fast, CollectiveType::kAllReduce, 64 << 20, choose(CollectiveType::kAllReduce, ring)).makespan;
  const Time with = simulate_collective(fast, CollectiveType::kAllReduce, 64 << 20,
                                        choose(CollectiveType::kAllReduce, ring + ",net_write_cost=1ps"))
                        .makespan;
  EXPECT_NEAR(static_cast<double>(with), static_cast<double>(paced), 1e-6 * static_cast<double>(paced));
  // On a 50 GB/s NIC that sets the pace, it adds the writes' time.
  const Topology nics = nccl_cluster(2, 4, "450GB/s", "50GB/s", "0ns", "0ns", false, false);
  const Time plain =
      simulate_collective(nics, CollectiveType::kAllReduce, 64 << 20, choose(CollectiveType::kAllReduce, ring)).makespan;
  EXPECT_GT(simulate_collective(nics, CollectiveType::kAllReduce, 64 << 20,
                                choose(CollectiveType::kAllReduce, ring + ",net_write_cost=20us"))
                .makespan,
            plain);
}

TEST(NetWrites, BadValuesAreRefused) {
  const Topology topo = nccl_cluster(2, 2, "450GB/s", "50GB/s", "0ns", "0ns", false, false);
  for (const char* bad : {"net_write_cost=2", "net_write_cost=-1us", "net_rails=0", "net_rails=65", "net_rails=2.5",
                          "min_stripe=0B", "min_stripe=128"}) {
    EXPECT_THROW(simulate_collective(topo, CollectiveType::kAllToAll, 2 << 20,
                                     choose(CollectiveType::kAllToAll, std::string("nccl:") + bad)),
                 InputError)
        << bad;
  }
}

}  // namespace
}  // namespace sim
