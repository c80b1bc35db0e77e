// NCCL's algorithms run by the engine: each equals its closed form on a
// network too fast to matter (the channels' pacing and the protocol's per-hop
// latencies are then the whole time), and the dgx-h100 node reproduces the
// bus bandwidths NVIDIA reports for 4 GiB all-reduce (nccl-tests issue 212:
// about 370 GB/s with rings, about 480 GB/s with NVLS) by modelling.
#include <gtest/gtest.h>

#include <string>

#include "tests/system/collectives/nccl/nccl_test_cluster.h"
#include "tests/system/test_util.h"
#include "report/report.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/nccl_protocol.h"

namespace sim {
namespace {

using namespace sim::testing;

// A config choosing `text` for all-reduce, all-gather and reduce-scatter.
SystemConfig choose_ar_ag_rs(const std::string& text, const std::string& backend = "analytical") {
  SystemConfig c;
  c.network.backend = backend;
  c.algorithms[CollectiveType::kAllReduce] = text;
  c.algorithms[CollectiveType::kAllGather] = text;
  c.algorithms[CollectiveType::kReduceScatter] = text;
  return c;
}

// kFast links (nccl_test_cluster.h), no latency: a 2 MiB message crosses a link in 3 ps.

TEST(NcclClosedForm, RingAllReduceOneChannel) {
  for (const std::uint64_t proto : {kSimple, kLL}) {
    const std::uint32_t n = 4;
    const Topology topo = node(n, kFast, "0ns", false);
    // One loop: S = n x the protocol's step, one piece of S/n per step.
    const std::uint64_t piece = nccl::step_payload(static_cast<nccl::Proto>(proto));
    const std::uint64_t bytes = piece * n;
    const nccl::Params params = {{"algo", kRing}, {"proto", proto}, {"channels", 1}};
    const nccl::Plan pl = plan_for(topo, CollectiveType::kAllReduce, bytes, params);
    const std::string name = std::string("nccl:algo=ring,proto=") + (proto == kSimple ? "simple" : "ll") + ",channels=1";
    const SimulationResult r = simulate_collective(topo, CollectiveType::kAllReduce, bytes, choose_ar_ag_rs(name));
    // 2(n-1) steps, each: the channel pushes the piece's wire bytes at its
    // wire rate, then the hop latency before the next step.
    const Time pace = transfer_time(nccl::wire_bytes(pl.proto, piece), nccl::wire_rate(pl.model));
    EXPECT_EQ(r.makespan, pl.model.base + 2 * (n - 1) * (pace + pl.model.hop_intra)) << name;
    EXPECT_EQ(r.collectives[0].algorithm, proto == kSimple ? "nccl:ring/simple" : "nccl:ring/ll");
  }
}

TEST(NcclClosedForm, RingAllGatherTwoChannels) {
  const std::uint32_t n = 8;
  const Topology topo = node(n, kFast, "0ns", false);
  const std::uint64_t per_channel = 1 << 20;  // below a Simple step: one loop per channel
  const nccl::Params params = {{"algo", kRing}, {"proto", kSimple}, {"channels", 2}};
  const nccl::Plan pl = plan_for(topo, CollectiveType::kAllGather, 2 * per_channel, params);
  const SimulationResult r = simulate_collective(topo, CollectiveType::kAllGather, 2 * per_channel,
                                                 choose_ar_ag_rs("nccl:algo=ring,proto=simple,channels=2"));
  // The two channels run side by side on their own pacers: n - 1 steps each.
  const Time pace = transfer_time(per_channel, nccl::wire_rate(pl.model));
  EXPECT_EQ(r.makespan, pl.model.base + (n - 1) * (pace + pl.model.hop_intra));
}

TEST(NcclClosedForm, TreeChainInsideANode) {
  const std::uint32_t n = 8;
  const Topology topo = node(n, kFast, "0ns", false);
  const std::uint64_t bytes = 1 << 19;  // one chunk (a tree's Simple chunk is 512 KiB)
  const nccl::Params params = {{"algo", kTree}, {"proto", kSimple}, {"channels", 1}};
  const nccl::Plan pl = plan_for(topo, CollectiveType::kAllReduce, bytes, params);
  const SimulationResult r = simulate_collective(topo, CollectiveType::kAllReduce, bytes,
                                                 choose_all_reduce("nccl:algo=tree,proto=simple,channels=1"));
  // Reduced up the chain of 8 and broadcast back down: 2 x 7 hops.
  const Time pace = transfer_time(bytes, nccl::wire_rate(pl.model));
  EXPECT_EQ(r.makespan, pl.model.base + 2 * (n - 1) * (pace + pl.model.hop_intra));
  EXPECT_EQ(r.collectives[0].algorithm, "nccl:tree/simple");
}

TEST(NcclClosedForm, NvlsReducesInTheSwitch) {
  const std::uint32_t n = 8;
  const Topology topo = node(n, kFast, "0ns", true);
  // One round of one channel: NVLS all-reduce on one node moves 128 KiB per
  // head and round at every size (kNvlsChunk, not NCCL's rule by nBytes,
  // which gives 32 KiB here, four rounds; nccl_algorithm.cpp says why).
  const std::uint64_t shard = nccl::kNvlsChunk;
  const std::uint64_t bytes = shard * n;
  ASSERT_EQ(nccl::nvls_chunk(bytes, n), 32 * 1024u);
  const nccl::Params params = {{"algo", kNvls}, {"channels", 1}};
  const nccl::Plan pl = plan_for(topo, CollectiveType::kAllReduce, bytes, params);
  ASSERT_EQ(pl.model.step_bytes, shard);
  const SimulationResult r =
      simulate_collective(topo, CollectiveType::kAllReduce, bytes, choose_ar_ag_rs("nccl:algo=nvls,channels=1"));
  // Each GPU uploads its n shards one after another (p each), then multicasts
  // its own sum (p); the last owner's sum comes down (d) just after its
  // uploads end, and the n copies of each multicast come down one link each,
  // the switch's port to a GPU sending them one after another (n d).
  const Time p = transfer_time(shard, nccl::wire_rate(pl.model));
  const Time d = transfer_time(shard, topo.links()[0].bandwidth);
  EXPECT_EQ(r.makespan, pl.model.base + (n + 1) * p + n * d);
  EXPECT_EQ(r.collectives[0].algorithm, "nccl:nvls/simple");
}

double busbw(const SimulationResult& r) { return busbw_gbps(r.collectives[0]); }

TEST(NcclDgxH100, RingAllReduceAt4GiB) {
  const std::uint64_t bytes = std::uint64_t{4} << 30;
  const SimulationResult r =
      simulate_collective(dgx_h100_node(), CollectiveType::kAllReduce, bytes, choose_ar_ag_rs("nccl:algo=ring"));
  EXPECT_EQ(r.collectives[0].algorithm, "nccl:ring/simple");
  // NCCL's model: 12 channels x 30 GB/s = 360 GB/s of bus bandwidth; measured ~370.
  EXPECT_NEAR(busbw(r), 370, 37) << busbw(r);
}

TEST(NcclDgxH100, NcclChoosesNvlsAt4GiB) {
  const std::uint64_t bytes = std::uint64_t{4} << 30;
  for (const char* backend : {"analytical", "flow"}) {
    const SimulationResult r =
        simulate_collective(dgx_h100_node(), CollectiveType::kAllReduce, bytes, choose_ar_ag_rs("nccl", backend));
    EXPECT_EQ(r.collectives[0].algorithm, "nccl:nvls/simple") << backend;
    // nccl-tests' busbw (2(n-1)/n x S / t) above the 450 GB/s link: the switch reduces.
    EXPECT_NEAR(busbw(r), 480, 48) << backend << ": " << busbw(r);
    EXPECT_GT(busbw(r), 450) << backend;
  }
}

TEST(NcclDgxH100, WithoutReductionNcclRunsRings) {
  const SimulationResult r = simulate_collective(node(8, "450GB/s", "500ns", false), CollectiveType::kAllReduce,
                                                 std::uint64_t{256} << 20, choose_ar_ag_rs("nccl"));
  EXPECT_EQ(r.collectives[0].algorithm, "nccl:ring/simple");
}

TEST(NcclErrors, NvlsNeedsAReducingSwitch) {
  try {
    simulate_collective(node(8, "450GB/s", "500ns", false), CollectiveType::kAllReduce, 1 << 20,
                        choose_ar_ag_rs("nccl:algo=nvls"));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("in_network_reduction: true"), std::string::npos) << e.what();
  }
}

TEST(NcclErrors, BadParameters) {
  EXPECT_THROW(
      simulate_collective(dgx_h100_node(), CollectiveType::kAllReduce, 1 << 20, choose_ar_ag_rs("nccl:algo=butterfly")),
      InputError);
  EXPECT_THROW(
      simulate_collective(dgx_h100_node(), CollectiveType::kAllReduce, 1 << 20, choose_ar_ag_rs("nccl:proto=ll256")),
      InputError);
  EXPECT_THROW(
      simulate_collective(dgx_h100_node(), CollectiveType::kAllReduce, 1 << 20, choose_ar_ag_rs("nccl:channels=0")),
      InputError);
  // NVLS has no LL protocol in NCCL.
  EXPECT_THROW(simulate_collective(dgx_h100_node(), CollectiveType::kAllReduce, 1 << 20,
                                   choose_ar_ag_rs("nccl:algo=nvls,proto=ll")),
               InputError);
}

TEST(NcclTopology, InNetworkReductionKey) {
  const Topology t = dgx_h100_node();
  EXPECT_TRUE(t.reduces(8));  // the switch follows the 8 NPUs
  EXPECT_FALSE(t.reduces(0));
  EXPECT_FALSE(node(8, "450GB/s", "500ns", false).reduces(8));
  EXPECT_THROW(parse_topology("shape: Ring\nnpus: 4\nbandwidth: 1GB/s\nlatency: 1ns\nin_network_reduction: true\n", "t"),
               InputError);
  const Topology stack = parse_topology(
      "topology: [Switch, Switch]\nnpus_count: [4, 2]\nbandwidth: [100, 50]\nlatency: [500, 1000]\n"
      "in_network_reduction: [true, false]\n",
      "t");
  EXPECT_TRUE(stack.reduces(8));  // dimension 0's two switches
  EXPECT_TRUE(stack.reduces(9));
  EXPECT_FALSE(stack.reduces(10));  // dimension 1's
  EXPECT_THROW(parse_topology("topology: [Ring]\nnpus_count: [4]\nbandwidth: [1]\nlatency: [1]\n"
                              "in_network_reduction: [true]\n",
                              "t"),
               InputError);
}

}  // namespace
}  // namespace sim
