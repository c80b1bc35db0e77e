// `sim collective synth`: writes ETs that `sim collective check` accepts;
// bad input exits 2 with a message naming what is wrong.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../common/run_sim.h"

namespace sim {
namespace {

using sim::testing::run_sim;
namespace fs = std::filesystem;

class SynthCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("sim_synth_cli_" + std::to_string(::getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string config(const std::string& name) const { return std::string(SIM_SOURCE_DIR) + "/configs/" + name; }
  fs::path dir_;
};

TEST_F(SynthCli, WritesCheckableAllReduce) {
  const std::string prefix = (dir_ / "ar").string();
  const auto w = run_sim("collective synth --coll allreduce --network " + config("torus4x4x4.yml") +
                         " --chunks 2 -o " + prefix);
  ASSERT_EQ(w.code, 0) << w.output;
  EXPECT_NE(w.output.find("wrote 64 files"), std::string::npos) << w.output;
  EXPECT_NE(w.output.find("GB/s an NPU can receive"), std::string::npos) << w.output;
  EXPECT_TRUE(fs::exists(prefix + ".63.et"));
  const auto c = run_sim("collective check " + prefix + " --size 3MiB");
  ASSERT_EQ(c.code, 0) << c.output;
  EXPECT_NE(c.output.find("data check passed: every rank holds all 64 contributions"), std::string::npos) << c.output;
}

TEST_F(SynthCli, BadInputExitsTwo) {
  const std::string out = " -o " + (dir_ / "x").string();
  auto r = run_sim("collective synth --coll alltoall --network " + config("mesh8x8.yml") + out);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--coll 'alltoall' is not a collective the synthesizer writes"), std::string::npos) << r.output;
  r = run_sim("collective synth --coll allgathr --network " + config("mesh8x8.yml") + out);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("allgathr"), std::string::npos) << r.output;
  r = run_sim("collective synth --coll allgather --network " + (dir_ / "absent.yml").string() + out);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("absent.yml"), std::string::npos) << r.output;
  const std::string bad = (dir_ / "bad.yml").string();
  std::ofstream(bad) << "shape: Mesh\ndims: [4, 4]\nbandwith: 50GB/s\n";
  r = run_sim("collective synth --coll allgather --network " + bad + out);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("bandwith"), std::string::npos) << r.output;
  r = run_sim("collective synth --coll allgather --network " + config("mesh8x8.yml") + " --size 0" + out);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--size"), std::string::npos) << r.output;
  r = run_sim("collective synth --coll allgather --network " + config("mesh8x8.yml") + " --chunkz 2" + out);
  EXPECT_EQ(r.code, 2);
}

}  // namespace
}  // namespace sim
