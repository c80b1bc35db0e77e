// A sweep walks sizes over rank counts: a reduce-scatter's or all-to-all's
// size that does not split over a point's ranks is rounded down as nccl-tests
// rounds it, and the row's `bytes` is the size that ran; a size that rounds
// to 0 B fails its point alone (exit 2). The same for a microbenchmark given
// as a gen:collectives query whose keys are axes.
#include <gtest/gtest.h>

#include "workflows/sweep_fixture.h"

namespace sim::testing {
namespace {

const char* const kColumns[] = {"status",     "npus",      "sim_time_ns", "collective", "bytes",
                                "group_size", "algorithm", "time_ns",     "busbw_gbps"};

TEST(SweepSizes, SizesThatDoNotSplitRoundDownAsNcclTestsAndARowSaysWhatRan) {
  TempDir tmp("sweep_uneven");
  const std::string net = source_path("configs/switch8.yml");
  spit(tmp / "mb.yml",
       "base:\n  microbenchmark: {npus: 8, collectives: [reducescatter, alltoall, allgather]}\n"
       "  network: " +
           net + "\naxes:\n  npus: [6, 8]\n  size: [1MiB, 5B]\n");
  spit(tmp / "gen.yml",
       "base:\n  workload: 'gen:collectives?npus=8&coll=reducescatter,alltoall,allgather'\n"
       "  network: " +
           net + "\naxes:\n  workload.npus: [6, 8]\n  workload.size: [1MiB, 5B]\n");
  // What the 6-rank point runs, given exactly.
  spit(tmp / "exact.yml",
       "base:\n  microbenchmark: {npus: 6, collectives: [reducescatter, alltoall]}\n"
       "  network: " +
           net + "\naxes:\n  size: [1048572B]\n");
  const SimRun mb_run = run_sim("sweep " + (tmp / "mb.yml") + " -q -o " + (tmp / "mb"));
  EXPECT_EQ(mb_run.code, 4) << mb_run.output;  // the 5 B points fail, the others run
  const SimRun gen_run = run_sim("sweep " + (tmp / "gen.yml") + " -q -o " + (tmp / "gen"));
  EXPECT_EQ(gen_run.code, 4) << gen_run.output;
  ASSERT_EQ(run_sim("sweep " + (tmp / "exact.yml") + " -q -o " + (tmp / "exact")).code, 0);
  const auto mb = csv_rows(tmp / "mb/results.csv");
  const auto gen = csv_rows(tmp / "gen/results.csv");
  const auto exact = csv_rows(tmp / "exact/results.csv");
  // 6 ranks at 1 MiB: 3 rows, a failed 5 B point, then 8 ranks likewise.
  ASSERT_EQ(mb.size(), 8u);
  ASSERT_EQ(gen.size(), mb.size());
  ASSERT_EQ(exact.size(), 2u);
  const char* const bytes[] = {"1048572", "1048572", "1048576", "", "1048576", "1048576", "1048576", ""};
  for (std::size_t i = 0; i < mb.size(); ++i) {
    for (const char* column : kColumns) EXPECT_EQ(gen[i].at(column), mb[i].at(column)) << "row " << i << " " << column;
    if (i == 3 || i == 7) {
      EXPECT_EQ(mb[i].at("status"), "failed");
      EXPECT_EQ(mb[i].at("exit_code"), "2");
      const std::string n = i == 3 ? "6" : "8";
      EXPECT_NE(mb[i].at("message").find("size 5 B: REDUCE_SCATTER on " + n + " ranks needs a multiple of " + n + " B"),
                std::string::npos)
          << mb[i].at("message");
      EXPECT_NE(mb[i].at("message").find("nccl-tests' rounding down leaves 0 B: give at least " + n + " B"),
                std::string::npos)
          << mb[i].at("message");
      continue;
    }
    EXPECT_EQ(mb[i].at("status"), "ok");
    EXPECT_EQ(mb[i].at("bytes"), bytes[i]) << "row " << i;
  }
  // The rounded rows are the runs of the size that ran.
  for (std::size_t i = 0; i < exact.size(); ++i) {
    for (const char* column : {"collective", "bytes", "time_ns", "busbw_gbps"}) {
      EXPECT_EQ(mb[i].at(column), exact[i].at(column)) << "row " << i << " " << column;
    }
  }
}

}  // namespace
}  // namespace sim::testing
