// system/scenario: the one place a simulation is assembled. The three entry
// points (sim, ASTRA-sim's command line, sweep points) go through it; these
// tests pin what it adds up to: order of checks, jobs and placement, shared
// parts, and that a scenario runs as the parts it names would.
#include "system/scenario/scenario.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/common/temp_folder.h"
#include "core/error.h"
#include "workload/generators/workload_generator.h"

namespace sim {
namespace {

class ScenarioTest : public testing::TempFolderTest {
 protected:
  // An all-reduce microbenchmark on `npus` ranks, written as ETs.
  std::string allreduce(const std::string& prefix, std::uint32_t npus, std::uint64_t bytes) const {
    CollectivesSpec spec{npus, {CollectiveType::kAllReduce}, bytes, 0};
    const auto traces = collectives_workload(spec);
    for (std::size_t r = 0; r < traces.size(); ++r) write_et(traces[r], path(prefix + "." + std::to_string(r) + ".et"));
    return path(prefix);
  }
  std::string ring(std::uint32_t n) const {
    return write("ring" + std::to_string(n) + ".yml",
                 "topology: [Ring]\nnpus_count: [" + std::to_string(n) + "]\nbandwidth: [50]\nlatency: [500]\n");
  }
};

TEST_F(ScenarioTest, ABadCollectiveChoiceFailsBeforeAnyWorkloadIsRead) {
  ScenarioSpec spec;
  spec.network = ring(4);
  spec.collectives = {"allreduce=nosuch"};
  spec.jobs = {JobInput{"", path("no_such_workload"), ""}};
  try {
    build_scenario(spec);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--collective allreduce=nosuch"), std::string::npos) << e.what();
  }
}

TEST_F(ScenarioTest, NeedsANetworkAndAWorkload) {
  ScenarioSpec spec;
  spec.jobs = {JobInput{"", allreduce("ar", 4, 1 << 20), ""}};
  EXPECT_THROW(build_scenario(spec), InputError);  // no network
  spec.jobs.clear();
  spec.network = ring(4);
  EXPECT_THROW(build_scenario(spec), InputError);  // no workload
  spec.backend = "nosuch";
  spec.jobs = {JobInput{"", allreduce("ar", 4, 1 << 20), ""}};
  EXPECT_THROW(build_scenario(spec), InputError);  // unknown backend
}

TEST_F(ScenarioTest, TwoJobsArePlacedAndRunAsTheirPartsWould) {
  // Two 4-rank all-reduces, placed on the halves of an 8-NPU switch: each
  // job's collective takes what it takes alone on a 4-NPU switch of the same
  // links (a switch gives every NPU its own port, so the jobs do not meet).
  const std::string sw8 = write("sw8.yml", "topology: [Switch]\nnpus_count: [8]\nbandwidth: [50]\nlatency: [500]\n");
  const std::string sw4 = write("sw4.yml", "topology: [Switch]\nnpus_count: [4]\nbandwidth: [50]\nlatency: [500]\n");
  const std::string a = allreduce("a", 4, 1 << 20), b = allreduce("b", 4, 1 << 20);
  const std::string placement =
      write("placement.json", R"({"a-0": 7, "a-1": 6, "a-2": 5, "a-3": 4, "b-0": 0, "b-1": 1, "b-2": 2, "b-3": 3})");
  ScenarioSpec both;
  both.network = sw8;
  both.jobs = {JobInput{"a", a, ""}, JobInput{"b", b, ""}};
  both.placement = placement;
  const Scenario s = build_scenario(both);
  ASSERT_EQ(s.graphs->size(), 8u);
  EXPECT_EQ(s.options.npu_of, (std::vector<std::uint32_t>{7, 6, 5, 4, 0, 1, 2, 3}));
  EXPECT_EQ(s.workload_name, "a=" + a + ", b=" + b);
  Simulation together(s.graphs, *s.topology, s.config, s.options);
  const SimulationResult r2 = together.run();

  ScenarioSpec alone;
  alone.network = sw4;
  alone.jobs = {JobInput{"", a, ""}};
  const Scenario one = build_scenario(alone);
  EXPECT_TRUE(one.options.jobs.empty());  // a lone unnamed job is a plain workload
  Simulation single(one.graphs, *one.topology, one.config, one.options);
  EXPECT_EQ(r2.makespan, single.run().makespan);
}

TEST_F(ScenarioTest, SharedPartsAreUsedAsGiven) {
  ScenarioSpec first;
  first.network = ring(4);
  first.jobs = {JobInput{"", allreduce("ar", 4, 1 << 20), ""}};
  first.collectives = {"allreduce=direct"};
  const Scenario a = build_scenario(first);
  ScenarioSpec again;  // what a sweep point passes: parts already loaded
  again.topology = a.topology;
  again.graphs = a.graphs;
  again.system_config = std::make_shared<const SystemConfig>(a.config);
  const Scenario b = build_scenario(again);
  EXPECT_EQ(b.topology.get(), a.topology.get());
  EXPECT_EQ(b.graphs.get(), a.graphs.get());
  EXPECT_EQ(b.config.algorithms.at(CollectiveType::kAllReduce), "direct");
  Simulation sa(a.graphs, *a.topology, a.config, a.options), sb(b.graphs, *b.topology, b.config, b.options);
  EXPECT_EQ(sa.run().makespan, sb.run().makespan);
}

}  // namespace
}  // namespace sim
