// A collective on a group of one rank costs what NCCL charges for nRanks == 1
// (system/collectives/one_member.h): nothing in place, a device copy of the
// buffer (2 x bytes at the GPU's memory bandwidth) out of place, whatever
// native algorithm is chosen.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "../common/run_sim.h"
#include "../common/temp_folder.h"

namespace sim {
namespace {

using testing::run_sim;
using testing::SimRun;
using testing::shipped_config;

class OneMember : public testing::TempFolderTest {
 protected:
  // Runs one 1 MiB collective of `coll` on one rank with `algorithm`, on a GPU
  // of 2 TB/s; returns the "simulated time:" line.
  std::string simulated(const std::string& coll, const std::string& algorithm) {
    const SimRun gen = run_sim("workload gen collectives --npus 1 --coll " + coll + " --size 1MiB -o " + path("w/one"));
    EXPECT_EQ(gen.code, 0) << gen.output;
    const std::string key = coll == "allgather" ? "all_gather" : coll == "allreduce" ? "all_reduce" : "reduce_scatter";
    std::ofstream(path("sys.yml")) << "compute:\n  peak_tflops: 1000\n  memory_bandwidth: 2TB/s\n"
                                      "collective:\n  algorithms: {"
                                   << key << ": '" << algorithm << "'}\n";
    const SimRun run = run_sim("--workload " + path("w/one") + " --network " + shipped_config("switch8.yml") +
                               " --system " + path("sys.yml"));
    EXPECT_EQ(run.code, 0) << algorithm << " " << coll << ": " << run.output;
    const std::size_t at = run.output.find("simulated time:");
    return at == std::string::npos ? run.output : run.output.substr(at, run.output.find('\n', at) - at);
  }
};

TEST_F(OneMember, NcclCopiesOutOfPlaceAndReturnsAtOnceInPlace) {
  // 2 x 1,048,576 B at 2e12 B/s = 1.048576 us.
  EXPECT_EQ(simulated("allgather", "nccl"), "simulated time: 1.048576 us (1048.576 ns)");
  EXPECT_EQ(simulated("reducescatter", "nccl"), "simulated time: 1.048576 us (1048.576 ns)");
  EXPECT_EQ(simulated("allreduce", "nccl"), "simulated time: 0 ps (0 ns)");
}

TEST_F(OneMember, EveryNativeAlgorithmCostsTheSame) {
  for (const char* algorithm : {"ring", "direct", "halvingDoubling", "hierarchical:ring"}) {
    EXPECT_EQ(simulated("allgather", algorithm), "simulated time: 1.048576 us (1048.576 ns)") << algorithm;
    EXPECT_EQ(simulated("allreduce", algorithm), "simulated time: 0 ps (0 ns)") << algorithm;
  }
  EXPECT_EQ(simulated("allreduce", "doubleBinaryTree"), "simulated time: 0 ps (0 ns)");
}

// A 1-GPU job on the dgx-a100 preset (NCCL, HBM at 2,039 GB/s):
// 2 x 1,048,576 B / 2.039e12 B/s = 1.02852 us.
TEST_F(OneMember, OneGpuOnTheNcclPreset) {
  ASSERT_EQ(run_sim("system gen dgx-a100 --nodes 1 -o " + path("a100")).code, 0);
  ASSERT_EQ(run_sim("workload gen collectives --npus 1 --coll allgather --size 1MiB -o " + path("w/one")).code, 0);
  const SimRun run = run_sim("--workload " + path("w/one") + " --system " + path("a100"));
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("simulated time: 1.02852 us (1028.52 ns)\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("[nccl (one rank)]"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace sim
