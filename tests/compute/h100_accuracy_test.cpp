// The kernel model against kernels measured on an H100 (../shared/testdata/
// h100-kernels/, skipped when absent): every row of the tables it is fitted
// on, and rows held back from the fit. The numbers are printed; docs/compute.md
// quotes them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>

#include "compute/kernel_model.h"
#include "compute_test_util.h"

namespace sim {
namespace {

using namespace sim::testing;

std::vector<KernelSample> h100_samples(const std::string& table) {
  return read_kernel_samples({testdata("h100-kernels/" + table + ".csv")});
}

#define SKIP_WITHOUT_TESTDATA()                                                                 \
  if (!std::filesystem::exists(testdata("h100-kernels/gemm.csv"))) {                            \
    GTEST_SKIP() << "testdata absent: " << testdata("h100-kernels/") << " (measured H100 kernels)"; \
  }

void print(const char* what, const ErrorStats& s) {
  std::printf("[ accuracy ] %-44s n=%3zu  median %5.1f%%  max %6.1f%%  within 10%%: %zu/%zu\n", what, s.n,
              100 * s.median, 100 * s.max, s.within_10, s.n);
  ::testing::Test::RecordProperty(what, std::to_string(s.median) + " " + std::to_string(s.max));
}

// Fits on `fit` and returns the relative errors on `test`.
std::vector<double> errors(const std::vector<KernelSample>& fit, const std::vector<KernelSample>& test,
                           KernelModelOptions options = {}) {
  const KernelModel model(fit, h100(), options);
  std::vector<double> e;
  for (const KernelSample& s : test) e.push_back(model.predict(s.shape).seconds / s.seconds - 1);
  return e;
}

TEST(H100Kernels, EveryRowOfTheFittedTablesWithin5Percent) {
  SKIP_WITHOUT_TESTDATA();
  for (const char* table : {"gemm", "attention", "membound"}) {
    const auto rows = h100_samples(table);
    const auto e = errors(rows, rows);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_LT(std::fabs(e[i]), 0.05) << rows[i].file << ":" << rows[i].line << " " << rows[i].shape.describe();
    }
    print((std::string(table) + ": fit rows").c_str(), stats(e));
    // The fitted curves alone, without the per-row correction (what the derived table holds).
    print((std::string(table) + ": fit rows, curves alone").c_str(), stats(errors(rows, rows, {2, 0})));
  }
}

// Holds out the rows `held` picks, fits on the rest, returns the errors on them.
std::vector<double> held_out(const std::vector<KernelSample>& rows, const std::function<bool(const KernelSample&)>& held,
                             KernelModelOptions options = {}) {
  std::vector<KernelSample> fit, test;
  for (const KernelSample& s : rows) (held(s) ? test : fit).push_back(s);
  return errors(fit, test, options);
}

TEST(H100Kernels, GemmRowsHeldOutOneInnerKPerMN) {
  SKIP_WITHOUT_TESTDATA();
  // Per dtype and (m, n), one of the inner k (1024 or 4096, alternating over
  // the (m, n) grid) is held back and predicted from the rest: an
  // interpolation over a factor 8 or 16 in k, harder than the factor 4 of the
  // shapes measured between (2048, 8192).
  const auto rows = h100_samples("gemm");
  const std::map<std::int64_t, int> index{{512, 0}, {1024, 1}, {4096, 2}, {16384, 3}};
  const auto held = [&](const KernelSample& s) {
    if (s.shape.dtype == "tf32") return false;
    const int pick = (index.at(s.shape.m) + index.at(s.shape.n)) % 2;
    return s.shape.k == (pick == 0 ? 1024 : 4096);
  };
  for (const char* dtype : {"bf16", "fp16"}) {
    std::vector<KernelSample> subset;
    for (const auto& s : rows) {
      if (s.shape.dtype == dtype || s.shape.dtype == "tf32") subset.push_back(s);
    }
    const ErrorStats e = stats(held_out(subset, held));
    print((std::string("gemm ") + dtype + ": held-out (one k per m,n)").c_str(), e);
    print((std::string("gemm ") + dtype + ": held-out, curves alone").c_str(), stats(held_out(subset, held, {2, 0})));
    EXPECT_LT(e.median, 0.05);
    EXPECT_GE(e.within_10, e.n * 3 / 4);
  }
  // Held out one m (then one n) plane at a time, across dtypes.
  for (int axis = 0; axis < 3; ++axis) {
    for (std::int64_t plane : {1024, 4096}) {
      const auto pick = [&](const KernelSample& s) {
        const std::int64_t v = axis == 0 ? s.shape.m : axis == 1 ? s.shape.n : s.shape.k;
        return s.shape.dtype != "tf32" && v == plane;
      };
      const std::string what = std::string("gemm: held-out plane ") + "mnk"[axis] + "=" + std::to_string(plane);
      print(what.c_str(), stats(held_out(rows, pick)));
    }
  }
}

// The GEMM shapes measure.sh times but the shipped table lacks are those with
// a 2048 or 8192 in them: a factor 2 in log space from measured dimensions
// on both sides. Proxies here are harder: every row with a 4096 (then a
// 1024) in any coordinate held back at once, the rest {512, 1024, 16384}
// (then {512, 4096, 16384}) fitted, so a held-out row lies a factor 4 from
// its neighbours along each such coordinate (a factor 2 below 1024); and each
// row held back alone. Split by time: the small kernels sit on the launch
// floor, whose measurements scatter by 20% and where the library's kernel
// choice makes a few shapes twice as slow as their neighbours.
struct GemmProxy {
  std::string name;
  std::vector<double> errors, measured;
};

void print_split(const std::string& what, const GemmProxy& p) {
  std::vector<double> small, large;
  for (std::size_t i = 0; i < p.errors.size(); ++i) (p.measured[i] < 40e-6 ? small : large).push_back(p.errors[i]);
  print((what + " " + p.name).c_str(), stats(p.errors));
  print((what + " " + p.name + ", >= 40 us").c_str(), stats(large));
  print((what + " " + p.name + ", < 40 us").c_str(), stats(small));
}

std::vector<GemmProxy> gemm_proxies(const std::vector<KernelSample>& rows, KernelModelOptions options,
                                    bool leave_one_out) {
  std::vector<GemmProxy> out;
  for (const std::int64_t dim : {std::int64_t{4096}, std::int64_t{1024}}) {
    GemmProxy p{"any dim " + std::to_string(dim) + " held out", {}, {}};
    const auto held = [&](const KernelSample& s) {
      return s.shape.dtype != "tf32" && (s.shape.m == dim || s.shape.n == dim || s.shape.k == dim);
    };
    p.errors = held_out(rows, held, options);
    for (const KernelSample& s : rows) {
      if (held(s)) p.measured.push_back(s.seconds);
    }
    out.push_back(std::move(p));
  }
  if (!leave_one_out) return out;
  // Each row alone, fitted on the other rows of its dtype (the series is
  // fitted on its own rows only: the same answer, half the time).
  GemmProxy one{"each row held out alone", {}, {}};
  for (const KernelSample& r : rows) {
    if (r.shape.dtype == "tf32") continue;
    std::vector<KernelSample> same;
    for (const KernelSample& s : rows) {
      if (s.shape.dtype == r.shape.dtype) same.push_back(s);
    }
    const auto e = held_out(same, [&](const KernelSample& s) { return s.line == r.line; }, options);
    one.errors.insert(one.errors.end(), e.begin(), e.end());
    one.measured.push_back(r.seconds);
  }
  out.push_back(std::move(one));
  return out;
}

TEST(H100Kernels, GemmBetweenMeasuredDimensions) {
  SKIP_WITHOUT_TESTDATA();
  const auto rows = h100_samples("gemm");
  const auto model = gemm_proxies(rows, {}, true);
  const auto alone = gemm_proxies(rows, {2, 0}, false);
  KernelModelOptions load;
  load.gemm_sustained_load = true;
  const auto with_load = gemm_proxies(rows, load, true);
  for (std::size_t i = 0; i < model.size(); ++i) {
    print_split("gemm:", model[i]);
    if (i < alone.size()) print_split("gemm, curves alone:", alone[i]);
    print_split("gemm, sustained-load term:", with_load[i]);
  }
  // What the model achieves (docs/compute.md, "Accuracy"); a change to it
  // that loses ground fails here.
  const ErrorStats any4096 = stats(model[0].errors), any1024 = stats(model[1].errors), each = stats(model[2].errors);
  EXPECT_LE(any4096.median, 0.05);
  EXPECT_GE(any4096.within_10, 60u);  // of 74
  EXPECT_LE(any1024.median, 0.05);
  EXPECT_GE(any1024.within_10, 58u);  // of 74
  EXPECT_LE(each.median, 0.05);
  EXPECT_GE(each.within_10, 108u);  // of 126
  // The kernels of 40 us or more, off the launch floor: within 10% but a few.
  std::vector<double> large;
  for (const auto& p : model) {
    for (std::size_t i = 0; i < p.errors.size(); ++i) {
      if (p.measured[i] >= 40e-6) large.push_back(p.errors[i]);
    }
  }
  const ErrorStats l = stats(large);
  EXPECT_LE(l.median, 0.04);
  EXPECT_GE(l.within_10, l.n * 9 / 10);
}

// tf32: one row (4096^3). The shape of the bf16 series at that row's level
// (compute/kernel_model.h, "Scaled GEMM series"): 8192^3, which measure.sh
// times but the table lacks, is predicted, not checked; printed for the docs.
TEST(H100Kernels, Tf32FollowsTheBf16SeriesFromItsOneRow) {
  SKIP_WITHOUT_TESTDATA();
  const auto rows = h100_samples("gemm");
  const KernelModel model(rows, h100());
  const auto at = [&](std::int64_t d, const char* dtype) { return model.predict(gemm(d, d, d, dtype)).seconds; };
  const double measured_4096 = 350.7344e-6;
  EXPECT_NEAR(at(4096, "tf32") / measured_4096, 1, 1e-6);
  EXPECT_EQ(model.predict(gemm(8192, 8192, 8192, "tf32")).source, KernelModel::Source::kScaled);
  EXPECT_NEAR(at(8192, "tf32") / (measured_4096 * at(8192, "bf16") / at(4096, "bf16")), 1, 1e-6);
  std::printf("[ predict  ] gemm tf32 8192^3: %.1f us (%.0f TFLOP/s); bf16 8192^3 %.1f us (%.0f TFLOP/s)\n",
              at(8192, "tf32") * 1e6, 2.0 * 8192 * 8192 * 8192 / at(8192, "tf32") / 1e12, at(8192, "bf16") * 1e6,
              2.0 * 8192 * 8192 * 8192 / at(8192, "bf16") / 1e12);
  KernelModelOptions load;
  load.gemm_sustained_load = true;
  const KernelModel loaded(rows, h100(), load);
  const double t = loaded.predict(gemm(8192, 8192, 8192)).seconds;
  std::printf("[ predict  ] with the sustained-load term: bf16 8192^3 %.1f us (%.0f TFLOP/s)\n", t * 1e6,
              2.0 * 8192 * 8192 * 8192 / t / 1e12);
  std::vector<KernelModel::SeriesInfo> fitted = model.series();
  for (const auto& info : loaded.series()) fitted.push_back(info);
  for (const auto& info : fitted) {
    if (info.shape_sizes.size() != 3) continue;
    std::printf("[ fitted   ] %-10s F %.1f us  c0 %.2f us  P %.0f TFLOP/s  a %.0f %.0f %.0f  s %.3f  W0 %.3g FLOP\n",
                info.name.c_str(), info.floor_s * 1e6, info.overhead_s * 1e6, info.rate / 1e12, info.shape_sizes[0],
                info.shape_sizes[1], info.shape_sizes[2], info.load_share, info.load_work);
  }
}

// The two attention shapes and the memory-bound size measure.sh times but
// the tables lack: predicted, not checked (docs/compute.md quotes these).
TEST(H100Kernels, PredictionsAtShapesTheTablesLack) {
  SKIP_WITHOUT_TESTDATA();
  std::vector<KernelSample> rows = h100_samples("attention");
  for (const auto& s : h100_samples("membound")) rows.push_back(s);
  const KernelModel model(rows, h100());
  for (const std::int64_t heads : {8, 16}) {
    const double fwd = model.predict(attention(1, heads, 8192, 128, true, false)).seconds;
    const double bwd = model.predict(attention(1, heads, 8192, 128, true, true)).seconds;
    std::printf("[ predict  ] attention 1 x %lld x 8192 x 128 causal: fwd %.1f us, fwd+bwd %.1f us\n",
                static_cast<long long>(heads), fwd * 1e6, (fwd + bwd) * 1e6);
    EXPECT_GT(bwd, fwd);
  }
  for (const char* op : {"add", "copy", "layernorm", "gelu", "softmax"}) {
    const double t = model.predict(membound(op, std::int64_t{1} << 26)).seconds;
    const double t24 = model.predict(membound(op, std::int64_t{1} << 24)).seconds;
    const double t28 = model.predict(membound(op, std::int64_t{1} << 28)).seconds;
    std::printf("[ predict  ] membound %-9s 2^26: %.1f us\n", op, t * 1e6);
    EXPECT_GT(t, t24);
    EXPECT_LT(t, t28);
  }
}

TEST(H100Kernels, AttentionRowsHeldOutOneAtATime) {
  SKIP_WITHOUT_TESTDATA();
  const auto rows = h100_samples("attention");
  std::vector<double> fwd, bwd;
  for (std::size_t line = 2; line <= 8; ++line) {
    const auto e = held_out(rows, [&](const KernelSample& s) { return s.line == line; });
    ASSERT_EQ(e.size(), 2u);
    fwd.push_back(e[0]);
    bwd.push_back(e[1]);
  }
  const ErrorStats f = stats(fwd), b = stats(bwd);
  print("attention fwd: held-out (leave one out)", f);
  print("attention bwd: held-out (leave one out)", b);
  // Seven shapes that each vary another dimension: every held-out row is an
  // extrapolation along some feature. The forward's tile-schedule law (3
  // parameters) predicts all but the smallest shape (the launch floor, fitted
  // from the others, misses it) and the only head_dim 64 one within 10%.
  EXPECT_LE(f.median, 0.10);
  EXPECT_GE(f.within_10, 5u);
  EXPECT_LE(b.median, 0.10);
  const KernelModel model(rows, h100());
  for (const auto& info : model.series()) {
    std::printf("[ fitted   ] %-28s F %.1f us  c0 %.1f us  P %.1f TFLOP/s\n", info.name.c_str(), info.floor_s * 1e6,
                info.overhead_s * 1e6, info.rate / 1e12);
  }
}

TEST(H100Kernels, MemboundRowsHeldOut) {
  SKIP_WITHOUT_TESTDATA();
  // Per size, every op's row at that size held back at once and predicted
  // from the other three sizes. 2^24 and 2^28 move 34 MB to 1.6 GB, past the
  // 50 MB L2, as the sizes between them (2^26) do; 2^22 is the only size in
  // L2 (its speed-up is then fitted on nothing) and 2^20 sits on the launch
  // floor, whose measurements scatter by 20% (add: 9.8 us at 2^20, 8.1 us at
  // 2^22).
  const auto rows = h100_samples("membound");
  std::vector<double> streaming;
  for (int log2 : {20, 22, 24, 28}) {
    const std::int64_t held = std::int64_t{1} << log2;
    const auto e = held_out(rows, [&](const KernelSample& s) { return s.shape.elements == held; });
    print(("membound: held-out 2^" + std::to_string(log2) + " (every op)").c_str(), stats(e));
    if (log2 >= 24) streaming.insert(streaming.end(), e.begin(), e.end());
  }
  const ErrorStats s = stats(streaming);
  print("membound: held-out 2^24, 2^28", s);
  EXPECT_LE(s.median, 0.10);
  EXPECT_LE(s.max, 0.15);
  // One row at a time: the shared overhead and L2 speed-up come from the other ops.
  std::vector<double> one;
  for (const KernelSample& r : rows) {
    const auto e = held_out(rows, [&](const KernelSample& s) { return s.line == r.line; });
    one.insert(one.end(), e.begin(), e.end());
  }
  const ErrorStats o = stats(one);
  print("membound: held-out one row at a time", o);
  EXPECT_LE(o.median, 0.10);
  const KernelModel model(rows, h100());
  for (const auto& info : model.series()) {
    std::printf("[ fitted   ] %-28s F %.1f us  c0 %.2f us  B %.0f GB/s  L2 x%.2f\n", info.name.c_str(),
                info.floor_s * 1e6, info.overhead_s * 1e6, info.rate / 1e9, info.l2_speedup);
  }
}

}  // namespace
}  // namespace sim

// This file's macro ends here: a unity build compiles other test files after it.
#undef SKIP_WITHOUT_TESTDATA
