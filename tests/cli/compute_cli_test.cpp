// `sim compute time`: rows written back with the prediction appended;
// bad input exits 2 naming file, line and column.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../common/run_sim.h"
#include "../common/temp_folder.h"

namespace sim {
namespace {

using sim::testing::run_sim;

class ComputeCli : public sim::testing::TempFolderTest {
 protected:
  void SetUp() override {
    TempFolderTest::SetUp();
    std::ofstream(path("gemm.csv")) << "op,dtype,m,n,k,time_us,tflops\n"
                                    << "gemm,bf16,512,512,512,15,1\ngemm,bf16,4096,4096,4096,190,1\n"
                                    << "gemm,bf16,512,4096,4096,30,1\ngemm,bf16,4096,512,512,20,1\n";
    std::ofstream(path("system.yml")) << "compute:\n  peak_tflops: 989\n  memory_bandwidth: 3.35TB/s\n"
                                      << "  kernels: gemm.csv\n";
  }
};

TEST_F(ComputeCli, RowsComeBackWithTheirPrediction) {
  const auto r = run_sim("compute time --system " + path("system.yml") + " --kernels " + path("gemm.csv") + " -o " +
                         path("out.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("4 rows (gemm): |predicted/measured - 1| median 0.0%, max 0.0%, 4 of 4 within 10%"),
            std::string::npos)
      << r.output;
  std::istringstream out(read(path("out.csv")));
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "op,dtype,m,n,k,time_us,tflops,predicted_us");
  std::getline(out, line);
  EXPECT_EQ(line, "gemm,bf16,512,512,512,15,1,15");
  std::getline(out, line);
  EXPECT_EQ(line, "gemm,bf16,4096,4096,4096,190,1,190");
  // The output reads again as a table; asking to append again is refused.
  const auto again = run_sim("compute time --system " + path("system.yml") + " --kernels " + path("out.csv"));
  EXPECT_EQ(again.code, 2) << again.output;
  EXPECT_NE(again.output.find("has a 'predicted_us' column already"), std::string::npos) << again.output;
}

TEST_F(ComputeCli, AttentionRowsGetForwardAndForwardBackward) {
  std::ofstream(path("attention.csv")) << "op,batch,heads,seq,head_dim,fwd_us,fwd_bwd_us\n"
                                       << "sdpa_causal,1,8,2048,128,30,240\n";
  const auto r = run_sim("compute time --system " + path("system.yml") + " --kernels " + path("attention.csv") + " 2>/dev/null");
  ASSERT_EQ(r.code, 0) << r.output;
  // No attention rows in the model: the plain roofline. 2*8*2048^2*128 FLOP at 989 TFLOP/s = 8.68547 us;
  // backward 2.5x that: forward + backward 30.3992 us.
  EXPECT_NE(r.output.find("sdpa_causal,1,8,2048,128,30,240,8.68547,30.3992"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("predicted_us,predicted_fwd_bwd_us"), std::string::npos) << r.output;
}

TEST_F(ComputeCli, BadInputExitsTwo) {
  std::ofstream(path("bad.csv")) << "op,dtype,m,n,k,time_us\ngemm,bf16,512,512,five,1\n";
  auto r = run_sim("compute time --system " + path("system.yml") + " --kernels " + path("bad.csv"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find(path("bad.csv") + ":2: column 5 (k): expected a positive integer, got 'five'"), std::string::npos)
      << r.output;
  std::ofstream(path("bare.yml")) << "collective: {chunks: 2}\n";
  r = run_sim("compute time --system " + path("bare.yml") + " --kernels " + path("gemm.csv"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("has no compute model"), std::string::npos) << r.output;
  r = run_sim("compute time --system " + path("system.yml") + " --kernels " + path("gemm.csv") + " --bogus");
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(std::filesystem::exists(path("out.csv")));
}

// A row no GPU could run in a day (a 2^32-cube GEMM: 2^97 FLOP, 1.6e20 us at
// 989 TFLOP/s) is a shape typed wrong: its roofline is printed, with a
// warning naming the file, line and shape; past three such rows, a count.
TEST_F(ComputeCli, ARowPredictedPastADayIsWarned) {
  std::ofstream(path("roofline.yml")) << "compute:\n  peak_tflops: 989\n  memory_bandwidth: 3.35TB/s\n";
  std::ofstream(path("huge.csv")) << "op,dtype,m,n,k,time_us\ngemm,bf16,512,512,512,15\n"
                                  << "gemm,bf16,4294967296,4294967296,4294967296,15\n";
  auto r = run_sim("compute time --system " + path("roofline.yml") + " --kernels " + path("huge.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("sim: warning: " + path("huge.csv") +
                          ":3: gemm bf16 m=4294967296 n=4294967296 k=4294967296 is predicted at 1.60219e+20 us "
                          "(1.85e+09 days): no GPU kernel runs for a day; check the row's sizes"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("4294967296,15,1.60219e+20"), std::string::npos) << r.output;
  // Rows of milliseconds are not warned.
  EXPECT_EQ(r.output.find(":2: gemm"), std::string::npos) << r.output;
  std::ofstream many(path("many.csv"));
  many << "op,dtype,m,n,k,time_us\n";
  for (int i = 0; i < 5; ++i) many << "gemm,bf16,4294967296,4294967296,4294967296,15\n";
  many.close();
  r = run_sim("compute time --system " + path("roofline.yml") + " --kernels " + path("many.csv") + " -o " +
              path("many-out.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("many.csv:4: gemm"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("many.csv:5: gemm"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sim: warning: 2 more row(s) of " + path("many.csv") + " are predicted past a day"),
            std::string::npos)
      << r.output;
}

// The command compares the model with measurements: it says so when the
// config's own table has rows faster than their roofline, as a run does.
TEST_F(ComputeCli, TableRowsFasterThanTheRooflineAreWarned) {
  std::ofstream(path("fast.csv")) << "op,dtype,m,n,k,time_us\ngemm,bf16,512,512,512,15\ngemm,bf16,1024,1024,1024,1\n";
  std::ofstream(path("fast.yml")) << "compute:\n  peak_tflops: 989.4\n  memory_bandwidth: 3.35TB/s\n  kernels: fast.csv\n";
  const auto r = run_sim("compute time --system " + path("fast.yml") + " --kernels " + path("fast.csv"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("sim: warning: " + path("fast.csv") + ":3: a gemm bf16 kernel of 1 us is 2.17 times faster "
                          "than its roofline"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(run_sim("compute time --system " + path("system.yml") + " --kernels " + path("gemm.csv"))
                .output.find("warning"),
            std::string::npos);
}

TEST_F(ComputeCli, ShippedH100ConfigAgainstTheMeasurements) {
  const std::string measured = std::string(SIM_SOURCE_DIR) + "/../shared/testdata/h100-kernels/gemm.csv";
  if (!std::filesystem::exists(measured)) GTEST_SKIP() << "testdata absent: " << measured;
  const auto r = run_sim("compute time --system " + sim::testing::shipped_config("system/h100_kernels.yml") +
                         " --kernels " + measured + " -o " + path("out.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("127 rows (gemm)"), std::string::npos) << r.output;
}

TEST_F(ComputeCli, AMemboundOpTheTablesDidNotMeasureIsAnErrorListingTheKnownOnes) {
  std::ofstream(path("membound.csv")) << "op,dtype,elements,time_us\nadd,bf16,1048576,9.2\nadd,bf16,4194304,30\n"
                                      << "copy,bf16,1048576,7.9\ncopy,bf16,4194304,25\n";
  std::ofstream(path("mb_system.yml")) << "compute:\n  peak_tflops: 989\n  memory_bandwidth: 3.35TB/s\n"
                                       << "  kernels: [gemm.csv, membound.csv]\n";
  std::ofstream(path("ask.csv")) << "op,dtype,elements,time_us\ncopy,bf16,2097152,12\nfrobnicate,bf16,1048576,9.2\n";
  const auto r = run_sim("compute time --system " + path("mb_system.yml") + " --kernels " + path("ask.csv"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sim: error: " + path("ask.csv") +
                          ":3: membound op 'frobnicate' is not one the model's kernel tables measured (known: add, copy)"),
            std::string::npos)
      << r.output;
  // A measured op is timed; a BOM before the header changes nothing.
  std::ofstream(path("bom.csv")) << "\xEF\xBB\xBFop,dtype,elements,time_us\ncopy,bf16,2097152,12\n";
  const auto ok = run_sim("compute time --system " + path("mb_system.yml") + " --kernels " + path("bom.csv"));
  EXPECT_EQ(ok.code, 0) << ok.output;
  EXPECT_NE(ok.output.find("op,dtype,elements,time_us,predicted_us\ncopy,bf16,2097152,12,"), std::string::npos) << ok.output;
}

}  // namespace
}  // namespace sim
