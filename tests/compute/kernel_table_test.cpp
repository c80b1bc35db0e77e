// Reading measured-kernel tables: the three formats, and errors that name
// the file, line and column.
#include <gtest/gtest.h>

#include <fstream>

#include "../common/temp_folder.h"
#include "compute/kernel_table.h"
#include "compute_test_util.h"
#include "core/error.h"

namespace sim {
namespace {

using namespace sim::testing;

std::string csv_error(const std::string& text, const std::string& path = "t.csv") {
  try {
    parse_kernel_csv(text, path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(KernelTable, GemmRowsKeepTheirTextAndShape) {
  const KernelCsv csv = parse_kernel_csv(
      "op,dtype,m,n,k,time_us,tflops,GBps\r\ngemm,bf16,512,1024,4096,14.5,288.5,915.7\r\n\n", "g.csv");
  EXPECT_EQ(csv.format, KernelCsvFormat::kGemm);
  ASSERT_EQ(csv.rows.size(), 1u);
  EXPECT_EQ(csv.rows[0].line, 2u);
  EXPECT_EQ(csv.rows[0].text, "gemm,bf16,512,1024,4096,14.5,288.5,915.7");
  ASSERT_EQ(csv.rows[0].samples.size(), 1u);
  const KernelSample& s = csv.rows[0].samples[0];
  EXPECT_EQ(s.shape, gemm(512, 1024, 4096));
  EXPECT_DOUBLE_EQ(s.seconds, 14.5e-6);
  EXPECT_EQ(s.file, "g.csv");
}

TEST(KernelTable, AttentionRowsHoldAForwardAndABackwardSample) {
  const KernelCsv csv = parse_kernel_csv(
      "op,batch,heads,seq,head_dim,fwd_us,fwd_bwd_us,fwd_tflops,fwd_bwd_tflops_approx\n"
      "sdpa_causal,1,8,2048,128,30,240,1,1\nsdpa,2,4,1024,64,10,35,1,1\n",
      "a.csv");
  EXPECT_EQ(csv.format, KernelCsvFormat::kAttention);
  ASSERT_EQ(csv.rows.size(), 2u);
  ASSERT_EQ(csv.rows[0].samples.size(), 2u);
  EXPECT_EQ(csv.rows[0].samples[0].shape, attention(1, 8, 2048, 128, true, false));
  EXPECT_DOUBLE_EQ(csv.rows[0].samples[0].seconds, 30e-6);
  EXPECT_EQ(csv.rows[0].samples[1].shape, attention(1, 8, 2048, 128, true, true));
  EXPECT_DOUBLE_EQ(csv.rows[0].samples[1].seconds, 210e-6);
  EXPECT_EQ(csv.rows[1].samples[0].shape, attention(2, 4, 1024, 64, false, false));
  EXPECT_EQ(csv.rows[1].samples[0].shape.dtype, "bf16");  // no dtype column
}

TEST(KernelTable, MemboundRowsAndColumnsInAnyOrder) {
  const KernelCsv csv = parse_kernel_csv("elements,time_us,op,dtype\n1048576,9.8,layernorm,fp32\n", "m.csv");
  EXPECT_EQ(csv.format, KernelCsvFormat::kMembound);
  EXPECT_EQ(csv.rows.at(0).samples.at(0).shape, membound("layernorm", 1048576, "fp32"));
}

TEST(KernelTable, AByteOrderMarkIsNotPartOfTheFirstColumnName) {
  const std::string text = "op,dtype,elements,time_us\nadd,bf16,1048576,9.25\n";
  const KernelCsv plain = parse_kernel_csv(text, "m.csv");
  const KernelCsv bom = parse_kernel_csv("\xEF\xBB\xBF" + text, "m.csv");
  EXPECT_EQ(bom.format, KernelCsvFormat::kMembound);
  EXPECT_EQ(bom.header, "op,dtype,elements,time_us");
  ASSERT_EQ(bom.rows.size(), 1u);
  EXPECT_EQ(bom.rows[0].line, 2u);
  EXPECT_EQ(bom.rows[0].samples[0].shape.op, plain.rows[0].samples[0].shape.op);
  EXPECT_EQ(bom.rows[0].samples[0].seconds, plain.rows[0].samples[0].seconds);
}

TEST(KernelTable, OwnOutputReadsAgain) {
  const KernelCsv csv = parse_kernel_csv("op,dtype,elements,time_us,GBps,predicted_us\nadd,bf16,64,9,1,8.5\n", "m.csv");
  EXPECT_EQ(csv.rows.size(), 1u);
}

TEST(KernelTable, ErrorsNameFileLineAndColumn) {
  const std::string gemm_header = "op,dtype,m,n,k,time_us\n";
  EXPECT_EQ(csv_error(gemm_header + "gemm,bf16,512,0,512,3\n"),
            "t.csv:2: column 4 (n): expected a positive integer, got '0'");
  EXPECT_EQ(csv_error(gemm_header + "gemm,bf16,512,512,512,3\ngemm,bf16,512,51x2,512,3\n"),
            "t.csv:3: column 4 (n): expected a positive integer, got '51x2'");
  EXPECT_EQ(csv_error(gemm_header + "gemm,bf16,512,512,512,-3\n"),
            "t.csv:2: column 6 (time_us): expected a positive time in microseconds, got '-3'");
  EXPECT_EQ(csv_error(gemm_header + "gemm,bf16,512,512,512,nan\n"),
            "t.csv:2: column 6 (time_us): expected a positive time in microseconds, got 'nan'");
  // A time that would vanish in seconds (1e-320 us is 0 s in a double).
  EXPECT_EQ(csv_error(gemm_header + "gemm,bf16,512,512,512,1e-320\n"),
            "t.csv:2: column 6 (time_us): expected a positive time in microseconds, got '1e-320'");
  // Simulated time counts whole picoseconds: a time that rounds to 0 ps ran in no time.
  EXPECT_EQ(csv_error(gemm_header + "gemm,bf16,512,512,512,1e-300\n"),
            "t.csv:2: column 6 (time_us): '1e-300' us rounds to 0 ps, below the simulator's resolution of 1 ps "
            "(is the unit us?)");
  EXPECT_EQ(csv_error(gemm_header + "gemm,bf16,512,512,512,4e-7\n"),
            "t.csv:2: column 6 (time_us): '4e-7' us rounds to 0 ps, below the simulator's resolution of 1 ps "
            "(is the unit us?)");
  EXPECT_EQ(parse_kernel_csv(gemm_header + "gemm,bf16,512,512,512,6e-7\n", "t.csv").rows.size(), 1u);  // 1 ps
  EXPECT_EQ(csv_error("op,batch,heads,seq,head_dim,fwd_us,fwd_bwd_us\nsdpa,1,8,2048,128,1e-301,1.005e-301\n"),
            "t.csv:2: column 6 (fwd_us): '1e-301' us rounds to 0 ps, below the simulator's resolution of 1 ps "
            "(is the unit us?)");
  EXPECT_EQ(csv_error("op,batch,heads,seq,head_dim,fwd_us,fwd_bwd_us\nsdpa,1,8,2048,128,30,30.0000001\n"),
            "t.csv:2: column 7 (fwd_bwd_us): forward + backward (30.0000001 us) must be longer than the forward "
            "(30 us) by at least 1 ps");
  EXPECT_EQ(csv_error(gemm_header + "gemm,bf17,512,512,512,3\n"),
            "t.csv:2: column 2 (dtype): unknown dtype 'bf17' (expected bf16, fp16, fp8, fp32 or tf32)");
  EXPECT_EQ(csv_error(gemm_header + "matmul,bf16,512,512,512,3\n"),
            "t.csv:2: column 1 (op): expected 'gemm', got 'matmul'");
  EXPECT_EQ(csv_error(gemm_header + "gemm,bf16,512,512,3\n"), "t.csv:2: 5 fields; the header has 6");
  EXPECT_EQ(csv_error("op,dtype,m,n,k,time_us,flops\n"), "t.csv:1: column 7 (flops): unknown column for a gemm table");
  EXPECT_EQ(csv_error("op,dtype,m,n,time_us\n"), "t.csv:1: a gemm table needs a column 'k'");
  EXPECT_EQ(csv_error("op,dtype,m,m,k,time_us\n"), "t.csv:1: column 4 (m): column named twice");
  EXPECT_NE(csv_error("a,b\n1,2\n").find("t.csv:1: the header names no kernel table format"), std::string::npos);
  EXPECT_EQ(csv_error(""), "t.csv: empty kernel table (expected a header line)");
  EXPECT_EQ(csv_error("op,batch,heads,seq,head_dim,fwd_us,fwd_bwd_us\nsdpa_causal,1,8,2048,128,30,30\n"),
            "t.csv:2: column 7 (fwd_bwd_us): forward + backward (30 us) must be longer than the forward (30 us) by "
            "at least 1 ps");
  EXPECT_EQ(csv_error("op,batch,heads,seq,head_dim,fwd_us,fwd_bwd_us\nflash,1,8,2048,128,30,60\n"),
            "t.csv:2: column 1 (op): expected 'sdpa_causal' or 'sdpa', got 'flash'");
}

class KernelTableFiles : public TempFolderTest {};

TEST_F(KernelTableFiles, FolderReadsItsThreeTablesOnly) {
  std::filesystem::create_directories(path("h"));
  std::ofstream(path("h/gemm.csv")) << "op,dtype,m,n,k,time_us\ngemm,bf16,512,512,512,15\n";
  std::ofstream(path("h/membound.csv")) << "op,dtype,elements,time_us\ncopy,bf16,1024,9\n";
  std::ofstream(path("h/gpu.csv")) << "name, memory.total [MiB]\nH100, 81559 MiB\n";
  const std::vector<std::string> files = kernel_table_files(path("h"));
  ASSERT_EQ(files.size(), 2u);
  const std::vector<KernelSample> samples = read_kernel_samples(files);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1].shape, membound("copy", 1024));
  EXPECT_EQ(kernel_table_files(path("h/gemm.csv")), std::vector<std::string>{path("h/gemm.csv")});
  std::filesystem::create_directories(path("empty"));
  EXPECT_THROW(kernel_table_files(path("empty")), InputError);
  EXPECT_THROW(read_kernel_samples({path("absent.csv")}), InputError);
}

TEST(KernelTable, TestdataTablesRead) {
  const std::string dir = testdata("h100-kernels");
  if (!std::filesystem::exists(dir + "/gemm.csv")) GTEST_SKIP() << "testdata absent: " << dir;
  const std::vector<KernelSample> samples = read_kernel_samples(kernel_table_files(dir));
  // 127 GEMMs, 7 attention rows of two samples, 20 memory-bound rows.
  EXPECT_EQ(samples.size(), 127u + 14u + 20u);
}


// A kernel table is a file or a folder: a device or a missing path is named
// where it is given (the config's key prefixes these messages).
TEST(KernelTable, ASourceThatIsNoFileOrFolderIsAnError) {
  const auto message = [](const std::string& source) {
    try {
      kernel_table_files(source);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("/dev/null"),
            "/dev/null: a kernel table is a CSV file or a folder of them; this is neither (a device, a FIFO?)");
  EXPECT_EQ(message("/nonexistent/gemm.csv"), "/nonexistent/gemm.csv: no such kernel table file or folder");
}
}  // namespace
}  // namespace sim
