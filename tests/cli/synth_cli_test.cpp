// `sim collective synth`: writes ETs that `sim collective check` accepts;
// bad input exits 2 with a message naming what is wrong.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <map>
#include <vector>

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
  // A seed of -1, 2^64 or 10^20 was taken as 2^64 - 1, each writing the same algorithm.
  for (const char* seed : {"-1", "18446744073709551616", "99999999999999999999", "1e3"}) {
    r = run_sim("collective synth --coll allgather --network " + config("ring8.yml") + " --seed " + seed + out);
    EXPECT_EQ(r.code, 2) << seed;
    EXPECT_NE(r.output.find(std::string("--seed: expected a whole number 0..18446744073709551615, got '") + seed + "'"),
              std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(dir_ / "x.0.et")) << seed;
  }
  r = run_sim("collective synth --coll allgather --network " + config("ring8.yml") + " --seed 18446744073709551615" + out);
  EXPECT_EQ(r.code, 0) << r.output;
}

// scripts/seed_curves.py end to end on one topology and one size: its CSV has
// every algorithm on the flow backend, and the synthesized one is fastest.
// The schedule's size is known up front (N(N-1)k transfers, twice for an
// all-reduce): past 2^21 the command stops at once, naming --chunks and the
// most that fit, instead of searching for minutes without a word.
TEST_F(SynthCli, ChunksPastTheTransferBoundAreRefusedAtOnce) {
  const std::string out = " -o " + (dir_ / "x").string();
  auto r = run_sim("collective synth --coll allreduce --network " + config("mesh8x8.yml") + " --chunks 512" + out);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sim: error: collective synth: --chunks 512 on 64 NPUs is a schedule of 4128768 chunk "
                          "transfers (2 x 64 x 63 x 512 for ALL_REDUCE), past the 2097152 a synthesis is bounded to; "
                          "give --chunks 260 or fewer (docs/synthesizer.md, limits)"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "x.0.et"));
  r = run_sim("collective synth --coll allgather --network " + config("mesh8x8.yml") + " --chunks 521" + out);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("(64 x 63 x 521 for ALL_GATHER)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("give --chunks 520 or fewer"), std::string::npos) << r.output;
}

TEST_F(SynthCli, SeedCurvesScriptQuickRun) {
  if (::access("/usr/bin/python3", X_OK) != 0 || std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") != 0) {
    GTEST_SKIP() << "needs /usr/bin/python3 with python3-matplotlib";
  }
  const std::string cmd = std::string("/usr/bin/python3 ") + SIM_SOURCE_DIR + "/scripts/seed_curves.py --quick --sim " +
                          SIM_BINARY + " --topologies mesh8x8 --sizes 1MiB --out " + dir_.string() + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_TRUE(fs::exists(dir_ / "seed_curves.png"));
  std::ifstream csv(dir_ / "seed_curves.csv");
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "backend,topology,algorithm,size_bytes_per_rank,time_ns,busbw_GBps");
  std::map<std::string, double> busbw;
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    for (std::size_t a = 0, b; a <= line.size(); a = b + 1) {
      b = line.find(',', a);
      if (b == std::string::npos) b = line.size();
      f.push_back(line.substr(a, b - a));
    }
    ASSERT_EQ(f.size(), 6u) << line;
    EXPECT_EQ(f[0], "flow");
    busbw[f[2]] = std::stod(f[5]);
  }
  ASSERT_EQ(busbw.size(), 3u);
  EXPECT_GT(busbw["synth"], busbw["ring"]);
  EXPECT_GT(busbw["synth"], busbw["direct"]);
}

}  // namespace
}  // namespace sim
