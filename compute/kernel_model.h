// Compute from measured kernels: a COMP node with kernel attributes
// (workload/kernel_shape.h) takes the time a table of measured kernels
// (compute/kernel_table.h) says a kernel of its kind and shape takes.
//
// The rows are grouped into series: GEMM per dtype, attention per dtype,
// causal or not and pass, memory-bound ops per op and dtype. Each series has a
// base law fitted to its rows (least squares of log(base / measured), a
// deterministic coordinate search), times an interpolated correction:
//
//   t(x) = base(x) * exp(r(x))
//
// Base laws (F a launch floor, c0 a fixed overhead, P a rate):
//
//   GEMM, attention backward (a curve in log2 space of the features
//   gemm (batch*m, n, k), attention (batch*heads, seq, head_dim)):
//     base = max(F, c0 + FLOP / P * prod_j (1 + a_j / x_j))
//   a_j the size along feature j at which it alone halves the rate; fitted
//   with Huber's loss on the log errors (robust to single slow shapes). With
//   options.gemm_sustained_load, GEMMs times 1 + s W / (W + W0).
//
//   attention forward (compute/attention_schedule.h):
//     base = max(F, c0 + W_tiles / P)
//   W_tiles the busiest SM's work in a FlashAttention-style schedule of
//   128 x 128 blocks on `sm_count` SMs, head_dim and mask included.
//
//   memory-bound ops, all ops of a dtype fitted together:
//     base = max(F_op, c0 + bytes / (B_op * (bytes <= l2_bytes ? S : 1)))
//   per op its floor and bandwidth; c0 and the L2 speed-up S shared.
//
// r(x) interpolates the log residuals r_i = log(t_i / base(x_i)) of the rows
// by inverse squared distance within `residual_octaves` of x, faded linearly
// to 0 at that distance, so every measured row is reproduced exactly and the
// correction does not reach far from the measurements.
//
// Scaled GEMM series. A GEMM series of too few rows to fit (the H100 table's
// one tf32 row) takes the shape of the fitted GEMM series with the most rows
// (ties: the first read) and its own level: t = t_ref(shape) * exp(mean_i
// log(t_i / t_ref(row_i))), within the reference's reach (else the fallback).
// The same tensor cores run both; only the rate differs (tf32's peak is half
// bf16's), so the wave, tile and power behaviour across sizes carries over.
//
// Reach and fallback. The two physical laws answer any size. A GEMM is
// answered by its series when each of its features lies within the series'
// range widened by `reach_octaves` (2: a factor of 4) on both sides.
// Otherwise, and for kinds the table has a series of but not this one (fp8
// GEMM, an op not measured, attention backward under the other mask), the
// time is the roofline (compute/roofline.h) divided by an efficiency fitted
// on the table's largest shapes, and never below the launch floor:
//
//   t = max(F_kind, roofline(shape) / e)
//
// e is the median, over the 3 rows of largest work of the series (or of the
// closest series: same dtype, same pass, then `copy` for membound ops, then
// the most rows), of roofline(row) / measured(row); F_kind is the floor F of
// the kind's series with the most rows. Attention forward under the other
// mask takes the measured mask's tile law (it counts each mask's blocks). A
// kind the tables hold no row of is timed by the plain roofline. Nodes
// without kernel attributes are timed by the plain roofline from
// num_ops/tensor_size, or replay their duration.
//
// Fewer rows, fewer parameters: a curve or tile series fits all of F, c0, P
// (and its a_j) with at least (3 + number of a_j + 1) rows, F, c0 and P with
// 4 or more, F and P with 2 or 3; a memory-bound op needs 2 rows, and c0 (S)
// is fitted when the dtype's rows outnumber the per-op parameters (by 2, with
// rows on both sides of l2_bytes). A GEMM series of one row is scaled from the
// best-measured GEMM series (below); a series of one row of another kind is
// used through the fallback only.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "compute/compute_model.h"
#include "compute/kernel_table.h"
#include "compute/roofline.h"

namespace sim {

struct KernelModelOptions {
  double reach_octaves = 2;     // the fit answers up to 2^reach outside the table's range
  double residual_octaves = 2;  // a row's correction fades to nothing at 2^this away; 0: the fitted curves alone
  // The GPU the tables were measured on; the defaults are an H100 SXM's
  // (NVIDIA H100 whitepaper: 132 SMs, 50 MB of L2).
  int sm_count = 132;     // attention forward: SMs the tile schedule runs on
  double l2_bytes = 50e6; // membound: kernels moving at most this many bytes may run from L2
  // GEMM curves with the sustained-load factor 1 + s W / (W + W0) (docs/compute.md):
  // off by default; on, it shifts the calibrated presets' whole-iteration
  // predictions (docs/published-runs.md), whose efficiencies were fitted without it.
  bool gemm_sustained_load = false;
  // The loss the curves (GEMM, attention backward) are fitted with: Huber's
  // on the log errors (the default: a few slow library kernels do not pull a
  // law off the rest) or plain squared log errors (docs/compute.md compares them).
  enum class CurveLoss : std::uint8_t { kHuber, kSquared };
  CurveLoss curve_loss = CurveLoss::kHuber;
};

class KernelModel final : public ComputeModel {
 public:
  // Throws InputError when `samples` is empty, or for a dtype without a
  // peak in the roofline.
  KernelModel(const std::vector<KernelSample>& samples, std::shared_ptr<const RooflineModel> roofline,
              KernelModelOptions options = {});
  ~KernelModel() override;

  std::optional<double> seconds(const ComputeNode& node) const override;
  std::string describe() const override;

  // kScaled: a GEMM series of too few rows for a curve, by the best-measured
  // GEMM series' prediction times its rows' mean ratio to it.
  enum class Source { kTable, kScaled, kFallback, kRoofline };
  struct Prediction {
    double seconds = 0;
    Source source = Source::kTable;
    std::string series;  // the series that answered ("" for the plain roofline)
  };
  Prediction predict(const KernelShape& shape) const;

  // What was fitted, for reports, docs and tests.
  struct SeriesInfo {
    std::string name;  // "gemm bf16", "attention bf16 causal fwd", "membound bf16 add"
    std::size_t rows = 0;
    bool fitted = false;
    double floor_s = 0, overhead_s = 0, rate = 0;  // F, c0, P (per second)
    double l2_speedup = 1;                // membound: S
    std::vector<double> shape_sizes;      // a_j
    double load_share = 0, load_work = 0; // GEMM: s and W0 of the sustained-load term
    double efficiency = 0;                // e
  };
  std::vector<SeriesInfo> series() const;
  // About the tables: rows faster than their roofline by more than
  // kRooflineWarnFactor (those faster by more than kRooflineRefuseFactor
  // are refused by the constructor, naming file and line).
  const std::vector<std::string>& warnings() const { return warnings_; }
  static constexpr double kRooflineWarnFactor = 2;
  static constexpr double kRooflineRefuseFactor = 100;
  // The memory-bound ops the tables measured (any dtype), sorted.
  std::vector<std::string> membound_ops() const;
  const RooflineModel& roofline() const { return *roofline_; }
  const KernelModelOptions& options() const { return options_; }
  // The same tables and roofline under other options.
  std::shared_ptr<const KernelModel> with_options(KernelModelOptions options) const;

  struct Series;

 private:
  const Series* find(const KernelShape& shape) const;
  const Series* closest(const KernelShape& shape) const;
  // The series' own prediction, when the shape is within its reach.
  std::optional<double> answer(const Series& s, const KernelShape& shape) const;
  const Series* reference_gemm() const;  // the fitted GEMM series with the most rows
  std::optional<double> scaled_gemm(const Series& own, const KernelShape& shape) const;
  void fit() const;  // the laws' fits, on first use (kernel_model.cpp says why)

  std::shared_ptr<const RooflineModel> roofline_;
  KernelModelOptions options_;
  std::vector<KernelSample> samples_;
  std::vector<std::unique_ptr<Series>> series_;
  std::vector<std::string> warnings_;
  mutable std::once_flag fitted_;
};

}  // namespace sim
