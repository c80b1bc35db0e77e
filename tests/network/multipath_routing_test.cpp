// Multi-path routing on the flow backend (network.routing, docs/network.md
// "Multi-path routing"): hashed ECMP against the balls-into-bins expectation,
// spray and adaptive against the bisection bound, QPs per connection, options.
//
// The fabric: a 1:1 leaf-spine of 2 leaves with U NPUs each and U spines, every
// link 50 GB/s and 500 ns. F = U messages of S bytes start together, NPU i on
// leaf 0 to a distinct NPU of leaf 1 (a permutation): one per uplink would be
// the bound, S / B + 4 latencies each. Under max-min sharing a message whose
// uplink k messages share leaves at B / k, so the mean per-message throughput
// is B x (uplinks used) / F, and hashing F balls into U bins uses
// U (1 - (1 - 1/U)^F) of them on average.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "delivery_recorder.h"
#include "leaf_spine_permutation.h"
#include "network/backend_registry.h"
#include "network/flow/flow_network.h"
#include "network/router.h"

namespace sim {
namespace {

using testing_support::kB;
using testing_support::kBound;
using testing_support::kLat;
using testing_support::kS;
using testing_support::leaf_spine;
using testing_support::Recorder;

// The leaf-0 uplinks (leaf 0 -> spine j): FatTree's layout puts them right after the NPU links.
std::vector<LinkId> uplinks(const Topology& t, std::uint32_t u) {
  std::vector<LinkId> out;
  for (std::uint32_t j = 0; j < u; ++j) out.push_back(2 * t.npu_count() + 2 * j);
  return out;
}

struct Outcome {
  double throughput = 0;  // mean over messages of S / (delivery - latency), in units of B
  std::uint32_t uplinks_used = 0;
  Time last = 0;
};

// One trial: the permutation `dst` (leaf-1 positions), messages on connection `connection`.
Outcome run(const Topology& t, std::uint32_t u, const FlowNetwork::Options& o, const std::vector<std::uint32_t>& dst,
            std::uint32_t connection = 0) {
  EventQueue queue;
  Recorder sink(queue);
  FlowNetwork net(t, queue, o);
  for (std::uint32_t i = 0; i < u; ++i) net.send_on(Connection{connection}, i, u + dst[i], kS, sink.to(i));
  queue.run();
  Outcome out;
  for (std::uint32_t i = 0; i < u; ++i) {
    const Time drain = sink.at.at(i) - 4 * kLat;
    out.throughput += static_cast<double>(kS) * 1e12 / static_cast<double>(drain) / static_cast<double>(kB);
    out.last = std::max(out.last, sink.at.at(i));
  }
  out.throughput /= u;
  const std::vector<LinkUsage> usage = net.link_usage();
  for (const LinkId l : uplinks(t, u)) out.uplinks_used += usage[l].bytes > 0 ? 1 : 0;
  return out;
}

FlowNetwork::Options with(Routing routing, std::uint32_t qps = 1, std::uint64_t seed = 0) {
  FlowNetwork::Options o;
  o.routing.routing = routing;
  o.routing.qps_per_connection = qps;
  o.routing.ecmp_seed = seed;
  return o;
}

// Balls into bins: the expected number of bins of U that F balls hit.
double expected_bins(double u, double f) { return u * (1 - std::pow(1 - 1 / u, f)); }

struct Trials {
  double throughput = 0, uplinks = 0;
  double makespan = 0;  // mean over trials of the last delivery's drain, in units of S / B
  Time worst = 0;
};

// `trials` flow sets (a random permutation each, and ECMP seed = trial).
Trials average(const Topology& t, std::uint32_t u, Routing routing, std::uint32_t qps, std::uint32_t trials) {
  std::mt19937_64 rng(12345);
  std::vector<std::uint32_t> dst(u);
  Trials sum;
  for (std::uint32_t k = 0; k < trials; ++k) {
    std::iota(dst.begin(), dst.end(), 0u);
    std::shuffle(dst.begin(), dst.end(), rng);
    const Outcome o = run(t, u, with(routing, qps, k), dst);
    sum.throughput += o.throughput;
    sum.uplinks += o.uplinks_used;
    sum.makespan += static_cast<double>(o.last - 4 * kLat) / static_cast<double>(kBound - 4 * kLat);
    sum.worst = std::max(sum.worst, o.last);
  }
  sum.throughput /= trials;
  sum.uplinks /= trials;
  sum.makespan /= trials;
  return sum;
}

constexpr std::uint32_t kTrials = 2000;

TEST(MultipathRouting, HashedEcmpLosesWhatBallsIntoBinsPredicts) {
  for (const std::uint32_t u : {4u, 8u, 16u}) {
    const Topology t = leaf_spine(u);
    const Trials m = average(t, u, Routing::kEcmpHash, 1, kTrials);
    const double bins = expected_bins(u, u);
    std::printf("ecmp-hash U=F=%u: uplinks used %.3f (expected %.3f), mean throughput %.4f B (expected %.4f B)\n", u,
                m.uplinks, bins, m.throughput, bins / u);
    // 2000 trials: the standard error of the mean is below 0.004 B (U = 4; 0.002 B at U = 16).
    EXPECT_NEAR(m.throughput, bins / u, 0.015) << "U = " << u;
    EXPECT_NEAR(m.uplinks / u, bins / u, 0.015) << "U = " << u;
    EXPECT_GT(m.worst, kBound);
  }
}

TEST(MultipathRouting, EachTrialsThroughputIsUplinksUsedOverFlows) {
  // Exactly (to rate rounding): a message sharing its uplink with k - 1 others leaves at B / k.
  const std::uint32_t u = 8;
  const Topology t = leaf_spine(u);
  std::mt19937_64 rng(7);
  std::vector<std::uint32_t> dst(u);
  for (std::uint32_t k = 0; k < 20; ++k) {
    std::iota(dst.begin(), dst.end(), 0u);
    std::shuffle(dst.begin(), dst.end(), rng);
    const Outcome o = run(t, u, with(Routing::kEcmpHash, 1, k), dst);
    // The uplinks the hash picks, from the router alone.
    std::set<std::uint64_t> used;
    for (std::uint32_t i = 0; i < u; ++i) used.insert(t.ecmp_path(i, u + dst[i], 0, k));
    EXPECT_EQ(o.uplinks_used, used.size());
    EXPECT_NEAR(o.throughput, static_cast<double>(used.size()) / u, 1e-6);
  }
}

TEST(MultipathRouting, SprayMeetsTheBoundExactly) {
  for (const std::uint32_t u : {4u, 8u, 16u}) {
    const Topology t = leaf_spine(u);
    std::vector<std::uint32_t> dst(u);
    std::iota(dst.begin(), dst.end(), 0u);
    std::mt19937_64 rng(u);
    for (std::uint32_t k = 0; k < 5; ++k) {
      std::shuffle(dst.begin(), dst.end(), rng);
      EventQueue queue;
      Recorder sink(queue);
      FlowNetwork net(t, queue, with(Routing::kSpray));
      for (std::uint32_t i = 0; i < u; ++i) net.send(i, u + dst[i], kS, sink.to(i));
      queue.run();
      for (std::uint32_t i = 0; i < u; ++i) EXPECT_EQ(sink.at.at(i), kBound) << "U = " << u << ", message " << i;
      const std::vector<LinkUsage> usage = net.link_usage();
      for (const LinkId l : uplinks(t, u)) EXPECT_EQ(usage[l].bytes, kS) << "uplink " << l;  // S/U from each of U
    }
  }
}

TEST(MultipathRouting, AdaptiveSpreadsFlowsStartingTogether) {
  // Each message takes the least loaded uplink when it starts: those before it
  // hold U - 1 at most, so every one finds an idle uplink: the bound, exactly.
  for (const std::uint32_t u : {4u, 8u, 16u}) {
    const Topology t = leaf_spine(u);
    const Trials m = average(t, u, Routing::kAdaptive, 1, 20);
    EXPECT_EQ(m.worst, kBound) << "U = " << u;
    EXPECT_DOUBLE_EQ(m.uplinks, u);
  }
}

TEST(MultipathRouting, AdaptiveSeesLoadAtTheMessagesStart) {
  // 0 -> 4 is alone and takes an uplink; 1 -> 5 then avoids it. Sent later,
  // after the first has finished, a message may take any uplink again.
  const Topology t = leaf_spine(4);
  EventQueue queue;
  Recorder sink(queue);
  FlowNetwork net(t, queue, with(Routing::kAdaptive));
  net.send(0, 4, kS, sink.to(0));
  net.send(1, 5, kS, sink.to(1));
  queue.run();
  EXPECT_EQ(sink.at.at(0), kBound);
  EXPECT_EQ(sink.at.at(1), kBound);
  const std::vector<LinkUsage> usage = net.link_usage();
  std::uint32_t used = 0;
  for (const LinkId l : uplinks(t, 4)) used += usage[l].bytes > 0 ? 1 : 0;
  EXPECT_EQ(used, 2u);
}

TEST(MultipathRouting, MoreQueuePairsPerConnectionUseMoreUplinks) {
  // Each message split over q QPs, each hashed on its own: F x q balls in U
  // bins, so fewer uplinks stay idle. A message still waits for its slowest
  // part, so its own throughput need not rise with q: with 2 QPs it falls
  // (either part may collide); the last delivery comes sooner.
  const std::uint32_t u = 8;
  const Topology t = leaf_spine(u);
  double previous_makespan = 1e9;
  for (const std::uint32_t q : {1u, 2u, 4u, 8u}) {
    const Trials m = average(t, u, Routing::kEcmpHash, q, q == 1 ? kTrials : kTrials / 4);
    const double bins = expected_bins(u, static_cast<double>(u) * q);
    std::printf("ecmp-hash U=F=%u, %u QPs per connection: uplinks used %.3f (expected %.3f), mean throughput %.4f B, "
                "last delivery %.3f x S/B\n",
                u, q, m.uplinks, bins, m.throughput, m.makespan);
    EXPECT_NEAR(m.uplinks / u, bins / u, 0.015) << q << " QPs";
    EXPECT_LE(m.throughput, 1.0 + 1e-9);
    EXPECT_LT(m.makespan, previous_makespan) << q << " QPs";
    previous_makespan = m.makespan;
  }
}

TEST(MultipathRouting, ConnectionsOfOnePairHashApart) {
  // NCCL's channels to one peer are connections of their own: hashed apart.
  const std::uint32_t u = 8;
  const Topology t = leaf_spine(u);
  std::set<std::uint64_t> paths;
  for (std::uint32_t c = 0; c < 64; ++c) paths.insert(t.ecmp_path(0, u, c, 0));
  EXPECT_EQ(paths.size(), u);  // 64 connections reach all 8 spines
  // A message on connection 3 takes the path its QP hashes to.
  EventQueue queue;
  Recorder sink(queue);
  FlowNetwork net(t, queue, with(Routing::kEcmpHash));
  net.send_on(Connection{3}, 0, u, kS, sink.to(0));
  queue.run();
  const std::uint64_t j = t.ecmp_path(0, u, 3, 0);
  EXPECT_EQ(net.link_usage()[uplinks(t, u)[j]].bytes, kS);
  EXPECT_EQ(sink.at.at(0), kBound);
}

// docs/network.md's key, written out here apart from the router's code.
std::uint64_t finalize(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::uint64_t documented_path(std::uint64_t npus, std::uint64_t src, std::uint64_t dst, std::uint64_t qp,
                              std::uint32_t communicator, std::uint64_t paths) {
  const std::uint64_t key = ((qp * npus + src) * npus + dst) ^ finalize(communicator);
  return finalize(key + 0x9e3779b97f4a7c15ULL) % paths;
}

TEST(MultipathRouting, EachCommunicatorsQueuePairsHashApart) {
  // NCCL opens every communicator's connections apart: other queue pairs,
  // hashed apart; the pair's own (communicator 0) keep the plain key.
  const std::uint32_t u = 8;
  const Topology t = leaf_spine(u);
  std::set<std::uint64_t> paths;
  for (std::uint32_t m = 0; m <= 64; ++m) {
    for (const std::uint64_t qp : {0u, 3u}) {
      EXPECT_EQ(t.ecmp_path(0, u + 5, qp, 0, m), documented_path(2 * u, 0, u + 5, qp, m, u)) << m << ", qp " << qp;
    }
    EXPECT_EQ(t.ecmp_path(3, u, 0, 0, 0), t.ecmp_path(3, u, 0, 0)) << "communicator 0 is the plain key";
    if (m > 0) paths.insert(t.ecmp_path(0, u, 0, 0, m));
  }
  EXPECT_EQ(paths.size(), u);  // 64 communicators' first queue pairs reach all 8 spines

  // Two pairs, 0 -> u on communicator a and 1 -> u + 1 on communicator b:
  // alone on their spines when a's and b's queue pairs hash apart, sharing
  // one (B / 2 each) when they collide. Their bytes are on the hashed uplinks.
  const std::uint32_t a = 1;
  const std::uint64_t ja = t.ecmp_path(0, u, 0, 0, a);
  std::uint32_t apart = 0, together = 0;
  for (std::uint32_t m = 1; m <= 64 && (apart == 0 || together == 0); ++m) {
    (t.ecmp_path(1, u + 1, 0, 0, m) == ja ? together : apart) = m;
  }
  ASSERT_NE(apart, 0u);
  ASSERT_NE(together, 0u);
  for (const std::uint32_t b : {apart, together}) {
    EventQueue queue;
    Recorder sink(queue);
    FlowNetwork net(t, queue, with(Routing::kEcmpHash));
    net.send_on(Connection{0, 0, a}, 0, u, kS, sink.to(0));
    net.send_on(Connection{0, 0, b}, 1, u + 1, kS, sink.to(1));
    queue.run();
    const Time expected = b == apart ? kBound : 4 * kLat + 2 * (kBound - 4 * kLat);
    EXPECT_EQ(sink.at.at(0), expected) << "communicator " << b;
    EXPECT_EQ(sink.at.at(1), expected) << "communicator " << b;
    const std::uint64_t jb = t.ecmp_path(1, u + 1, 0, 0, b);
    EXPECT_EQ(net.link_usage()[uplinks(t, u)[ja]].bytes, b == apart ? kS : 2 * kS);
    EXPECT_EQ(net.link_usage()[uplinks(t, u)[jb]].bytes, b == apart ? kS : 2 * kS);
  }
}

TEST(MultipathRouting, TheFirstQueuePairTakesTheTopologysRoute) {
  // Connection 0 with one QP and seed 0 is the pair's route as the topology
  // gives it (what every backend uses); a seed moves it.
  const Topology t = load_topology(std::string(SIM_SOURCE_DIR) + "/configs/fattree64.yml");
  std::uint32_t moved = 0;
  for (NodeId s = 0; s < 64; s += 7) {
    for (NodeId d = 0; d < 64; d += 5) {
      if (s == d) continue;
      std::vector<LinkId> route, path;
      t.route(s, d, route);
      t.route_path(s, d, t.ecmp_path(s, d, 0, 0), path);
      EXPECT_EQ(route, path) << s << " -> " << d;
      moved += t.ecmp_path(s, d, 0, 0) != t.ecmp_path(s, d, 0, 1) ? 1 : 0;
    }
  }
  EXPECT_GT(moved, 0u);
}

TEST(MultipathRouting, PartsOfOnePairStillLeaveInOrder) {
  // Messages of one pair keep their order under every routing: the next one
  // starts when all parts of the previous have left.
  const Topology t = leaf_spine(4);
  for (const Routing r : {Routing::kEcmpHash, Routing::kSpray, Routing::kAdaptive}) {
    EventQueue queue;
    Recorder sink(queue);
    FlowNetwork net(t, queue, with(r, 2));
    net.send(0, 4, kS, sink.to(0));
    net.send(0, 4, kS / 2, sink.to(1));
    net.send(0, 4, 3, sink.to(2));
    queue.run();
    ASSERT_EQ(sink.seen.size(), 3u);
    EXPECT_EQ(sink.seen[0].token, 0u);
    EXPECT_EQ(sink.seen[1].token, 1u);
    EXPECT_EQ(sink.seen[2].token, 2u);
    // Alone, every part on its own uplink or a part's time on one: never before the whole at B.
    EXPECT_GE(sink.at.at(1), 4 * kLat + 20'971'520 + 10'485'760);
    EXPECT_EQ(net.flows_in_flight(), 0u);
    EXPECT_EQ(net.messages_in_network(), 0u);
  }
}

TEST(MultipathRouting, SinglePathTopologiesIgnoreTheRouting) {
  // A ring has one path per pair: every routing gives the same deliveries.
  const Topology t = load_topology(std::string(SIM_SOURCE_DIR) + "/configs/ring8.yml");
  std::vector<std::map<std::uint64_t, Time>> seen;
  for (const Routing r : {Routing::kEcmpHash, Routing::kSpray, Routing::kAdaptive}) {
    EventQueue queue;
    Recorder sink(queue);
    FlowNetwork net(t, queue, with(r, 4));
    for (NodeId s = 0; s < 8; ++s) net.send_on(Connection{s}, s, (s + 3) % 8, kS, sink.to(s));
    queue.run();
    seen.push_back(sink.at);
  }
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[0], seen[2]);
}

TEST(MultipathRouting, OptionsAreCheckedOnEveryBackend) {
  const Topology t = leaf_spine(4);
  EventQueue queue;
  auto message = [&](const std::string& backend, const std::string& key, const std::string& value) {
    NetworkConfig c{backend, {{key, {value, "sys.yml:3: network." + key}}}};
    try {
      make_network(c, t, queue);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (const char* backend : {"analytical", "flow"}) {
    EXPECT_EQ(message(backend, "routing", "spray"), "");
    EXPECT_EQ(message(backend, "routing", "adaptive"), "");
    EXPECT_EQ(message(backend, "qps_per_connection", "4"), "");
    EXPECT_EQ(message(backend, "ecmp_seed", "17"), "");
    EXPECT_EQ(message(backend, "routing", "ecmp"),
              "sys.yml:3: network.routing: expected one of ecmp-hash, spray, adaptive, got 'ecmp'");
    EXPECT_EQ(message(backend, "qps_per_connection", "0"),
              "sys.yml:3: network.qps_per_connection: expected a whole number 1..128, got '0'");
    EXPECT_EQ(message(backend, "qps_per_connection", "129"),
              "sys.yml:3: network.qps_per_connection: expected a whole number 1..128, got '129'");
    EXPECT_EQ(message(backend, "ecmp_seed", "-1"),
              "sys.yml:3: network.ecmp_seed: expected a whole number 0..4294967295, got '-1'");
    EXPECT_NE(message(backend, "ecmp_seed", "4294967296"), "");
    // Counts and seeds are plain numbers: a size's unit or exponent was taken
    // ("1KiB" a seed of 1024, "1e3" one of 1000, "2.0" two queue pairs).
    for (const char* slip : {"1KiB", "1e3", "2.0", "+3", " 3", ""}) {
      EXPECT_EQ(message(backend, "ecmp_seed", slip),
                std::string("sys.yml:3: network.ecmp_seed: expected a whole number 0..4294967295, got '") + slip + "'");
      EXPECT_NE(message(backend, "qps_per_connection", slip), "") << slip;
    }
  }
}

}  // namespace
}  // namespace sim
