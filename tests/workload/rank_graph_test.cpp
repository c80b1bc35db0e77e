#include "workload/rank_graph.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "workload/et/et_io.h"

namespace sim {
namespace {

std::string chakra0() { return std::string(SIM_SOURCE_DIR) + "/../shared/testdata/chakra/chakra.0.et"; }

TEST(RankGraph, ChakraTraceReadyOrderAndChildrenMatchUpstreamFeeder) {
  if (!std::filesystem::exists(chakra0())) GTEST_SKIP() << "testdata absent: " << chakra0();
  const RankGraph g(read_et(chakra0()), 0, GraphOptions{});
  EXPECT_EQ(g.size(), 3664u);
  const auto roots = g.roots();
  ASSERT_GE(roots.size(), 2u);
  EXPECT_EQ(g.node(roots[0]).id, 216u);
  EXPECT_EQ(g.node(roots[1]).id, 432u);
  const auto idx = g.index_of(216);
  ASSERT_GE(idx, 0);
  std::vector<std::uint64_t> children;
  for (std::uint32_t c : g.children(static_cast<std::uint32_t>(idx))) children.push_back(g.node(c).id);
  // Upstream's feeder test names the first children, in insertion (file) order.
  ASSERT_GE(children.size(), 3u);
  EXPECT_EQ(std::vector<std::uint64_t>(children.begin(), children.begin() + 3),
            (std::vector<std::uint64_t>{217, 430, 435}));
}

TEST(RankGraph, ChakraTraceWithCtrlDepsHasACycle) {
  // In PyTorch-derived traces ctrl_deps name the calling op; followed together
  // with data_deps they form cycles (3317 <-> 3318 here), which is why they
  // are opt-in. The cycle is reported, not hung on.
  if (!std::filesystem::exists(chakra0())) GTEST_SKIP() << "testdata absent: " << chakra0();
  const EtTrace trace = read_et(chakra0());
  EXPECT_EQ(RankGraph(trace, 0, GraphOptions{}).dangling_ctrl_deps(), 0u);
  try {
    RankGraph g(trace, 0, GraphOptions{true, false});
    FAIL() << "expected a cycle";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dependency cycle"), std::string::npos) << e.what();
  }
}

EtTrace tiny(std::vector<std::pair<std::uint64_t, std::vector<std::uint64_t>>> nodes) {
  EtTrace t;
  t.path = "tiny.0.et";
  for (auto& [id, deps] : nodes) {
    et::Node n;
    n.set_id(id);
    n.set_type(et::COMP_NODE);
    n.set_duration_micros(1);
    for (auto d : deps) n.add_data_deps(d);
    t.nodes.push_back(n);
  }
  return t;
}

TEST(RankGraph, ForwardReferencesResolve) {
  const RankGraph g(tiny({{5, {9}}, {9, {}}}), 0, GraphOptions{});
  EXPECT_EQ(g.roots().size(), 1u);
  EXPECT_EQ(g.node(g.roots()[0]).id, 9u);
}

TEST(RankGraph, CycleIsReportedWithItsNodes) {
  try {
    RankGraph g(tiny({{1, {3}}, {2, {1}}, {3, {2}}, {4, {}}}), 0, GraphOptions{});
    FAIL() << "expected a cycle";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("dependency cycle"), std::string::npos) << msg;
    EXPECT_NE(msg.find("1 -> 2 -> 3 -> 1"), std::string::npos) << msg;
    EXPECT_EQ(e.exit_code(), 2);
  }
}

TEST(RankGraph, DataDepOnAbsentNodeIsAnError) {
  try {
    RankGraph g(tiny({{1, {77}}}), 2, GraphOptions{});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2, node 1: data dependency on absent node 77"), std::string::npos)
        << e.what();
  }
}

TEST(RankGraph, DanglingAndSelfCtrlDepsAreIgnoredUnlessStrict) {
  EtTrace t = tiny({{1, {}}, {2, {1}}});
  t.nodes[1].add_ctrl_deps(99);  // absent
  t.nodes[1].add_ctrl_deps(2);   // itself
  t.nodes[1].add_ctrl_deps(1);   // a real one
  const RankGraph g(t, 0, GraphOptions{true, false});
  EXPECT_EQ(g.dangling_ctrl_deps(), 1u);
  EXPECT_EQ(g.self_ctrl_deps(), 1u);
  try {
    RankGraph strict(t, 0, GraphOptions{true, true});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("control dependency on absent node 99"), std::string::npos) << e.what();
  }
}

TEST(RankGraph, DuplicateIdsAreAnError) { EXPECT_THROW(RankGraph(tiny({{1, {}}, {1, {}}}), 0, {}), InputError); }

TEST(RankGraph, IndexOfInEveryIdLayout) {
  // Dense ascending ids, sparse ascending ids, and ids in no order: each kept differently.
  for (const auto& ids : {std::vector<std::uint64_t>{10, 11, 12, 13}, std::vector<std::uint64_t>{3, 8, 40, 41},
                          std::vector<std::uint64_t>{41, 3, 40, 8}}) {
    std::vector<std::pair<std::uint64_t, std::vector<std::uint64_t>>> nodes;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      nodes.push_back({ids[i], i ? std::vector<std::uint64_t>{ids[i - 1]} : std::vector<std::uint64_t>{}});
    }
    EtTrace t = tiny(nodes);
    auto name_of = [](std::uint64_t id) { return std::to_string(id) + "n"; };
    for (std::size_t i = 0; i < ids.size(); ++i) t.nodes[i].set_name(name_of(ids[i]));
    const RankGraph g(t, 0, GraphOptions{});
    for (std::size_t i = 0; i < ids.size(); ++i) {
      EXPECT_EQ(g.index_of(ids[i]), static_cast<std::int64_t>(i));
      EXPECT_EQ(g.name(static_cast<std::uint32_t>(i)), name_of(ids[i]));
      EXPECT_EQ(g.node(static_cast<std::uint32_t>(i)).num_parents, i ? 1u : 0u);
    }
    for (std::uint64_t absent : {0ull, 2ull, 9ull, 14ull, 42ull, ~0ull}) EXPECT_EQ(g.index_of(absent), -1) << absent;
  }
}

TEST(RankGraph, DuplicateIdNamesTheFirstNodeThatRepeatsAnId) {
  try {
    RankGraph g(tiny({{7, {}}, {5, {}}, {9, {}}, {5, {}}, {7, {}}}), 1, GraphOptions{});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1, node 5: duplicate node id"), std::string::npos) << e.what();
  }
}

TEST(RankGraph, CollectiveNamesParseInEveryCommonSpelling) {
  CollectiveType t;
  for (const char* s : {"allreduce", "all_reduce", "ALL_REDUCE", "all-reduce"}) {
    ASSERT_TRUE(parse_collective_name(s, t)) << s;
    EXPECT_EQ(t, CollectiveType::kAllReduce);
  }
  ASSERT_TRUE(parse_collective_name("reducescatter", t));
  EXPECT_EQ(t, CollectiveType::kReduceScatter);
  EXPECT_FALSE(parse_collective_name("allreduced", t));
}

}  // namespace
}  // namespace sim
