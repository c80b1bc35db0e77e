// `sim plot` and `sim compare --plot` write PNGs through scripts/plot_results.py.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "workflows/sweep_fixture.h"

namespace sim::testing {
namespace {

bool have_matplotlib() { return std::system("/usr/bin/python3 -c 'import matplotlib' > /dev/null 2>&1") == 0; }

bool is_png(const std::string& path) { return slurp(path).rfind("\x89PNG\r\n", 0) == 0; }

TEST(Plot, SweepResultsAndCompareOverlayArePngs) {
  if (!have_matplotlib()) GTEST_SKIP() << "python3-matplotlib not installed";
  TempDir tmp("sweep_plot");
  const std::string spec = source_path("configs/sweeps/bandwidth_size.yml");
  ASSERT_EQ(run_sim("sweep " + spec + " -q -o " + (tmp / "out")).code, 0);
  const SimRun plot = run_sim("plot " + (tmp / "out") + " -o " + (tmp / "busbw.png"));
  ASSERT_EQ(plot.code, 0) << plot.output;
  EXPECT_TRUE(is_png(tmp / "busbw.png"));
  const std::string csv = tmp / "out/results.csv";
  const SimRun compare = run_sim("compare " + csv + " " + csv + " --plot " + (tmp / "overlay.png"));
  ASSERT_EQ(compare.code, 0) << compare.output;
  EXPECT_TRUE(is_png(tmp / "overlay.png"));
  // Only the PNGs are left: no overlay CSV, no temporary image.
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 2u);
  // A missing input is one line naming it, not a Python traceback.
  const SimRun absent = run_sim("plot " + (tmp / "absent.csv") + " -o " + (tmp / "x.png"));
  EXPECT_EQ(absent.code, 2);
  EXPECT_NE(absent.output.find("absent.csv: no such file"), std::string::npos) << absent.output;
  EXPECT_EQ(absent.output.find("Traceback"), std::string::npos) << absent.output;
  const SimRun no_csv = run_sim("plot " + tmp.path().string() + " -o " + (tmp / "x.png"));
  EXPECT_EQ(no_csv.code, 2);
  EXPECT_NE(no_csv.output.find("the folder holds no results.csv"), std::string::npos) << no_csv.output;
  // One panel per bandwidth, log busbw, and time relative to the analytical backend.
  const SimRun facet = run_sim("plot " + (tmp / "out") + " --facet network.bandwidth --style backend --log -o " + (tmp / "facet.png"));
  ASSERT_EQ(facet.code, 0) << facet.output;
  EXPECT_TRUE(is_png(tmp / "facet.png"));
  const SimRun ratio =
      run_sim("plot " + (tmp / "out") + " --metric time --baseline backend=analytical -o " + (tmp / "ratio.png"));
  ASSERT_EQ(ratio.code, 0) << ratio.output;
  EXPECT_TRUE(is_png(tmp / "ratio.png"));
  const SimRun bad = run_sim("plot " + (tmp / "out") + " --facet nosuch -o " + (tmp / "bad.png"));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("--facet nosuch: not an axis"), std::string::npos) << bad.output;
}

// The image goes where sim's own outputs go (core/output_file.h): through a
// symlink to its target, straight into a FIFO or a device. It was renamed
// over the path: the link replaced by a file, a FIFO's reader left waiting,
// and, as root, /dev/null replaced by a PNG file.
TEST(Plot, ALinkIsFollowedAndAFifoIsWrittenDirectly) {
  if (!have_matplotlib()) GTEST_SKIP() << "python3-matplotlib not installed";
  TempDir tmp("plot_targets");
  const std::string results = source_path("examples/reference/bandwidth_size.csv");
  std::filesystem::create_symlink("target.png", tmp / "link.png");
  const SimRun link = run_sim("plot " + results + " -o " + (tmp / "link.png"));
  ASSERT_EQ(link.code, 0) << link.output;
  EXPECT_TRUE(std::filesystem::is_symlink(tmp / "link.png"));
  EXPECT_TRUE(is_png(tmp / "target.png"));
  const std::string fifo = tmp / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& command : {"plot " + results + " -o " + fifo, "compare " + results + " " + results + " --plot " + fifo}) {
    std::filesystem::remove(tmp / "read.png");
    // A reader that gives up after 60 s, so a failure cannot hang the test.
    const SimRun run = run_shell("(timeout 60 cat " + fifo + " > " + (tmp / "read.png") + " &) ; " +
                                 std::string(SIM_BINARY) + " " + command + " > /dev/null 2>&1; echo $?; wait");
    EXPECT_EQ(run.output, "0\n") << command;
    for (int i = 0; i < 100 && !is_png(tmp / "read.png"); ++i) ::usleep(50'000);  // the reader's last write
    EXPECT_TRUE(is_png(tmp / "read.png")) << command;
    struct stat st {};
    ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode)) << command;
  }
}

// Errors speak as the command typed (`sim plot: error: ...`), one line, exit 2:
// never the script's own name, a usage block of its options, or a traceback.
TEST(Plot, ErrorsSpeakAsSimPlot) {
  if (!have_matplotlib()) GTEST_SKIP() << "python3-matplotlib not installed";
  TempDir tmp("plot_errors");
  const std::string results = source_path("examples/reference/bandwidth_size.csv");
  const auto expect_error = [](const SimRun& run, const std::string& message) {
    EXPECT_EQ(run.code, 2) << run.output;
    EXPECT_NE(run.output.find(message), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("plot_results"), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("Traceback"), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("usage:"), std::string::npos) << run.output;
  };
  expect_error(run_sim("plot " + (tmp / "absent.csv") + " -o " + (tmp / "x.png")),
               "sim plot: error: " + (tmp / "absent.csv") + ": no such file");
  // A sweep whose points all failed has nothing to draw.
  spit(tmp / "failed.csv",
       "point,size,status,exit_code,npus,sim_time_ns,collective,bytes,group_size,algorithm,ranks,time_ns,algbw_gbps,"
       "busbw_gbps,message\n0,1MiB,failed,2,0,,,,,,,,,,bad network\n");
  expect_error(run_sim("plot " + (tmp / "failed.csv") + " -o " + (tmp / "x.png")),
               "sim plot: error: " + (tmp / "failed.csv") + ": no point ran a collective");
  expect_error(run_sim("plot " + results + " --baseline analytical -o " + (tmp / "x.png")),
               "sim plot: error: --baseline analytical: expected AXIS=VALUE");
  // A baseline on an axis no series carries divided every series by itself: a flat 1, exit 0.
  expect_error(run_sim("plot " + results + " --metric time --baseline size=1MiB -o " + (tmp / "x.png")),
               "sim plot: error: --baseline size=1MiB: size is the x axis; give AXIS=VALUE of one of: --collective, "
               "backend, network.bandwidth");
  expect_error(run_sim("plot " + results + " --baseline nosuch=1 -o " + (tmp / "x.png")),
               "sim plot: error: --baseline nosuch=1: not an axis the series differ by; give AXIS=VALUE of one of: "
               "--collective, backend, network.bandwidth");
  expect_error(run_sim("plot " + results + " --facet backend --baseline backend=flow -o " + (tmp / "x.png")),
               "sim plot: error: --baseline backend=flow: the --facet axis (one value per panel); give AXIS=VALUE of "
               "one of: --collective, network.bandwidth");
  expect_error(run_sim("plot " + results + " -o " + (tmp / "no/such/folder/x.png")),
               "sim plot: error: -o " + (tmp / "no/such/folder/x.png") + ": cannot write it");
  const SimRun metric = run_sim("plot " + results + " --metric bogus -o " + (tmp / "x.png"));
  EXPECT_EQ(metric.code, 2) << metric.output;
  EXPECT_NE(metric.output.find("sim: error: --metric: bogus not in {busbw,time,makespan}"), std::string::npos)
      << metric.output;
  // `sim compare --plot` at a path it cannot write: refused before any row is
  // compared (it was the script's "-o DIR: cannot write it" after them all).
  std::filesystem::create_directories(tmp / "dir");
  const SimRun folder = run_sim("compare " + results + " " + results + " --plot " + (tmp / "dir"));
  EXPECT_EQ(folder.code, 2) << folder.output;
  EXPECT_EQ(folder.output, "sim: error: --plot: cannot write '" + (tmp / "dir") + "': it is a folder; give a file name\n");
  const SimRun missing = run_sim("compare " + results + " " + results + " --plot " + (tmp / "no/x.png"));
  EXPECT_EQ(missing.code, 2) << missing.output;
  EXPECT_EQ(missing.output, "sim: error: --plot: cannot write '" + (tmp / "no/x.png") + "': folder '" + (tmp / "no") +
                                "' does not exist\n");
  std::filesystem::remove(tmp / "dir");
  // Nothing written by any of them.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(tmp.path()), std::filesystem::directory_iterator()), 1);
}

}  // namespace
}  // namespace sim::testing
