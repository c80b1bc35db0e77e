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
const auto configs = testing::shipped_config;

class OneMember : public testing::TempFolderTest {
 protected:
  // Runs one 1 MiB collective of `coll` on one rank with `algorithm` for every
  // type, on a GPU of 2 TB/s; returns the "simulated time:" line.
  std::string simulated(const std::string& coll, const std::string& algorithm) {
    const SimRun gen = run_sim("workload gen collectives --npus 1 --coll " + coll + " --size 1MiB -o " + path("w/one"));
    EXPECT_EQ(gen.code, 0) << gen.output;
    std::ofstream(path("sys.yml")) << "compute:\n  peak_tflops: 1000\n  memory_bandwidth: 2TB/s\n"
                                      "collective:\n  algorithms: {all_reduce: '"
                                   << algorithm << "', all_gather: '" << algorithm << "', reduce_scatter: '" << algorithm
                                   << "', all_to_all: '" << algorithm << "'}\n";
    const SimRun run = run_sim("--workload " + path("w/one") + " --network " + configs("switch8.yml") + " --system " +
                               path("sys.yml"));
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
  for (const char* algorithm : {"ring", "direct", "halvingDoubling", "doubleBinaryTree", "hierarchical:ring"}) {
    EXPECT_EQ(simulated("allgather", algorithm), "simulated time: 1.048576 us (1048.576 ns)") << algorithm;
    EXPECT_EQ(simulated("allreduce", algorithm), "simulated time: 0 ps (0 ns)") << algorithm;
  }
}

}  // namespace
}  // namespace sim
