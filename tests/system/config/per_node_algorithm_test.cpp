// Per-node algorithm choices (collective.per_node, ASTRA-sim's
// per-node-custom-implementation): the named node runs its own algorithm on
// every rank; every other collective of its type keeps the type's choice.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "system/scenario/system_files.h"
#include "core/error.h"
#include "system/config/system_config.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;
namespace fs = std::filesystem;

// Two all-reduces in a row: node 1, then node 2 (after node 1).
std::vector<EtTrace> two_all_reduces(int n, std::uint64_t bytes) {
  return make_traces(n, [&](int) {
    et::Node second = coll_node(2, CollectiveType::kAllReduce, bytes);
    second.add_data_deps(1);
    return std::vector<et::Node>{coll_node(1, CollectiveType::kAllReduce, bytes), second};
  });
}

Time duration_of(const SimulationResult& r, std::uint64_t node) {
  for (const CollectiveRecord& c : r.collectives) {
    if (c.rank == 0 && c.node_id == node) return c.duration;
  }
  ADD_FAILURE() << "no record of node " << node;
  return 0;
}

std::string algorithm_of(const SimulationResult& r, std::uint64_t node) {
  for (const CollectiveRecord& c : r.collectives) {
    if (c.rank == 0 && c.node_id == node) return c.algorithm;
  }
  return "";
}

TEST(PerNodeAlgorithm, OverridesTheTypeChoiceForThatNodeOnly) {
  const Topology ring = shape("Switch", 8);  // ring and halvingDoubling differ here (latency terms)
  const std::uint64_t bytes = 1 << 20;
  const auto traces = two_all_reduces(8, bytes);
  const SimulationResult all_ring = simulate(traces, ring, parse_system_config("{}", "s"));
  const SimulationResult all_hd =
      simulate(traces, ring, parse_system_config("collective:\n  algorithms:\n    all_reduce: halvingDoubling\n", "s"));
  const SimulationResult mixed = simulate(
      traces, ring, parse_system_config("collective:\n  per_node:\n    \"2\": halvingDoubling\n", "s"));
  EXPECT_EQ(algorithm_of(mixed, 1), "ring");
  EXPECT_EQ(algorithm_of(mixed, 2), "halvingDoubling");
  EXPECT_EQ(duration_of(mixed, 1), duration_of(all_ring, 1));
  EXPECT_EQ(duration_of(mixed, 2), duration_of(all_hd, 2));
  EXPECT_NE(duration_of(all_ring, 2), duration_of(all_hd, 2));  // the choice is visible
}

TEST(PerNodeAlgorithm, BadEntriesNameTheirPlace) {
  const auto fails = [](const std::string& yaml) {
    try {
      parse_system_text(yaml, "s.yml");  // reads, then checks the choices
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(fails("collective:\n  per_node:\n    x1: ring\n").find("s.yml:3: 'collective.per_node.x1': expected a workload node id"),
            std::string::npos);
  EXPECT_NE(fails("collective:\n  per_node:\n    \"4\": no/such/prefix\n").find("s.yml:3: 'collective.per_node.4'"),
            std::string::npos);
  // A native name the node's type lacks fails when that node runs, naming it.
  const auto traces = two_all_reduces(4, 4096);
  try {
    simulate(traces, shape("Ring", 4), parse_system_config("collective:\n  per_node:\n    \"2\": binaryTree:foo=1\n", "s"));
    ADD_FAILURE() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("per-node algorithm for node 2 (ALL_REDUCE)"), std::string::npos) << e.what();
  }
}

TEST(PerNodeAlgorithm, AstraSimPerNodeFileIsRead) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("sim_per_node_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "per_node.yml") << "2: halvingDoubling\n";
  std::ofstream(dir / "sys.json") << "{\"all-reduce-implementation\": [\"ring\"], \"per-node-custom-implementation\": \""
                                  << (dir / "per_node.yml").string() << "\"}";
  const SystemConfig c = load_system_config((dir / "sys.json").string());
  ASSERT_EQ(c.per_node_algorithms.size(), 1u);
  EXPECT_EQ(c.per_node_algorithms.at(2), "halvingDoubling");
  std::ofstream(dir / "per_node.yml") << "2: [\n";
  EXPECT_THROW(load_system_config((dir / "sys.json").string()), InputError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sim
