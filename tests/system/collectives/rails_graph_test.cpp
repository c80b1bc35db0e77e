// An explicit graph of two 8-GPU hosts on rails, routed `routing: pxn`
// (network/pxn_router.h), against the dimension stack it mirrors
// (`[Switch, Switch]`, 8 x 2), whose dimension order takes the same routes:
// NVLink in the sender's host to the GPU on the destination's rail, then that
// rail. Every collective takes the stack's time to the picosecond, on both
// backends. The fewest-hops rule may instead enter the other host by the
// sender's rail and cross NVLink there, a path no NIC takes (a NIC writes into
// its own GPU's memory): a gather then finishes 8x early.
#include <gtest/gtest.h>

#include <string>

#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;

// Rails first (sw0..sw7), then the hosts' NVSwitches (sw8, sw9): the fewest
// hops then prefer the sender's rail and NVLink in the receiving host.
std::string rails_graph(bool pxn) {
  std::string links;
  for (int g = 0; g < 16; ++g) {
    links += "  - {src: npu" + std::to_string(g) + ", dst: sw" + std::to_string(8 + g / 8) +
             ", bandwidth: 450GB/s, latency: 300ns}\n";
    links += "  - {src: npu" + std::to_string(g) + ", dst: sw" + std::to_string(g % 8) +
             ", bandwidth: 50GB/s, latency: 1350ns}\n";
  }
  std::string hosts = "hosts: [[";
  for (int g = 0; g < 16; ++g) hosts += (g == 8 ? "], [" : g == 0 ? "" : ", ") + ("npu" + std::to_string(g));
  return "npus: 16\nswitches: 10\nlinks:\n" + links + hosts +
         "]]\nroles: {nvswitch: [sw8, sw9], leaf: [sw0, sw1, sw2, sw3, sw4, sw5, sw6, sw7]}\n" +
         (pxn ? "" : "routing: shortest\n");
}

const char* const kStack = "topology: [Switch, Switch]\nnpus_count: [8, 2]\nbandwidth: [450, 50]\nlatency: [300, 1350]\n";

SystemConfig config(const std::string& backend, CollectiveType type, const std::string& algorithm) {
  SystemConfig c;
  c.network.backend = backend;
  if (!algorithm.empty()) c.algorithms[type] = algorithm;
  return c;
}

TEST(RailsGraph, RoutedByRailsItRunsAsTheStackItMirrors) {
  const Topology stack = parse_topology(kStack, "stack.yml");
  const Topology graph = parse_topology(rails_graph(true), "rails.yml");
  const std::uint64_t bytes = 16 << 20;
  struct Case {
    CollectiveType type;
    const char* algorithm;
  };
  for (const Case c : {Case{CollectiveType::kAllToAll, "nccl"}, Case{CollectiveType::kAllReduce, "nccl"},
                       Case{CollectiveType::kAllGather, "nccl"}, Case{CollectiveType::kScatter, ""},
                       Case{CollectiveType::kGather, ""}, Case{CollectiveType::kAllReduce, "ring"}}) {
    for (const std::string backend : {"analytical", "flow"}) {
      const SystemConfig sc = config(backend, c.type, c.algorithm);
      const Time on_stack = simulate_collective(stack, c.type, bytes, sc).makespan;
      EXPECT_EQ(simulate_collective(graph, c.type, bytes, sc).makespan, on_stack)
          << static_cast<int>(c.type) << " " << c.algorithm << " " << backend;
      EXPECT_GT(on_stack, 0);
    }
  }
}

TEST(RailsGraph, AGatherEntersTheRootsHostByItsNic) {
  // Every remote GPU's 16 MiB for GPU 0 enters host 0 by GPU 0's rail: 8
  // parts through one 50 GB/s NIC, at least 8 x 16 MiB / 50 GB/s.
  const std::uint64_t bytes = 16 << 20;
  const Time nic_bound = transfer_time(8 * bytes, 50'000'000'000);
  const SystemConfig sc = config("flow", CollectiveType::kGather, "");
  const Time pxn = simulate_collective(parse_topology(rails_graph(true), "rails.yml"), CollectiveType::kGather, bytes, sc)
                       .makespan;
  EXPECT_GE(pxn, nic_bound);
  EXPECT_LT(pxn, nic_bound + nic_bound / 50);
  // The fewest hops spread them over host 0's eight NICs and its NVLink.
  const Time shortest =
      simulate_collective(parse_topology(rails_graph(false), "rails.yml"), CollectiveType::kGather, bytes, sc).makespan;
  EXPECT_LT(shortest, nic_bound / 4);
}

}  // namespace
}  // namespace sim
