// 2-byte per-node columns (workload/narrow_column.h) and the graph columns
// built on them: values, tags and names come back exactly, narrow or widened.
#include "workload/narrow_column.h"

#include <gtest/gtest.h>

#include "workload/et/et_io.h"
#include "workload/rank_graph.h"

namespace sim {
namespace {

TEST(NarrowColumn, StaysNarrowWhileValuesFitAndWidensExactly) {
  NarrowColumn c;
  EXPECT_TRUE(c.empty());
  for (std::uint32_t v = 0; v < 1000; ++v) c.push_back(v * 65);
  EXPECT_FALSE(c.wide());
  EXPECT_LE(c.memory_bytes(), 2 * 2048u);
  c.push_back(0x10000u);
  EXPECT_TRUE(c.wide());
  c.resize(1005, 7);
  c.push_back(0xffffffffu);
  ASSERT_EQ(c.size(), 1006u);
  for (std::uint32_t v = 0; v < 1000; ++v) ASSERT_EQ(c[v], v * 65);
  EXPECT_EQ(c[1000], 0x10000u);
  EXPECT_EQ(c[1004], 7u);
  EXPECT_EQ(c[1005], 0xffffffffu);
}

et::Node named(std::uint64_t id, const std::string& name, std::int64_t tag) {
  et::Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(et::COMM_SEND_NODE);
  set_attr_int(n, "comm_dst", 1);
  set_attr_int(n, "comm_size", 8);
  if (tag != 0) set_attr_int(n, "comm_tag", tag);
  return n;
}

RankGraph rank_graph_of(std::vector<et::Node> nodes) {
  EtTrace t;
  t.path = "t.0.et";
  t.nodes = std::move(nodes);
  return RankGraph(t, 0, GraphOptions{});
}

TEST(NarrowColumn, NamesThatStopFollowingTheirTagsKeepEverySuffix) {
  // Suffix == tag for the first three nodes (not stored), then not: the graph
  // switches to stored suffixes and must give every name back unchanged.
  const RankGraph g = rank_graph_of({named(1, "send.0", 0), named(2, "send.1", 1), named(3, "recv.70000", 70000),
                                     named(4, "send.7", 3), named(5, "plain", 0), named(6, "x9", 9)});
  const char* want[] = {"send.0", "send.1", "recv.70000", "send.7", "plain", "x9"};
  for (std::uint32_t i = 0; i < 6; ++i) EXPECT_EQ(g.name(i), want[i]) << i;
  EXPECT_EQ(g.node(2).comm_tag, 70000);
  EXPECT_EQ(g.node(3).comm_tag, 3);
}

TEST(NarrowColumn, WideTagsAndNamesAndManyShapesComeBackExactly) {
  // 70,000 nodes of distinct sizes (70,000 shapes: a 4 B shape index), tags
  // past 2^16 and one beyond 2^32 (side table).
  std::vector<et::Node> nodes;
  for (std::uint64_t i = 1; i <= 70000; ++i) {
    et::Node n = named(i, std::string("n").append(std::to_string(i * 3)), static_cast<std::int64_t>(i * 2));
    set_attr_int(n, "comm_size", static_cast<std::int64_t>(i));
    nodes.push_back(n);
  }
  nodes.push_back(named(70001, "big", std::int64_t{1} << 40));
  const RankGraph g = rank_graph_of(std::move(nodes));
  for (std::uint32_t i = 0; i < 70000; i += 997) {
    EXPECT_EQ(g.name(i), std::string("n").append(std::to_string((i + 1) * 3)));
    EXPECT_EQ(g.node(i).comm_tag, static_cast<std::int64_t>((i + 1) * 2));
    EXPECT_EQ(g.node(i).comm_size, i + 1);
  }
  EXPECT_EQ(g.name(69999), "n210000");
  EXPECT_EQ(g.node(70000).comm_tag, std::int64_t{1} << 40);
  EXPECT_EQ(g.name(70000), "big");
}

}  // namespace
}  // namespace sim
