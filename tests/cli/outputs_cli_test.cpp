// The `sim` binary's outputs: interrupted runs leave no temporary file and
// earlier reports intact; "-" is stdout; a device is written, not replaced;
// the Perfetto timeline holds one slice per node.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "../common/run_sim.h"
#include "../common/temp_folder.h"
#include "perfetto_trace.pb.h"

namespace sim {
namespace {

namespace fs = std::filesystem;
using testing::run_sim;
using testing::SimRun;
using testing::shipped_config;

class OutputsCli : public testing::TempFolderTest {
 protected:
  void SetUp() override {
    TempFolderTest::SetUp();
    fs::create_directories(dir_ / "out");
  }
  std::vector<std::string> outputs() const { return entries(dir_ / "out"); }
  // 2 ranks x `nodes` chained COMP nodes.
  std::string chain(int nodes) const {
    const SimRun g = run_sim("workload gen chain --npus 2 --nodes " + std::to_string(nodes) + " -o " + path("wl/w"));
    EXPECT_EQ(g.code, 0) << g.output;
    return path("wl/w");
  }

  // Runs sim with a timeline into a FIFO this test holds open but does not
  // read: once the pipe is full the run blocks mid-simulation, with its
  // report's temporary file open. Then sends `sig` and returns the status.
  int interrupted_run(int sig) {
    const std::string workload = chain(20000);
    std::ofstream(path("out/r.json")) << "earlier report";
    std::ofstream(path("out/earlier.csv")) << "earlier csv";
    ::chmod(path("out/r.json").c_str(), 0600);
    const std::string fifo = path("out/t.json");
    EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    EXPECT_GE(reader, 0);
    const pid_t child = ::fork();
    if (child == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      const std::string report = path("out/r.json"), csv = path("out/c.csv"), net = shipped_config("ring8.yml");
      ::execl(SIM_BINARY, SIM_BINARY, "--workload", workload.c_str(), "--network", net.c_str(), "--report",
              report.c_str(), "--csv", csv.c_str(), "--timeline", fifo.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Wait until the pipe is full (the run is blocked writing the timeline).
    int queued = 0;
    for (int i = 0; i < 3000 && queued < 65536; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      ::ioctl(reader, FIONREAD, &queued);
    }
    EXPECT_GE(queued, 65536) << "the run never filled the timeline pipe";
    const std::vector<std::string> during = outputs();
    EXPECT_EQ(during.size(), 5u) << "expected r.json, earlier.csv, t.json and two temporary files";
    ::kill(child, sig);
    int status = 0;
    EXPECT_EQ(::waitpid(child, &status, 0), child);
    ::close(reader);
    return status;
  }

};

// A shell reports 143 after SIGTERM, 130 after Ctrl-C (SIGINT).
TEST_F(OutputsCli, SignalsLeaveNoTemporaryFileAndEarlierReportsIntact) {
  for (const int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(strsignal(sig));
    TearDown();
    SetUp();
    const int status = interrupted_run(sig);
    ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_EQ(outputs(), (std::vector<std::string>{"earlier.csv", "r.json", "t.json"}));
    EXPECT_EQ(read(path("out/r.json")), "earlier report");
    EXPECT_EQ(read(path("out/earlier.csv")), "earlier csv");
  }
}

TEST_F(OutputsCli, FailedRunLeavesNoTemporaryFile) {
  std::ofstream(path("out/r.json")) << "earlier report";
  const SimRun r = run_sim("--workload " + path("absent/w") + " --network " + shipped_config("ring8.yml") +
                           " --report " + path("out/r.json") + " --timeline " + path("out/t.pftrace"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_EQ(outputs(), std::vector<std::string>{"r.json"});
  EXPECT_EQ(read(path("out/r.json")), "earlier report");
}

TEST_F(OutputsCli, DashWritesTheReportToStdoutAndTheSummaryToStderr) {
  const std::string w = chain(3);
  const std::string cmd = std::string(SIM_BINARY) + " --workload " + w + " --network " + shipped_config("ring8.yml") +
                          " --report - 2>" + path("err.txt");
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0);
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["ranks"].size(), 2u);
  EXPECT_NE(read(path("err.txt")).find("simulated time:"), std::string::npos);
}

TEST_F(OutputsCli, DevNullStaysADevice) {
  const SimRun r = run_sim("-q --report /dev/null --csv /dev/null --timeline /dev/null");
  EXPECT_EQ(r.code, 0) << r.output;
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(OutputsCli, ReportIntoAFolderIsExit2) {
  const SimRun r = run_sim("-q --report " + path("out"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("is a folder"), std::string::npos) << r.output;
}

TEST_F(OutputsCli, PerfettoTimelineHasOneSlicePerNode) {
  const std::string w = chain(50);
  const SimRun r = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " -q --timeline " +
                           path("out/t.pftrace") + " --timeline-ranks 1");
  ASSERT_EQ(r.code, 0) << r.output;
  perfetto::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(read(path("out/t.pftrace"))));
  int begins = 0, ends = 0;
  std::uint64_t last_end = 0;
  for (const auto& p : trace.packet()) {
    if (!p.has_track_event()) continue;
    if (p.track_event().type() == perfetto::TrackEvent::TYPE_SLICE_BEGIN) ++begins;
    if (p.track_event().type() == perfetto::TrackEvent::TYPE_SLICE_END) {
      ++ends;
      last_end = std::max(last_end, p.timestamp());
    }
  }
  EXPECT_EQ(begins, 50);  // rank 1 only
  EXPECT_EQ(ends, 50);
  EXPECT_EQ(last_end, 50u * 10'000);  // 50 nodes of the generator's default 10 us
  EXPECT_EQ(outputs(), std::vector<std::string>{"t.pftrace"});
}

TEST_F(OutputsCli, BadTimelineOptionsAreExit2BeforeTheRun) {
  const SimRun r = run_sim("-q --timeline " + path("out/t.pftrace") + " --timeline-window 5ms");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--timeline-window '5ms'"), std::string::npos) << r.output;
  EXPECT_TRUE(outputs().empty());
}

// Ranks the run does not have: an empty timeline used to be written, exit 0.
TEST_F(OutputsCli, TimelineRanksPastTheRunAreExit2BeforeTheRun) {
  const std::string w = chain(5);
  for (const auto& [ranks, absent] : {std::pair<const char*, const char*>{"2", "2"}, {"0-2", "2"}, {"1,5-9", "5"}}) {
    const SimRun r = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " -q --report " +
                             path("out/r.json") + " --timeline " + path("out/t.json") + " --timeline-ranks " + ranks);
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find(std::string("sim: error: --timeline-ranks '") + ranks + "': rank " + absent +
                            " is not in the run, which has 2 ranks (0..1)"),
              std::string::npos)
        << r.output;
    EXPECT_TRUE(outputs().empty()) << ranks;
  }
  EXPECT_EQ(run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " -q --timeline " +
                    path("out/t.json") + " --timeline-ranks 0-1")
                .code,
            0);
}

// An empty rank list read as every rank; a window past the run's end wrote
// an empty timeline without a word.
TEST_F(OutputsCli, AnEmptyRankListIsExit2AndAnEmptyTimelineIsWarned) {
  const std::string w = chain(5);
  const SimRun empty = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " -q --timeline " +
                               path("out/t.json") + " --timeline-ranks ''");
  EXPECT_EQ(empty.code, 2) << empty.output;
  EXPECT_NE(empty.output.find("an empty list"), std::string::npos) << empty.output;
  EXPECT_TRUE(outputs().empty());
  const SimRun late = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " -q --timeline " +
                              path("out/t.json") + " --timeline-window 100s:200s");
  EXPECT_EQ(late.code, 0) << late.output;
  EXPECT_NE(late.output.find("sim: warning: the timeline " + path("out/t.json") +
                             " holds no node run: none overlaps --timeline-window '100s:200s' (the run ends at "),
            std::string::npos)
      << late.output;
  const SimRun kept = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " -q --timeline " +
                              path("out/t.json") + " --timeline-window 0s:200s");
  EXPECT_EQ(kept.code, 0) << kept.output;
  EXPECT_EQ(kept.output.find("holds no node run"), std::string::npos) << kept.output;
}

// Each output its own file: two on one path lost one of them with exit 0.
TEST_F(OutputsCli, TwoOutputsOnOnePathAreExit2) {
  std::ofstream(path("out/r.json")) << "earlier report";
  SimRun r = run_sim("-q --report " + path("out/r.json") + " --csv " + path("out/../out/r.json"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sim: error: --report and --csv both name '" + path("out/../out/r.json") +
                          "': one would replace the other; give each output a file of its own"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(read(path("out/r.json")), "earlier report");
  // A hard link is the same file.
  fs::create_hard_link(path("out/r.json"), path("out/h.json"));
  r = run_sim("-q --link-stats " + path("out/h.json") + " --timeline " + path("out/r.json"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--link-stats and --timeline both name"), std::string::npos) << r.output;
  r = run_sim("-q --report - --timeline -");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sim: error: --report and --timeline both write to standard output ('-'), where they would "
                          "interleave: give one of them a file"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(outputs(), (std::vector<std::string>{"h.json", "r.json"}));
}

// Paths that do not exist yet were compared as written: "r.json" and
// "./r.json" from the folder they name, or a dangling symlink and its target,
// passed as two files, and the CSV replaced the report with exit 0.
TEST_F(OutputsCli, TwoOutputsOnOneFileNotYetWrittenAreExit2WhateverTheSpelling) {
  const std::string in_out = "cd " + path("out") + " && " + SIM_BINARY + " -q ";
  SimRun r = testing::run_shell(in_out + "--report r.json --csv ./r.json 2>&1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sim: error: --report and --csv both name './r.json': one would replace the other"),
            std::string::npos)
      << r.output;
  r = testing::run_shell(in_out + "--report r.json --link-stats missing/../r.json 2>&1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--report and --link-stats both name 'missing/../r.json'"), std::string::npos) << r.output;
  fs::create_symlink("t.json", path("out/link.json"));  // dangling: writing it creates t.json
  r = testing::run_shell(in_out + "--report link.json --timeline t.json 2>&1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--report and --timeline both name 't.json'"), std::string::npos) << r.output;
  EXPECT_EQ(outputs(), (std::vector<std::string>{"link.json"}));
  // Distinct files in one folder still run.
  r = testing::run_shell(in_out + "--report r.json --csv ./c.csv 2>&1");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(outputs(), (std::vector<std::string>{"c.csv", "link.json", "r.json"}));
}

// An empty path wrote nothing with exit 0; the timeline's options without a
// timeline, and --strict-deps without --ctrl-deps, changed nothing.
TEST_F(OutputsCli, AnEmptyPathAndOptionsWithoutTheirOutputAreExit2) {
  for (const char* option : {"--report", "--csv", "--link-stats", "--timeline"}) {
    const SimRun r = run_sim(std::string("-q ") + option + " ''");
    EXPECT_EQ(r.code, 2) << option << r.output;
    EXPECT_NE(r.output.find(std::string("sim: error: ") + option +
                            ": an empty path: give a file name, or - for standard output"),
              std::string::npos)
        << r.output;
  }
  for (const char* option : {"--timeline-ranks 0", "--timeline-window 1ms:", "--timeline-format json"}) {
    const SimRun r = run_sim(std::string("-q ") + option);
    EXPECT_EQ(r.code, 2) << option << r.output;
    EXPECT_NE(r.output.find(std::string(option).substr(0, std::string(option).find(' ')) + " requires --timeline"),
              std::string::npos)
        << r.output;
  }
  const SimRun r = run_sim("-q --strict-deps");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sim: error: --strict-deps requires --ctrl-deps"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace sim
