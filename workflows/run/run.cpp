#include "workflows/run/run.h"

#include <spdlog/spdlog.h>

#include "report/model_range.h"
#include "report/physical_bounds.h"
#include "system/scenario/fold_plan.h"

namespace sim {

namespace {

// Passes slices on, counting them: a fold refused before the run wrote any
// (folds are checked when the simulation is built) may be run again.
struct CountedTimeline final : TimelineSink {
  TimelineSink* next = nullptr;
  std::uint64_t slices = 0;
  bool wants(std::uint32_t rank, Time start, Time end) const override { return next->wants(rank, start, end); }
  void slice(const TimelineSlice& s) override {
    ++slices;
    next->slice(s);
  }
  void ranks(std::uint32_t count) override { next->ranks(count); }
};

// The one job's training iteration, if it is one (several jobs: none).
// Traces that cannot be read say nothing: the scenario, built before, has
// reported what it could not read.
std::optional<TrainingFacts> training_facts(const ScenarioSpec& spec) {
  if (spec.jobs.size() != 1 || spec.graphs) return std::nullopt;
  try {
    return workload_sources(spec)[0]->training_facts();
  } catch (const InputError&) {
    return std::nullopt;
  }
}

}  // namespace

RunOutcome run(const ScenarioSpec& spec, const RunHooks& hooks) {
  using clock = std::chrono::steady_clock;
  CountedTimeline counted;
  counted.next = hooks.timeline;
  std::unique_ptr<TrainingRun> training;
  double simulate_seconds = 0;
  const auto simulate = [&](const ScenarioSpec& s) {
    Scenario scenario = build_scenario(s);
    // A training iteration is recognised once the scenario has checked the
    // files (and the memory budget).
    if (!training) training = std::make_unique<TrainingRun>(training_facts(s));
    scenario.options.timeline = hooks.timeline ? &counted : nullptr;
    scenario.options.progress = hooks.progress;
    // Folded, ranks are numbered in the whole world (timelines, reports).
    const std::uint32_t world = scenario.options.folding.active()
                                    ? scenario.options.folding.world
                                    : static_cast<std::uint32_t>(scenario.graphs->size());
    scenario.options.timeline = training->attach(scenario.options.timeline, world);
    Simulation simulation(scenario.graphs, *scenario.topology, scenario.config, scenario.options);
    const auto start = clock::now();
    SimulationResult result = simulation.run();
    simulate_seconds = std::chrono::duration<double>(clock::now() - start).count();
    return std::make_pair(std::move(result), std::move(scenario));
  };
  auto [result, scenario] = simulate_folded_if_exact(spec, simulate, [&](const std::string& why) {
    // A timeline that has the folded run's first slices cannot take another
    // run's: say why instead (the reason, after the note's prefix).
    if (counted.slices > 0) throw FoldingRefused(why.substr(why.find(": ") + 2));
    if (hooks.note) hooks.note(why);
  });

  RunOutcome out{std::move(result), std::move(scenario), {}, std::move(training), 0, 0};
  for (const std::string& w : physical_bound_warnings(out.result, *out.scenario.topology)) {
    out.result.warnings.push_back(w);
    ++out.implausible;
  }
  for (std::string& w : model_range_warnings(out.result)) out.result.warnings.push_back(std::move(w));
  out.info = RunInfo{out.scenario.workload_name, out.scenario.topology->description(),
                     out.scenario.config.network.backend,
                     std::chrono::duration<double>(clock::now() - hooks.wall_start).count(), simulate_seconds};
  out.info.training = out.training->finish(out.result, out.scenario.config);
  // An MFU above 100 % cannot happen: a warning (in the report too).
  if (out.info.training) {
    for (const std::string& w : training_bound_warnings(*out.info.training)) {
      out.result.warnings.push_back(w);
      ++out.impossible_mfu;
    }
    for (const std::string& w : untimed_compute_warnings(*out.info.training)) out.result.warnings.push_back(w);
  }
  if (hooks.log_warnings) {
    for (const std::string& w : out.result.warnings) spdlog::warn("{}", w);
  }
  return out;
}

}  // namespace sim
