// The fold plan (system/scenario/fold_plan.h): which folds a spec may take,
// worked out before anything runs, and which a refusal rules out. The runs
// here are stand-ins that refuse on cue: what is checked is the order of the
// specs tried and what the notes say, not simulated times (the folds' own
// tests compare those with every rank: replica_folding_test and the rest).
#include "system/scenario/fold_plan.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/common/temp_folder.h"

namespace sim {
namespace {

class FoldPlanTest : public testing::TempFolderTest {
 protected:
  // 4 GPUs per node, 2 nodes per leaf, 4 leaves: 32 GPUs.
  ScenarioSpec spec(const std::string& query, bool stand_ins = true) const {
    ScenarioSpec s;
    s.network = write("net.yml", "topology: [Switch, Switch, Switch]\nnpus_count: [4, 2, 4]\n"
                                 "bandwidth: [450GB/s, 50GB/s, 50GB/s]\nlatency: [300ns, 1350ns, 500ns]\n");
    s.system = write("sys.yml", "compute: {peak_tflops: 989, memory_bandwidth: 3350GB/s}\nnetwork: {backend: analytical}\n");
    s.jobs = {JobInput{"", "gen:transformer?model=llama3-8b&seq=512&" + query, ""}};
    s.stand_ins = stand_ins;
    return s;
  }

  // What each step tried looked like.
  struct Tried {
    bool fold_replicas, context_copies, expert_copies, stand_ins;
    std::uint32_t period;
  };
  // Runs the ladder with a simulation that refuses with `refusals` in turn,
  // then accepts; returns the specs tried.
  std::vector<Tried> climb(const ScenarioSpec& s, const std::vector<FoldingRefused::Reason>& refusals) {
    std::vector<Tried> tried;
    notes.clear();
    simulate_folded_if_exact(
        s,
        [&](const ScenarioSpec& step) {
          tried.push_back({step.fold_replicas, step.context_copies, step.expert_copies, step.use_stand_ins,
                           step.replica_period});
          if (tried.size() <= refusals.size()) {
            throw FoldingRefused(refusals[tried.size() - 1], "refusal " + std::to_string(tried.size()));
          }
          return 0;
        },
        [&](const std::string& why) { notes.push_back(why); });
    return tried;
  }
  std::vector<std::string> notes;
};

using R = FoldingRefused;
const std::string kDense = "parallel=tp=2,pp=2,dp=8&global-batch=16";
const std::string kContext = "parallel=tp=2,cp=2,pp=2,dp=4&global-batch=8";

TEST_F(FoldPlanTest, PlansOnlyTheFoldsThatApply) {
  EXPECT_EQ(FoldLadder(spec(kDense)).names(),
            (std::vector<std::string>{"replicas", "a period of replicas", "one replica with stand-ins", "every rank"}));
  EXPECT_EQ(FoldLadder(spec(kDense, false)).names(),
            (std::vector<std::string>{"replicas", "a period of replicas", "every rank"}));
  EXPECT_EQ(FoldLadder(spec(kContext)).names(),
            (std::vector<std::string>{"replicas", "context-parallel ranks simulated", "a period of replicas",
                                      "one replica with stand-ins, context-parallel ranks as copies",
                                      "one replica with stand-ins", "every rank"}));
  // A mixture of experts with uniform routing: its replicas as copies first,
  // then a node's worth (4 replicas of one GPU each); a leaf's worth (8) is a
  // whole block of expert groups, which the blocks step folds as well.
  ScenarioSpec moe = spec("");
  moe.jobs[0].workload = "gen:transformer?model=mixtral-8x7b&seq=256&global-batch=16&parallel=tp=1,pp=2,dp=16,ep=8";
  EXPECT_EQ(FoldLadder(moe).names(),
            (std::vector<std::string>{"expert copies, one replica at a time", "expert copies, 4 replicas at a time",
                                      "replicas", "a period of replicas", "one replica with stand-ins", "every rank"}));
  // A spec that names its period, or folds nothing: as given, then every rank.
  ScenarioSpec named = spec(kDense);
  named.replica_period = 0;
  EXPECT_EQ(FoldLadder(named).names(), (std::vector<std::string>{"replicas", "every rank"}));
  ScenarioSpec none = spec(kDense);
  none.fold_replicas = false;
  EXPECT_EQ(FoldLadder(none).names(), (std::vector<std::string>{"replicas", "every rank"}));
}

TEST_F(FoldPlanTest, TheFirstFoldAcceptedRunsAndNothingIsSaid) {
  const auto tried = climb(spec(kDense), {});
  ASSERT_EQ(tried.size(), 1u);
  EXPECT_TRUE(tried[0].fold_replicas);
  EXPECT_EQ(tried[0].period, 1u);
  EXPECT_TRUE(notes.empty());
}

TEST_F(FoldPlanTest, ARouteThatDiffersTriesAPeriodThenStandIns) {
  const auto tried = climb(spec(kDense), {R::kRoutes, R::kRoutes});
  ASSERT_EQ(tried.size(), 3u);
  EXPECT_EQ(tried[1].period, 0u);  // the shortest period that maps the network onto itself
  EXPECT_TRUE(tried[2].stand_ins);
  EXPECT_EQ(tried[2].period, 1u);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0], "replicas folded a period at a time: refusal 1");
  EXPECT_EQ(notes[1].rfind("replicas folded one at a time with stand-ins", 0), 0u) << notes[1];
  EXPECT_NE(notes[1].find(": refusal 2"), std::string::npos) << notes[1];
}

TEST_F(FoldPlanTest, ACollectiveThatRepeatsAtNoPeriodSkipsEveryPeriod) {
  auto tried = climb(spec(kDense), {R::kNoPeriod});
  ASSERT_EQ(tried.size(), 2u);
  EXPECT_TRUE(tried[1].stand_ins);
  EXPECT_NE(notes[0].find("refusal 1; no period of replicas repeats it"), std::string::npos) << notes[0];
  // Without stand-ins, every rank, saying why.
  tried = climb(spec(kDense, false), {R::kNoPeriod});
  ASSERT_EQ(tried.size(), 2u);
  EXPECT_FALSE(tried[1].fold_replicas);
  EXPECT_EQ(notes[0], "ranks not folded, simulating every rank: refusal 1; no period of replicas repeats it");
}

TEST_F(FoldPlanTest, AnyOtherReasonLeavesEveryRank) {
  const auto tried = climb(spec(kDense), {R::kOther});
  ASSERT_EQ(tried.size(), 2u);
  EXPECT_FALSE(tried[1].fold_replicas);
  EXPECT_EQ(notes, (std::vector<std::string>{"ranks not folded, simulating every rank: refusal 1"}));
}

TEST_F(FoldPlanTest, ContextCopiesWhoseExchangesDoNotMirrorAreNotStandInCopiesEither) {
  // Exchanges refused, then the cp ranks' own run refused by a route: the
  // stand-ins step simulates each replica's cp ranks.
  auto tried = climb(spec(kContext), {R::kPointToPoint, R::kRoutes, R::kRoutes});
  ASSERT_GE(tried.size(), 3u);
  EXPECT_TRUE(tried[0].context_copies);
  EXPECT_FALSE(tried[1].context_copies);
  EXPECT_EQ(notes[0].rfind("context-parallel ranks simulated, each replica's", 0), 0u) << notes[0];
  EXPECT_TRUE(tried.back().stand_ins);
  EXPECT_FALSE(tried.back().context_copies);
  // A route refused instead: stand-ins keep the cp ranks as copies.
  tried = climb(spec(kContext), {R::kRoutes, R::kRoutes, R::kRoutes});
  EXPECT_TRUE(tried.back().stand_ins);
  EXPECT_TRUE(tried.back().context_copies);
  // The gradient group repeating at no period refuses the cp ranks' own run
  // too: straight to stand-ins.
  tried = climb(spec(kContext), {R::kNoPeriod});
  ASSERT_EQ(tried.size(), 2u);
  EXPECT_TRUE(tried[1].stand_ins);
  EXPECT_TRUE(tried[1].context_copies);
}

TEST_F(FoldPlanTest, ExpertCopiesGiveWayToBlocksWithANote) {
  ScenarioSpec moe = spec("");
  moe.jobs[0].workload = "gen:transformer?model=mixtral-8x7b&seq=256&global-batch=16&parallel=tp=1,pp=2,dp=16,ep=8";
  // A route refused: the node's worth of replicas next; any other reason skips it.
  auto tried = climb(moe, {R::kRoutes, R::kRoutes});
  ASSERT_EQ(tried.size(), 3u);
  EXPECT_TRUE(tried[0].expert_copies);
  EXPECT_EQ(tried[1].period, 4u);
  EXPECT_FALSE(tried[2].expert_copies);  // blocks of whole expert groups
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("a mixture of experts' replicas not folded as copies", 0), 0u) << notes[0];
  EXPECT_NE(notes[0].find("refusal 2"), std::string::npos) << notes[0];
  tried = climb(moe, {R::kNoPeriod});
  ASSERT_EQ(tried.size(), 2u);
  EXPECT_FALSE(tried[1].expert_copies);
  EXPECT_EQ(tried[1].period, 1u);
}

TEST_F(FoldPlanTest, ARefusalOfEveryRankIsTheRunsError) {
  ScenarioSpec none = spec(kDense);
  none.fold_replicas = false;
  EXPECT_THROW(climb(none, {R::kOther, R::kOther}), FoldingRefused);
}

}  // namespace
}  // namespace sim
