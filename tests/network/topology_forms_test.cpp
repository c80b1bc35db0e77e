// Each YAML form parses into the graph it describes.
#include "network/topology.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/network/topology_util.h"

namespace sim {
namespace {

using testing_support::route;

TEST(AstraSimForm, OneDimensionalRing) {
  const Topology t = parse_topology("topology: [Ring]\nnpus_count: [8]\nbandwidth: [50]\nlatency: [500]\n", "t.yml");
  EXPECT_EQ(t.npu_count(), 8u);
  EXPECT_EQ(t.switch_count(), 0u);
  EXPECT_EQ(t.links().size(), 16u);
  EXPECT_EQ(t.dims(), (std::vector<std::uint32_t>{8}));
  for (const Link& l : t.links()) {
    EXPECT_EQ(l.bandwidth, 50'000'000'000u);
    EXPECT_EQ(l.latency, 500'000);
  }
  EXPECT_EQ(t.description(), "Ring 8 (8 NPUs, 16 links, 50 GB/s, 500 ns)");
}

TEST(AstraSimForm, MultiDimensionalStack) {
  const Topology t = parse_topology(
      "topology: [Ring, Switch, FullyConnected]\nnpus_count: [4, 2, 3]\n"
      "bandwidth: [50, 25GB/s, 400Gbps]\nlatency: [500, 1us, 700]\n",
      "t.yml");
  EXPECT_EQ(t.npu_count(), 24u);
  EXPECT_EQ(t.switch_count(), 12u);  // one per pair of dimension-1 NPUs
  // Ring 4: 8 links per group x 6 groups; Switch 2: 4 x 12; FC 3: 6 x 8.
  EXPECT_EQ(t.links().size(), 48u + 48u + 48u);
  EXPECT_EQ(t.dims(), (std::vector<std::uint32_t>{4, 2, 3}));
  // 0 -> 23 = (0,0,0) -> (3,1,2): ring 1 hop back, switch 2 hops, FC 1 hop.
  const auto r = route(t, 0, 23);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(t.links()[r[0]].from, 0u);
  EXPECT_EQ(t.links()[r[0]].to, 3u);
  EXPECT_EQ(t.links()[r[1]].from, 3u);
  EXPECT_GE(t.links()[r[1]].to, 24u);  // a switch
  EXPECT_EQ(t.links()[r[1]].bandwidth, 25'000'000'000u);
  EXPECT_EQ(t.links()[r[1]].latency, 1'000'000);
  EXPECT_EQ(t.links()[r[2]].to, 7u);
  EXPECT_EQ(t.links()[r[3]].from, 7u);
  EXPECT_EQ(t.links()[r[3]].to, 23u);
  EXPECT_EQ(t.links()[r[3]].bandwidth, 50'000'000'000u);
  EXPECT_EQ(t.links()[r[3]].latency, 700'000);
}

TEST(AstraSimForm, GibibyteUnitReproducesAstraSim) {
  const Topology t = parse_topology(
      "bandwidth_unit: GiB/s\ntopology: [Switch]\nnpus_count: [4]\nbandwidth: [50]\nlatency: [500]\n", "t.yml");
  EXPECT_EQ(t.links()[0].bandwidth, 53'687'091'200u);
  EXPECT_EQ(t.switch_count(), 1u);
  EXPECT_EQ(t.description(), "Switch 4 (4 NPUs, 1 switch, 8 links, 53.6870912 GB/s, 500 ns)");
}

TEST(AstraSimForm, RingOfTwoIsOnePairOfLinks) {
  const Topology t = parse_topology("topology: [Ring]\nnpus_count: [2]\nbandwidth: [50]\nlatency: [500]\n", "t.yml");
  EXPECT_EQ(t.links().size(), 2u);
  EXPECT_EQ(route(t, 0, 1).size(), 1u);
  EXPECT_EQ(route(t, 1, 0).size(), 1u);
}

TEST(AstraSimForm, NameIsKept) {
  const Topology t = parse_topology(
      "name: pod\ntopology: [FullyConnected]\nnpus_count: [4]\nbandwidth: [50]\nlatency: [0]\n", "t.yml");
  EXPECT_EQ(t.description(), "pod: FullyConnected 4 (4 NPUs, 12 links, 50 GB/s, 0 ns)");
}

TEST(ShapeForm, EveryShapeParses) {
  struct Case {
    std::string yaml;
    std::uint32_t npus, switches;
    std::size_t links;
    std::vector<std::uint32_t> dims;
  };
  const std::string common = "\nbandwidth: 50GB/s\nlatency: 500ns\n";
  const std::vector<Case> cases = {
      {"shape: Ring\nnpus: 8", 8, 0, 16, {8}},
      {"shape: Ring\ndims: [8]", 8, 0, 16, {8}},
      {"shape: FullyConnected\nnpus: 8", 8, 0, 56, {8}},
      {"shape: Switch\nnpus: 8", 8, 1, 16, {8}},
      {"shape: Mesh\ndims: [8, 8]", 64, 0, 224, {8, 8}},
      {"shape: Mesh\ndims: [2, 3, 4]", 24, 0, 2 * (12 * 1 + 8 * 2 + 6 * 3), {2, 3, 4}},
      {"shape: Torus\ndims: [8, 8]", 64, 0, 256, {8, 8}},
      {"shape: Torus\ndims: [4, 4, 4]", 64, 0, 384, {4, 4, 4}},
      {"shape: Torus\ndims: [2, 4]", 8, 0, 8 + 16, {2, 4}},
      {"shape: Torus\ndims: [16]", 16, 0, 32, {16}},
      {"shape: Hypercube\nnpus: 64", 64, 0, 384, {2, 2, 2, 2, 2, 2}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    const Topology t = parse_topology(c.yaml + common, "t.yml");
    EXPECT_EQ(t.npu_count(), c.npus);
    EXPECT_EQ(t.switch_count(), c.switches);
    EXPECT_EQ(t.links().size(), c.links);
    EXPECT_EQ(t.dims(), c.dims);
  }
}

TEST(ShapeForm, Description) {
  const Topology t = parse_topology("shape: Torus\ndims: [8, 8]\nbandwidth: 50GB/s\nlatency: 500ns\n", "t.yml");
  EXPECT_EQ(t.description(), "Torus 8x8 (64 NPUs, 256 links, 50 GB/s, 500 ns)");
  const Topology h = parse_topology("shape: Hypercube\nnpus: 64\nbandwidth: 50\nlatency: 0.5us\n", "t.yml");
  EXPECT_EQ(h.description(), "Hypercube 64 (64 NPUs, 384 links, 50 GB/s, 500 ns)");
}

TEST(ShapeForm, BareNumbersAreGigabytesAndNanoseconds) {
  const Topology t = parse_topology("shape: Ring\nnpus: 4\nbandwidth: 12.5\nlatency: 700\n", "t.yml");
  EXPECT_EQ(t.links()[0].bandwidth, 12'500'000'000u);
  EXPECT_EQ(t.links()[0].latency, 700'000);
}

TEST(GraphForm, LinksDefaultsAndNames) {
  const Topology t = parse_topology(
      "npus: 3\nswitches: 1\nlatency: 100ns\nlinks:\n"
      "  - {src: 0, dst: 3, bandwidth: 50GB/s}\n"
      "  - {src: npu1, dst: sw0, bandwidth: 25GB/s, latency: 1us}\n"
      "  - {src: 2, dst: 3, bandwidth: 400Gbps, bidirectional: false}\n"
      "  - {src: sw0, dst: npu2, bandwidth: 50, bidirectional: false}\n",
      "g.yml");
  EXPECT_EQ(t.npu_count(), 3u);
  EXPECT_EQ(t.switch_count(), 1u);
  EXPECT_EQ(t.dims(), (std::vector<std::uint32_t>{3}));
  ASSERT_EQ(t.links().size(), 6u);
  EXPECT_EQ(t.links()[0].from, 0u);
  EXPECT_EQ(t.links()[0].to, 3u);
  EXPECT_EQ(t.links()[1].from, 3u);
  EXPECT_EQ(t.links()[1].to, 0u);
  EXPECT_EQ(t.links()[0].latency, 100'000);
  EXPECT_EQ(t.links()[2].bandwidth, 25'000'000'000u);
  EXPECT_EQ(t.links()[2].latency, 1'000'000);
  EXPECT_EQ(t.links()[4].from, 2u);
  EXPECT_EQ(t.links()[4].bandwidth, 50'000'000'000u);
  EXPECT_EQ(t.links()[4].to, 3u);
  EXPECT_EQ(t.links()[5].from, 3u);
  EXPECT_EQ(t.links()[5].to, 2u);
  EXPECT_EQ(t.description(), "Graph (3 NPUs, 1 switch, 6 links, 25 GB/s to 50 GB/s, 100 ns to 1000 ns)");
}

TEST(GraphForm, ShortestPathWithLowestNextHopOnTies) {
  // A square 0-1-2-3-0 plus a chord 0-2: 0 -> 2 is direct; 1 -> 3 has two
  // 2-hop routes (via 0 or via 2) and takes the lower next hop, 0.
  const Topology t = parse_topology(
      "npus: 4\nbandwidth: 50\nlatency: 500\nlinks:\n"
      "  - {src: 0, dst: 1}\n  - {src: 1, dst: 2}\n  - {src: 2, dst: 3}\n  - {src: 3, dst: 0}\n"
      "  - {src: 2, dst: 0}\n",
      "g.yml");
  const auto direct = route(t, 0, 2);
  ASSERT_EQ(direct.size(), 1u);
  EXPECT_EQ(t.links()[direct[0]].to, 2u);
  const auto tie = route(t, 1, 3);
  ASSERT_EQ(tie.size(), 2u);
  EXPECT_EQ(t.links()[tie[0]].to, 0u);
  EXPECT_EQ(t.links()[tie[1]].to, 3u);
  const auto tie2 = route(t, 3, 1);
  ASSERT_EQ(tie2.size(), 2u);
  EXPECT_EQ(t.links()[tie2[0]].to, 0u);
}

TEST(GraphForm, RoutesOnlyAlongLinkDirection) {
  // A one-way ring: 1 -> 0 must go all the way round.
  const Topology t = parse_topology(
      "npus: 4\nbandwidth: 50\nlatency: 500\nlinks:\n"
      "  - {src: 0, dst: 1, bidirectional: false}\n  - {src: 1, dst: 2, bidirectional: false}\n"
      "  - {src: 2, dst: 3, bidirectional: false}\n  - {src: 3, dst: 0, bidirectional: false}\n",
      "g.yml");
  EXPECT_EQ(route(t, 1, 0).size(), 3u);
  EXPECT_EQ(route(t, 0, 1).size(), 1u);
}

TEST(Topology, RouteToSelfIsEmpty) {
  const Topology t = parse_topology("shape: Ring\nnpus: 8\nbandwidth: 50\nlatency: 500\n", "t.yml");
  EXPECT_TRUE(route(t, 3, 3).empty());
  EXPECT_THROW(route(t, 0, 8), std::out_of_range);
}

TEST(Topology, LargeShapesLoadFastAndRouteArithmetically) {
  // 4,096 NPUs: a per-pair table would be 16 M entries.
  const Topology sw = parse_topology("shape: Switch\nnpus: 4096\nbandwidth: 50\nlatency: 500\n", "t.yml");
  EXPECT_EQ(sw.links().size(), 8192u);
  EXPECT_EQ(route(sw, 4095, 17).size(), 2u);
  const Topology ring = parse_topology("shape: Ring\nnpus: 4096\nbandwidth: 50\nlatency: 500\n", "t.yml");
  EXPECT_EQ(route(ring, 0, 2048).size(), 2048u);
  EXPECT_EQ(route(ring, 0, 2049).size(), 2047u);
}

}  // namespace
}  // namespace sim
