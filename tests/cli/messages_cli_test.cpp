// Command-line messages: parse errors in the form of every other error, the
// run header's rank count.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "../common/run_sim.h"
#include "../common/temp_folder.h"

namespace sim {
namespace {

using testing::run_sim;
using testing::SimRun;
const auto configs = testing::shipped_config;

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(CliMessages, ParseErrorsAreOneSimErrorLineExit2) {
  for (const std::string& args : {std::string("--no-such-flag"), std::string("workload gen collectives --npus abc"),
                                  std::string("workload gen transformer --model llama3-8b"),
                                  std::string("collective gen ring --coll allreduce --npus 4 -o")}) {
    const SimRun r = run_sim(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.output;
    EXPECT_EQ(r.output.rfind("sim: error: ", 0), 0u) << args << ": " << r.output;
    EXPECT_EQ(lines(r.output), 1) << args << ": " << r.output;
  }
  const SimRun help = run_sim("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_EQ(help.output.find("sim: error"), std::string::npos);
}

TEST(CliMessages, TheRunHeaderGivesTheJobsRanksAndThoseSimulated) {
  // tp=4 x dp=2: 8 ranks, the 2 identical replicas folded into one.
  const SimRun r = run_sim("--workload 'gen:transformer?model=llama3-8b&seq=256&parallel=tp=4,pp=1,dp=2&global-batch=2'"
                           " --network " + configs("switch8.yml"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find(" (8 ranks, 4 simulated)\n"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace sim
