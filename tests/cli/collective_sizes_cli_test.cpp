// A microbenchmark size typed on the command line that a reduce-scatter or
// all-to-all cannot split over its ranks: exit 2 naming the option, the size,
// the ranks and the nearest sizes that split; no files written. An
// all-gather's (per-rank input) runs as given, and sizes that split run as
// given, to the picosecond.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../common/run_sim.h"
#include "../common/temp_folder.h"

namespace sim {
namespace {

using testing::run_sim;
using testing::SimRun;
using testing::shipped_config;

class CollectiveSizesCli : public testing::TempFolderTest {};

std::string query(int npus, const std::string& coll, const std::string& size) {
  return "--workload 'gen:collectives?npus=" + std::to_string(npus) + "&coll=" + coll + "&size=" + size + "'";
}

TEST_F(CollectiveSizesCli, AGeneratedWorkloadWhoseSizeDoesNotSplitIsExit2NamingTheNearestSizes) {
  const SimRun rs = run_sim(query(16, "reducescatter", "1000001") + " --network " + shipped_config("switch64.yml"));
  EXPECT_EQ(rs.code, 2) << rs.output;
  EXPECT_EQ(rs.output,
            "sim: error: gen:collectives: size 1000001 B: REDUCE_SCATTER on 16 ranks needs a multiple of 16 B (NCCL "
            "splits its buffer into 16 equal parts of 1-byte elements); the nearest sizes that split are 1000000 B "
            "and 1000016 B\n");
  const SimRun a2a = run_sim(query(16, "alltoall", "1000001") + " --network " + shipped_config("switch64.yml"));
  EXPECT_EQ(a2a.code, 2) << a2a.output;
  EXPECT_NE(a2a.output.find("ALL_TO_ALL on 16 ranks needs a multiple of 16 B"), std::string::npos) << a2a.output;
  const SimRun tiny = run_sim(query(8, "alltoall", "5") + " --network " + shipped_config("switch8.yml"));
  EXPECT_EQ(tiny.code, 2) << tiny.output;
  EXPECT_NE(tiny.output.find("; the nearest size that splits is 8 B\n"), std::string::npos) << tiny.output;
}

TEST_F(CollectiveSizesCli, WorkloadGenRefusesTheSizeAndWritesNothing) {
  const SimRun r =
      run_sim("workload gen collectives --npus 6 --coll allreduce,alltoall --size 1MiB -o " + path("wl/a2a"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_EQ(r.output,
            "sim: error: --size 1MiB (1048576 B): ALL_TO_ALL on 6 ranks needs a multiple of 6 B (NCCL splits its "
            "buffer into 6 equal parts of 1-byte elements); the nearest sizes that split are 1048572 B and "
            "1048578 B\n");
  EXPECT_FALSE(std::filesystem::exists(path("wl")));
}

TEST_F(CollectiveSizesCli, AnAllGatherRunsAtAnySizeItsPerRankInput) {
  const SimRun r = run_sim(query(16, "allgather", "1000001") + " --network " + shipped_config("switch64.yml"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("  ALL_GATHER 976.56 KiB (1000001 B) on 16 ranks [ring]"), std::string::npos) << r.output;
}

TEST_F(CollectiveSizesCli, SizesThatSplitRunAsGivenToThePicosecond) {
  const std::pair<const char*, const char*> cases[] = {
      {"reducescatter", "simulated time: 24.5 us (24500 ns)\n"},
      {"alltoall", "simulated time: 77 us (77000 ns)\n"},
      {"allgather", "simulated time: 147 us (147000 ns)\n"},
  };
  for (const auto& [coll, time] : cases) {
    const SimRun r = run_sim(query(8, coll, "1000000") + " --network " + shipped_config("switch8.yml"));
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find(time), std::string::npos) << coll << ": " << r.output;
    EXPECT_NE(r.output.find(" 976.56 KiB (1000000 B) on 8 ranks [ring] x8: "), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace sim
