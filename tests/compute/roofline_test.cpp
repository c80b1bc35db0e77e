// The roofline: closed forms, per-dtype peaks, and what it leaves alone.
#include <gtest/gtest.h>

#include "compute/roofline.h"
#include "compute_test_util.h"
#include "core/error.h"

namespace sim {
namespace {

using namespace sim::testing;

TEST(Roofline, GemmIsComputeBoundAtItsDtypePeak) {
  const RooflineModel roof(h100_roofline());
  // 2 * 8192^3 FLOP = 1,099,511,627,776 at 989.4 TFLOP/s; bytes 3 * 8192^2 * 2 = 402,653,184 at 3.35 TB/s
  // (120.2 us) are shorter.
  const KernelShape g = gemm(8192, 8192, 8192);
  EXPECT_DOUBLE_EQ(g.flops(), 1'099'511'627'776.0);
  EXPECT_DOUBLE_EQ(g.bytes(), 402'653'184.0);
  ComputeNode node;
  node.kernel = &g;
  EXPECT_DOUBLE_EQ(*roof.seconds(node), 1'099'511'627'776.0 / 989.4e12);
  // fp8 runs at twice the rate: half the time, still compute-bound.
  const KernelShape f = gemm(8192, 8192, 8192, "fp8");
  node.kernel = &f;
  EXPECT_DOUBLE_EQ(*roof.seconds(node), 1'099'511'627'776.0 / 1978.9e12);
}

TEST(Roofline, ThinGemmAndElementwiseOpsAreMemoryBound) {
  const RooflineModel roof(h100_roofline());
  // m = 16: 2*16*8192*8192 FLOP = 2.147e9 (2.17 us) vs (16*8192 + 8192^2 + 16*8192) * 2 B = 134.7 MB (40.2 us).
  const KernelShape g = gemm(16, 8192, 8192);
  EXPECT_DOUBLE_EQ(roof.kernel_seconds(g), (16.0 * 8192 + 8192.0 * 8192 + 16.0 * 8192) * 2 / 3.35e12);
  // add reads two operands and writes one: 3 * 2^28 * 2 B.
  EXPECT_DOUBLE_EQ(roof.kernel_seconds(membound("add", 1 << 28)), 3.0 * (1 << 28) * 2 / 3.35e12);
  EXPECT_DOUBLE_EQ(roof.kernel_seconds(membound("gelu", 1 << 28)), 2.0 * (1 << 28) * 2 / 3.35e12);
  EXPECT_DOUBLE_EQ(roof.kernel_seconds(membound("copy", 1 << 20, "fp32")), 2.0 * (1 << 20) * 4 / 3.35e12);
}

TEST(Roofline, Fp8CastsReadTheirDtypeAndWriteOneBytePerCopy) {
  const RooflineModel roof(h100_roofline());
  // Transformer Engine's casts of a bf16 tensor: read 2 B, write 1 B (cast_to_fp8), or 1 B twice, the
  // copy and its transpose (fp8_cast_transpose_fused); fp8_transpose reads and writes 1 B.
  EXPECT_DOUBLE_EQ(membound("fp8_cast", 1 << 24).bytes(), 3.0 * (1 << 24));
  EXPECT_DOUBLE_EQ(membound("fp8_cast_transpose", 1 << 24).bytes(), 4.0 * (1 << 24));
  EXPECT_DOUBLE_EQ(membound("fp8_transpose", 1 << 24, "fp8").bytes(), 2.0 * (1 << 24));
  EXPECT_DOUBLE_EQ(roof.kernel_seconds(membound("fp8_cast", 1 << 24)), 3.0 * (1 << 24) / 3.35e12);
  // From fp32 (4 B) to fp8 and its transpose: 6 B per element.
  EXPECT_DOUBLE_EQ(membound("fp8_cast_transpose", 1 << 20, "fp32").bytes(), 6.0 * (1 << 20));
}

TEST(Roofline, AttentionFlopsFollowFlashAttentionsCount) {
  const RooflineModel roof(h100_roofline());
  // causal forward: 2 * b * h * s^2 * d; full: twice that; backward: 2.5 x forward.
  const double causal = 2.0 * 1 * 32 * 4096.0 * 4096 * 128;
  EXPECT_DOUBLE_EQ(attention(1, 32, 4096, 128, true, false).flops(), causal);
  EXPECT_DOUBLE_EQ(attention(1, 32, 4096, 128, false, false).flops(), 2 * causal);
  EXPECT_DOUBLE_EQ(attention(1, 32, 4096, 128, true, true).flops(), 2.5 * causal);
  EXPECT_DOUBLE_EQ(roof.kernel_seconds(attention(1, 32, 4096, 128, true, false)), causal / 989.4e12);
  EXPECT_DOUBLE_EQ(attention(2, 4, 1024, 64, true, false).bytes(), 4.0 * 2 * 4 * 1024 * 64 * 2);
  EXPECT_DOUBLE_EQ(attention(2, 4, 1024, 64, true, true).bytes(), 8.0 * 2 * 4 * 1024 * 64 * 2);
}

TEST(Roofline, ChakraAttributesWinOverTheShapeAndNodesWithNeitherAreLeftAlone) {
  RooflineParams p;
  p.default_peak_flops = 100e12;
  p.memory_bandwidth = 1000e9;
  const RooflineModel roof(p);
  ComputeNode node;
  node.has_roofline = true;
  node.num_ops = 1'000'000'000;  // 10 us
  node.tensor_size = 1'000'000;  // 1 us
  EXPECT_DOUBLE_EQ(*roof.seconds(node), 1e9 / 100e12);
  const KernelShape g = gemm(8192, 8192, 8192);
  node.kernel = &g;  // num_ops/tensor_size still decide
  EXPECT_DOUBLE_EQ(*roof.seconds(node), 1e9 / 100e12);
  EXPECT_FALSE(roof.seconds(ComputeNode{}).has_value());
}

TEST(Roofline, ExactPicosecondsAsTheRunnerRoundsThem) {
  // 1e9 FLOP at 100 TFLOP/s is 10 us exactly; 1 FLOP at 3 FLOP/s rounds up.
  EXPECT_EQ(compute_seconds_to_time(1e9 / 100e12, "x"), 10 * kMicrosecond);
  EXPECT_EQ(compute_seconds_to_time(1.0 / 3, "x"), 333'333'333'334);
  EXPECT_THROW(compute_seconds_to_time(1e9, "x"), TimeLimitError);
}

TEST(Roofline, DtypeWithoutPeakIsAnErrorNamingIt) {
  RooflineParams p;
  p.peak_flops_by_dtype = {{"bf16", 989e12}};
  p.memory_bandwidth = 3.35e12;
  const RooflineModel roof(p);
  try {
    roof.kernel_seconds(gemm(1024, 1024, 1024, "fp8"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dtype 'fp8'"), std::string::npos) << e.what();
  }
  p.default_peak_flops = 500e12;
  EXPECT_DOUBLE_EQ(RooflineModel(p).peak_flops("fp8"), 500e12);
  EXPECT_DOUBLE_EQ(RooflineModel(p).peak_flops("bf16"), 989e12);
}

}  // namespace
}  // namespace sim
