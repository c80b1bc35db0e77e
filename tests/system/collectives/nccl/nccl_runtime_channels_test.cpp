// The channels NCCL runs a ring or tree on (src/enqueue.cc, topoGetAlgoInfo):
// the communicator's, one fewer while nBytes < channels x threads x
// threshold. Checked on the rule's thresholds and on runs: a small
// all-reduce takes exactly as long as the same one forced onto that many
// channels.
#include <gtest/gtest.h>

#include <string>

#include "tests/system/test_util.h"
#include "nccl_test_cluster.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/nccl_protocol.h"

namespace sim {
namespace {

using namespace sim::testing;
using nccl::Algo;
using nccl::Proto;

TEST(NcclRuntimeChannels, Rule) {
  // Ring LL on 8 ranks: 512 threads x 8 B x 8 ranks = 32 KiB a channel.
  EXPECT_EQ(nccl::runtime_channels(Algo::kRing, Proto::kLL, 48 * 1024, 8, 16), 1u);
  EXPECT_EQ(nccl::runtime_channels(Algo::kRing, Proto::kLL, 16 * 32768, 8, 16), 16u);
  EXPECT_EQ(nccl::runtime_channels(Algo::kRing, Proto::kLL, 16 * 32768 - 1, 8, 16), 15u);
  // Ring LL on 2 ranks: 8 KiB a channel; 48 KiB -> 6.
  EXPECT_EQ(nccl::runtime_channels(Algo::kRing, Proto::kLL, 48 * 1024, 2, 16), 6u);
  // LL128: 640 x 8 = 5 KiB a channel, whatever the ranks; Simple: 512 x 64 = 32 KiB.
  EXPECT_EQ(nccl::runtime_channels(Algo::kTree, Proto::kLL128, 5120 * 3, 32, 16), 3u);
  EXPECT_EQ(nccl::runtime_channels(Algo::kRing, Proto::kSimple, 1 << 20, 8, 16), 16u);
  EXPECT_EQ(nccl::runtime_channels(Algo::kRing, Proto::kSimple, 64 * 1024, 8, 16), 2u);
  EXPECT_EQ(nccl::runtime_channels(Algo::kRing, Proto::kSimple, 1, 8, 16), 1u);
  // NVLS, NVLS-tree and CollNet keep theirs.
  EXPECT_EQ(nccl::runtime_channels(Algo::kNvls, Proto::kSimple, 1, 8, 16), 16u);
  EXPECT_EQ(nccl::runtime_channels(Algo::kNvlsTree, Proto::kSimple, 1, 8, 16), 16u);
}

// Two 8-GPU nodes: a 48 KiB ring/LL all-reduce plans one channel and runs as
// long as the same forced onto one; 64 KiB ring/Simple two.
TEST(NcclRuntimeChannels, SmallCollectivesRunOnFewerChannels) {
  const Topology two = nccl_cluster(8, 2, "450GB/s", "50GB/s", "300ns", "1350ns", false, false);
  const struct {
    std::uint64_t bytes;
    const char* proto;
    std::uint64_t proto_id;
    std::uint32_t channels;
  } cases[] = {{48 * 1024, "ll", static_cast<std::uint64_t>(Proto::kLL), 1},
               {64 * 1024, "simple", static_cast<std::uint64_t>(Proto::kSimple), 2}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.proto);
    const nccl::Plan pl =
        all_reduce_plan(two, c.bytes, {{"algo", static_cast<std::uint64_t>(Algo::kRing)}, {"proto", c.proto_id}});
    EXPECT_EQ(pl.channels, c.channels);
    EXPECT_GT(pl.system.graphs[static_cast<int>(Algo::kRing)].channels, static_cast<int>(c.channels));
    const std::string text = std::string("nccl:algo=ring,proto=") + c.proto;
    const Time chosen =
        simulate_collective(two, CollectiveType::kAllReduce, c.bytes, choose_all_reduce(text)).makespan;
    const Time forced = simulate_collective(two, CollectiveType::kAllReduce, c.bytes,
                                            choose_all_reduce(text + ",channels=" + std::to_string(c.channels)))
                            .makespan;
    EXPECT_EQ(chosen, forced);
  }
}

}  // namespace
}  // namespace sim
