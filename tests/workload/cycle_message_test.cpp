// A dependency cycle's message stays short however long the cycle is (a
// 200,000-node cycle once printed every node: a 1.9 MB message).
#include <gtest/gtest.h>

#include "core/error.h"
#include "workload/et/et_io.h"
#include "workload/rank_graph.h"

namespace sim {
namespace {

// Nodes 0..n-1, node i waiting for node i+1 and the last for node 0.
EtTrace ring_of_deps(std::uint64_t n) {
  EtTrace t;
  t.path = "ring.0.et";
  t.nodes.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    et::Node& node = t.nodes.emplace_back();
    node.set_id(i);
    node.set_type(et::COMP_NODE);
    node.set_duration_micros(1);
    node.add_data_deps((i + 1) % n);
  }
  return t;
}

std::string cycle_message(const EtTrace& t) {
  try {
    RankGraph g(t, 0, GraphOptions{});
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a cycle";
  return {};
}

TEST(CycleMessage, LongCycleShowsItsFirstNodesAndLength) {
  const std::string msg = cycle_message(ring_of_deps(200000));
  EXPECT_LT(msg.size(), 400u) << msg.substr(0, 1000);
  EXPECT_NE(msg.find("ring.0.et: rank 0: dependency cycle: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("... (200000 nodes in all) -> "), std::string::npos) << msg;
  // In dependency order: each node waits for the next one printed; the last closes it.
  const std::size_t head = msg.find("cycle: ") + 7;
  const std::string first = msg.substr(head, msg.find(' ', head) - head);
  EXPECT_NE(msg.find("in all) -> " + first + " ("), std::string::npos) << msg;
  EXPECT_NE(msg.find("200000 nodes can never run"), std::string::npos) << msg;
}

TEST(CycleMessage, ShortCycleIsPrintedWhole) {
  const std::string msg = cycle_message(ring_of_deps(10));
  EXPECT_EQ(msg.find("..."), std::string::npos) << msg;
  EXPECT_NE(msg.find("dependency cycle: "), std::string::npos) << msg;
  // ten nodes and the one that closes it
  std::size_t arrows = 0;
  for (std::size_t p = msg.find(" -> "); p != std::string::npos; p = msg.find(" -> ", p + 1)) ++arrows;
  EXPECT_EQ(arrows, 10u) << msg;
}

}  // namespace
}  // namespace sim
