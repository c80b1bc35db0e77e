// NCCL's proxy thread, its release's chunk rule and NVLS-tree's CTAs.
//
// The proxy: every message between nodes is posted by the sending rank's
// proxy thread and completed by the receiving rank's, each taking `proxy`,
// one message after another per rank. Closed form on one ring channel over
// two nodes of two GPUs, g0 g1 | g2 g3 (ring g0 g1 g2 g3, the network hop
// latency set to 0, the proxy slower than the channel's pacing P): g1 and g3
// post, g2 and g0 complete. The all-reduce's last message is g3's step-5 send
// to g0, which waits for g2's step-4 piece, which g2 has once it completed
// g1's step-3 send, which waited for g0's step-2 piece, which g0 has once it
// completed g3's step-1 send, which g3's proxy posted after its step-0 send:
// post, post, complete, post, complete, post, complete = 7 proxy times on the
// longest chain (plus intra-node paces), so two proxy costs differ by exactly
// 7 x their difference.
#include <gtest/gtest.h>

#include <string>

#include "tests/system/test_util.h"
#include "../nccl_test_cluster.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/model/nccl_protocol.h"
#include "system/collectives/nccl/programs/nccl_dag.h"
#include "system/collectives/nccl/programs/nccl_program_parts.h"
#include "core/event_queue.h"
#include "network/backend_registry.h"
#include "system/runner/engine/collective_engine.h"

namespace sim {
namespace {

using namespace sim::testing;

Time ring_time(const Topology& topo, std::uint32_t channels, const std::string& proxy) {
  const std::string text = "nccl:algo=ring,proto=simple,channels=" + std::to_string(channels) +
                           ",net_latency=0us" + (proxy.empty() ? "" : ",proxy=" + proxy);
  return simulate_collective(topo, CollectiveType::kAllReduce, 8192, choose_all_reduce(text)).makespan;
}

TEST(NcclProxy, EachMessageIsPostedAndCompletedByOneThreadPerRank) {
  const Topology topo = nccl_cluster(2, 2, "100GB/s", "50GB/s", "0ns", "0ns", false, false);
  const Time a = ring_time(topo, 1, "10us"), b = ring_time(topo, 1, "25us");
  EXPECT_EQ(b - a, Time{7} * 15 * kMicrosecond);
  // More channels: one thread per rank serves them all, so the cost grows with them.
  EXPECT_GT(ring_time(topo, 4, "10us") - ring_time(topo, 4, ""), ring_time(topo, 2, "10us") - ring_time(topo, 2, ""));
  EXPECT_GT(a, ring_time(topo, 1, ""));
}

TEST(NcclProxy, MessagesInsideANodeSkipIt) {
  const Topology topo = parse_topology("shape: Switch\nnpus: 4\nbandwidth: 100GB/s\nlatency: 0ns\n", "test-node");
  const std::string text = "nccl:algo=ring,proto=simple,channels=2";
  const SystemConfig plain = choose_all_reduce(text), proxied = choose_all_reduce(text + ",proxy=5us");
  EXPECT_EQ(simulate_collective(topo, CollectiveType::kAllReduce, 1 << 20, plain).makespan,
            simulate_collective(topo, CollectiveType::kAllReduce, 1 << 20, proxied).makespan);
}

TEST(NcclProxy, AProxiedRunIsTheSameWithoutAggregation) {
  const Topology topo = nccl_cluster(2, 4, "100GB/s", "50GB/s", "0ns", "1us", false, false);
  SystemConfig c = choose_all_reduce("nccl:algo=ring,proto=simple,channels=2,proxy=3us");
  const SimulationResult folded = simulate_collective(topo, CollectiveType::kAllReduce, 1 << 22, c);
  c.aggregation = false;
  EXPECT_EQ(simulate_collective(topo, CollectiveType::kAllReduce, 1 << 22, c).makespan, folded.makespan);
}

// When rank 2 of a hand-built program is through: rank 0 sends a paced step
// to rank 1 on channel 0 (1000 B at `pace`), a second step on channel 0 that
// its pacer starts only when the first is through, and 1000 B unpaced to
// rank 2 on channel 1 issued after them; every message through the proxy (1 us).
Time third_message_end(BytesPerSecond pace) {
  const Topology topo = parse_topology("shape: Switch\nnpus: 3\nbandwidth: 1GB/s\nlatency: 0ns\n", "proxy-order");
  nccl::DagBuilder b(3);
  const auto op = [](OpKind kind, std::uint32_t peer, std::uint64_t tag, std::uint16_t channel, BytesPerSecond rate) {
    CollectiveOp o;
    o.kind = kind;
    o.peer = peer;
    o.bytes = 1000;
    o.tag = tag;
    o.channel = channel;
    o.rate = rate;
    o.proxy_ns = kind == OpKind::kSend ? 1000 : 0;
    return o;
  };
  b.add(0, op(OpKind::kSend, 1, 0, 0, pace), {});
  b.add(0, op(OpKind::kSend, 1, 1, 0, pace), {});
  b.add(0, op(OpKind::kSend, 2, 2, 1, 0), {});
  b.add(1, op(OpKind::kRecv, 0, 0, 0, 0), {});
  b.add(1, op(OpKind::kRecv, 0, 1, 0, 0), {});
  b.add(2, op(OpKind::kRecv, 0, 2, 0, 0), {});
  for (std::uint32_t r = 0; r < 3; ++r) b.seal(r);
  const std::shared_ptr<const CollectiveProgram> program = b.build("proxy-order");
  SystemConfig config;
  config.network.backend = "analytical";
  EventQueue q;
  auto net = make_network(config.network, topo, q);
  struct Ends final : CollectiveListener {
    explicit Ends(const EventQueue& queue) : q(queue) {}
    void on_collective_done(std::uint32_t, std::uint64_t cookie) override { end[cookie] = q.now(); }
    const EventQueue& q;
    Time end[3] = {-1, -1, -1};
  } ends(q);
  CollectiveEngine engine(q, *net, config, ends);
  auto members = std::make_shared<const std::vector<std::uint32_t>>(std::vector<std::uint32_t>{0, 1, 2});
  for (std::uint32_t p = 0; p < 3; ++p) engine.join({0, 0}, program, members, p, p);
  q.run();
  return ends.end[2];
}

TEST(NcclProxy, TheThreadTakesMessagesAsTheyBecomeReady) {
  // The second step is ready when the first is through its pacer (1 us at
  // 1 GB/s, 5 us at 0.2 GB/s); the message on channel 1 is ready at once and
  // goes through the proxy after the first step whatever the pace (1-2 us),
  // so rank 2's end does not move: a proxy taking messages in the order the
  // simulation issues them would hold it behind the second step (its turn at 6-7 us, rank 2's end at 9 us).
  const Time fast = third_message_end(1'000'000'000), slow = third_message_end(200'000'000);
  EXPECT_EQ(fast, slow);
  // Out of the proxy at 2 us, 1 us on the wire, 1 us in rank 2's proxy.
  EXPECT_EQ(fast, 4 * kMicrosecond);
}

// A send that merges NCCL's steps (a program's loop cap) stands for the
// steps it carries, in proportion: one and a half steps are one and a half
// messages of proxy time and of writes, two steps two, a part of one step one.
TEST(NcclProxy, AMergedSendCountsTheStepsItCarries) {
  const std::uint64_t step = 76800;  // 72,000 bytes of LL128 on the wire
  EXPECT_EQ(nccl::merged_proxy_ns(step / 2, step, 2000), 2000u);
  EXPECT_EQ(nccl::merged_proxy_ns(step, step, 2000), 2000u);
  EXPECT_EQ(nccl::merged_proxy_ns(step + step / 2, step, 2000), 3000u);
  EXPECT_EQ(nccl::merged_proxy_ns(2 * step, step, 2000), 4000u);
  nccl::NetWrites w;
  w.cost = 2 * kMicrosecond;
  w.rails = 4;
  w.device_rate = 50'000'000'000;
  const std::uint64_t one = w.extra(step, 1);  // one stripe of 2 us at a rail's 12.5 GB/s
  EXPECT_EQ(one, 25000u);
  EXPECT_EQ(nccl::merged_write_extra(w, step / 2, step), w.extra(step / 2, 1));
  EXPECT_EQ(nccl::merged_write_extra(w, step + step / 2, step), one + one / 2);
  EXPECT_EQ(nccl::merged_write_extra(w, 2 * step, step), w.extra(2 * step, 2));
}

TEST(NcclVersion, NvlsTreeChunkFollowsTheRelease) {
  // Two nodes of 8 GPUs, 16 CTAs: 128 concurrent ops.
  const std::uint64_t ops = 128, MiB = 1 << 20;
  // Before 2.21 the chunk starts at a Simple slot (512 KiB) and halves by size.
  EXPECT_EQ(nccl::nvls_tree_chunk(1024 * MiB, ops, 2, 219), 256u * 1024);
  EXPECT_EQ(nccl::nvls_tree_chunk(8192 * MiB, ops, 2, 219), 512u * 1024);
  EXPECT_EQ(nccl::nvls_tree_chunk(32 * MiB, ops, 2, 219), 64u * 1024);
  // From 2.21 on it starts at NCCL_NVLS_CHUNKSIZE (128 KiB).
  EXPECT_EQ(nccl::nvls_tree_chunk(8192 * MiB, ops, 2, 227), 128u * 1024);
  EXPECT_EQ(nccl::nvls_tree_chunk(32 * MiB, ops, 2, 227), 64u * 1024);
  EXPECT_EQ(nccl::nvls_tree_chunk(4 * MiB, ops, 2, 227), 32u * 1024);
  // From 4 nodes on, at most 64 KiB (2.19 and later), not before.
  EXPECT_EQ(nccl::nvls_tree_chunk(8192 * MiB, ops, 4, 219), 64u * 1024);
  EXPECT_EQ(nccl::nvls_tree_chunk(8192 * MiB, ops, 4, 218), 512u * 1024);
  // A platform's NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE (aws-ofi-nccl
  // on p5: both 512 KiB) replace the start and the cap from 4 nodes on; the
  // halving by size is NCCL's: below 32 x 128 ops x 512 KiB = 2 GiB 256 KiB,
  // below 512 MiB 128 KiB, below 64 MiB 64 KiB, below 8 MiB 32 KiB.
  const std::uint64_t KiB = 1024, p5 = 512 * KiB;
  for (const int nodes : {2, 16}) {
    EXPECT_EQ(nccl::nvls_tree_chunk(8192 * MiB, ops, nodes, 227, p5, p5), 512 * KiB) << nodes;
    EXPECT_EQ(nccl::nvls_tree_chunk(2048 * MiB, ops, nodes, 227, p5, p5), 512 * KiB) << nodes;
    EXPECT_EQ(nccl::nvls_tree_chunk(2047 * MiB, ops, nodes, 227, p5, p5), 256 * KiB) << nodes;
    EXPECT_EQ(nccl::nvls_tree_chunk(512 * MiB, ops, nodes, 227, p5, p5), 256 * KiB) << nodes;
    EXPECT_EQ(nccl::nvls_tree_chunk(256 * MiB, ops, nodes, 227, p5, p5), 128 * KiB) << nodes;
    EXPECT_EQ(nccl::nvls_tree_chunk(32 * MiB, ops, nodes, 227, p5, p5), 64 * KiB) << nodes;
    EXPECT_EQ(nccl::nvls_tree_chunk(4 * MiB, ops, nodes, 227, p5, p5), 32 * KiB) << nodes;
  }
  // The cap alone (NCCL_NVLSTREE_MAX_CHUNKSIZE) keeps NCCL_NVLS_CHUNKSIZE's 128 KiB start.
  EXPECT_EQ(nccl::nvls_tree_chunk(8192 * MiB, ops, 16, 227, 0, p5), 128 * KiB);
  // The start alone keeps the 64 KiB cap from 4 nodes on.
  EXPECT_EQ(nccl::nvls_tree_chunk(8192 * MiB, ops, 16, 227, p5, 0), 64 * KiB);
  EXPECT_EQ(nccl::nvls_tree_chunk(8192 * MiB, ops, 2, 227, p5, 0), 512 * KiB);
}

TEST(NcclVersion, PlatformChunksReachThePlan) {
  const Topology topo = nccl_cluster(8, 4, "450GB/s", "50GB/s", "0ns", "0ns", true, false);
  const auto step = [&](std::uint64_t bytes, bool platform) {
    nccl::Params params = {{"algo", static_cast<std::uint64_t>(nccl::Algo::kNvlsTree)},
                           {"version", nccl::param_value("version", "2.27")}};
    if (platform) {
      params["nvls_chunk"] = nccl::param_value("nvls_chunk", "512KiB");
      params["nvlstree_max_chunk"] = nccl::param_value("nvlstree_max_chunk", "512KiB");
    }
    return all_reduce_plan(topo, bytes, params).model.step_bytes;
  };
  const std::uint64_t GiB = std::uint64_t{1} << 30;
  EXPECT_EQ(step(8 * GiB, false), 64u * 1024);
  EXPECT_EQ(step(8 * GiB, true), 512u * 1024);
  EXPECT_EQ(step(GiB, true), 256u * 1024);
  EXPECT_EQ(step(GiB / 4, true), 128u * 1024);
}

TEST(NcclVersion, BuffsizeSetsEverySimpleChunk) {
  // NCCL_BUFFSIZE is Simple's buffer per connection, NCCL_STEPS slots of it:
  // a ring step is 4 slots (ALLREDUCE_CHUNKSTEPS), a tree's, a chain's and a
  // CollNet chunk one slot; LL128 and NVLS keep theirs.
  const Topology topo = nccl_cluster(8, 4, "450GB/s", "50GB/s", "0ns", "0ns", true, false);
  const auto plan_of = [&](nccl::Algo a, nccl::Proto p, const char* buffsize) {
    nccl::Params params = {{"algo", static_cast<std::uint64_t>(a)}, {"proto", static_cast<std::uint64_t>(p)}};
    if (*buffsize) params["buffsize"] = nccl::param_value("buffsize", buffsize);
    return all_reduce_plan(topo, std::uint64_t{1} << 30, params).model;
  };
  using nccl::Algo;
  using nccl::Proto;
  EXPECT_EQ(plan_of(Algo::kRing, Proto::kSimple, "").step_bytes, 0u);  // the default, kSimpleStepPayload
  EXPECT_EQ(nccl::kSimpleStepPayload, 2u << 20);
  EXPECT_EQ(plan_of(Algo::kRing, Proto::kSimple, "8MiB").step_bytes, 4u << 20);
  EXPECT_EQ(plan_of(Algo::kTree, Proto::kSimple, "").step_bytes, 512u << 10);
  EXPECT_EQ(plan_of(Algo::kTree, Proto::kSimple, "8MiB").step_bytes, 1u << 20);
  EXPECT_EQ(plan_of(Algo::kTree, Proto::kLL128, "8MiB").step_bytes, plan_of(Algo::kTree, Proto::kLL128, "").step_bytes);
  EXPECT_EQ(plan_of(Algo::kRing, Proto::kLL128, "8MiB").step_bytes, 0u);
  EXPECT_EQ(plan_of(Algo::kNvlsTree, Proto::kSimple, "8MiB").step_bytes,
            plan_of(Algo::kNvlsTree, Proto::kSimple, "").step_bytes);
  // Before 2.21 NVLS-tree's chunk starts at a Simple slot.
  EXPECT_EQ(nccl::nvls_tree_chunk(std::uint64_t{8} << 30, 128, 2, 220, 0, 0, 8u << 20), 1u << 20);
  for (const char* bad : {"8", "0B", "2GiB", "1000B"}) EXPECT_THROW(nccl::param_value("buffsize", bad), InputError) << bad;
  // One loop of the ring with the larger step: 2 (n - 1) steps of a 4 MiB
  // piece (the closed form of nccl_simulation_test.cpp's rings).
  const std::uint32_t n = 4;
  const Topology one = parse_topology("shape: Switch\nnpus: 4\nbandwidth: 100GB/s\nlatency: 0ns\n", "node");
  const std::uint64_t piece = 4u << 20;
  const nccl::Plan pl = all_reduce_plan(one, n * piece,
                                        {{"algo", static_cast<std::uint64_t>(Algo::kRing)},
                                         {"proto", static_cast<std::uint64_t>(Proto::kSimple)},
                                         {"channels", 1},
                                         {"buffsize", 8u << 20}});
  const Time r = simulate_collective(one, CollectiveType::kAllReduce, n * piece,
                                     choose_all_reduce("nccl:algo=ring,proto=simple,channels=1,buffsize=8MiB"))
                     .makespan;
  const Time pace = transfer_time(piece, nccl::wire_rate(pl.model));
  EXPECT_EQ(r, pl.model.base + 2 * (n - 1) * (pace + pl.model.hop_intra));
}

TEST(NcclVersion, NvlsTreeRunsOnNcclsCtaCount) {
  const Topology topo = nccl_cluster(8, 2, "450GB/s", "50GB/s", "0ns", "0ns", true, false);
  const nccl::Plan pl = all_reduce_plan(topo, 256 << 20,
                                        {{"algo", static_cast<std::uint64_t>(nccl::Algo::kNvlsTree)},
                                         {"version", nccl::param_value("version", "2.27.7")}});
  EXPECT_EQ(pl.channels, nccl::kNvlsChannels);
  EXPECT_EQ(pl.model.step_bytes, 128u * 1024);
  EXPECT_EQ(pl.model.window, 8u);
}

TEST(NcclVersion, BadValuesAreRefused) {
  for (const char* bad : {"3.1", "2", "2.", "2.x", "2.21.", "2.21a", "22"}) {
    EXPECT_THROW(nccl::param_value("version", bad), InputError) << bad;
  }
  EXPECT_EQ(nccl::param_value("version", "2.19"), 219u);
  EXPECT_EQ(nccl::param_value("version", "2.17"), 217u);
  EXPECT_EQ(nccl::param_value("version", "2.27.7"), 227u);
  EXPECT_THROW(nccl::param_value("proxy", "2"), InputError);
  EXPECT_THROW(nccl::param_value("tuner", "aws"), InputError);
  for (const char* bad : {"512", "0B", "2GiB", "KiB", ""}) {
    EXPECT_THROW(nccl::param_value("nvls_chunk", bad), InputError) << bad;
    EXPECT_THROW(nccl::param_value("nvlstree_max_chunk", bad), InputError) << bad;
  }
  EXPECT_EQ(nccl::param_value("nvlstree_max_chunk", "512KiB"), 512u * 1024);
  // NCCL's point-to-point sends have no NVLS chunk: all-to-all refuses the keys.
  EXPECT_THROW(nccl::p2p_model({{"nvls_chunk", 512 * 1024}}), InputError);
  EXPECT_THROW(nccl::p2p_model({{"nvlstree_max_chunk", 512 * 1024}}), InputError);
}

// A release whose rules the model does not know is refused with the range
// it knows, not run as another release's rules.
TEST(NcclVersion, AReleaseOutsideTheModelsIsRefusedWithTheRange) {
  for (const char* unknown : {"2.99", "2.0", "2.16", "2.28", "2.99.1", "2.017"}) {
    try {
      nccl::param_value("version", unknown);
      ADD_FAILURE() << unknown << " was accepted";
    } catch (const InputError& e) {
      const std::string what = e.what();
      if (std::string(unknown) == "2.017") continue;  // not a release's spelling
      EXPECT_EQ(what, std::string("nccl: version ") + unknown +
                          " is not a release the model knows: give 2.17 to 2.27 (2.N or 2.N.M; docs/nccl.md)");
    }
  }
}

// A send's proxy time is held in 32 bits of nanoseconds (4.295 s): a
// proxy beyond 1 s per message (as every time a parameter gives) is refused
// where it is parsed, and a send whose messages add up beyond 4.295 s is
// refused when its program is built (both exit 2 with the key), never cut short.
TEST(NcclProxy, ProxyTimesBeyondWhatASendHoldsAreRefused) {
  EXPECT_EQ(nccl::param_value("proxy", "1s"), 1'000'000'000'000u);  // ps
  EXPECT_THROW(nccl::param_value("proxy", "1.001s"), InputError);
  EXPECT_THROW(nccl::param_value("proxy", "-1us"), InputError);
  const Topology topo = nccl_cluster(2, 2, "100GB/s", "50GB/s", "0ns", "0ns", false, false);
  SystemConfig c;
  c.network.backend = "analytical";
  c.algorithms[CollectiveType::kAllToAll] = "nccl:proxy=1s";
  try {
    simulate_collective(topo, CollectiveType::kAllToAll, 64 << 20, c);
    ADD_FAILURE() << "a 16 MiB part in 4 sends of 4 MiB, 32 messages of 128 KiB each, is 32 s a send";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("beyond 4.295 s"), std::string::npos) << e.what();
  }
}

// NVLS and NVLS-tree move NCCL's modelled bandwidth over the channels NCCL
// runs (the search's; nvlsChannels, 16): a forced smaller count moves that
// share of it, as rings and trees do, and a larger one no more than the model.
TEST(NcclVersion, ForcedChannelsScaleNvlsLikeRings) {
  const Topology node = parse_topology("shape: Switch\nnpus: 8\nbandwidth: 450GB/s\nlatency: 0ns\n"
                                      "in_network_reduction: true\n", "test-node");
  const Topology two = nccl_cluster(8, 2, "450GB/s", "50GB/s", "0ns", "0ns", true, false);
  const auto rate = [](const Topology& t, const std::string& algo, std::uint64_t channels) {
    const nccl::Plan pl = all_reduce_plan(t, 256 << 20, {{"algo", nccl::param_value("algo", algo)},
                                                          {"channels", channels}});
    return static_cast<double>(pl.model.channel_rate) * pl.channels;
  };
  for (const auto& [topo, algo, full] : {std::tuple{&node, "nvls", std::uint64_t{0}},
                                         std::tuple{&two, "nvlstree", std::uint64_t{nccl::kNvlsChannels}}}) {
    const nccl::Plan dflt = all_reduce_plan(*topo, 256 << 20, {{"algo", nccl::param_value("algo", algo)}});
    const std::uint64_t n = full ? full : dflt.channels;
    const double total = static_cast<double>(dflt.model.channel_rate) * dflt.channels;
    EXPECT_NEAR(rate(*topo, algo, 1), total / static_cast<double>(n), 1) << algo;
    EXPECT_NEAR(rate(*topo, algo, n / 2), total / 2, 1) << algo;
    EXPECT_NEAR(rate(*topo, algo, 64) / 64 * static_cast<double>(n), total / 64 * static_cast<double>(n), 1) << algo;
    EXPECT_LE(rate(*topo, algo, 64), total + 64) << algo;
  }
}

// NVLS runs on Hopper from NCCL 2.17 on, NVLS-tree from 2.18: NCCL's choice
// leaves them out elsewhere, and forcing them says why.
TEST(NcclVersion, NvlsExistsOnHopperFromItsRelease) {
  const Topology two = nccl_cluster(8, 2, "450GB/s", "50GB/s", "0ns", "0ns", true, false);
  const auto algo_of = [&](nccl::Params p) { return all_reduce_plan(two, 256 << 20, p).algo; };
  EXPECT_EQ(algo_of({}), nccl::Algo::kNvlsTree);
  EXPECT_NE(algo_of({{"arch", 80}}), nccl::Algo::kNvlsTree);
  EXPECT_NE(algo_of({{"version", nccl::param_value("version", "2.17")}}), nccl::Algo::kNvlsTree);
  EXPECT_EQ(algo_of({{"version", nccl::param_value("version", "2.18")}}), nccl::Algo::kNvlsTree);
  const auto nvlstree = nccl::param_value("algo", "nvlstree");
  EXPECT_THROW(algo_of({{"algo", nvlstree}, {"arch", 80}}), InputError);
  EXPECT_THROW(algo_of({{"algo", nvlstree}, {"version", nccl::param_value("version", "2.17")}}), InputError);
  const Topology node = parse_topology("shape: Switch\nnpus: 8\nbandwidth: 450GB/s\nlatency: 0ns\n"
                                      "in_network_reduction: true\n", "test-node");
  EXPECT_THROW(all_reduce_plan(node, 1 << 20, {{"algo", nccl::param_value("algo", "nvls")}, {"arch", 70}}), InputError);
  EXPECT_EQ(all_reduce_plan(node, 1 << 20, {{"algo", nccl::param_value("algo", "nvls")},
                                            {"version", nccl::param_value("version", "2.17")}})
                .algo,
            nccl::Algo::kNvls);
}

}  // namespace
}  // namespace sim
