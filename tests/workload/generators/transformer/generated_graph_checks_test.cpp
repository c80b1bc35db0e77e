// A generated rank is built into its graph through RankGraph's streaming
// constructor (transformer_rank_graphs), which checks it as a graph like a
// trace read from a file: a dependency cycle, a node depending on itself or
// on an absent node ends the run with the rank and node ids named, never a
// hang. The producers below stand for a generator with such a bug.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "core/error.h"
#include "workload/generators/spec/training_spec.h"
#include "workload/generators/transformer/transformer_graph.h"
#include "workload/rank_graph.h"

namespace sim::testing {
namespace {

// Nodes 1..deps.size(), COMP, node i depending on deps[i - 1].
RankGraph streamed(int rank, const std::vector<std::vector<std::uint64_t>>& deps) {
  return RankGraph(rank, "gen:transformer rank " + std::to_string(rank), GraphOptions{},
                   [&](const RankGraph::NodeSink& sink) {
                     for (std::size_t i = 0; i < deps.size(); ++i) {
                       et::Node n;
                       n.set_id(i + 1);
                       n.set_name("layer" + std::to_string(i) + ".fwd mb0");
                       n.set_type(et::COMP_NODE);
                       n.set_duration_micros(1);
                       for (const std::uint64_t d : deps[i]) n.add_data_deps(d);
                       sink(n);
                     }
                   });
}

template <typename Error>
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GeneratedGraphChecks, CycleSelfEdgeAndAbsentParentNameRankAndNodes) {
  EXPECT_EQ(message_of<InputError>([] {
              streamed(3, {{3}, {1}, {2}});
            }),
            "gen:transformer rank 3: rank 3: dependency cycle: 1 -> 2 -> 3 -> "
            "1 (3 nodes can never run)");
  EXPECT_EQ(message_of<InputError>([] {
              streamed(5, {{}, {2}});
            }),
            "gen:transformer rank 5: rank 5, node 2: node depends on itself (cycle)");
  EXPECT_EQ(message_of<InputError>([] {
              streamed(7, {{}, {1, 9}});
            }),
            "gen:transformer rank 7: rank 7, node 2: data dependency on absent "
            "node 9");
}

// What the generator streams is a graph these checks accept (one rank of
// each pipeline stage of an interleaved plan, where dependencies cross most).
TEST(GeneratedGraphChecks, GeneratedRanksPassTheChecks) {
  gen::TrainingOptions o;
  o.model = "llama3-8b";
  o.parallel = "tp=2,pp=4,dp=1,sp";
  o.global_batch = 8;
  o.seq = 256;
  o.schedule = "interleaved:2";
  o.tp_comm_overlap = true;
  const gen::TrainingSpec spec = gen::make_training_spec(o);
  for (std::uint32_t r = 0; r < spec.plan.world(); r += 2) {
    const RankGraph g(static_cast<int>(r), "gen", GraphOptions{},
                      [&](const RankGraph::NodeSink& sink) { gen::transformer_rank_stream(spec, r, sink); });
    EXPECT_GT(g.size(), 0u);
  }
}

}  // namespace
}  // namespace sim::testing
