// Parallel plans as a sweep axis: a generated training iteration in
// `base.workload`, its query keys as axes (`workload.parallel`, ...), each
// point run as `sim --workload 'gen:...'` runs it (folded where exact), and the
// training report's figures in results.csv and results.json.
#include <gtest/gtest.h>

#include "workflows/sweep_fixture.h"

namespace sim::testing {
namespace {

// 32 NPUs: nodes of 4, 2 nodes a leaf, 4 leaves; NCCL's collectives.
const char* const kNetwork =
    "topology: [Switch, Switch, Switch]\nnpus_count: [4, 2, 4]\n"
    "bandwidth: [450GB/s, 50GB/s, 50GB/s]\nlatency: [300ns, 1350ns, 500ns]\n";
const char* const kSystem =
    "collective:\n  algorithms: {all_reduce: nccl, all_gather: nccl, reduce_scatter: nccl}\n"
    "compute:\n  peak_tflops: 989.4\n  memory_bandwidth: 3.35TB/s\n";
const char* const kBaseWorkload = "gen:transformer?model=llama3-8b&seq=512&global-batch=8&parallel=tp=4,pp=1,dp=8";

TEST(PlanSweep, EveryPlanEqualsTheSamePointRunAlone) {
  TempDir tmp("plan_sweep");
  spit(tmp / "net.yml", kNetwork);
  spit(tmp / "sys.yml", kSystem);
  spit(tmp / "spec.yml", std::string("base:\n  workload: '") + kBaseWorkload +
                             "'\n  network: net.yml\n  system: sys.yml\n"
                             "axes:\n  workload.parallel: ['tp=4,pp=1,dp=8', 'tp=8,pp=1,dp=4', 'tp=4,pp=2,dp=4', "
                             "'tp=2,pp=2,dp=8', 'tp=4,pp=1,cp=2,dp=4', 'tp=4,pp=2,dp=3']\n");
  const SimRun sweep = run_sim("sweep " + (tmp / "spec.yml") + " -q -j 2 -o " + (tmp / "out"));
  ASSERT_EQ(sweep.code, 4) << sweep.output;  // one point failed (below)
  const auto rows = csv_rows(tmp / "out/results.csv");
  ASSERT_EQ(rows.size(), 6u);  // one row per point, not per collective
  const nlohmann::json results = nlohmann::json::parse(slurp(tmp / "out/results.json"));
  EXPECT_TRUE(results.at("training").get<bool>());
  for (std::size_t i = 0; i < 5; ++i) {  // the fifth with context parallelism (cp ranks folded as copies)
    const auto& row = rows[i];
    ASSERT_EQ(row.at("status"), "ok") << row.at("message");
    EXPECT_EQ(row.at("npus"), "32");
    EXPECT_EQ(row.at("gpus"), "32");
    EXPECT_FALSE(row.at("model_tflops_per_gpu").empty());
    EXPECT_FALSE(row.at("mfu_percent").empty());
    // The same point alone, as the command line runs it.
    std::string plan = row.at("workload.parallel");
    std::string workload = kBaseWorkload;
    workload = workload.substr(0, workload.find("parallel=")) + "parallel=" + plan;
    const std::string report = tmp / ("single" + std::to_string(i) + ".json");
    const SimRun one = run_sim("-q --workload '" + workload + "' --network " + (tmp / "net.yml") + " --system " +
                               (tmp / "sys.yml") + " --report " + report);
    ASSERT_EQ(one.code, 0) << one.output;
    const nlohmann::json alone = nlohmann::json::parse(slurp(report)).at("training");
    const nlohmann::json& point = results.at("points").at(i).at("training");
    EXPECT_EQ(point.at("iteration_time_ps").get<double>() / 1000.0, alone.at("iteration_time_ns").get<double>()) << plan;
    EXPECT_EQ(point.at("model_tflops_per_gpu").get<double>(), alone.at("model_tflops_per_gpu").get<double>()) << plan;
    EXPECT_EQ(point.at("mfu").get<double>(), alone.at("mfu").get<double>()) << plan;
    EXPECT_EQ(point.at("exposed_total_ns").get<double>(), alone.at("exposed_comm_ns").at("total").get<double>()) << plan;
    EXPECT_EQ(point.at("exposed_ns").at("dp").get<double>(), alone.at("exposed_comm_ns").at("dp").get<double>()) << plan;
    EXPECT_EQ(point.at("pipeline_bubble").get<double>(), alone.at("pipeline_bubble").get<double>()) << plan;
  }
  // A plan that does not fit the 32 NPUs fails alone, naming the plan; the others complete.
  EXPECT_EQ(rows[5].at("status"), "failed");
  EXPECT_EQ(rows[5].at("exit_code"), "2");
}

TEST(PlanSweep, QueryAxesNeedAGeneratedBaseAndOneValueEach) {
  TempDir tmp("plan_sweep_errors");
  spit(tmp / "net.yml", kNetwork);
  spit(tmp / "spec.yml", "base:\n  microbenchmark: {npus: 8, collectives: [allreduce]}\n  network: net.yml\n"
                         "axes:\n  workload.parallel: ['tp=8']\n");
  SimRun r = run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("spec.yml:5: axes.workload.parallel: varies a generated workload's query"), std::string::npos)
      << r.output;
  spit(tmp / "spec.yml", std::string("base:\n  workload: '") + kBaseWorkload +
                             "'\n  network: net.yml\naxes:\n  workload.parallel: ['tp=8&seq=1']\n");
  r = run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("expected one query value"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace sim::testing
