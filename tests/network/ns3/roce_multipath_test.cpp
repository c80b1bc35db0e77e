// Multi-path routing under transport: roce (docs/network.md, "Multi-path
// routing"): each queue pair on the path its (src, dst, qp) hashes to, as the
// flow backend routes it, or a message sprayed over every path. The fabric
// and the traffic are multipath_routing_test.cpp's: a 1:1 leaf-spine of 2
// leaves with U NPUs each and U spines, 50 GB/s and 500 ns, NPU i of leaf 0
// sending S bytes to a distinct NPU of leaf 1 (a permutation), all at once.
// ns3 and flow must pick the same uplinks and agree on the time within 10%;
// spraying loads every uplink evenly and meets the bound, and adaptive routing
// puts every queue pair on a free uplink.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "network/backend_registry.h"
#include "tests/network/delivery_recorder.h"
#include "tests/network/leaf_spine_permutation.h"
#include "tests/network/ns3/skip_without_ns3.h"

namespace sim {
namespace {

using testing_support::kBound;
using testing_support::kS;
using testing_support::leaf_spine;
using testing_support::Recorder;
using Options = std::map<std::string, OptionValue>;

constexpr std::uint32_t kU = 8;

struct UplinkUse {
  std::set<LinkId> uplinks;  // leaf 0 -> spine links that carried bytes
  std::vector<std::uint64_t> uplink_bytes;
  Time last = 0;
};

// Every message on communicator `communicator` (Connection::communicator).
UplinkUse run_permutation(const std::string& backend, Options options, const std::vector<std::uint32_t>& dst,
                          std::uint32_t communicator = 0) {
  const Topology t = leaf_spine(kU);
  EventQueue q;
  Recorder r(q);
  NetworkConfig c;
  c.backend = backend;
  if (backend == "ns3") {
    options["transport"] = {"roce", "test"};
    options["dcqcn"] = {"false", "test"};  // PFC alone: shares a port as flow's max-min does
  }
  c.options = std::move(options);
  auto net = make_network(c, t, q);
  for (std::uint32_t i = 0; i < kU; ++i) net->send_on(Connection{0, 0, communicator}, i, kU + dst[i], kS, r.to(i));
  q.run();
  EXPECT_EQ(r.seen.size(), kU) << backend;
  UplinkUse out;
  for (const auto& s : r.seen) out.last = std::max(out.last, s.at);
  const std::vector<LinkUsage> usage = net->link_usage();
  // FatTree's layout: leaf 0 -> spine j right after the NPU links.
  for (std::uint32_t j = 0; j < kU; ++j) {
    const LinkId l = 2 * t.npu_count() + 2 * j;
    out.uplink_bytes.push_back(usage[l].bytes);
    if (usage[l].bytes > 0) out.uplinks.insert(l);
  }
  return out;
}

Options routing(const std::string& how, std::uint32_t qps, std::uint64_t seed) {
  return {{"routing", {how, "test"}},
          {"qps_per_connection", {std::to_string(qps), "test"}},
          {"ecmp_seed", {std::to_string(seed), "test"}}};
}

TEST(Ns3RoceMultipath, QueuePairsTakeTheUplinksFlowHashesThemOnto) {
  SKIP_WITHOUT_NS3();
  std::mt19937_64 rng(7);
  std::vector<std::uint32_t> dst(kU);
  bool some_collide = false;
  for (const std::uint32_t qps : {1u, 4u}) {
    for (std::uint64_t seed = 0; seed < 3; ++seed) {
      std::iota(dst.begin(), dst.end(), 0u);
      std::shuffle(dst.begin(), dst.end(), rng);
      const UplinkUse flow = run_permutation("flow", routing("ecmp-hash", qps, seed), dst);
      const UplinkUse ns3 = run_permutation("ns3", routing("ecmp-hash", qps, seed), dst);
      EXPECT_EQ(ns3.uplinks, flow.uplinks) << qps << " QPs, seed " << seed;
      EXPECT_EQ(ns3.uplink_bytes, flow.uplink_bytes) << qps << " QPs, seed " << seed;
      EXPECT_NEAR(static_cast<double>(ns3.last) / static_cast<double>(flow.last), 1.0, 0.10)
          << qps << " QPs, seed " << seed << ": ns3 " << ns3.last << " ps, flow " << flow.last << " ps";
      some_collide |= flow.uplinks.size() < kU;
    }
  }
  EXPECT_TRUE(some_collide) << "no trial had two queue pairs on one uplink: the test shows nothing";
}

TEST(Ns3RoceMultipath, EachCommunicatorsQueuePairsHashAsFlowHashesThem) {
  // Another communicator's queue pairs are other QPs: hashed apart from the
  // pair's own, onto the uplinks flow puts them on.
  SKIP_WITHOUT_NS3();
  std::vector<std::uint32_t> dst(kU);
  std::iota(dst.begin(), dst.end(), 0u);
  std::mt19937_64 rng(11);
  std::shuffle(dst.begin(), dst.end(), rng);
  const Options hash = routing("ecmp-hash", 1, 0);
  const UplinkUse own = run_permutation("flow", hash, dst, 0);
  bool moved = false;
  for (const std::uint32_t communicator : {3u, 9u}) {
    const UplinkUse flow = run_permutation("flow", hash, dst, communicator);
    const UplinkUse ns3 = run_permutation("ns3", hash, dst, communicator);
    EXPECT_EQ(ns3.uplink_bytes, flow.uplink_bytes) << "communicator " << communicator;
    moved |= flow.uplink_bytes != own.uplink_bytes;
  }
  EXPECT_TRUE(moved) << "no communicator moved a queue pair off the pair's own uplink";
}

TEST(Ns3RoceMultipath, SprayLoadsEveryUplinkEvenlyAndMeetsTheBound) {
  SKIP_WITHOUT_NS3();
  std::vector<std::uint32_t> dst(kU);
  std::iota(dst.begin(), dst.end(), 0u);
  const UplinkUse ns3 = run_permutation("ns3", routing("spray", 1, 0), dst);
  const UplinkUse flow = run_permutation("flow", routing("spray", 1, 0), dst);
  for (const std::uint64_t b : ns3.uplink_bytes) EXPECT_EQ(b, kS);  // S / U from each of U
  EXPECT_EQ(flow.last, kBound);
  // Packets add their headers (62 B per 4,096 B), a frame's store-and-forward
  // per hop and the parts' interleaving at each port: within the agreement
  // bound of 10%, and no collision's loss (a shared uplink would double it).
  EXPECT_GE(ns3.last, kBound);
  EXPECT_LT(static_cast<double>(ns3.last), 1.10 * static_cast<double>(kBound)) << ns3.last << " ps";
}

// Adaptive: each queue pair's part, when it is sent, on the path whose links
// carry the fewest queue pairs with unacknowledged data, hop by hop from the
// source (the flow backend's rule with its flows). All eight messages start
// at once, so each finds an uplink no earlier one took: every uplink carries
// exactly one message, as on the flow backend, and the time is the bound's
// (within spray's 10%: headers and store-and-forward), where the hashed runs
// of the permutations above collide.
TEST(Ns3RoceMultipath, AdaptiveRoutingPutsEveryQueuePairOnAFreeUplink) {
  SKIP_WITHOUT_NS3();
  std::mt19937_64 rng(7);
  std::vector<std::uint32_t> dst(kU);
  for (const std::uint32_t qps : {1u, 4u}) {
    for (std::uint64_t seed = 0; seed < 3; ++seed) {
      std::iota(dst.begin(), dst.end(), 0u);
      std::shuffle(dst.begin(), dst.end(), rng);
      const UplinkUse flow = run_permutation("flow", routing("adaptive", qps, seed), dst);
      const UplinkUse ns3 = run_permutation("ns3", routing("adaptive", qps, seed), dst);
      EXPECT_EQ(ns3.uplink_bytes, flow.uplink_bytes) << qps << " QPs, seed " << seed;
      EXPECT_EQ(ns3.uplinks.size(), kU) << qps << " QPs, seed " << seed;
      for (const std::uint64_t b : ns3.uplink_bytes) EXPECT_EQ(b, kS) << qps << " QPs, seed " << seed;
      EXPECT_EQ(flow.last, kBound) << qps << " QPs, seed " << seed;
      EXPECT_GE(ns3.last, kBound);
      EXPECT_LT(static_cast<double>(ns3.last), 1.10 * static_cast<double>(kBound))
          << qps << " QPs, seed " << seed << ": " << ns3.last << " ps";
    }
  }
}

TEST(Ns3RoceMultipath, WhatNs3CannotRouteIsAnError) {
  SKIP_WITHOUT_NS3();
  const Topology t = leaf_spine(kU);
  EventQueue q;
  const auto error = [&](Options o) -> std::string {
    NetworkConfig c;
    c.backend = "ns3";
    c.options = std::move(o);
    try {
      make_network(c, t, q);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error({{"routing", {"adaptive", "sys.yml:3: network.routing"}}}),
            "sys.yml:3: network.routing: transport: tcp runs one TCP connection per NPU pair on the pair's own "
            "route; queue pairs, spraying, adaptive routing and seeded hashing need transport: roce or ib (or the "
            "flow backend)");
  EXPECT_EQ(error({{"qps_per_connection", {"4", "sys.yml:4: network.qps_per_connection"}}}),
            "sys.yml:4: network.qps_per_connection: transport: tcp runs one TCP connection per NPU pair on the "
            "pair's own route; queue pairs, spraying, adaptive routing and seeded hashing need transport: roce or "
            "ib (or the flow backend)");
  EXPECT_EQ(error({{"transport", {"roce", "t"}}, {"routing", {"adaptive", "t"}}}), "");
  // One path per pair: the keys change nothing, on ns3 as on every backend.
  const Topology one = parse_topology("topology: [Switch]\nnpus_count: [4]\nbandwidth: [50]\nlatency: [500]\n", "s4");
  NetworkConfig c;
  c.backend = "ns3";
  c.options = {{"routing", {"adaptive", "t"}}, {"qps_per_connection", {"4", "t"}}};
  EXPECT_NO_THROW(make_network(c, one, q));
}

}  // namespace
}  // namespace sim
