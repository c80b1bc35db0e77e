// open_workload: the scheme a workload text names, what each source answers
// (graphs, generated spec, rank files, training facts) and the errors that
// name the text.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/common/temp_workload.h"
#include "workload/generators/spec/model_flops.h"
#include "workload/generators/transformer/transformer_workload.h"
#include "workload/generators/workload_generator.h"
#include "workload/source/workload_source.h"

namespace sim {
namespace {

using sim::testing::p2p;

constexpr const char* kQuery = "model=llama3-8b&parallel=tp=2,pp=2,dp=2,sp&global-batch=8&seq=1024&dtype=fp8";

// The message `f` throws as InputError ("" when it does not throw).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(WorkloadSource, AGeneratedQueryGivesItsSpecAndTrainingFacts) {
  const std::string text = std::string("gen:transformer?") + kQuery;
  const auto source = open_workload(text);
  EXPECT_EQ(source->scheme(), "gen");
  EXPECT_EQ(source->text(), text);
  EXPECT_EQ(source->rank_files(), nullptr);
  ASSERT_NE(source->training_spec(), nullptr);
  const gen::TrainingSpec want = gen::generated_workload_spec(text);
  EXPECT_EQ(source->training_spec()->plan.world(), 8u);
  EXPECT_EQ(source->training_spec()->plan.world(), want.plan.world());
  const auto facts = source->training_facts();
  ASSERT_TRUE(facts);
  EXPECT_EQ(facts->model_flops, gen::model_flops_per_iteration(want));
  EXPECT_GT(facts->model_flops, 0);
  EXPECT_EQ(facts->stages, 2u);
  EXPECT_EQ(facts->dtype, "fp8");
  EXPECT_EQ(source->graphs(GraphOptions{}, 2).size(), 8u);
}

TEST(WorkloadSource, ABf16QueryGivesBf16) {
  const auto facts = open_workload("gen:transformer?model=llama3-8b&parallel=tp=2,pp=1,dp=1&global-batch=2&seq=512")
                         ->training_facts();
  ASSERT_TRUE(facts);
  EXPECT_EQ(facts->dtype, "bf16");
  EXPECT_EQ(facts->stages, 1u);
}

TEST(WorkloadSource, BadGeneratedQueriesFailAtOpenAsTheGeneratorWordsThem) {
  for (const std::string text : {"gen:transformer?model=no-such-model&parallel=tp=2&global-batch=8&seq=1024",
                                 "gen:transformer?model=llama3-8b&parallel=tp=2&global-batch=8&seq=1024&bogus=1",
                                 "gen:mixer?model=llama3-8b", "gen:"}) {
    const std::string want = error_of([&] { gen::generated_workload_spec(text); });
    ASSERT_FALSE(want.empty()) << text;
    EXPECT_EQ(error_of([&] { open_workload(text); }), want) << text;
  }
}

// gen:collectives / gen:chain / gen:p2p-ring: `sim workload gen`'s kinds in
// memory, each rank's graph the trace the command writes for it.
TEST(WorkloadSource, MicrobenchmarksAreTheTracesTheGeneratorWrites) {
  struct Case {
    std::string text;
    std::vector<EtTrace> want;
    bool identical;
  };
  const std::vector<Case> cases = {
      {"gen:collectives?npus=4&coll=allreduce,allgather&size=1MiB&compute=5us",
       collectives_workload({4, {CollectiveType::kAllReduce, CollectiveType::kAllGather}, 1 << 20, 5}), true},
      {"gen:collectives?npus=3", collectives_workload({3, {CollectiveType::kAllReduce}, 1 << 20, 0}), true},
      {"gen:chain?npus=2&nodes=7&duration=3us", chain_workload({2, 7, 3}), true},
      {"gen:p2p-ring?npus=5&size=4KiB&iterations=2", p2p_ring_workload({5, 4096, 2}), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const auto source = open_workload(c.text);
    EXPECT_EQ(source->scheme(), "gen");
    EXPECT_EQ(source->training_spec(), nullptr);
    EXPECT_FALSE(source->training_facts());
    EXPECT_EQ(source->rank_count(), c.want.size());
    EXPECT_TRUE(is_generated(c.text));
    EXPECT_FALSE(is_generated_training(c.text));
    const std::vector<RankGraph> graphs = source->graphs(GraphOptions{});
    ASSERT_EQ(graphs.size(), c.want.size());
    for (std::size_t r = 0; r < graphs.size(); ++r) {
      const RankGraph want(c.want[r], static_cast<int>(r), GraphOptions{});
      ASSERT_EQ(graphs[r].size(), want.size());
      for (std::uint32_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(graphs[r].kind(i), want.kind(i));
        EXPECT_EQ(graphs[r].node(i).id, want.node(i).id);
        EXPECT_EQ(graphs[r].node(i).comm_size, want.node(i).comm_size);
        EXPECT_EQ(graphs[r].node(i).coll, want.node(i).coll);
        EXPECT_EQ(graphs[r].node(i).duration_micros, want.node(i).duration_micros);
        EXPECT_EQ(graphs[r].node(i).comm_src, want.node(i).comm_src);
        EXPECT_EQ(graphs[r].node(i).comm_dst, want.node(i).comm_dst);
        EXPECT_EQ(graphs[r].node(i).num_parents, want.node(i).num_parents);
      }
    }
    const auto same = source->identical_ranks(GraphOptions{});
    EXPECT_EQ(same.has_value(), c.identical);
    if (same) {
      EXPECT_EQ(same->ranks, c.want.size());
      EXPECT_EQ(same->first.size(), graphs[0].size());
    }
  }
  EXPECT_TRUE(is_generated_training("gen:transformer?model=llama3-8b"));
}

TEST(WorkloadSource, BadMicrobenchmarkQueriesNameTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"gen:collectives?coll=allreduce", "gen:collectives: npus=N is required"},
      {"gen:collectives?npus=0", "gen:collectives: npus: must be at least 1"},
      {"gen:collectives?npus=4x", "gen:collectives: npus=4x: expected a whole number"},
      {"gen:collectives?npus=2000000", "gen:collectives: npus: at most 1048576"},
      {"gen:collectives?npus=4&size=0", "gen:collectives: size: must be at least 1 byte"},
      {"gen:collectives?npus=4&size=lots", "gen:collectives: size: "},
      {"gen:collectives?npus=4&coll=allreduse", "gen:collectives: coll: unknown collective 'allreduse'"},
      {"gen:collectives?npus=4&compute=1ns", "gen:collectives: compute: '1ns' is not a whole number of microseconds"},
      {"gen:collectives?npus=4&nodes=3", "gen:collectives: unknown key 'nodes' (it takes npus, coll, size, compute)"},
      {"gen:collectives?npus=4&npus=8", "gen:collectives: 'npus' given twice"},
      {"gen:collectives?npus", "gen:collectives: 'npus' needs a value (key=value)"},
      {"gen:chain?npus=2&nodes=0", "gen:chain: nodes: must be at least 1"},
      {"gen:chain?npus=2&nodes=4294967297", "gen:chain: nodes=4294967297: expected a whole number 0..4294967295"},
      {"gen:p2p-ring?npus=2&iterations=-1", "gen:p2p-ring: iterations=-1: expected a whole number 0..4294967295"},
      {"gen:collectives?npus=abc", "gen:collectives: npus=abc: expected a whole number 1..1048576"},
      {"gen:p2p-ring?npus=1", "p2p-ring: gen:p2p-ring: npus must be at least 2"},
      {"gen:p2p-ring?npus=2&iterations=0", "gen:p2p-ring: iterations: must be at least 1"},
  };
  for (const auto& c : cases) {
    const std::string &text = c.first, &want = c.second;  // named, not bound: the lambda below captures text
    const std::string got = error_of([&] { open_workload(text); });
    EXPECT_EQ(got.rfind(want, 0), 0u) << text << ": " << got;
  }
  // An unknown kind is the transformer's reader's to refuse, naming every kind.
  EXPECT_NE(error_of([&] { open_workload("gen:collective?npus=4"); }).find("gen:collectives?npus="), std::string::npos);
}

TEST(WorkloadSource, IsGeneratedLooksOnlyAtThePrefix) {
  EXPECT_TRUE(is_generated("gen:transformer?model=llama3-8b"));
  EXPECT_TRUE(is_generated("gen:anything"));  // its query is checked when opened
  EXPECT_FALSE(is_generated("pytorch:traces"));
  EXPECT_FALSE(is_generated("traces/gen:transformer"));
  EXPECT_FALSE(is_generated(""));
}

class WorkloadSourceFiles : public sim::testing::TempWorkload {
 protected:
  // Two ranks exchanging one message.
  std::string pair(const std::string& prefix) const {
    return workload(prefix, {{p2p(1, true, 1, 1024)}, {p2p(1, false, 0, 1024)}});
  }
};

TEST_F(WorkloadSourceFiles, APrefixResolvesItsRankFilesOnceAndLoadsEveryRank) {
  const auto source = open_workload(pair("ring"));
  EXPECT_EQ(source->scheme(), "files");
  ASSERT_NE(source->rank_files(), nullptr);
  ASSERT_EQ(source->rank_files()->size(), 2u);
  EXPECT_EQ((*source->rank_files())[1], path("ring.1.et"));
  EXPECT_EQ(source->training_spec(), nullptr);
  const std::vector<RankGraph> graphs = source->graphs(GraphOptions{}, 1);
  ASSERT_EQ(graphs.size(), 2u);
  EXPECT_EQ(graphs[1].rank(), 1);
  // Plain traces say nothing of a training iteration.
  EXPECT_FALSE(source->training_facts());
}

TEST_F(WorkloadSourceFiles, AFolderOfOnePrefixIsItsRankFiles) {
  pair("ring");
  const auto source = open_workload(dir_.string());
  EXPECT_EQ(source->scheme(), "files");
  ASSERT_NE(source->rank_files(), nullptr);
  EXPECT_EQ(source->rank_files()->size(), 2u);
}

TEST_F(WorkloadSourceFiles, GeneratedEtsGiveTheTrainingFactsTheirMetadataRecords) {
  const std::string prefix = path("gen/llama");
  std::ostringstream summary;
  ASSERT_EQ(gen::write_transformer_workload(gen::parse_training_query(kQuery), prefix, summary, 2), 0);
  const auto source = open_workload(prefix);
  EXPECT_EQ(source->scheme(), "files");
  ASSERT_NE(source->rank_files(), nullptr);
  EXPECT_EQ(source->rank_files()->size(), 8u);
  const auto facts = source->training_facts();
  ASSERT_TRUE(facts);
  const gen::TrainingSpec spec = gen::make_training_spec(gen::parse_training_query(kQuery));
  EXPECT_DOUBLE_EQ(facts->model_flops, gen::model_flops_per_iteration(spec));
  EXPECT_EQ(facts->stages, 2u);
  EXPECT_EQ(facts->dtype, "fp8");
}

TEST_F(WorkloadSourceFiles, AMissingPathIsAnErrorNamingIt) {
  const std::string missing = path("nowhere");
  const std::string e = error_of([&] { open_workload(missing); });
  EXPECT_NE(e.find(missing), std::string::npos) << e;
  EXPECT_EQ(e.find("scheme"), std::string::npos) << e;  // a plain path: no talk of schemes
}

TEST_F(WorkloadSourceFiles, AnUnknownSchemeSaysWhichSchemesThereAre) {
  const std::string e = error_of([] { open_workload("xyz:traces/ring"); });
  EXPECT_NE(e.find("xyz:traces/ring"), std::string::npos) << e;
  EXPECT_NE(e.find("'xyz:' is not a workload scheme"), std::string::npos) << e;
  EXPECT_NE(e.find("gen:, pytorch:"), std::string::npos) << e;
}

TEST_F(WorkloadSourceFiles, APathHoldingAColonIsStillAPath) {
  const auto source = open_workload(pair("run:1"));
  EXPECT_EQ(source->scheme(), "files");
  EXPECT_EQ(source->rank_files()->size(), 2u);
}

// A PyTorch host trace of one process running one matrix product.
nlohmann::json host_trace() {
  const auto op = [](std::uint64_t id, const std::string& name, std::uint64_t parent, std::uint64_t rf) {
    return nlohmann::json{
        {"id", id},
        {"name", name},
        {"ctrl_deps", parent},
        {"inputs", {{"values", nlohmann::json::array()}, {"shapes", nlohmann::json::array()}, {"types", nlohmann::json::array()}}},
        {"outputs", {{"values", nlohmann::json::array()}, {"shapes", nlohmann::json::array()}, {"types", nlohmann::json::array()}}},
        {"attrs", nlohmann::json::array({{{"name", "rf_id"}, {"type", "uint64"}, {"value", rf}},
                                         {{"name", "tid"}, {"type", "uint64"}, {"value", 1}},
                                         {{"name", "scope"}, {"type", "uint64"}, {"value", 0}}})}};
  };
  return {{"schema", "1.1.1-chakra.0.0.4"},
          {"pid", 10},
          {"nodes", nlohmann::json::array({op(1, "[pytorch|profiler|execution_trace|process]", 1, 0),
                                           op(2, "[pytorch|profiler|execution_trace|thread]", 1, 0),
                                           op(5, "aten::mm", 2, 3)})}};
}

TEST_F(WorkloadSourceFiles, APytorchFolderIsImportedRankByRank) {
  std::filesystem::create_directories(path("traces"));
  std::ofstream(path("traces/et_rank0.json")) << host_trace().dump();
  const auto source = open_workload("pytorch:" + path("traces"));
  EXPECT_EQ(source->scheme(), "pytorch");
  EXPECT_EQ(source->rank_files(), nullptr);
  EXPECT_EQ(source->training_spec(), nullptr);
  EXPECT_FALSE(source->training_facts());
  const std::vector<RankGraph> graphs = source->graphs(GraphOptions{}, 1);
  ASSERT_EQ(graphs.size(), 1u);
  EXPECT_EQ(graphs[0].rank(), 0);
}

TEST(WorkloadSource, APytorchSchemeWithoutAFolderFailsAtOpen) {
  const std::string e = error_of([] { open_workload("pytorch:"); });
  EXPECT_NE(e.find("needs a folder"), std::string::npos) << e;
}

}  // namespace
}  // namespace sim
