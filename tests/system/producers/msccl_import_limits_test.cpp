// MSCCL-IR import of generated extreme files: long chains of nop steps are
// followed without recursion, their expansion is capped, and a long cycle
// gets a one-line message (docs/reliability.md, "Limits of the readers").
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/common/run_sim.h"

namespace sim {
namespace {

using testing::run_sim;
using testing::SimRun;
namespace fs = std::filesystem;

class MscclImportLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("msccl_limits_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One GPU whose threadblocks' steps are given as XML text.
  std::string write_xml(const std::string& name, const std::string& tbs) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << "<algo name=\"gen\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"1\" ngpus=\"1\" "
                           "coll=\"allreduce\" inplace=\"0\">\n  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"1\" "
                           "s_chunks=\"0\">\n"
                        << tbs << "  </gpu>\n</algo>\n";
    return path;
  }
  static std::string copy(std::size_t s, long depid = -1, long deps = -1) {
    return "      <step s=\"" + std::to_string(s) +
           "\" type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"" +
           std::to_string(depid) + "\" deps=\"" + std::to_string(deps) + "\" hasdep=\"0\"/>\n";
  }
  static std::string nop(std::size_t s, long depid = -1, long deps = -1) {
    return "      <step s=\"" + std::to_string(s) + "\" type=\"nop\" depid=\"" + std::to_string(depid) + "\" deps=\"" +
           std::to_string(deps) + "\" hasdep=\"0\"/>\n";
  }
  static std::string tb(int id, const std::string& steps) {
    return "    <tb id=\"" + std::to_string(id) + "\" send=\"-1\" recv=\"-1\" chan=\"0\">\n" + steps + "    </tb>\n";
  }
  SimRun import(const std::string& xml) const {
    return run_sim("collective import msccl " + xml + " -o " + (dir_ / "out").string());
  }

  fs::path dir_;
};

TEST_F(MscclImportLimits, HundredThousandNopChainImports) {
  // copy, 100,000 nops, copy: the last copy waits for the first through the whole chain.
  constexpr std::size_t kNops = 100000;
  std::string steps = copy(0);
  for (std::size_t s = 1; s <= kNops; ++s) steps += nop(s);
  steps += copy(kNops + 1);
  const SimRun r = import(write_xml("chain.xml", tb(0, steps)));
  ASSERT_EQ(r.code, 0) << r.output.substr(0, 2000);
  EXPECT_NE(r.output.find("100002 steps -> 0 sends, 0 receives, 2 COMPs"), std::string::npos) << r.output;
}

TEST_F(MscclImportLimits, QuadraticNopExpansionIsCapped) {
  // tb 0: 6,000 copies; tb 1: 6,000 nops, nop j waiting for copy j and nop
  // j-1: nop j stands for j+1 copies, 18 million in all, past the 2^24 cap
  // once tb 2's copy waits for the last nop.
  constexpr std::size_t kSteps = 6000;
  std::string copies, nops;
  for (std::size_t s = 0; s < kSteps; ++s) {
    copies += copy(s);
    nops += nop(s, 0, static_cast<long>(s));
  }
  const std::string xml = write_xml("wide.xml", tb(0, copies) + tb(1, nops) + tb(2, copy(0, 1, kSteps - 1)));
  const SimRun r = import(xml);
  EXPECT_EQ(r.code, 2) << r.output.substr(0, 2000);
  EXPECT_EQ(r.output.rfind("sim: error: " + xml + ":", 0), 0u) << r.output.substr(0, 2000);
  EXPECT_NE(r.output.find("gpu 0 tb 1 step "), std::string::npos) << r.output.substr(0, 2000);
  EXPECT_NE(r.output.find("expand to more than 16777216 (2^24) node dependencies"), std::string::npos)
      << r.output.substr(0, 2000);
}

TEST_F(MscclImportLimits, LongCycleHasAShortMessage) {
  // 100,000 nops, the first waiting for the last.
  constexpr std::size_t kNops = 100000;
  std::string steps = nop(0, 0, kNops - 1);
  for (std::size_t s = 1; s < kNops; ++s) steps += nop(s);
  const std::string xml = write_xml("cycle.xml", tb(0, steps));
  const SimRun r = import(xml);
  EXPECT_EQ(r.code, 2) << r.output.substr(0, 2000);
  EXPECT_LT(r.output.size(), 600u) << r.output.substr(0, 2000);
  EXPECT_NE(r.output.find(xml + ":"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("dependency cycle: tb 0 step "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("... (100000 steps in all), which waits for tb 0 step "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace sim
