// With communication free and equal stages, the simulated pipeline bubble is
// the schedule's closed form exactly: (p - 1) / m for 1F1B and (p - 1) / (v m)
// for the interleaved schedule, bubble time over ideal time.
#include <gtest/gtest.h>

#include <map>

#include "network/topology.h"
#include "report/training_report.h"
#include "system/runner/simulation.h"
#include "tests/workload/generators/generator_test_util.h"
#include "workload/generators/spec/pipeline_schedule.h"
#include "workload/generators/transformer/transformer_workload.h"

namespace sim::testing {
namespace {

// Per rank: GPU time of the forward and backward passes, and when the last one ended.
struct PassTimes : TimelineSink {
  std::map<std::uint32_t, Time> busy, end;
  void slice(const TimelineSlice& s) override {
    if (s.lane != 0 || std::string_view(s.name).rfind("optimizer", 0) == 0) return;
    busy[s.rank] += s.end - s.start;
    end[s.rank] = std::max(end[s.rank], s.end);
  }
};

struct Bubble {
  Time bubble = 0, ideal = 0;
};

// Runs the iteration with free communication and returns stage 0's bubble
// (its idle time before its last pass ends) and its ideal (busy) time.
Bubble simulate(const gen::TrainingSpec& spec, TrainingBreakdown* breakdown = nullptr) {
  const Topology topology = parse_topology("shape: Switch\nnpus: " + std::to_string(spec.plan.world()) +
                                               "\nbandwidth: 100GB/s\nlatency: 0ns\n",
                                           "<test switch>");
  SystemConfig config;
  config.peak_flops = 1e15;
  config.compute_memory_bandwidth = 1'000'000'000'000;
  PassTimes times;
  SimulationOptions options;
  options.timeline = &times;
  if (breakdown) {
    breakdown->set_next(&times);
    options.timeline = breakdown;
  }
  Simulation sim(gen::transformer_rank_graphs(spec, GraphOptions{}, "test", 1), topology, config, options);
  const SimulationResult result = sim.run();
  if (breakdown) breakdown->finish(result);
  // Equal stages: every rank is busy for the same time.
  for (const auto& [rank, busy] : times.busy) EXPECT_EQ(busy, times.busy.at(0)) << "rank " << rank;
  return {times.end.at(0) - times.busy.at(0), times.busy.at(0)};
}

gen::TrainingOptions pipeline_options(const std::string& model, const std::string& plan, std::uint64_t m) {
  gen::TrainingOptions o;
  o.model = model;
  o.parallel = plan;
  o.global_batch = m * gen::parse_parallel_plan(plan).dp;
  o.seq = 64;
  o.comm_free = true;
  o.layers_only = true;
  return o;
}

TEST_F(GeneratorTest, OneFOneBBubbleIsPMinusOneOverM) {
  const std::string model = model_file("llama", llama_yaml(8, 64, 176, 8, 2, 256));
  for (const auto& [plan, m] : std::vector<std::pair<std::string, std::uint32_t>>{
           {"tp=1,pp=4,dp=1", 8}, {"tp=1,pp=4,dp=1", 3}, {"tp=2,pp=2,dp=2,sp", 5}, {"tp=1,pp=8,dp=1", 16}}) {
    const gen::TrainingSpec spec = gen::make_training_spec(pipeline_options(model, plan, m));
    const Bubble b = simulate(spec);
    const std::uint64_t p = spec.plan.pp;
    ASSERT_GT(b.ideal, 0u);
    EXPECT_EQ(b.bubble * m, b.ideal * (p - 1)) << plan << " m=" << m << ": bubble " << b.bubble << " ps, ideal "
                                               << b.ideal << " ps";
  }
}

TEST_F(GeneratorTest, InterleavedBubbleIsPMinusOneOverVM) {
  const std::string model = model_file("llama", llama_yaml(16, 64, 176, 8, 2, 256));
  for (const auto& [plan, m, v] : std::vector<std::tuple<std::string, std::uint32_t, std::uint32_t>>{
           {"tp=1,pp=4,dp=1", 8, 2}, {"tp=1,pp=4,dp=1", 4, 4}, {"tp=1,pp=2,dp=2", 6, 2}, {"tp=1,pp=4,dp=1", 12, 2}}) {
    gen::TrainingOptions o = pipeline_options(model, plan, m);
    o.schedule = "interleaved:" + std::to_string(v);
    const gen::TrainingSpec spec = gen::make_training_spec(o);
    const Bubble b = simulate(spec);
    const std::uint64_t p = spec.plan.pp;
    ASSERT_GT(b.ideal, 0u);
    EXPECT_EQ(b.bubble * v * m, b.ideal * (p - 1)) << plan << " m=" << m << " v=" << v << ": bubble " << b.bubble
                                                   << " ps, ideal " << b.ideal << " ps";
  }
}

TEST_F(GeneratorTest, TheTrainingReportMeasuresTheSameBubble) {
  const std::string model = model_file("llama", llama_yaml(8, 64, 176, 8, 2, 256));
  const gen::TrainingSpec spec = gen::make_training_spec(pipeline_options(model, "tp=1,pp=4,dp=2", 6));
  TrainingBreakdown breakdown(spec.plan.world(), spec.plan.pp);
  simulate(spec, &breakdown);
  const TrainingSummary s = breakdown.summary(0, 0);
  EXPECT_DOUBLE_EQ(s.pipeline_bubble, 3.0 / 6.0);
}

TEST(PipelineSchedule, OneFOneBWarmsUpThenAlternates) {
  const std::vector<gen::PipeStep> s = gen::stage_schedule(4, 6, 1, 1);  // stage 1 of 4: 2 warm-up passes
  std::string order;
  for (const gen::PipeStep& x : s) order += (x.backward ? "B" : "F") + std::to_string(x.microbatch) + " ";
  EXPECT_EQ(order, "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5 ");
}

TEST(PipelineSchedule, InterleavedVisitsChunksInGroupsOfP) {
  // Stage 0 of 2, 2 chunks, 4 micro-batches: warm-up 2 (2 - 0 - 1) + (2 - 1) 2 = 4 forward passes.
  const std::vector<gen::PipeStep> s = gen::stage_schedule(2, 4, 2, 0);
  std::string order;
  for (const gen::PipeStep& x : s) {
    order += (x.backward ? "B" : "F") + std::to_string(x.microbatch) + "." + std::to_string(x.chunk) + " ";
  }
  EXPECT_EQ(order, "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0 ");
}

}  // namespace
}  // namespace sim::testing
