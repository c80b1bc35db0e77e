// NCCL's all-to-all as grouped point-to-point sends (nccl_p2p.h): its closed
// forms where one resource sets the time. With small parts, every rank's
// proxy posts its sends to other nodes and completes its receives from them
// one after another: 2 x remote peers x chunks a part x proxy, then the
// network hop. Inside
// one node (no proxy), a rank's sends leave its link one after another:
// (n - 1) parts at the link's rate, then the NVLink hop.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/system/test_util.h"
#include "../nccl_test_cluster.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/nccl_tuner.h"

namespace sim {
namespace {

using namespace sim::testing;

SystemConfig choose_all_to_all(const std::string& text) {
  SystemConfig c;
  c.network.backend = "analytical";
  c.algorithms[CollectiveType::kAllToAll] = text;
  return c;
}

TEST(NcclAllToAll, ProxyBoundAcrossNodes) {
  // 4 nodes of 2 GPUs on a network too fast to matter: 6 remote peers a
  // rank, each network message one proxy slot at the sender and one at the
  // receiver, then the hop; the peer in the node goes over NVLink without
  // the proxy. NCCL's chunk across nodes (NCCL_P2P_NET_CHUNKSIZE, 128 KiB by
  // default) is tuned by the part's size: a quarter below one chunk, half
  // below 8 chunks (src/enqueue.cc, addP2pToPlan).
  const Topology topo = nccl_cluster(2, 4, "1000000000GB/s", "1000000000GB/s", "0ns", "0ns", false, false);
  const std::uint64_t bytes = 8 * 64 * 1024;
  const SimulationResult r = simulate_collective(topo, CollectiveType::kAllToAll, bytes,
                                                 choose_all_to_all("nccl:proxy=2us,net_latency=10us"));
  EXPECT_EQ(r.collectives[0].algorithm, "nccl:p2p");
  // 64 KiB parts, below one chunk: 32 KiB chunks, 2 a part, 2 x 6 x 2 proxy slots.
  EXPECT_EQ(r.makespan, 2 * 6 * 2 * 2 * kMicrosecond + 10 * kMicrosecond);
  // 512 KiB parts, below 8 chunks: 64 KiB chunks, 8 a part, 2 x 6 x 8 proxy slots.
  const SimulationResult big = simulate_collective(topo, CollectiveType::kAllToAll, 8 * bytes,
                                                   choose_all_to_all("nccl:proxy=2us,net_latency=10us"));
  EXPECT_EQ(big.makespan, 2 * 6 * 8 * 2 * kMicrosecond + 10 * kMicrosecond);
  // 1 MiB parts, 8 chunks: whole 128 KiB chunks, 8 a part again.
  const SimulationResult whole = simulate_collective(topo, CollectiveType::kAllToAll, 16 * bytes,
                                                     choose_all_to_all("nccl:proxy=2us,net_latency=10us"));
  EXPECT_EQ(whole.makespan, 2 * 6 * 8 * 2 * kMicrosecond + 10 * kMicrosecond);
  // NCCL_P2P_NET_CHUNKSIZE 512 KiB (p2p_net_chunk, aws-ofi-nccl's on p5): the
  // 512 KiB parts are below 8 of its chunks, so 256 KiB chunks, 2 a part.
  const SimulationResult coarse = simulate_collective(
      topo, CollectiveType::kAllToAll, 8 * bytes, choose_all_to_all("nccl:proxy=2us,net_latency=10us,p2p_net_chunk=512KiB"));
  EXPECT_EQ(coarse.makespan, 2 * 6 * 2 * 2 * kMicrosecond + 10 * kMicrosecond);
}

TEST(NcclAllToAll, ABatchRunsItsRoundsAtOnceAndAChannelItsBatchesInTurn) {
  // 4 nodes of 2 GPUs on a network too fast to matter and no proxy: a round's
  // time is its hop. Round (node delta dn, local delta dl) is in batch base
  // dn (up to 8 rounds of one node delta a batch), on channel base mod
  // `channels`: rounds 1 (NVLink), 2-3, 4-5 and 6-7 (network) are bases 0-3.
  const Topology topo = nccl_cluster(2, 4, "1000000000GB/s", "1000000000GB/s", "0ns", "0ns", false, false);
  const Time nvlink = static_cast<Time>(std::llround(
      nccl::hop_latency(nccl::Hw::kNvlink, nccl::Algo::kRing, nccl::Proto::kSimple, nccl::kDefaultTablesVersion) * 1e6));
  const auto time = [&](const std::string& channels) {
    return simulate_collective(topo, CollectiveType::kAllToAll, 8 << 20,
                               choose_all_to_all("nccl:net_latency=10us" + channels))
        .makespan;
  };
  // Each within a nanosecond (the parts' picoseconds on these links) of:
  const auto near = [](Time t, Time expected) { return t >= expected && t < expected + kNanosecond; };
  // every batch on a channel of its own: all at once, one network hop;
  EXPECT_PRED2(near, time(""), 10 * kMicrosecond);
  // two channels: bases 0 and 2 on one (NVLink hop, then a network one), 1 and 3 on the other;
  EXPECT_PRED2(near, time(",channels=2"), 20 * kMicrosecond);
  // one channel: the four batches in turn (a round per channel at a time would be six network hops).
  EXPECT_PRED2(near, time(",channels=1"), nvlink + 30 * kMicrosecond);
}

TEST(NcclAllToAll, P2pChannelsAreTheCommunicatorsRoundedUpToAPowerOfTwo) {
  // NCCL's p2pnChannels (src/graph/paths.cc, ncclTopoComputeP2pChannels): the
  // communicator's channels, at most MAXCHANNELS, rounded up to a power of two.
  // NCCL's logs: one p5 node "24 coll channels, ... 32 p2p channels", two
  // "16 coll channels, ... 16 p2p channels".
  EXPECT_EQ(nccl::p2p_channels(24), 32u);
  EXPECT_EQ(nccl::p2p_channels(16), 16u);
  EXPECT_EQ(nccl::p2p_channels(1), 1u);
  EXPECT_EQ(nccl::p2p_channels(100), 64u);
  const auto channels = [](const Topology& topo, const nccl::Params& keys) {
    std::vector<std::uint32_t> all(topo.npu_count());
    for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    return nccl::all_to_all_model(keys, *context(topo, all)).channels;
  };
  EXPECT_EQ(channels(dgx_h100_node(), {}), 32u);  // 24 channels on one node
  EXPECT_EQ(channels(dgx_h100(2), {}), 16u);      // 16 across nodes
  EXPECT_EQ(channels(dgx_h100(2), {{"channels", 4}}), 4u);
}

TEST(NcclAllToAll, ThePeersInANodeTakeTheNetworksChunkOnceTheGroupSpansNodes) {
  // NCCL's p2pChunkSize is NCCL_P2P_NET_CHUNKSIZE for every peer once the
  // communicator spans nodes (src/init.cc, computeBuffSizes), NVL's inside one.
  nccl::P2pModel m;
  m.net_chunk = 128 * 1024;
  m.nvl_chunk = 512 * 1024;
  EXPECT_EQ(m.local_chunk(false), 512u * 1024);
  EXPECT_EQ(m.local_chunk(true), 128u * 1024);
}

TEST(NcclAllToAll, RailsCarryTheirShareAcrossNodes) {
  // Two nodes of 8 GPUs, each GPU's NIC on its rail: a GPU's part for a GPU
  // on another rail crosses NVLink to the GPU on that rail and leaves by its
  // NIC (the dimension-order route, NCCL's PXN), so every NIC carries 8 of
  // its node's 16 parts and the all-to-all takes S / 2 / 50 GB/s, plus the
  // hops. The analytical backend books the relayed parts in the NIC's idle
  // time before them (network/analytical/analytical_network.h), as the flow
  // backend shares the NIC: the same time to the picosecond.
  const Topology topo = nccl_cluster(8, 2, "450GB/s", "50GB/s", "0ns", "0ns", false, false);
  const std::uint64_t bytes = std::uint64_t{256} << 20;
  SystemConfig flow = choose_all_to_all("nccl");
  flow.network.backend = "flow";
  const Time analytical = simulate_collective(topo, CollectiveType::kAllToAll, bytes, choose_all_to_all("nccl")).makespan;
  EXPECT_EQ(analytical, simulate_collective(topo, CollectiveType::kAllToAll, bytes, flow).makespan);
  const Time nic_bound = transfer_time(bytes / 2, 50'000'000'000);
  EXPECT_GE(analytical, nic_bound);
  EXPECT_LT(analytical, nic_bound + nic_bound / 100);
}

TEST(NcclAllToAll, LinkBoundInsideANode) {
  const std::uint32_t n = 8;
  const Topology topo = parse_topology("shape: Switch\nnpus: 8\nbandwidth: 100GB/s\nlatency: 0ns\n", "node");
  const std::uint64_t part = 1 << 20, bytes = n * part;  // 2 NVLink chunks of 512 KiB a peer
  const SimulationResult r = simulate_collective(topo, CollectiveType::kAllToAll, bytes, choose_all_to_all("nccl"));
  const Time hop = static_cast<Time>(std::llround(
      nccl::hop_latency(nccl::Hw::kNvlink, nccl::Algo::kRing, nccl::Proto::kSimple, nccl::kDefaultTablesVersion) * 1e6));
  EXPECT_EQ(r.makespan, transfer_time((n - 1) * part, 100'000'000'000) + hop);
}

TEST(NcclAllToAll, KeysOfCollectiveAlgorithmsAreErrors) {
  const Topology topo = nccl_cluster(2, 4, "50GB/s", "50GB/s", "0ns", "0ns", false, false);
  try {
    simulate_collective(topo, CollectiveType::kAllToAll, 1 << 20, choose_all_to_all("nccl:algo=ring"));
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("algo does not apply to ALL_TO_ALL"), std::string::npos) << e.what();
  }
  // NCCL_BUFFSIZE is the collective algorithms' buffer; NCCL_P2P_NET_CHUNKSIZE the sends'.
  EXPECT_THROW(simulate_collective(topo, CollectiveType::kAllToAll, 1 << 20, choose_all_to_all("nccl:buffsize=8MiB")),
               InputError);
  SystemConfig ar;
  ar.network.backend = "analytical";
  ar.algorithms[CollectiveType::kAllReduce] = "nccl:p2p_net_chunk=512KiB";
  EXPECT_THROW(simulate_collective(topo, CollectiveType::kAllReduce, 1 << 20, ar), InputError);
}

}  // namespace
}  // namespace sim
