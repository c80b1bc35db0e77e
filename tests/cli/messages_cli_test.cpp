// Command-line messages: parse errors in the form of every other error, the
// run header's rank count.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>

#include "../common/run_sim.h"
#include "../common/temp_folder.h"

namespace sim {
namespace {

using testing::run_sim;
using testing::SimRun;
using testing::shipped_config;

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

// An input given an empty value (a shell variable left unset) was taken as
// not given: `--system ''` ran on the default system, `--comm-group ''` with
// every rank in one group, `calibrate --sizes ''` on every size; exit 0.
TEST(CliMessages, AnEmptyInputOrValueIsExit2NamingTheOption) {
  const std::string run = "--workload 'gen:collectives?npus=8' --network " + shipped_config("ring8.yml") + " -q ";
  const std::string reference = std::string(SIM_SOURCE_DIR) + "/tests/workflows/compare/data/all_reduce_perf_8xH100.txt";
  const std::pair<std::string, std::string> cases[] = {
      {run + "--system ''", "--system: an empty path"},
      {run + "--comm-group ''", "--comm-group: an empty path"},
      {run + "--placement ''", "--placement: an empty path"},
      {run + "--collective ''", "--collective: an empty value"},
      {"--workload 'gen:collectives?npus=8' --network ''", "--network: an empty path"},
      {"--workload '' --network " + shipped_config("ring8.yml"), "--workload: an empty path"},
      {"compare " + reference + " --preset ''", "--preset: an empty value"},
      {"compare " + reference + " --preset dgx-h100 --plot ''", "--plot: an empty path"},
      {"compare " + reference + " --preset dgx-h100 --reference-collective ''", "--reference-collective: an empty value"},
      {"calibrate " + reference + " --preset dgx-h100 --sizes '' -o x", "--sizes: an empty value"},
      {"calibrate " + reference + " --preset dgx-h100 --collective '' -o x", "--collective: an empty value"},
      {"calibrate " + reference + " --system '' -o x", "--system: an empty path"},
      {"workload gen collectives --npus 4 --compute '' -o x", "--compute: an empty value"},
      {"collective gen ring --coll allreduce --npus 4 --network '' -o x", "--network: an empty path"},
      {"workload gen transformer --model mixtral-8x7b --parallel tp=1,pp=1,dp=8,ep=8 --global-batch 8 --seq 128 "
       "--routing '' -o x",
       "--routing: an empty value"},
      {"compute time --system x.yml --kernels k.csv -o ''", "--output: an empty path"},
  };
  for (const auto& [args, message] : cases) {
    const SimRun r = run_sim(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.output;
    EXPECT_EQ(r.output, "sim: error: " + message + ": give one, or leave the option out (sim --help lists the options)\n")
        << args;
  }
  EXPECT_EQ(run_sim(run).code, 0);
}

TEST(CliMessages, TheRunHeaderGivesTheJobsRanksAndThoseSimulated) {
  // tp=4 x dp=2: 8 ranks, the 2 identical replicas folded into one.
  const SimRun r = run_sim("--workload 'gen:transformer?model=llama3-8b&seq=256&parallel=tp=4,pp=1,dp=2&global-batch=2'"
                           " --network " + shipped_config("switch8.yml"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find(" (8 ranks, 4 simulated)\n"), std::string::npos) << r.output;
}

}  // namespace
// The reason a run cannot start is the first one that holds, in the user's
// terms: too many ranks before NCCL's per-node balance, a --system path that
// is not there before a missing network, a key without its value, the
// send_recv a user wrote (not the all-to-all whose keys it shares), links
// below every channel speed NCCL's search tries.
class CliReasons : public testing::TempFolderTest {};

TEST_F(CliReasons, TheFirstReasonThatHoldsInTheUsersTerms) {
  ASSERT_EQ(run_sim("system gen dgx-h100 --nodes 1 -o " + path("h1")).code, 0);
  const std::string w8 = "--workload 'gen:collectives?npus=8&coll=allreduce&size=1MiB' ";
  const std::pair<std::string, std::string> cases[] = {
      {"--workload 'gen:collectives?npus=9&coll=allreduce&size=1MiB' --system " + path("h1"),
       "sim: error: the workload has 9 ranks but the network has only 8 NPUs\n"},
      {w8 + "--system " + path("h1_typo"), "sim: error: --system " + path("h1_typo") + ": no such file or folder\n"},
      {w8 + "--system " + path("h1") + " --collective allreduce=nccl:algo",
       "sim: error: --collective allreduce=nccl:algo: collective algorithm 'nccl:algo': 'algo' has no value: write "
       "nccl:algo=<value>\n"},
      {"--workload 'gen:collectives?npus=1&coll=broadcast&size=1MiB' --system " + path("h1") +
           " --collective broadcast=nccl:algo=nvlstree",
       "sim: error: --collective broadcast=nccl:algo=nvlstree: collective algorithm 'nccl:algo=nvlstree': "
       "nccl:algo=nvlstree for BROADCAST is not simulated on any group (docs/nccl.md)\n"},
  };
  for (const auto& [args, message] : cases) {
    const SimRun r = run_sim(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.output, message) << args;
  }
  // Refused once a group runs it (two nodes without SHARP): where the choice was read, as the user wrote it.
  ASSERT_EQ(run_sim("system gen dgx-h100 --nodes 2 -o " + path("h2")).code, 0);
  const SimRun nvls = run_sim("--workload 'gen:collectives?npus=16&coll=allreduce&size=1MiB' --network " +
                              path("h2/network.yml") + " --system " +
                              write("s2.yml", "collective:\n  algorithms:\n    all_reduce: nccl:algo=nvls\n"));
  EXPECT_EQ(nvls.code, 2);
  EXPECT_EQ(nvls.output.rfind("sim: error: " + path("s2.yml") + ":3: 'collective.algorithms.all_reduce': collective "
                              "algorithm 'nccl:algo=nvls': nccl:algo=nvls on 2 nodes needs the network to reduce",
                              0),
            0u)
      << nvls.output;
  const SimRun collnet = run_sim("--workload 'gen:collectives?npus=16&coll=allgather&size=1MiB' --system " +
                                 path("h2") + " --collective allgather=nccl:algo=collnet");
  EXPECT_NE(collnet.output.find("nccl:algo=collnet for ALL_GATHER is not simulated"), std::string::npos)
      << collnet.output;
  const SimRun p2p = run_sim(w8 + "--system " + path("h1") + " --collective send_recv=nccl:algo=ring");
  EXPECT_EQ(p2p.code, 2);
  EXPECT_NE(p2p.output.find("algo does not apply to send_recv"), std::string::npos) << p2p.output;
  const std::string only_system = path("only_system");
  std::filesystem::create_directories(only_system);
  std::filesystem::copy_file(path("h1/system.yml"), only_system + "/system.yml");
  EXPECT_EQ(run_sim(w8 + "--system " + only_system).output,
            "sim: error: --workload needs --network <topology.yml> (the --system folder " + only_system +
                " holds no network.yml)\n");
  const SimRun slow = run_sim(w8 + "--network " + write("eth.yml", "shape: Switch\nnpus: 8\nbandwidth: 25Gbps\nlatency: 1us\n") +
                              " --collective allreduce=nccl");
  EXPECT_EQ(slow.code, 2);
  EXPECT_NE(slow.output.find("no channel of NCCL's search fits this group's links (GPU 2.575 GB/s, below NCCL's "
                             "slowest channel speed, 3 GB/s)"),
            std::string::npos)
      << slow.output;
}

}  // namespace sim
