// Reductions on the GPU: each step that adds a received piece to the rank's
// own input reads that addend from HBM (compute.memory_bandwidth) when the
// buffer does not fit the L2 (compute_l2_bytes), at the channel's share of the
// bandwidth, on the same channel as the send of the sum: the ring's
// reduce-scatter steps, the tree's reduce up (every rank with a child), the
// CollNet chain's way up (every rank but the leaf, the head's read pacing its
// SHARP upload). NVLS and NVLS-tree load no addend (the switch sums). Closed
// forms on a network too fast to matter: the pacing and the hop latencies are
// the whole time.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/system/test_util.h"
#include "../nccl_test_cluster.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/nccl_protocol.h"

namespace sim {
namespace {

using namespace sim::testing;

Topology fast_node(std::uint32_t n) {
  return parse_topology("shape: Switch\nnpus: " + std::to_string(n) + "\nbandwidth: " + kFast + "\nlatency: 0ns\n",
                        "test-node");
}

SystemConfig with_memory(CollectiveType type, const std::string& text, BytesPerSecond hbm, std::uint64_t l2) {
  SystemConfig c;
  c.network.backend = "analytical";
  c.algorithms[type] = text;
  c.compute_memory_bandwidth = hbm;
  c.compute_l2_bytes = l2;
  return c;
}

nccl::Plan ring_plan(const Topology& topo, CollectiveType type, std::uint64_t bytes) {
  auto members = std::make_shared<std::vector<std::uint32_t>>();
  for (std::uint32_t i = 0; i < topo.npu_count(); ++i) members->push_back(i);
  return nccl::plan(type, bytes,
                    {{"algo", static_cast<std::uint64_t>(nccl::Algo::kRing)},
                     {"proto", static_cast<std::uint64_t>(nccl::Proto::kSimple)},
                     {"channels", 1}},
                    *make_algorithm_context(members, &topo));
}

// The pace of a send of `payload` that carries a sum: wire bytes at the
// channel's rate plus the addend's read at the channel's share of HBM.
Time reducing_pace(std::uint64_t payload, BytesPerSecond rate, double read_rate) {
  const double seconds = static_cast<double>(payload) / static_cast<double>(rate) + static_cast<double>(payload) / read_rate;
  return transfer_time(payload, static_cast<BytesPerSecond>(std::llround(static_cast<double>(payload) / seconds)));
}

TEST(NcclReductionCost, RingReduceScatterReadsEachAddendFromHbm) {
  const std::uint32_t n = 4;
  const Topology topo = fast_node(n);
  const std::uint64_t piece = nccl::step_payload(nccl::Proto::kSimple);  // one loop: one piece per step
  const std::uint64_t bytes = piece * n;
  const nccl::Plan pl = ring_plan(topo, CollectiveType::kReduceScatter, bytes);
  const BytesPerSecond rate = nccl::wire_rate(pl.model);
  const BytesPerSecond hbm = 1'000'000'000'000;  // 1 TB/s: the reads cost about a quarter of the sends
  const char* const text = "nccl:algo=ring,proto=simple,channels=1";
  // Step 0 sends the rank's own piece; steps 1..n-2 send a sum (paced with
  // its read); the last step adds the piece into the output (a read after it).
  const Time plain = transfer_time(piece, rate);
  const Time free_form = pl.model.base + (n - 1) * (plain + pl.model.hop_intra);
  const Time read = transfer_time(piece, hbm);
  const Time costed = pl.model.base + (plain + pl.model.hop_intra) +
                      (n - 2) * (reducing_pace(piece, rate, static_cast<double>(hbm)) + pl.model.hop_intra) + read;
  // The n-1 reads add their time, up to the picoseconds the paces round.
  ASSERT_NEAR(static_cast<double>(costed), static_cast<double>(free_form + (n - 1) * read), 4.0);

  const SimulationResult big = simulate_collective(topo, CollectiveType::kReduceScatter, bytes,
                                                   with_memory(CollectiveType::kReduceScatter, text, hbm, bytes - 1));
  EXPECT_EQ(big.makespan, costed);
  // A buffer that fits the L2 is read from there: as if free.
  const SimulationResult cached = simulate_collective(topo, CollectiveType::kReduceScatter, bytes,
                                                      with_memory(CollectiveType::kReduceScatter, text, hbm, bytes));
  EXPECT_EQ(cached.makespan, free_form);
  // No memory bandwidth given (NCCL's own model): free.
  const SimulationResult none = simulate_collective(topo, CollectiveType::kReduceScatter, bytes,
                                                    with_memory(CollectiveType::kReduceScatter, text, 0, 0));
  EXPECT_EQ(none.makespan, free_form);
}

TEST(NcclReductionCost, RingAllReduceReadsInItsFirstHalfOnlyAndAllGatherNever) {
  const std::uint32_t n = 4;
  const Topology topo = fast_node(n);
  const std::uint64_t piece = nccl::step_payload(nccl::Proto::kSimple);
  const std::uint64_t bytes = piece * n;
  const BytesPerSecond hbm = 1'000'000'000'000;
  const char* const text = "nccl:algo=ring,proto=simple,channels=1";
  const nccl::Plan pl = ring_plan(topo, CollectiveType::kAllReduce, bytes);
  const BytesPerSecond rate = nccl::wire_rate(pl.model);
  // Steps 1..n-1 send sums (the last of them the full sum), the other n-1 do not.
  const Time plain = transfer_time(piece, rate) + pl.model.hop_intra;
  const Time summed = reducing_pace(piece, rate, static_cast<double>(hbm)) + pl.model.hop_intra;
  const SimulationResult ar = simulate_collective(topo, CollectiveType::kAllReduce, bytes,
                                                  with_memory(CollectiveType::kAllReduce, text, hbm, 0));
  EXPECT_EQ(ar.makespan, pl.model.base + (n - 1) * plain + (n - 1) * summed);
  // All-gather reduces nothing.
  const nccl::Plan ag_plan = ring_plan(topo, CollectiveType::kAllGather, piece);
  const SimulationResult ag = simulate_collective(topo, CollectiveType::kAllGather, piece,
                                                  with_memory(CollectiveType::kAllGather, text, hbm, 0));
  EXPECT_EQ(ag.makespan,
            ag_plan.model.base + (n - 1) * (transfer_time(piece, nccl::wire_rate(ag_plan.model)) + ag_plan.model.hop_intra));
}

// The tree inside one node is a chain (NCCL's tree on one node): one chunk
// goes up it, each rank with a child (all but the leaf) adding its addend
// and paying its read with its send of the sum (the root with its first send
// down, NCCL's recvReduceCopySend), then comes back down as copies:
// base + (n-1)(pace + hop) + (n-1)(pace with the read + hop), as the ring's
// all-reduce.
TEST(NcclReductionCost, TreeChainReadsOnEveryRankWithAChild) {
  const std::uint32_t n = 8;
  const Topology topo = fast_node(n);
  const std::uint64_t bytes = 1 << 19;  // one chunk (a tree's Simple chunk is 512 KiB)
  const BytesPerSecond hbm = 1'000'000'000'000;
  const char* const text = "nccl:algo=tree,proto=simple,channels=1";
  auto members = std::make_shared<std::vector<std::uint32_t>>();
  for (std::uint32_t i = 0; i < n; ++i) members->push_back(i);
  const nccl::Plan pl = nccl::plan(CollectiveType::kAllReduce, bytes,
                                   {{"algo", static_cast<std::uint64_t>(nccl::Algo::kTree)},
                                    {"proto", static_cast<std::uint64_t>(nccl::Proto::kSimple)},
                                    {"channels", 1}},
                                   *make_algorithm_context(members, &topo));
  ASSERT_EQ(pl.name, "nccl:tree/simple");
  const BytesPerSecond rate = nccl::wire_rate(pl.model);
  const Time plain = transfer_time(bytes, rate) + pl.model.hop_intra;
  const Time summed = reducing_pace(bytes, rate, static_cast<double>(hbm)) + pl.model.hop_intra;
  ASSERT_GT(summed, plain);
  const auto run = [&](BytesPerSecond bw, std::uint64_t l2) {
    return simulate_collective(topo, CollectiveType::kAllReduce, bytes, with_memory(CollectiveType::kAllReduce, text, bw, l2))
        .makespan;
  };
  EXPECT_EQ(run(hbm, bytes - 1), pl.model.base + (n - 1) * plain + (n - 1) * summed);
  EXPECT_EQ(run(hbm, bytes), pl.model.base + 2 * (n - 1) * plain);  // inside the L2: free
  EXPECT_EQ(run(0, 0), pl.model.base + 2 * (n - 1) * plain);        // no memory bandwidth: free
}

// CollNet chain, two nodes of n = 4 GPUs, one channel, one 512 KiB chunk (as
// NcclCollNet.ClosedFormChain): the leaf sends its input (pace + hop), the
// n-2 middle ranks add theirs (pace with the read + hop), the head adds its
// own before its SHARP upload, which the NIC paces but its read holds (the
// read at the channel's share of HBM, r); the switch's sum (d), the network
// hop H, and back down the chain as copies: (pace + hop) + (n-2)(pace with
// read + hop) + r + d + H + (n-1)(pace + hop).
TEST(NcclReductionCost, CollNetChainReadsUpTheChainAndAtTheHead) {
  const std::uint32_t n = 4;
  const Topology topo = nccl_cluster(n, 2, "1000000000", "1000000000", "0", "0", false, true);
  const std::uint64_t bytes = nccl::chain_step_payload(nccl::Proto::kSimple);
  const BytesPerSecond hbm = 1'000'000'000'000;
  const nccl::Plan pl = all_reduce_plan(topo, bytes, {{"algo", static_cast<std::uint64_t>(nccl::Algo::kCollNetChain)},
                                                      {"channels", 1}});
  ASSERT_EQ(pl.name, "nccl:collnetchain/simple");
  const char* const text = "nccl:algo=collnetchain,channels=1";
  const BytesPerSecond rate = nccl::wire_rate(pl.model);
  const Time p = transfer_time(bytes, rate), hop = pl.model.hop_intra;
  const Time d = transfer_time(bytes, topo.links()[0].bandwidth);
  const Time read = transfer_time(bytes, hbm);
  const auto run = [&](BytesPerSecond bw, std::uint64_t l2) {
    return simulate_collective(topo, CollectiveType::kAllReduce, bytes, with_memory(CollectiveType::kAllReduce, text, bw, l2))
        .makespan;
  };
  EXPECT_EQ(run(hbm, 0), (p + hop) + (n - 2) * (reducing_pace(bytes, rate, static_cast<double>(hbm)) + hop) + read + d +
                             pl.model.hop_inter + (n - 1) * (p + hop));
  const Time free_form = 2 * (n - 1) * (p + hop) + 2 * d + pl.model.hop_inter;
  EXPECT_EQ(run(hbm, bytes), free_form);  // inside the L2
  EXPECT_EQ(run(0, 0), free_form);
}

// NVLS (one node) and NVLS-tree (two nodes) load no addend of their own: the
// switch reads every GPU's copy (multimem ld_reduce) and the tree's GPUs add
// the switch's sum to what the network brought, both in NCCL's staging slots.
// Memory bandwidth changes nothing.
TEST(NcclReductionCost, NvlsAndNvlsTreeAreFree) {
  const BytesPerSecond hbm = 1'000'000'000'000;
  const std::uint64_t bytes = std::uint64_t{64} << 20;
  const Topology one = parse_topology(
      "shape: Switch\nnpus: 4\nbandwidth: 450GB/s\nlatency: 500ns\nin_network_reduction: true\n", "test-node");
  const Topology two = nccl_cluster(4, 2, "450", "50", "500", "1000", true, false);
  for (const Topology* topo : {&one, &two}) {
    const std::string algo = topo == &one ? "nvls" : "nvlstree";
    const std::string text = "nccl:algo=" + algo;
    const SimulationResult costed = simulate_collective(*topo, CollectiveType::kAllReduce, bytes,
                                                        with_memory(CollectiveType::kAllReduce, text, hbm, 0));
    const SimulationResult free_run = simulate_collective(*topo, CollectiveType::kAllReduce, bytes,
                                                          with_memory(CollectiveType::kAllReduce, text, 0, 0));
    EXPECT_EQ(costed.collectives[0].algorithm, "nccl:" + algo + "/simple");
    EXPECT_EQ(costed.makespan, free_run.makespan) << text;
  }
}

}  // namespace
}  // namespace sim
