// A training iteration whose model FLOPs per GPU and second exceed the GPU's
// peak (MFU above 100 %) is not physical: a warning (also in the report), and
// with --strict exit 2. Here two ranks' ETs claim 10^18 model FLOPs for one
// 1 us COMP node each: the form the generator's ETs take, with a count no
// GPU reaches (5 x 10^11 TFLOP/s per GPU).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/common/run_sim.h"
#include "tests/common/temp_folder.h"
#include "workload/et/et_io.h"

namespace sim::testing {
namespace {

class ImpossibleMfu : public TempFolderTest {
 protected:
  void SetUp() override {
    TempFolderTest::SetUp();
    EtTrace t;
    t.metadata.set_version("0.0.4");
    auto md = [&](const char* name, std::int64_t v) {
      et::AttributeProto* a = t.metadata.add_attr();
      a->set_name(name);
      a->set_int64_val(v);
    };
    md("model_flops", flops_);
    md("pp", 1);
    et::Node& n = t.nodes.emplace_back();
    n.set_id(1);
    n.set_name("layer0.fwd mb0");
    n.set_type(et::COMP_NODE);
    n.set_duration_micros(1);
    write_et(t, path("wl.0.et"));
    write_et(t, path("wl.1.et"));
    std::ofstream(path("sys.yml")) << "compute:\n  peak_tflops: 989\n  memory_bandwidth: 3350GB/s\n";
    std::ofstream(path("two.yml")) << "shape: Switch\nnpus: 2\nbandwidth: 50GB/s\nlatency: 500ns\n";
  }
  std::string args() const {
    return "--workload " + path("wl") + " --network " + path("two.yml") + " --system " + path("sys.yml") +
           " --report " + path("r.json");
  }
  std::int64_t flops_ = 1'000'000'000'000'000'000;
};

TEST_F(ImpossibleMfu, IsAWarningAndInTheReport) {
  const SimRun run = run_sim(args() + " -q");
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(run.output,
            "sim: warning: training iteration: MFU 50556117290.19 % "
            "(500000000000.000 model TFLOP/s per GPU over 2 GPUs) "
            "exceeds what a GPU can do (its peak, 989.000 TFLOP/s): the result "
            "is not physical; check the workload's "
            "model FLOPs and the system's compute peak\n");
  const auto report = nlohmann::json::parse(read(path("r.json")));
  ASSERT_EQ(report["warnings"].size(), 1u);
  EXPECT_NE(report["warnings"][0].get<std::string>().find("MFU 50556117290.19 %"), std::string::npos);
}

TEST_F(ImpossibleMfu, IsAnErrorWithStrict) {
  const SimRun run = run_sim(args() + " -q --strict");
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("sim: error: --strict: the training iteration's "
                            "MFU exceeds 100 %, which no GPU can do"),
            std::string::npos)
      << run.output;
}

TEST_F(ImpossibleMfu, APhysicalIterationIsQuiet) {
  flops_ = 2'000'000;  // 10^6 FLOP per GPU in 1 us: 1 TFLOP/s
  SetUp();
  const SimRun run = run_sim(args() + " -q --strict");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(run.output, "");
}

// The generator's COMP nodes carry shapes, no duration: without a compute
// model they take 0 ps, and the iteration's model TFLOP/s per GPU (10,000 and
// more) was printed with no word.
TEST_F(ImpossibleMfu, AnIterationWithoutComputeTimeIsWarned) {
  const std::string run_args = "--workload 'gen:transformer?model=llama3-8b&parallel=tp=1,pp=2,dp=1&global-batch=2&seq=128'"
                               " --network " + path("two.yml") + " --report " + path("r.json") + " -q";
  SimRun run = run_sim(run_args);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(run.output,
            "sim: warning: training iteration: every COMP node took 0 ps (the system config has no compute section, "
            "and the nodes carry no duration_micros): the iteration time is its communication alone, and its model "
            "TFLOP/s per GPU is no GPU's; give --system a compute section (peak_tflops, memory_bandwidth; "
            "docs/compute.md)\n");
  const auto report = nlohmann::json::parse(read(path("r.json")));
  ASSERT_EQ(report["warnings"].size(), 1u);
  EXPECT_NE(report["warnings"][0].get<std::string>().find("every COMP node took 0 ps"), std::string::npos);
  // Timed by a compute model: quiet, --strict too.
  run = run_sim(run_args + " --system " + path("sys.yml") + " --strict");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(run.output, "");
}

}  // namespace
}  // namespace sim::testing
