// Routing on every shipped config, and the analytical backend against the
// closed form hops x latency + bytes / bottleneck, exactly in picoseconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "../common/source_paths.h"
#include "delivery_recorder.h"
#include "network/backend_registry.h"
#include "network/topology.h"

namespace sim {
namespace {

using testing::kConfigs;

constexpr BytesPerSecond k50GBps = 50'000'000'000;
constexpr Time k500ns = 500'000;

// The closed form of one route, worked out by hand from the shape.
struct Expected {
  Time latency;
  BytesPerSecond bottleneck;
};

Expected uniform(std::uint32_t hops) { return {hops * k500ns, k50GBps}; }

std::uint32_t ring_hops(std::uint32_t a, std::uint32_t b, std::uint32_t k) {
  const std::uint32_t d = a > b ? a - b : b - a;
  return std::min(d, k - d);
}
std::uint32_t line_hops(std::uint32_t a, std::uint32_t b) { return a > b ? a - b : b - a; }

// Sum over dimensions of the per-dimension distance.
std::uint32_t grid_hops(NodeId s, NodeId d, const std::vector<std::uint32_t>& dims, bool wrap) {
  std::uint32_t hops = 0;
  for (std::uint32_t k : dims) {
    hops += wrap ? ring_hops(s % k, d % k, k) : line_hops(s % k, d % k);
    s /= k;
    d /= k;
  }
  return hops;
}

using ClosedForm = std::function<Expected(NodeId, NodeId)>;

// Every file in configs/ must have its closed form here.
const std::map<std::string, ClosedForm>& closed_forms() {
  static const std::map<std::string, ClosedForm> forms = {
      {"ring8.yml", [](NodeId s, NodeId d) { return uniform(ring_hops(s, d, 8)); }},
      {"ring64.yml", [](NodeId s, NodeId d) { return uniform(ring_hops(s, d, 64)); }},
      {"switch8.yml", [](NodeId, NodeId) { return uniform(2); }},
      {"switch64.yml", [](NodeId, NodeId) { return uniform(2); }},
      {"mesh8x8.yml", [](NodeId s, NodeId d) { return uniform(grid_hops(s, d, {8, 8}, false)); }},
      {"torus8x8.yml", [](NodeId s, NodeId d) { return uniform(grid_hops(s, d, {8, 8}, true)); }},
      {"torus4x4x4.yml", [](NodeId s, NodeId d) { return uniform(grid_hops(s, d, {4, 4, 4}, true)); }},
      {"mesh4x4x4.yml", [](NodeId s, NodeId d) { return uniform(grid_hops(s, d, {4, 4, 4}, false)); }},
      {"hypercube64.yml", [](NodeId s, NodeId d) { return uniform(std::popcount(s ^ d)); }},
      // Same leaf: 2 hops; across: 4 hops, the 2:1 uplinks 50 GB/s like the rest.
      {"fattree64.yml", [](NodeId s, NodeId d) { return uniform(s / 8 == d / 8 ? 2 : 4); }},
      // Same switch: 2 hops; across: 3 hops through the 25 GB/s inter-switch link.
      {"graph_2switch.yml",
       [](NodeId s, NodeId d) { return s / 4 == d / 4 ? uniform(2) : Expected{3 * k500ns, 25'000'000'000}; }},
      // Same host: 2 NVLink hops; the other host: NVLink to the GPU on the
      // destination's rail (unless it is the sender), then 4 hops at 50 GB/s.
      {"graph_rails.yml",
       [](NodeId s, NodeId d) {
         if (s / 4 == d / 4) return Expected{2 * 300'000, 450'000'000'000};
         return Expected{(s % 4 == d % 4 ? 0 : 2 * 300'000) + 4 * k500ns, k50GBps};
       }},
      {"astrasim/ring8.yml", [](NodeId s, NodeId d) { return uniform(ring_hops(s, d, 8)); }},
      // ASTRA-sim's "50" is 50 * 2^30 B/s.
      {"astrasim/switch8_gib.yml", [](NodeId, NodeId) { return Expected{2 * k500ns, 50ull << 30}; }},
      // Dimension 0: rings of 4 at 50 GB/s, 500 ns; dimension 1: rings of 4 at 25 GB/s, 700 ns.
      {"astrasim/ring4x4.yml",
       [](NodeId s, NodeId d) {
         const std::uint32_t h0 = ring_hops(s % 4, d % 4, 4), h1 = ring_hops(s / 4, d / 4, 4);
         return Expected{h0 * k500ns + h1 * 700'000, h1 > 0 ? 25'000'000'000 : k50GBps};
       }},
  };
  return forms;
}

std::vector<std::string> shipped_configs() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kConfigs)) {
    // configs/system/ holds system configs and configs/sweeps/ sweep specs, not topologies.
    // configs/presets/ holds `sim system gen` folders, checked by tests/presets/.
    const auto folder = entry.path().parent_path().filename();
    const auto top = *std::filesystem::relative(entry.path(), kConfigs).begin();
    if (entry.path().extension() == ".yml" && folder != "system" && folder != "sweeps" && top != "presets" &&
        top != "models") {
      names.push_back(std::filesystem::relative(entry.path(), kConfigs).generic_string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}


// bytes / bandwidth in ps, rounded up: written out here, not taken from core.
Time expected_transfer(std::uint64_t bytes, BytesPerSecond bw) {
  __extension__ typedef unsigned __int128 u128;
  const u128 num = static_cast<u128>(bytes) * 1'000'000'000'000ULL;
  return static_cast<Time>((num + bw - 1) / bw);
}

std::vector<NodeId> route_nodes(const Topology& t, NodeId src, NodeId dst) {
  std::vector<LinkId> route;
  t.route(src, dst, route);
  std::vector<NodeId> nodes{src};
  for (LinkId id : route) {
    EXPECT_EQ(t.links()[id].from, nodes.back());
    nodes.push_back(t.links()[id].to);
  }
  return nodes;
}

TEST(ShippedConfigs, EveryConfigHasAClosedForm) {
  const auto names = shipped_configs();
  EXPECT_GE(names.size(), 12u);
  for (const std::string& name : names) {
    EXPECT_TRUE(closed_forms().count(name)) << "no closed form for configs/" << name;
    EXPECT_NO_THROW(load_topology(kConfigs + name)) << name;
  }
}

TEST(ShippedConfigs, RoutesAreConnectedPathsOfTheExpectedLength) {
  for (const auto& [name, form] : closed_forms()) {
    SCOPED_TRACE(name);
    const Topology t = load_topology(kConfigs + name);
    for (NodeId s = 0; s < t.npu_count(); ++s) {
      for (NodeId d = 0; d < t.npu_count(); ++d) {
        const std::vector<NodeId> nodes = route_nodes(t, s, d);
        ASSERT_EQ(nodes.back(), d) << s << " -> " << d;
        // Intermediate nodes: never the source or destination again.
        for (std::size_t i = 1; i + 1 < nodes.size(); ++i) ASSERT_NE(nodes[i], s);
        std::vector<LinkId> route;
        t.route(s, d, route);
        Time latency = 0;
        for (LinkId id : route) latency += t.links()[id].latency;
        if (s != d) {
          ASSERT_EQ(latency, form(s, d).latency) << s << " -> " << d;
        }
      }
    }
  }
}

TEST(ShippedConfigs, Ring8GoesTheShorterWay) {
  const Topology t = load_topology(kConfigs + "ring8.yml");
  EXPECT_EQ(route_nodes(t, 0, 4), (std::vector<NodeId>{0, 1, 2, 3, 4}));  // tie at half: + direction
  EXPECT_EQ(route_nodes(t, 0, 5), (std::vector<NodeId>{0, 7, 6, 5}));
  EXPECT_EQ(route_nodes(t, 6, 1), (std::vector<NodeId>{6, 7, 0, 1}));
  EXPECT_EQ(route_nodes(t, 4, 0), (std::vector<NodeId>{4, 5, 6, 7, 0}));
}

TEST(ShippedConfigs, Torus8x8IsDimensionOrder) {
  const Topology t = load_topology(kConfigs + "torus8x8.yml");
  // (0,0) -> (3,5): X forward 3 hops, then Y backwards (5 > 8/2) 3 hops.
  EXPECT_EQ(route_nodes(t, 0, 43), (std::vector<NodeId>{0, 1, 2, 3, 59, 51, 43}));
  // (7,7) -> (0,0): wraps forward in both dimensions.
  EXPECT_EQ(route_nodes(t, 63, 0), (std::vector<NodeId>{63, 56, 0}));
}

TEST(ShippedConfigs, Torus4x4x4IsDimensionOrder) {
  const Topology t = load_topology(kConfigs + "torus4x4x4.yml");
  // (1,2,3) -> (3,0,0): X +2 (tie), Y +2 (tie, wraps), Z +1 (wraps).
  EXPECT_EQ(route_nodes(t, 1 + 2 * 4 + 3 * 16, 3), (std::vector<NodeId>{57, 58, 59, 63, 51, 3}));
}

TEST(ShippedConfigs, Mesh8x8CornersAre14Hops) {
  const Topology t = load_topology(kConfigs + "mesh8x8.yml");
  const std::vector<NodeId> nodes = route_nodes(t, 0, 63);
  EXPECT_EQ(nodes.size(), 15u);
  EXPECT_EQ(nodes[7], 7u);  // X first along the bottom row
  EXPECT_EQ(route_nodes(t, 7, 56).size(), 15u);
  // No wraparound: 0 -> 7 crosses the whole row.
  EXPECT_EQ(route_nodes(t, 0, 7).size(), 8u);
}

TEST(ShippedConfigs, Hypercube64FixesLowestBitFirst) {
  const Topology t = load_topology(kConfigs + "hypercube64.yml");
  EXPECT_EQ(route_nodes(t, 0, 63), (std::vector<NodeId>{0, 1, 3, 7, 15, 31, 63}));
  EXPECT_EQ(route_nodes(t, 42, 21), (std::vector<NodeId>{42, 43, 41, 45, 37, 53, 21}));
}

TEST(ShippedConfigs, SwitchIsTwoHopsThroughTheSwitch) {
  const Topology t = load_topology(kConfigs + "switch8.yml");
  EXPECT_EQ(t.switch_count(), 1u);
  EXPECT_EQ(route_nodes(t, 2, 5), (std::vector<NodeId>{2, 8, 5}));
  const Topology g = load_topology(kConfigs + "graph_2switch.yml");
  EXPECT_EQ(route_nodes(g, 1, 6), (std::vector<NodeId>{1, 8, 9, 6}));
  EXPECT_EQ(route_nodes(g, 4, 7), (std::vector<NodeId>{4, 9, 7}));
}

// The acceptance test of the analytical backend: for every shipped topology,
// every pair and several sizes, delivery = closed form, to the picosecond.
// A message alone in the network costs the same on the flow backend.
class AloneMessage : public ::testing::TestWithParam<std::string> {};

TEST_P(AloneMessage, EqualsClosedFormOnEveryShippedConfig) {
  const std::uint64_t sizes[] = {0, 1, 3, 1000, 65'536, 1'048'576, 1'000'000'007, 1ull << 30};
  for (const auto& [name, form] : closed_forms()) {
    SCOPED_TRACE(name);
    const Topology topology = load_topology(kConfigs + name);
    EventQueue queue;
    testing_support::Recorder sink(queue);
    const auto owned = make_network(NetworkConfig{GetParam(), {}}, topology, queue);
    Network& net = *owned;
    std::uint64_t token = 0;
    for (NodeId s = 0; s < topology.npu_count(); ++s) {
      for (NodeId d = 0; d < topology.npu_count(); ++d) {
        if (s == d) continue;
        const Expected e = form(s, d);
        for (const std::uint64_t bytes : sizes) {
          // One message at a time: every port is idle when it is sent.
          const Time sent = queue.now();
          net.send(s, d, bytes, sink.to(++token));
          queue.run();
          ASSERT_EQ(sink.at.at(token) - sent, e.latency + expected_transfer(bytes, e.bottleneck))
              << s << " -> " << d << ", " << bytes << " B";
        }
      }
    }
    EXPECT_EQ(net.messages_sent(), token);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, AloneMessage, ::testing::Values("analytical", "flow"));

}  // namespace
}  // namespace sim
