// The measured-kernel model on synthetic tables drawn from a known law: it
// recovers the law between the rows, reproduces the rows, and falls back to
// the efficiency-scaled roofline by its stated rule. Self-contained: always runs.
#include <gtest/gtest.h>

#include <cmath>

#include "compute/attention_schedule.h"
#include "compute/kernel_model.h"
#include "compute_test_util.h"
#include "core/error.h"

namespace sim {
namespace {

using namespace sim::testing;

// The law the synthetic GEMM rows follow (the base curve's own form).
double gemm_law(const KernelShape& s) {
  const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
  return std::max(12e-6, 3e-6 + s.flops() / 700e12 * (1 + 96 / m) * (1 + 160 / n) * (1 + 240 / k));
}

std::vector<KernelSample> gemm_grid(const std::vector<std::int64_t>& dims) {
  std::vector<KernelSample> rows;
  std::size_t line = 2;
  for (auto m : dims) {
    for (auto n : dims) {
      for (auto k : dims) rows.push_back({gemm(m, n, k), gemm_law(gemm(m, n, k)), "syn.csv", line++});
    }
  }
  return rows;
}

TEST(KernelModel, RecoversTheLawBetweenTheRowsAndReproducesThem) {
  const auto rows = gemm_grid({512, 1024, 4096, 16384});
  const KernelModel model(rows, h100());
  for (const KernelSample& r : rows) {
    EXPECT_NEAR(model.predict(r.shape).seconds / r.seconds, 1, 1e-9) << r.shape.describe();
  }
  std::vector<double> errors;
  for (std::int64_t m : {768, 2048, 8192}) {
    for (std::int64_t n : {640, 2048, 12288}) {
      for (std::int64_t k : {1536, 2048, 8192}) {
        const KernelShape s = gemm(m, n, k);
        const KernelModel::Prediction p = model.predict(s);
        EXPECT_EQ(p.source, KernelModel::Source::kTable);
        EXPECT_EQ(p.series, "gemm bf16");
        errors.push_back(p.seconds / gemm_law(s) - 1);
      }
    }
  }
  const ErrorStats e = stats(errors);
  EXPECT_LT(e.max, 0.01) << "median " << e.median;
}

TEST(KernelModel, FitsWithoutTheCorrectionToo) {
  const auto rows = gemm_grid({512, 1024, 4096, 16384});
  const auto smooth = KernelModel(rows, h100()).with_options({2, 0});
  std::vector<double> errors;
  for (const KernelSample& r : rows) errors.push_back(smooth->predict(r.shape).seconds / r.seconds - 1);
  EXPECT_LT(stats(errors).max, 0.01);
}

TEST(KernelModel, OutsideItsReachTheRooflineScaledByTheLargestRowsEfficiency) {
  const auto rows = gemm_grid({512, 1024, 4096, 16384});
  const KernelModel model(rows, h100());
  const RooflineModel roof(h100_roofline());
  // The 3 rows of most work: 16384^2 x 16384 first, then the three 16384^2 x 4096 in file order
  // (m,n,k) = (4096,16384,16384)... : the median of roofline/measured over the first three.
  std::vector<const KernelSample*> sorted;
  for (const auto& r : rows) sorted.push_back(&r);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const KernelSample* a, const KernelSample* b) { return a->shape.flops() > b->shape.flops(); });
  std::vector<double> e;
  for (int i = 0; i < 3; ++i) e.push_back(roof.kernel_seconds(sorted[i]->shape) / sorted[i]->seconds);
  std::sort(e.begin(), e.end());
  const double efficiency = e[1];
  ASSERT_EQ(model.series().size(), 1u);
  EXPECT_DOUBLE_EQ(model.series()[0].efficiency, efficiency);
  const double floor = model.series()[0].floor_s;
  EXPECT_NEAR(floor, 12e-6, 12e-6 * 0.01);
  // Within a factor of 4 past the range: the fit. 4x and a bit beyond: the fallback.
  EXPECT_EQ(model.predict(gemm(65536, 4096, 4096)).source, KernelModel::Source::kTable);
  EXPECT_EQ(model.predict(gemm(128, 4096, 4096)).source, KernelModel::Source::kTable);
  for (const KernelShape& s : {gemm(65537, 4096, 4096), gemm(127, 4096, 4096), gemm(4096, 4096, 1 << 20),
                               gemm(8, 8, 8)}) {
    const KernelModel::Prediction p = model.predict(s);
    EXPECT_EQ(p.source, KernelModel::Source::kFallback) << s.describe();
    EXPECT_DOUBLE_EQ(p.seconds, std::max(floor, roof.kernel_seconds(s) / efficiency)) << s.describe();
  }
  // A dtype without rows: its own peak, the bf16 series' efficiency and floor.
  const KernelShape fp8 = gemm(8192, 8192, 8192, "fp8");
  const KernelModel::Prediction p = model.predict(fp8);
  EXPECT_EQ(p.source, KernelModel::Source::kFallback);
  EXPECT_EQ(p.series, "gemm bf16");
  EXPECT_DOUBLE_EQ(p.seconds, std::max(floor, 2.0 * 8192 * 8192 * 8192 / 1978.9e12 / efficiency));
  // A kind without rows: the plain roofline.
  const KernelShape a = attention(1, 8, 2048, 128, true, false);
  EXPECT_EQ(model.predict(a).source, KernelModel::Source::kRoofline);
  EXPECT_DOUBLE_EQ(model.predict(a).seconds, roof.kernel_seconds(a));
}

TEST(KernelModel, ASingleRowGemmSeriesFollowsTheBestMeasuredOne) {
  auto rows = gemm_grid({512, 1024, 4096, 16384});
  rows.push_back({gemm(4096, 4096, 4096, "tf32"), 350e-6, "syn.csv", 99});
  const KernelModel model(rows, h100());
  const KernelModel::Prediction p = model.predict(gemm(4096, 4096, 4096, "tf32"));
  EXPECT_EQ(p.source, KernelModel::Source::kScaled);
  EXPECT_EQ(p.series, "gemm tf32");
  EXPECT_NEAR(p.seconds, 350e-6, 1e-15);
  // Elsewhere the bf16 law's shape at the tf32 row's level: t = 350 us x
  // law(shape) / law(4096^3), the bf16 fit recovering its law (first test).
  const double level = 350e-6 / gemm_law(gemm(4096, 4096, 4096));
  for (const KernelShape& s : {gemm(8192, 8192, 8192, "tf32"), gemm(512, 2048, 1024, "tf32")}) {
    KernelShape as_bf16 = s;
    as_bf16.dtype = "bf16";
    EXPECT_EQ(model.predict(s).source, KernelModel::Source::kScaled);
    EXPECT_NEAR(model.predict(s).seconds / (level * gemm_law(as_bf16)), 1, 1e-6) << s.describe();
  }
  // Beyond the bf16 series' reach: the fallback, the tf32 row's efficiency.
  const KernelModel::Prediction far = model.predict(gemm(1 << 17, 4096, 4096, "tf32"));
  EXPECT_EQ(far.source, KernelModel::Source::kFallback);
  EXPECT_NEAR(far.seconds, 350e-6 * 32, 1e-12);
}

TEST(KernelModel, MemboundSeriesPerOpAndCopyForOpsNotMeasured) {
  // t = 4 us + bytes / 3 TB/s, floor 8 us.
  std::vector<KernelSample> rows;
  std::size_t line = 2;
  for (const char* op : {"add", "copy"}) {
    for (std::int64_t e : {1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28}) {
      const KernelShape s = membound(op, e);
      rows.push_back({s, std::max(8e-6, 4e-6 + s.bytes() / 3e12), "m.csv", line++});
    }
  }
  const KernelModel model(rows, h100());
  for (std::int64_t e : {3 << 20, 1 << 23, 100'000'000}) {
    for (const char* op : {"add", "copy"}) {
      const KernelShape s = membound(op, e);
      EXPECT_NEAR(model.predict(s).seconds / std::max(8e-6, 4e-6 + s.bytes() / 3e12), 1, 0.01) << s.describe();
    }
  }
  // gelu was not measured: copy's efficiency (largest rows: 2^28, 2^26, 2^24) on gelu's bytes.
  const RooflineModel roof(h100_roofline());
  std::vector<double> e;
  for (std::int64_t n : {1 << 28, 1 << 26, 1 << 24}) {
    const KernelShape c = membound("copy", n);
    e.push_back(roof.kernel_seconds(c) / (4e-6 + c.bytes() / 3e12));
  }
  std::sort(e.begin(), e.end());
  const KernelShape gelu = membound("gelu", 1 << 26);
  const KernelModel::Prediction p = model.predict(gelu);
  EXPECT_EQ(p.series, "membound bf16 copy");
  EXPECT_EQ(p.source, KernelModel::Source::kFallback);
  EXPECT_NEAR(p.seconds, roof.kernel_seconds(gelu) / e[1], 1e-15);
}

TEST(KernelModel, MemboundOpsShareTheOverheadAndTheL2SpeedUp) {
  // t = max(F_op, 4 us + bytes / (B_op * (bytes <= 50 MB ? 2 : 1))): per op
  // its floor and bandwidth, shared the overhead and the L2 speed-up. Rows at
  // 2^20, 2^22, 2^24, 2^28 (as measured on the H100); 2^26 and 2^23 are
  // predicted from the law, a size held out by every op at once.
  struct Op {
    const char* name;
    double floor, bandwidth;
  };
  const std::vector<Op> ops{{"add", 9e-6, 3.0e12}, {"copy", 8e-6, 2.9e12}, {"softmax", 8e-6, 1.0e12}};
  const auto law = [](const Op& op, const KernelShape& s) {
    return std::max(op.floor, 4e-6 + s.bytes() / (op.bandwidth * (s.bytes() <= 50e6 ? 2 : 1)));
  };
  std::vector<KernelSample> rows;
  std::size_t line = 2;
  for (const Op& op : ops) {
    for (std::int64_t e : {1 << 20, 1 << 22, 1 << 24, 1 << 28}) {
      const KernelShape s = membound(op.name, e);
      rows.push_back({s, law(op, s), "m.csv", line++});
    }
  }
  const KernelModel model(rows, h100());
  for (const Op& op : ops) {
    for (std::int64_t e : {1 << 26, 1 << 23, 3 << 22}) {
      const KernelShape s = membound(op.name, e);
      EXPECT_NEAR(model.predict(s).seconds / law(op, s), 1, 0.01) << s.describe();
    }
  }
  for (const auto& info : model.series()) {
    EXPECT_NEAR(info.overhead_s, 4e-6, 4e-8) << info.name;
    EXPECT_NEAR(info.l2_speedup, 2, 0.02) << info.name;
  }
}

TEST(KernelModel, AttentionFromScatteredShapes) {
  // Forward: t = max(10 us, 2 us + tile schedule's work / 900 TFLOP/s) (compute/attention_schedule.h);
  // backward: t = max(10 us, 2 us + W / 600 TFLOP/s * (1 + 16 / (b h)) * (1 + 1024 / s)).
  const auto law = [](const KernelShape& s) {
    if (!s.backward) return std::max(10e-6, 2e-6 + attention_tile_work(s, 132) / 900e12);
    return std::max(10e-6, 2e-6 + s.flops() / 600e12 * (1 + 16.0 / static_cast<double>(s.batch * s.heads)) *
                                   (1 + 1024.0 / static_cast<double>(s.seq)));
  };
  std::vector<KernelSample> rows;
  std::size_t line = 2;
  for (auto [b, h, s, d] : std::vector<std::array<std::int64_t, 4>>{{1, 8, 2048, 128},
                                                                     {1, 8, 4096, 128},
                                                                     {1, 16, 4096, 128},
                                                                     {1, 32, 4096, 128},
                                                                     {1, 64, 4096, 128},
                                                                     {4, 16, 2048, 128},
                                                                     {1, 32, 2048, 64},
                                                                     {2, 16, 8192, 128}}) {
    for (bool bwd : {false, true}) {
      const KernelShape shape = attention(b, h, s, d, true, bwd);
      rows.push_back({shape, law(shape), "a.csv", line});
    }
    ++line;
  }
  const KernelModel model(rows, h100());
  for (const KernelShape& s : {attention(1, 16, 8192, 128, true, false), attention(1, 24, 3072, 128, true, true),
                               attention(2, 32, 2048, 128, true, false)}) {
    EXPECT_EQ(model.predict(s).source, KernelModel::Source::kTable);
    EXPECT_NEAR(model.predict(s).seconds / law(s), 1, 0.02) << s.describe();
  }
  // Full (non-causal) attention was not measured: the forward takes the
  // causal series' tile law, counting the full mask's blocks; the backward
  // the causal series' efficiency.
  for (const KernelShape& s : {attention(1, 16, 4096, 128, false, false), attention(2, 8, 1024, 64, false, false)}) {
    EXPECT_EQ(model.predict(s).series, "attention bf16 causal fwd");
    EXPECT_NEAR(model.predict(s).seconds / law(s), 1, 0.02) << s.describe();
  }
  EXPECT_EQ(model.predict(attention(1, 16, 4096, 128, false, true)).series, "attention bf16 causal bwd");
}

TEST(KernelModel, NodesWithoutKernelAttributesTakeThePlainRoofline) {
  const KernelModel model(gemm_grid({512, 4096}), h100());
  ComputeNode node;
  node.has_roofline = true;
  node.num_ops = 989'400'000'000;  // 1 ms at 989.4 TFLOP/s
  node.tensor_size = 1;
  EXPECT_DOUBLE_EQ(*model.seconds(node), 1e-3);
  EXPECT_FALSE(model.seconds(ComputeNode{}).has_value());
  const KernelShape g = gemm(1024, 1024, 1024);
  node.kernel = &g;  // the kernel attributes win
  EXPECT_DOUBLE_EQ(*model.seconds(node), model.predict(g).seconds);
}

TEST(KernelModel, EmptyTablesAndMissingPeaksAreErrors) {
  EXPECT_THROW(KernelModel({}, h100()), InputError);
  RooflineParams p;
  p.peak_flops_by_dtype = {{"bf16", 989e12}};
  p.memory_bandwidth = 3e12;
  std::vector<KernelSample> rows{{gemm(512, 512, 512, "fp16"), 1e-5, "x.csv", 7}};
  try {
    KernelModel(rows, std::make_shared<const RooflineModel>(p));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.csv:7: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'fp16'"), std::string::npos) << e.what();
  }
}

// No measured kernel beats its roofline except from a cache: a row more than
// 2 times faster is warned about (the fastest named), one more than 100 times
// faster is refused naming its file and line. Such a row used to time its
// shape in next to nothing (1e-300 us: 0 ps).
TEST(KernelModel, RowsFasterThanTheRooflineAreWarnedOrRefused) {
  const auto roofline = h100();
  std::vector<KernelSample> rows = gemm_grid({512, 1024, 4096});
  EXPECT_TRUE(KernelModel(rows, roofline).warnings().empty());
  const KernelShape big = gemm(16384, 16384, 16384);
  const double roof = roofline->kernel_seconds(big);
  rows.push_back({big, roof / 3, "fast.csv", 40});
  rows.push_back({gemm(8192, 16384, 16384), roofline->kernel_seconds(gemm(8192, 16384, 16384)) / 2.5, "fast.csv", 41});
  const KernelModel warned(rows, roofline);
  ASSERT_EQ(warned.warnings().size(), 1u);
  const std::string& w = warned.warnings()[0];
  EXPECT_EQ(w.rfind("fast.csv:40: a gemm bf16 kernel of ", 0), 0u) << w;
  EXPECT_NE(w.find(" is 3.00 times faster than its roofline ("), std::string::npos) << w;
  EXPECT_NE(w.find("(the fastest of 2 rows more than 2 times faster)"), std::string::npos) << w;
  rows.push_back({gemm(4096, 16384, 16384), roofline->kernel_seconds(gemm(4096, 16384, 16384)) / 1000, "fast.csv", 42});
  try {
    KernelModel(rows, roofline);
    FAIL() << "a row 1000 times faster than its roofline was taken";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("fast.csv:42: a gemm bf16 kernel of ", 0), 0u) << what;
    EXPECT_NE(what.find(" is 1000 times faster than its roofline"), std::string::npos) << what;
    EXPECT_NE(what.find("no cache or clock explains more than 100 times; is the time in us, and are the peaks this "
                        "GPU's?"),
              std::string::npos)
        << what;
  }
}

// One file of a shipped folder (builtin:h100/gemm.csv) combines with another
// folder's: today's H100 GEMMs and memory-bound ops with FlashAttention-2's
// attention (configs/kernels/h100-flash-attention-2, the FlashAttention-3
// paper's published speeds of it). Its rows are those speeds, and today's
// table is faster on every one of its shapes, forward and backward.
TEST(KernelTables, FlashAttention2IsTheEarlierKernel) {
  EXPECT_EQ(kernel_table_files("builtin:h100/gemm.csv"), std::vector<std::string>{"builtin:h100/gemm.csv"});
  EXPECT_THROW(kernel_table_files("builtin:h100/nosuch.csv"), InputError);
  const std::vector<std::string> fa2_files = kernel_table_files("builtin:h100-flash-attention-2");
  EXPECT_EQ(fa2_files, std::vector<std::string>{"builtin:h100-flash-attention-2/attention.csv"});
  const std::vector<KernelSample> fa2 = read_kernel_samples(fa2_files);
  ASSERT_EQ(fa2.size(), 24u);  // 6 sequences x (causal, not) x (forward, backward)
  // The paper's speeds at sequence 8k (batch 2, 16 heads, head dim 128): 370 TFLOP/s forward without
  // a mask, 333 causal, 318 backward without; FLOPs as FlashAttention counts them.
  const double full = 4.0 * 2 * 16 * 8192.0 * 8192.0 * 128;
  int checked = 0;
  for (const KernelSample& s : fa2) {
    if (s.shape.seq != 8192) continue;
    const double flops = (s.shape.causal ? full / 2 : full) * (s.shape.backward ? 2.5 : 1);
    const double tflops = flops / s.seconds / 1e12;
    if (!s.shape.causal) {
      EXPECT_NEAR(tflops, s.shape.backward ? 318 : 370, 0.01) << s.shape.describe();
    } else if (!s.shape.backward) {
      EXPECT_NEAR(tflops, 333, 0.01) << s.shape.describe();
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
  std::vector<KernelSample> combined = read_kernel_samples(
      {"builtin:h100/gemm.csv", "builtin:h100/membound.csv", "builtin:h100-flash-attention-2/attention.csv"});
  const KernelModel then(combined, std::make_shared<const RooflineModel>(h100_roofline()));
  const KernelModel now(read_kernel_samples(kernel_table_files("builtin:h100")),
                        std::make_shared<const RooflineModel>(h100_roofline()));
  for (const KernelSample& s : fa2) {
    EXPECT_NEAR(then.predict(s.shape).seconds / s.seconds, 1, 1e-9) << s.shape.describe();
    EXPECT_GT(then.predict(s.shape).seconds, now.predict(s.shape).seconds) << s.shape.describe();
  }
  // GEMMs are today's in both.
  EXPECT_EQ(then.predict(gemm(4096, 4096, 4096)).seconds, now.predict(gemm(4096, 4096, 4096)).seconds);
}

}  // namespace
}  // namespace sim
