// shape: FatTree: the leaf-spine and k-ary graphs, their routes, ECMP and input errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "network/topology.h"
#include "tests/network/topology_util.h"

namespace sim {
namespace {

using testing_support::expect_error;
using testing_support::route;

constexpr BytesPerSecond kGBps = 1'000'000'000;

const std::string kLeafSpine =
    "shape: FatTree\nleaves: 8\nnpus_per_leaf: 8\nspines: 4\nbandwidth: 50GB/s\nlatency: 500ns\n";

// The nodes a route visits, src first; fails the test unless each link starts
// where the previous one ended.
std::vector<NodeId> path_nodes(const Topology& t, NodeId src, NodeId dst) {
  std::vector<NodeId> nodes{src};
  for (LinkId id : route(t, src, dst)) {
    EXPECT_LT(id, t.links().size());
    EXPECT_EQ(t.links()[id].from, nodes.back()) << src << " -> " << dst;
    nodes.push_back(t.links()[id].to);
  }
  return nodes;
}

// Every pair: a connected path src -> dst through switches only, no node
// twice, of length 2 (same leaf), 4 (same pod) or 6 (across pods).
void expect_valid_routes(const Topology& t, std::uint32_t npus_per_leaf, std::uint32_t npus_per_pod) {
  for (NodeId s = 0; s < t.npu_count(); ++s) {
    for (NodeId d = 0; d < t.npu_count(); ++d) {
      const std::vector<NodeId> nodes = path_nodes(t, s, d);
      ASSERT_EQ(nodes.back(), d) << s << " -> " << d;
      const std::size_t hops = s == d                                   ? 0
                               : s / npus_per_leaf == d / npus_per_leaf ? 2
                               : s / npus_per_pod == d / npus_per_pod   ? 4
                                                                        : 6;
      ASSERT_EQ(nodes.size(), hops + 1) << s << " -> " << d;
      for (std::size_t i = 1; i + 1 < nodes.size(); ++i) ASSERT_GE(nodes[i], t.npu_count()) << s << " -> " << d;
      ASSERT_EQ(std::set<NodeId>(nodes.begin(), nodes.end()).size(), nodes.size()) << s << " -> " << d;
    }
  }
}

TEST(FatTree, LeafSpineCounts) {
  const Topology t = parse_topology(kLeafSpine + "oversubscription: 2\n", "t.yml");
  EXPECT_EQ(t.npu_count(), 64u);
  EXPECT_EQ(t.switch_count(), 12u);                   // 8 leaves + 4 spines
  EXPECT_EQ(t.links().size(), 2u * 64 + 2u * 8 * 4);  // NPU cables + leaf-spine cables
  EXPECT_EQ(t.dims(), (std::vector<std::uint32_t>{8, 8}));
  EXPECT_EQ(t.description(),
            "FatTree 8 leaves x 8 NPUs, 4 spines, 2:1 (64 NPUs, 12 switches, 192 links, 50 GB/s, 500 ns)");
}

TEST(FatTree, Description) {
  EXPECT_EQ(parse_topology("name: rack\nshape: FatTree\nleaves: 4\nnpus_per_leaf: 1\nspines: 1\nbandwidth: 50\n"
                           "latency: 500\necmp: dmodk\n",
                           "t.yml")
                .description(),
            "rack: FatTree 4 leaves x 1 NPU, 1 spine, 1:1, ecmp dmodk (4 NPUs, 5 switches, 16 links, 50 GB/s, 500 ns)");
  EXPECT_EQ(
      parse_topology("shape: FatTree\nleaves: 4\nnpus_per_leaf: 1\nspines: 1\nbandwidth: 50\nlatency: 500\n", "t.yml")
          .dims(),
      (std::vector<std::uint32_t>{4}));  // a dimension of 1 is left out
}

TEST(FatTree, LinkLayout) {
  const Topology t = parse_topology(kLeafSpine + "uplink_bandwidth: 100GB/s\nuplink_latency: 1us\n", "t.yml");
  const std::vector<Link>& links = t.links();
  // NPU n: link 2n up to its leaf (node 64 + n / 8), 2n + 1 back down.
  for (NodeId n = 0; n < 64; ++n) {
    EXPECT_EQ(links[2 * n].from, n);
    EXPECT_EQ(links[2 * n].to, 64 + n / 8);
    EXPECT_EQ(links[2 * n + 1].from, 64 + n / 8);
    EXPECT_EQ(links[2 * n + 1].to, n);
    EXPECT_EQ(links[2 * n].bandwidth, 50 * kGBps);
    EXPECT_EQ(links[2 * n].latency, 500'000);
  }
  // Leaf l <-> spine j (node 72 + j): link 128 + 2 (4l + j) up, the next down.
  for (std::uint32_t l = 0; l < 8; ++l) {
    for (std::uint32_t j = 0; j < 4; ++j) {
      const Link& up = links[128 + 2 * (4 * l + j)];
      const Link& down = links[128 + 2 * (4 * l + j) + 1];
      EXPECT_EQ(up.from, 64 + l);
      EXPECT_EQ(up.to, 72 + j);
      EXPECT_EQ(down.from, 72 + j);
      EXPECT_EQ(down.to, 64 + l);
      EXPECT_EQ(up.bandwidth, 100 * kGBps);
      EXPECT_EQ(down.latency, 1'000'000);
    }
  }
  // Exactly one link per direction per cable.
  std::set<std::pair<NodeId, NodeId>> seen;
  for (const Link& l : links) EXPECT_TRUE(seen.insert({l.from, l.to}).second) << l.from << " -> " << l.to;
}

TEST(FatTree, EveryRouteIsAConnectedPath) {
  for (const std::string ecmp : {"hash", "dmodk"}) {
    SCOPED_TRACE(ecmp);
    expect_valid_routes(parse_topology(kLeafSpine + "ecmp: " + ecmp + "\n", "t.yml"), 8, 64);
    // Sizes that share no factor, and a single spine.
    expect_valid_routes(parse_topology("shape: FatTree\nleaves: 3\nnpus_per_leaf: 5\nspines: 7\nbandwidth: 50\n"
                                       "latency: 500\necmp: " +
                                           ecmp + "\n",
                                       "t.yml"),
                        5, 15);
    expect_valid_routes(parse_topology("shape: FatTree\nleaves: 5\nnpus_per_leaf: 1\nspines: 1\nbandwidth: 50\n"
                                       "latency: 500\necmp: " +
                                           ecmp + "\n",
                                       "t.yml"),
                        1, 5);
    for (const std::string k : {"2", "4", "6"}) {
      const std::uint32_t half = static_cast<std::uint32_t>(std::stoi(k)) / 2;
      expect_valid_routes(
          parse_topology("shape: FatTree\nk: " + k + "\nbandwidth: 50\nlatency: 500\necmp: " + ecmp + "\n", "t.yml"),
          half, half * half);
    }
  }
}

TEST(FatTree, SameLeafTwoLinksCrossLeafFour) {
  const Topology t = parse_topology(kLeafSpine, "t.yml");
  EXPECT_EQ(path_nodes(t, 3, 5), (std::vector<NodeId>{3, 64, 5}));
  const std::vector<NodeId> across = path_nodes(t, 3, 60);
  ASSERT_EQ(across.size(), 5u);
  EXPECT_EQ(across[1], 64u);  // leaf 0
  EXPECT_GE(across[2], 72u);  // a spine
  EXPECT_LT(across[2], 76u);
  EXPECT_EQ(across[3], 71u);  // leaf 7
  EXPECT_EQ(across[4], 60u);
}

TEST(FatTree, EcmpIsDeterministic) {
  const Topology a = parse_topology(kLeafSpine, "t.yml");
  const Topology b = parse_topology(kLeafSpine + "ecmp: hash\n", "u.yml");  // hash is the default
  for (NodeId s = 0; s < 64; ++s) {
    for (NodeId d = 0; d < 64; ++d) {
      const std::vector<LinkId> first = route(a, s, d);
      EXPECT_EQ(route(a, s, d), first);
      EXPECT_EQ(route(b, s, d), first);
    }
  }
  // Pinned: spine = splitmix64(src * 64 + dst) mod 4, the same on every build.
  // splitmix64(0 * 64 + 63) = 0x8c741196acc47e35 -> spine 1;
  // splitmix64(63 * 64 + 0) = 0x75286bfb091f4fe8 -> spine 0.
  EXPECT_EQ(path_nodes(a, 0, 63)[2], 72u + 1);
  EXPECT_EQ(path_nodes(a, 63, 0)[2], 72u + 0);
}

// Routes through each spine over all pairs (a route crosses one spine at most).
std::vector<std::uint32_t> routes_per_spine(const Topology& t, NodeId first_spine, std::uint32_t spines) {
  std::vector<std::uint32_t> count(spines, 0);
  for (NodeId s = 0; s < t.npu_count(); ++s) {
    for (NodeId d = 0; d < t.npu_count(); ++d) {
      for (LinkId id : route(t, s, d)) {
        const NodeId to = t.links()[id].to;
        if (to >= first_spine && to < first_spine + spines) ++count[to - first_spine];
      }
    }
  }
  return count;
}

TEST(FatTree, HashBalancesSpines) {
  const Topology t = parse_topology(kLeafSpine, "t.yml");
  const std::vector<std::uint32_t> count = routes_per_spine(t, 72, 4);
  const double mean = 64.0 * 56 / 4;  // cross-leaf pairs per spine
  for (std::uint32_t j = 0; j < 4; ++j) {
    EXPECT_NEAR(count[j], mean, 0.15 * mean) << "spine " << j;
  }
  // Each leaf's 4 uplinks carry about equal shares of its 448 outgoing
  // cross-leaf routes (a looser bound: 112 routes per uplink).
  for (std::uint32_t l = 0; l < 8; ++l) {
    std::vector<std::uint32_t> per_uplink(4, 0);
    for (NodeId s = 8 * l; s < 8 * l + 8; ++s) {
      for (NodeId d = 0; d < 64; ++d) {
        if (d / 8 != l) ++per_uplink[t.links()[route(t, s, d)[1]].to - 72];
      }
    }
    for (std::uint32_t j = 0; j < 4; ++j)
      EXPECT_NEAR(per_uplink[j], 112.0, 0.3 * 112) << "leaf " << l << " spine " << j;
  }
}

TEST(FatTree, DmodkPicksSpineByDestination) {
  const Topology t = parse_topology(kLeafSpine + "ecmp: dmodk\n", "t.yml");
  for (NodeId s = 0; s < 64; ++s) {
    for (NodeId d = 0; d < 64; ++d) {
      if (s / 8 == d / 8) continue;
      ASSERT_EQ(path_nodes(t, s, d)[2], 72 + d % 4) << s << " -> " << d;
    }
  }
  // Exactly balanced: every spine carries the same number of routes.
  EXPECT_EQ(routes_per_spine(t, 72, 4), (std::vector<std::uint32_t>(4, 64 * 56 / 4)));
  EXPECT_NE(t.description().find("ecmp dmodk"), std::string::npos) << t.description();
}

TEST(FatTree, OversubscriptionSetsUplinkBandwidth) {
  struct Case {
    std::string extra;
    BytesPerSecond uplink;
    std::string ratio;
  };
  const std::vector<Case> cases = {
      {"", 100 * kGBps, "1:1"},  // default 1:1: 8 x 50 = 4 x 100
      {"oversubscription: 1\n", 100 * kGBps, "1:1"},
      {"oversubscription: 2\n", 50 * kGBps, "2:1"},
      {"oversubscription: 4\n", 25 * kGBps, "4:1"},
      {"oversubscription: 1.5\n", 66'666'666'666, "1.5:1"},  // rounded down to whole B/s
      {"oversubscription: 3\n", 33'333'333'333, "3:1"},
      {"oversubscription: 0.5\n", 200 * kGBps, "0.5:1"},
      {"uplink_bandwidth: 400Gbps\n", 50 * kGBps, "2:1"},
      {"uplink_bandwidth: 30GB/s\n", 30 * kGBps, "3.333:1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.extra);
    const Topology t = parse_topology(kLeafSpine + c.extra, "t.yml");
    const std::vector<LinkId> r = route(t, 0, 63);
    ASSERT_EQ(r.size(), 4u);
    EXPECT_EQ(t.links()[r[0]].bandwidth, 50 * kGBps);
    EXPECT_EQ(t.links()[r[1]].bandwidth, c.uplink);
    EXPECT_EQ(t.links()[r[2]].bandwidth, c.uplink);
    EXPECT_EQ(t.links()[r[3]].bandwidth, 50 * kGBps);
    EXPECT_NE(t.description().find("4 spines, " + c.ratio + " ("), std::string::npos) << t.description();
  }
}

TEST(FatTree, UplinkLatencyDefaultsToLatency) {
  const Topology same = parse_topology(kLeafSpine, "t.yml");
  const Topology slow = parse_topology(kLeafSpine + "uplink_latency: 2us\n", "t.yml");
  Time a = 0, b = 0;
  for (LinkId id : route(same, 0, 63)) a += same.links()[id].latency;
  for (LinkId id : route(slow, 0, 63)) b += slow.links()[id].latency;
  EXPECT_EQ(a, 4 * 500'000);
  EXPECT_EQ(b, 2 * 500'000 + 2 * 2'000'000);
}

TEST(FatTree, KAryCounts) {
  const Topology t = parse_topology("shape: FatTree\nk: 4\nbandwidth: 50GB/s\nlatency: 500ns\n", "t.yml");
  EXPECT_EQ(t.npu_count(), 16u);              // k^3 / 4
  EXPECT_EQ(t.switch_count(), 8u + 8u + 4u);  // k^2/2 edge + k^2/2 aggregation + (k/2)^2 core
  EXPECT_EQ(t.links().size(), 3u * 2 * 16);   // three tiers of k^3/4 cables
  EXPECT_EQ(t.dims(), (std::vector<std::uint32_t>{2, 2, 4}));
  EXPECT_EQ(t.description(), "FatTree k=4, 1:1 (16 NPUs, 20 switches, 96 links, 50 GB/s, 500 ns)");
  for (const Link& l : t.links()) EXPECT_EQ(l.bandwidth, 50 * kGBps);  // full bisection by default
  // Every switch has k ports: k links out and k in (cores: one per pod).
  std::map<NodeId, std::uint32_t> out, in;
  for (const Link& l : t.links()) {
    ++out[l.from];
    ++in[l.to];
  }
  for (NodeId sw = 16; sw < 36; ++sw) {
    EXPECT_EQ(out[sw], 4u) << sw;
    EXPECT_EQ(in[sw], 4u) << sw;
  }
  const Topology k6 = parse_topology("shape: FatTree\nk: 6\nbandwidth: 50\nlatency: 500\n", "t.yml");
  EXPECT_EQ(k6.npu_count(), 54u);
  EXPECT_EQ(k6.switch_count(), 18u + 18u + 9u);
  EXPECT_EQ(k6.links().size(), 3u * 2 * 54);
}

TEST(FatTree, KAryCrossPodRouteUsesOnePlane) {
  // k = 4: NPUs 0-15, edges 16-23, aggregation 24-31 (pod p: 24 + 2p + j),
  // cores 32-35 (plane j: 32 + 2j + c).
  for (const std::string ecmp : {"hash", "dmodk"}) {
    const Topology t =
        parse_topology("shape: FatTree\nk: 4\nbandwidth: 50\nlatency: 500\necmp: " + ecmp + "\n", "t.yml");
    std::vector<std::uint32_t> per_core(4, 0);
    for (NodeId s = 0; s < 16; ++s) {
      for (NodeId d = 0; d < 16; ++d) {
        if (s / 4 == d / 4) continue;
        const std::vector<NodeId> n = path_nodes(t, s, d);
        ASSERT_EQ(n.size(), 7u);
        const std::uint32_t j = n[2] - 24 - 2 * (s / 4);  // aggregation switch within the source pod
        ASSERT_LT(j, 2u);
        ASSERT_EQ((n[3] - 32) / 2, j) << "core outside plane " << j;
        ASSERT_EQ(n[4], 24 + 2 * (d / 4) + j) << "same plane in the destination pod";
        if (ecmp == "dmodk") {
          ASSERT_EQ(j, d % 2);
          ASSERT_EQ(n[3], 32 + 2 * (d % 2) + d / 2 % 2);
        }
        ++per_core[n[3] - 32];
      }
    }
    // 16 x 12 cross-pod routes over 4 cores.
    for (std::uint32_t c = 0; c < 4; ++c) EXPECT_NEAR(per_core[c], 48.0, ecmp == "dmodk" ? 0 : 0.3 * 48) << ecmp;
  }
}

TEST(FatTree, LargeTreeLoadsAndRoutesArithmetically) {
  // k = 48: 27 648 NPUs, 2 880 switches; a per-pair table would be 764 M entries.
  const Topology t = parse_topology("shape: FatTree\nk: 48\nbandwidth: 50\nlatency: 500\n", "t.yml");
  EXPECT_EQ(t.npu_count(), 27'648u);
  EXPECT_EQ(t.switch_count(), 2'880u);
  EXPECT_EQ(route(t, 0, 27'647).size(), 6u);
  EXPECT_EQ(path_nodes(t, 27'647, 0).back(), 0u);
}

// --- Bad input: an InputError naming the file, the line and the key.

TEST(FatTreeErrors, UnknownKey) {
  expect_error(kLeafSpine + "spine: 4\n", {"configs/x.yml:7:", "unknown key 'spine'", "allowed: name, shape, leaves"});
  expect_error(kLeafSpine + "npus: 64\n", {"configs/x.yml:7:", "unknown key 'npus'"});
  expect_error(kLeafSpine + "dims: [8, 8]\n", {"unknown key 'dims'"});
}

TEST(FatTreeErrors, MissingKey) {
  expect_error("shape: FatTree\nleaves: 8\nspines: 4\nbandwidth: 50\nlatency: 500\n",
               {"missing key 'npus_per_leaf'", "'leaves', 'npus_per_leaf' and 'spines', or 'k'"});
  expect_error("shape: FatTree\nbandwidth: 50\nlatency: 500\n", {"missing key 'leaves'"});
  expect_error("shape: FatTree\nleaves: 8\nnpus_per_leaf: 8\nspines: 4\nlatency: 500\n", {"missing key 'bandwidth'"});
  expect_error("shape: FatTree\nk: 4\nbandwidth: 50\n", {"missing key 'latency'"});
}

TEST(FatTreeErrors, ZeroOrNegativeCounts) {
  expect_error("shape: FatTree\nleaves: 8\nnpus_per_leaf: 0\nspines: 4\nbandwidth: 50\nlatency: 500\n",
               {"configs/x.yml:3:", "'npus_per_leaf' must be >= 1, got 0"});
  expect_error("shape: FatTree\nleaves: 8\nnpus_per_leaf: 8\nspines: 0\nbandwidth: 50\nlatency: 500\n",
               {"configs/x.yml:4:", "'spines' must be >= 1, got 0"});
  expect_error("shape: FatTree\nleaves: 1\nnpus_per_leaf: 8\nspines: 4\nbandwidth: 50\nlatency: 500\n",
               {"configs/x.yml:2:", "'leaves' must be >= 2 (one leaf is shape: Switch), got 1"});
  expect_error("shape: FatTree\nleaves: -8\nnpus_per_leaf: 8\nspines: 4\nbandwidth: 50\nlatency: 500\n",
               {"configs/x.yml:2:", "'leaves' must be a whole number, got '-8'"});
  expect_error("shape: FatTree\nleaves: 8\nnpus_per_leaf: 8\nspines: 2.5\nbandwidth: 50\nlatency: 500\n",
               {"'spines' must be a whole number"});
  expect_error("shape: FatTree\nk: 5\nbandwidth: 50\nlatency: 500\n",
               {"configs/x.yml:2:", "'k' must be an even number >= 2, got 5"});
  expect_error("shape: FatTree\nk: 0\nbandwidth: 50\nlatency: 500\n", {"'k' must be an even number >= 2, got 0"});
  expect_error("shape: FatTree\nk: 4096\nbandwidth: 50\nlatency: 500\n", {"'k' is too large"});
  expect_error("shape: FatTree\nleaves: 65536\nnpus_per_leaf: 65536\nspines: 4\nbandwidth: 50\nlatency: 500\n",
               {"topology too large"});
}

TEST(FatTreeErrors, KAndLeafSpineKeysTogether) {
  expect_error("shape: FatTree\nk: 4\nspines: 4\nbandwidth: 50\nlatency: 500\n",
               {"configs/x.yml:3:", "give either 'k'", "not both"});
}

TEST(FatTreeErrors, UplinkBandwidthAndOversubscriptionTogether) {
  expect_error(kLeafSpine + "uplink_bandwidth: 100GB/s\noversubscription: 2\n",
               {"configs/x.yml:8:", "give either 'uplink_bandwidth' or 'oversubscription', not both"});
}

TEST(FatTreeErrors, BadOversubscription) {
  expect_error(kLeafSpine + "oversubscription: 0\n", {"configs/x.yml:7:", "'oversubscription' must be > 0"});
  expect_error(kLeafSpine + "oversubscription: -2\n", {"'oversubscription' must be a number like 2 or 1.5, got '-2'"});
  expect_error(kLeafSpine + "oversubscription: 2:1\n", {"'oversubscription' must be a number like 2 or 1.5"});
  expect_error(kLeafSpine + "oversubscription: 1e20\n", {"'oversubscription' must be a number"});
  expect_error("shape: FatTree\nleaves: 2\nnpus_per_leaf: 1\nspines: 4\nbandwidth: 2B/s\nlatency: 500\n",
               {"uplink bandwidth", "below 1 B/s"});
  expect_error(kLeafSpine + "uplink_bandwidth: 0\n", {"'uplink_bandwidth'", "bandwidth must be > 0"});
  expect_error(kLeafSpine + "uplink_latency: -1ns\n", {"'uplink_latency'", "negative"});
}

TEST(FatTreeErrors, UnknownEcmpRule) {
  expect_error(kLeafSpine + "ecmp: random\n", {"configs/x.yml:7:", "'ecmp' must be hash or dmodk, got 'random'"});
}

TEST(FatTreeErrors, FatTreeKeysOnOtherShapes) {
  expect_error("shape: Torus\ndims: [4, 4]\nbandwidth: 50\nlatency: 500\necmp: hash\n",
               {"configs/x.yml:5:", "'ecmp' does not apply to shape Torus", "single path per NPU pair"});
  expect_error("shape: Switch\nnpus: 8\nbandwidth: 50\nlatency: 500\necmp: dmodk\n",
               {"'ecmp' does not apply to shape Switch"});
  expect_error("shape: Ring\nnpus: 8\nbandwidth: 50\nlatency: 500\noversubscription: 2\n",
               {"configs/x.yml:5:", "'oversubscription' applies only to shape FatTree, not Ring"});
  expect_error("shape: Mesh\ndims: [4, 4]\nspines: 2\nbandwidth: 50\nlatency: 500\n",
               {"configs/x.yml:3:", "'spines' applies only to shape FatTree"});
  // An explicit graph or the ASTRA-sim form: simply an unknown key.
  expect_error("npus: 2\necmp: hash\nlinks:\n  - {src: 0, dst: 1, bandwidth: 50, latency: 500}\n",
               {"unknown key 'ecmp'"});
}

}  // namespace
}  // namespace sim
