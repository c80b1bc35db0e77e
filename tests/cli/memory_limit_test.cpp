// A trace larger than memory fails with a clear message and exit 2, never the
// OOM killer or a crash (docs/reliability.md). The runs
// get a small address space with `ulimit -v` so the tests do not depend on
// how much RAM the machine has.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../common/run_sim.h"
#include "../common/temp_workload.h"

namespace sim {
namespace {

using testing::SimRun;

class MemoryLimit : public testing::TempWorkload {
 protected:
  // `sim args` under an address-space limit of `kib` KiB.
  static SimRun run_limited(std::uint64_t kib, const std::string& args) {
    return testing::run_shell("ulimit -v " + std::to_string(kib) + "; ulimit -c 0; exec " + std::string(SIM_BINARY) +
                              " " + args + " 2>&1");
  }
  static std::string ring8() { return std::string(SIM_SOURCE_DIR) + "/configs/ring8.yml"; }
};

TEST_F(MemoryLimit, TraceLargerThanTheAddressSpaceIsRefusedBeforeLoading) {
#if defined(SIM_SANITIZED)
  // The sanitizer build's sim reserves terabytes of shadow address space at
  // start-up, which any `ulimit -v` forbids; the Release suite runs this test.
  GTEST_SKIP() << "AddressSanitizer cannot start under ulimit -v";
#endif
  // An 8 GiB trace (sparse: nothing is ever read) under a 2 GiB address space.
  std::filesystem::create_directories(path("big"));
  { std::ofstream(path("big/w.0.et")); }
  std::filesystem::resize_file(path("big/w.0.et"), std::uint64_t{8} << 30);
  const SimRun r = run_limited(2u << 20, "--workload " + path("big") + " --network " + ring8());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sim: error: " + path("big/w.0.et") + ": the workload is too large for the memory available"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("needs at least 9421 MiB"), std::string::npos) << r.output;  // 8 GiB x 1.15
  EXPECT_NE(r.output.find("RLIMIT_AS"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
}

TEST_F(MemoryLimit, JsonTraceThatExhaustsMemoryWhileParsedIsExit2) {
#if defined(SIM_SANITIZED)
  GTEST_SKIP() << "AddressSanitizer cannot start under ulimit -v";
#endif
  // A million-node JSON trace (109 MB) passes the check before loading
  // (JSON counts little graph per byte) but its DOM takes several times its
  // size: under 448 MiB of address space memory runs out inside the JSON
  // reader, which used to abort (nlohmann's destructor allocates).
  const std::string trace = path("big.0.et");
  {
    std::ofstream out(trace);
    out << "{\"metadata\": {\"version\": \"0.0.4\"}, \"nodes\": [\n";
    constexpr int kNodes = 1000000;
    for (int i = 0; i < kNodes; ++i) {
      out << "{\"id\": \"" << i << "\", \"name\": \"layer" << i << "\", \"type\": \"COMP_NODE\", "
          << "\"durationMicros\": \"1\"" << (i ? ", \"dataDeps\": [\"" + std::to_string(i - 1) + "\"]" : "")
          << (i + 1 < kNodes ? "},\n" : "}\n");
    }
    out << "]}\n";
  }
  const SimRun r = run_limited(448u << 10, "--workload " + path("big") + " --network " + ring8());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sim: error: out of memory while reading " + trace + ": "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("terminate"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
}

// chunks= multiplies the ops a collective holds at once: a direct
// all-reduce of 400,000 chunks on 8 ranks starts 67.2 M of them (8.7 GB and
// 49 s unlimited). Under 1 GiB it is refused before any is issued, naming the
// choice, the chunks, the estimate and what is available; 4 chunks still run.
TEST_F(MemoryLimit, ChunksWhoseOpsCannotFitAreRefusedBeforeTheyAreIssued) {
#if defined(SIM_SANITIZED)
  GTEST_SKIP() << "AddressSanitizer cannot start under ulimit -v";
#endif
  const std::string args = "--workload 'gen:collectives?npus=8&coll=allreduce&size=1GiB' --network " +
                           std::string(SIM_SOURCE_DIR) + "/configs/switch8.yml --collective allreduce=direct:chunks=";
  SimRun r = run_limited(1u << 20, args + "400000");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--collective allreduce=direct:chunks=400000: collective algorithm 'direct:chunks=400000': "
                          "400000 chunks on 8 ranks hold 67200000 ops at once when the ALL_REDUCE starts (each "
                          "rank's messages in flight and posted receives), at 50 B each at least 3204 MiB, but only "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("RLIMIT_AS"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("use fewer chunks"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("out of memory"), std::string::npos) << r.output;
  r = run_limited(1u << 20, args + "4");
  EXPECT_EQ(r.code, 0) << r.output;
}

}  // namespace
}  // namespace sim
