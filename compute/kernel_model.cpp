#include "compute/kernel_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "compute/attention_schedule.h"
#include "core/error.h"

namespace sim {

namespace {

constexpr std::size_t kMaxFeatures = 3;
// Huber's threshold for the curves' loss, in log(time): errors beyond about
// 5% count linearly (see Series::robust_log_error).
constexpr double kHuberLog = 0.05;
// Parameters of the GEMM curve's sustained-load term (load_work, load_share).
constexpr std::size_t kLoadTerms = 2;
// The load term's slow-down is at most this (bounded so that s and W0 cannot
// run off together along the valley where only s / W0 matters).
constexpr double kMaxLoadShare = 0.5;
using Features = std::array<double, kMaxFeatures>;

// The series a shape belongs to: everything but its sizes.
std::string series_name(const KernelShape& s) {
  std::string name = kernel_kind_name(s.kind);
  name.append(" ").append(s.dtype);
  if (s.kind == KernelKind::kAttention) name.append(s.causal ? " causal" : " full").append(s.backward ? " bwd" : " fwd");
  if (s.kind == KernelKind::kMembound) name.append(" ").append(s.op);
  return name;
}

std::size_t feature_count(KernelKind kind) {
  switch (kind) {
    case KernelKind::kGemm: return 3;
    case KernelKind::kAttention: return 3;
    default: return 1;
  }
}

// The law a series' base curve follows (see the header).
enum class Law {
  kCurve,   // GEMM, attention backward: c0 + W / P * prod_j (1 + a_j / x_j)
  kTiles,   // attention forward: c0 + (tile schedule's critical work) / P
  kStream,  // membound: c0 + bytes / bandwidth, faster when the bytes fit in L2
};

Law law_of(const KernelShape& s) {
  if (s.kind == KernelKind::kMembound) return Law::kStream;
  if (s.kind == KernelKind::kAttention && !s.backward) return Law::kTiles;
  return Law::kCurve;
}

// Features along which the base curve has a size term a_j.
std::size_t shape_term_count(const KernelShape& s) {
  return law_of(s) == Law::kCurve ? feature_count(s.kind) : 0;
}


// log2 of the features (see the header).
Features features(const KernelShape& s) {
  const auto l = [](double v) { return std::log2(v); };
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  switch (s.kind) {
    case KernelKind::kGemm: return {l(d(s.batch) * d(s.m)), l(d(s.n)), l(d(s.k))};
    case KernelKind::kAttention: return {l(d(s.batch) * d(s.heads)), l(d(s.seq)), l(d(s.head_dim))};
    default: return {l(d(s.elements)), 0, 0};
  }
}

// The work W a series' law divides by its rate: FLOPs (GEMM, attention
// backward), the tile schedule's (attention forward), bytes (membound).
double work(const KernelShape& s, const KernelModelOptions& options) {
  switch (law_of(s)) {
    case Law::kTiles: return attention_tile_work(s, options.sm_count);
    case Law::kStream: return s.bytes();
    default: return s.flops();
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

using Loss = std::function<double(const std::vector<double>&)>;

// Adaptive coordinate search: each parameter up or down by its step; a step
// that helps grows by half, one that helps in neither direction halves.
// Deterministic and derivative-free (max() makes the losses kinked).
std::pair<double, std::vector<double>> coordinate_search(const Loss& loss, std::vector<double> q, double first_step) {
  std::vector<double> step(q.size(), first_step);
  double current = loss(q);
  for (int round = 0; round < 20000; ++round) {
    bool moving = false;
    for (std::size_t i = 0; i < q.size(); ++i) {
      if (step[i] < 1e-9) continue;
      moving = true;
      bool improved = false;
      for (const double dir : {1.0, -1.0}) {
        std::vector<double> r = q;
        r[i] += dir * step[i];
        const double l = loss(r);
        if (l < current) {
          current = l;
          q = std::move(r);
          improved = true;
          break;
        }
      }
      step[i] *= improved ? 1.5 : 0.5;
    }
    if (!moving) break;
  }
  return {current, q};
}

// A search from `start`, polished by restarted searches with small steps.
std::pair<double, std::vector<double>> polished_search(const Loss& loss, std::vector<double> start) {
  auto found = coordinate_search(loss, std::move(start), 1.0);
  for (int polish = 0; polish < 3; ++polish) {
    auto again = coordinate_search(loss, found.second, 0.1);
    if (!(again.first < found.first)) break;
    found = std::move(again);
  }
  return found;
}

}  // namespace

struct KernelModel::Series {
  std::string name;
  KernelShape prototype;  // kind, dtype, op, causal, pass
  Law law = Law::kCurve;
  std::size_t nf = 1;     // features
  std::size_t terms = 0;  // size terms a_j fitted
  std::vector<Features> x;
  std::vector<double> w, t;  // work, seconds
  std::vector<KernelShape> shapes;
  bool fitted = false;
  // Parameters: F, c0, P, a_0.. (c0 = 0 when not fitted).
  double floor = 0, overhead = 0, rate = 0;
  Features a = {0, 0, 0};
  // GEMM: the sustained-load slow-down 1 + load_share * W / (W + load_work)
  // (load_share = 0: none).
  double load_share = 0, load_work = 1;
  // kStream: work of at most l2_bytes runs l2_speedup times faster.
  double l2_bytes = 0, l2_speedup = 1;
  std::vector<double> residual;  // log(t_i / base(x_i))
  Features lo{}, hi{};           // range of the features (log2)
  double efficiency = 0;

  double base(const Features& f, double work_amount) const {
    double stretch = 1;
    for (std::size_t j = 0; j < terms; ++j) stretch *= 1 + a[j] / std::exp2(f[j]);
    stretch *= 1 + load_share * work_amount / (work_amount + load_work);
    if (law == Law::kStream && work_amount <= l2_bytes) stretch /= l2_speedup;
    return std::max(floor, overhead + work_amount / rate * stretch);
  }

  double distance(const Features& p, const Features& q) const {
    double d2 = 0;
    for (std::size_t j = 0; j < nf; ++j) d2 += (p[j] - q[j]) * (p[j] - q[j]);
    return std::sqrt(d2);
  }

  double squared_log_error() const {
    double sum = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const double e = std::log(base(x[i], w[i]) / t[i]);
      sum += e * e;
    }
    return sum;
  }

  // The curve's loss: Huber's on the log errors, quadratic within kHuberLog
  // (about 5%) and linear beyond, so a few shapes on a slow library kernel
  // (bf16 512 x 4096 x 512 at twice its neighbours' time) or a scattered
  // launch floor do not pull the law off the rest.
  double robust_log_error() const {
    double sum = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const double e = std::fabs(std::log(base(x[i], w[i]) / t[i]));
      sum += e <= kHuberLog ? e * e : 2 * kHuberLog * e - kHuberLog * kHuberLog;
    }
    return sum;
  }

  // The interpolated log correction at f (see the header).
  double correction(const Features& f, double radius) const {
    if (!(radius > 0)) return 0;
    double exact = 0, exact_n = 0;
    double sum = 0, weights = 0, nearest = radius;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double d = distance(f, x[i]);
      if (d < 1e-9) {
        exact += residual[i];
        exact_n += 1;
        continue;
      }
      nearest = std::min(nearest, d);
      if (d >= radius) continue;
      const double wgt = 1 / (d * d) - 1 / (radius * radius);
      sum += wgt * residual[i];
      weights += wgt;
    }
    if (exact_n > 0) return exact / exact_n;  // duplicates: their mean
    if (!(weights > 0)) return 0;
    return sum / weights * std::max(0.0, 1 - nearest / radius);
  }

  // Fits a kCurve or kTiles series on its own rows; GEMMs with the
  // sustained-load term when `fit_load`.
  void fit(bool fit_load, bool squared_loss) {
    const std::size_t n = t.size();
    const std::size_t full = 3 + shape_term_count(prototype);
    bool with_overhead = true;
    // GEMMs: the load term's two parameters when the rows outnumber them all.
    const bool with_load = fit_load && prototype.kind == KernelKind::kGemm && n >= full + kLoadTerms + 1;
    if (n >= full + 1) {
      terms = shape_term_count(prototype);
    } else if (n >= 4) {
      terms = 0;
    } else if (n >= 2) {
      terms = 0;
      with_overhead = false;
    } else {
      fitted = false;
      return;
    }
    // Parameters in log space: F, P, then c0, then a_j.
    const double t_min = *std::min_element(t.begin(), t.end());
    double best_rate = 0;
    for (std::size_t i = 0; i < n; ++i) best_rate = std::max(best_rate, w[i] / t[i]);
    const auto start = [&](double floor_share, double overhead_share) {
      std::vector<double> q;
      q.push_back(std::log(floor_share * t_min));
      q.push_back(std::log(best_rate * 1.2));
      if (with_overhead) q.push_back(std::log(overhead_share * t_min));
      for (std::size_t j = 0; j < terms; ++j) {
        double mean = 0;
        for (const Features& f : x) mean += f[j];
        q.push_back(std::log(std::exp2(mean / static_cast<double>(n)) / 8));
      }
      if (with_load) {
        q.push_back(std::log(*std::max_element(w.begin(), w.end())));  // W0: the largest row's work
        q.push_back(std::log(0.2));                                     // s: a 20% slow-down
      }
      return q;
    };
    const auto apply = [&](const std::vector<double>& q) {
      floor = std::exp(q[0]);
      rate = std::exp(q[1]);
      overhead = with_overhead ? std::exp(q[2]) : 0;
      const std::size_t first_term = with_overhead ? 3 : 2;
      for (std::size_t j = 0; j < terms; ++j) a[j] = std::exp(q[first_term + j]);
      if (with_load) {
        load_work = std::exp(q[first_term + terms]);
        load_share = std::min(kMaxLoadShare, std::exp(q[first_term + terms + 1]));
      }
    };
    const Loss loss = [&](const std::vector<double>& q) {
      apply(q);
      return law == Law::kCurve && !squared_loss ? robust_log_error() : squared_log_error();
    };
    // A few starts (a small or a large overhead), each polished; the best is kept.
    std::pair<double, std::vector<double>> best{INFINITY, {}};
    for (const double overhead_share : {0.03, 0.3}) {
      auto found = polished_search(loss, start(0.25, overhead_share));
      if (found.first < best.first) best = std::move(found);
      if (!with_overhead) break;
    }
    apply(best.second);
    fitted = true;
  }
};

namespace {

// Fits the memory-bound series of one dtype together (kStream):
//
//   t = max(F_op, c0 + bytes / (B_op * (bytes <= L2 ? S : 1)))
//
// per op its launch floor F_op and sustained bandwidth B_op; shared by the
// ops the fixed overhead c0 and the speed-up S of kernels whose bytes fit in
// the L2 cache (the measurements repeat a kernel on the same buffers, so
// those stay in L2). c0 is fitted when the rows outnumber the per-op
// parameters, S when moreover rows lie on both sides of the L2 size; else
// c0 = 0 and S = 1. An op needs 2 rows (one row: the fallback).
void fit_stream_group(const std::vector<KernelModel::Series*>& group, double l2_bytes) {
  std::vector<KernelModel::Series*> ops;
  std::size_t rows = 0;
  bool small = false, large = false;
  for (KernelModel::Series* s : group) {
    s->l2_bytes = l2_bytes;
    if (s->t.size() < 2) continue;
    ops.push_back(s);
    rows += s->t.size();
    for (const double b : s->w) (b <= l2_bytes ? small : large) = true;
  }
  if (ops.empty()) return;
  const bool with_overhead = rows > 2 * ops.size();
  const bool with_l2 = with_overhead && small && large && rows > 2 * ops.size() + 1;
  const std::size_t shared = 2;  // q[0] = log c0, q[1] = log S
  const auto apply = [&](const std::vector<double>& q) {
    for (std::size_t k = 0; k < ops.size(); ++k) {
      KernelModel::Series& s = *ops[k];
      s.overhead = with_overhead ? std::exp(q[0]) : 0;
      s.l2_speedup = with_l2 ? std::exp(q[1]) : 1;
      s.floor = std::exp(q[shared + 2 * k]);
      s.rate = std::exp(q[shared + 2 * k + 1]);
    }
  };
  const Loss loss = [&](const std::vector<double>& q) {
    apply(q);
    double sum = 0;
    for (const KernelModel::Series* s : ops) sum += s->squared_log_error();
    return sum;
  };
  std::pair<double, std::vector<double>> best{INFINITY, {}};
  for (const double overhead_share : {0.03, 0.3}) {
    double t_min = INFINITY;
    for (const KernelModel::Series* s : ops) t_min = std::min(t_min, *std::min_element(s->t.begin(), s->t.end()));
    std::vector<double> q{std::log(overhead_share * t_min), std::log(1.5)};
    for (const KernelModel::Series* s : ops) {
      double best_rate = 0;
      for (std::size_t i = 0; i < s->t.size(); ++i) best_rate = std::max(best_rate, s->w[i] / s->t[i]);
      // F starts at the op's fastest row: a floor below every row would not move.
      q.push_back(std::log(*std::min_element(s->t.begin(), s->t.end())));
      q.push_back(std::log(best_rate));
    }
    auto found = polished_search(loss, q);
    if (found.first < best.first) best = std::move(found);
    if (!with_overhead) break;
  }
  apply(best.second);
  for (KernelModel::Series* s : ops) s->fitted = true;
}

}  // namespace

KernelModel::KernelModel(const std::vector<KernelSample>& samples, std::shared_ptr<const RooflineModel> roofline,
                         KernelModelOptions options)
    : roofline_(std::move(roofline)), options_(options), samples_(samples) {
  if (samples.empty()) throw InputError("the kernel tables hold no rows");
  // A row faster than its roofline (the config's peak FLOP/s and memory
  // bandwidth) beats the GPU; the measured H100 tables stay below it (at most
  // 0.92 of it). A little above can be a cache (a memory-bound kernel whose
  // buffers stay in L2) or a table of another GPU: warned. Far above, no
  // cache or clock explains it (a time in the wrong unit, wrong peaks), and
  // the row would time its kernels in next to nothing: refused.
  std::size_t fast_rows = 0;
  std::string fastest;
  double fastest_factor = 0;
  const auto check_against_roofline = [&](const KernelSample& r, double roof) {
    const double factor = roof / r.seconds;
    if (factor <= kRooflineWarnFactor) return;
    char times[32], text[512];
    std::snprintf(times, sizeof times, factor < 10 ? "%.2f" : factor < 1e6 ? "%.0f" : "%.2g", factor);
    std::snprintf(text, sizeof text, "%s:%zu: a %s kernel of %.6g us is %s times faster than its roofline (%.6g us at "
                  "the peak FLOP/s and memory bandwidth of compute.peak_tflops and compute.memory_bandwidth)",
                  r.file.c_str(), r.line, series_name(r.shape).c_str(), r.seconds * 1e6, times, roof * 1e6);
    if (factor > kRooflineRefuseFactor) {
      throw InputError(std::string(text) + ": no cache or clock explains more than " +
                       std::to_string(static_cast<int>(kRooflineRefuseFactor)) +
                       " times; is the time in us, and are the peaks this GPU's?");
    }
    ++fast_rows;
    if (factor > fastest_factor) {
      fastest_factor = factor;
      fastest = text;
    }
  };
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<const KernelSample*>> rows;
  for (const KernelSample& s : samples) {
    const std::string name = series_name(s.shape);
    auto [it, fresh] = index.emplace(name, series_.size());
    if (fresh) {
      auto series = std::make_unique<Series>();
      series->name = name;
      series->prototype = s.shape;
      series->law = law_of(s.shape);
      series->nf = feature_count(s.shape.kind);
      series_.push_back(std::move(series));
      rows.emplace_back();
    }
    rows[it->second].push_back(&s);
  }
  for (std::size_t k = 0; k < series_.size(); ++k) {
    Series& s = *series_[k];
    for (std::size_t j = 0; j < kMaxFeatures; ++j) {
      s.lo[j] = INFINITY;
      s.hi[j] = -INFINITY;
    }
    std::vector<std::pair<double, double>> by_work;  // (work, roofline / measured)
    for (const KernelSample* r : rows[k]) {
      const Features f = features(r->shape);
      s.x.push_back(f);
      s.shapes.push_back(r->shape);
      s.w.push_back(work(r->shape, options_));
      s.t.push_back(r->seconds);
      for (std::size_t j = 0; j < s.nf; ++j) {
        s.lo[j] = std::min(s.lo[j], f[j]);
        s.hi[j] = std::max(s.hi[j], f[j]);
      }
      double roof = 0;
      try {
        roof = roofline_->kernel_seconds(r->shape);
      } catch (const InputError& e) {
        throw InputError(r->file + ":" + std::to_string(r->line) + ": " + e.what());
      }
      by_work.emplace_back(s.w.back(), roof / r->seconds);
      check_against_roofline(*r, roof);
    }
    // Ties keep file order, so the choice is deterministic.
    std::stable_sort(by_work.begin(), by_work.end(), [](const auto& p, const auto& q) { return p.first > q.first; });
    std::vector<double> top;
    for (std::size_t i = 0; i < by_work.size() && i < 3; ++i) top.push_back(by_work[i].second);
    s.efficiency = median(top);
  }
  if (fast_rows > 0) {
    warnings_.push_back(fastest + (fast_rows > 1 ? " (the fastest of " + std::to_string(fast_rows) + " rows more than " +
                                                       std::to_string(static_cast<int>(kRooflineWarnFactor)) +
                                                       " times faster)" : std::string()) +
                        ": a measured kernel beats its roofline only from a cache; check the table's unit (us) and "
                        "GPU");
  }
}

// The laws' fits take about 0.1 s for the H100 tables (searches over every
// series' parameters): a run that times no kernel (a collective on an H100
// preset, most points of a sweep) should not pay them, so they run on the
// first prediction, once (loading threads may ask at the same time). The
// rows were checked in the constructor, so bad input still fails there.
void KernelModel::fit() const {
  std::call_once(fitted_, [this] {
    std::map<std::string, std::vector<Series*>> stream_groups;  // by dtype
    for (const auto& p : series_) {
      Series& s = *p;
      if (s.law == Law::kStream) {
        stream_groups[s.prototype.dtype].push_back(&s);
      } else {
        s.fit(options_.gemm_sustained_load, options_.curve_loss == KernelModelOptions::CurveLoss::kSquared);
      }
    }
    for (const auto& [dtype, group] : stream_groups) fit_stream_group(group, options_.l2_bytes);
    for (const auto& s : series_) {
      if (!s->fitted) continue;
      for (std::size_t i = 0; i < s->t.size(); ++i) s->residual.push_back(std::log(s->t[i] / s->base(s->x[i], s->w[i])));
    }
  });
}

KernelModel::~KernelModel() = default;

std::shared_ptr<const KernelModel> KernelModel::with_options(KernelModelOptions options) const {
  return std::make_shared<const KernelModel>(samples_, roofline_, options);
}

const KernelModel::Series* KernelModel::find(const KernelShape& shape) const {
  const std::string name = series_name(shape);
  for (const auto& s : series_) {
    if (s->name == name) return s.get();
  }
  return nullptr;
}

const KernelModel::Series* KernelModel::closest(const KernelShape& shape) const {
  const Series* best = nullptr;
  std::tuple<bool, bool, bool, std::size_t> best_key{};
  for (const auto& s : series_) {
    const KernelShape& p = s->prototype;
    if (p.kind != shape.kind) continue;
    const std::tuple<bool, bool, bool, std::size_t> key{p.dtype == shape.dtype, p.backward == shape.backward,
                                                        p.op == "copy", s->t.size()};
    if (!best || key > best_key) {  // ties: the first series read
      best = s.get();
      best_key = key;
    }
  }
  return best;
}

std::optional<double> KernelModel::answer(const Series& s, const KernelShape& shape) const {
  if (!s.fitted) return std::nullopt;
  const Features f = features(shape);
  // The physical laws (tile schedule, streaming) extrapolate; the GEMM
  // curve's size terms are trusted only near the rows.
  for (std::size_t j = 0; s.law == Law::kCurve && j < s.nf; ++j) {
    if (f[j] < s.lo[j] - options_.reach_octaves || f[j] > s.hi[j] + options_.reach_octaves) return std::nullopt;
  }
  return s.base(f, work(shape, options_)) * std::exp(s.correction(f, options_.residual_octaves));
}

const KernelModel::Series* KernelModel::reference_gemm() const {
  const Series* best = nullptr;
  for (const auto& s : series_) {
    if (s->prototype.kind == KernelKind::kGemm && s->fitted && (!best || s->t.size() > best->t.size())) best = s.get();
  }
  return best;
}

std::optional<double> KernelModel::scaled_gemm(const Series& own, const KernelShape& shape) const {
  const Series* ref = reference_gemm();
  if (!ref || own.prototype.kind != KernelKind::kGemm) return std::nullopt;
  const auto as_ref = [&](KernelShape s) {
    s.dtype = ref->prototype.dtype;
    return answer(*ref, s);
  };
  const std::optional<double> t = as_ref(shape);
  if (!t) return std::nullopt;
  double log_ratio = 0;
  for (std::size_t i = 0; i < own.shapes.size(); ++i) {
    const std::optional<double> at_row = as_ref(own.shapes[i]);
    if (!at_row) return std::nullopt;
    log_ratio += std::log(own.t[i] / *at_row);
  }
  if (own.shapes.empty()) return std::nullopt;
  return *t * std::exp(log_ratio / static_cast<double>(own.shapes.size()));
}

KernelModel::Prediction KernelModel::predict(const KernelShape& shape) const {
  fit();
  const Series* own = find(shape);
  const Features f = features(shape);
  if (own && own->fitted) {
    if (const std::optional<double> t = answer(*own, shape)) return {*t, Source::kTable, own->name};
  }
  // A GEMM series of too few rows for a curve (tf32: one row) follows the
  // best-measured GEMM series' prediction, scaled by its rows' mean ratio.
  if (own && !own->fitted) {
    if (const std::optional<double> t = scaled_gemm(*own, shape)) return {*t, Source::kScaled, own->name};
  }
  // Attention forward under the other mask (full where causal was measured):
  // the same tile-schedule law, which counts each mask's blocks.
  if (!own && law_of(shape) == Law::kTiles) {
    for (const auto& s : series_) {
      if (s->law == Law::kTiles && s->fitted && s->prototype.dtype == shape.dtype) {
        return {s->base(f, work(shape, options_)), Source::kFallback, s->name};
      }
    }
  }
  const Series* proxy = own ? own : closest(shape);
  if (!proxy) return {roofline_->kernel_seconds(shape), Source::kRoofline, ""};
  // The launch floor of the kind's best-measured fitted series.
  double floor = 0;
  std::size_t most = 0;
  for (const auto& s : series_) {
    if (s->prototype.kind == shape.kind && s->fitted && s->t.size() > most) {
      most = s->t.size();
      floor = s->floor;
    }
  }
  return {std::max(floor, roofline_->kernel_seconds(shape) / proxy->efficiency), Source::kFallback, proxy->name};
}

std::optional<double> KernelModel::seconds(const ComputeNode& node) const {
  if (node.kernel) return predict(*node.kernel).seconds;
  return roofline_->seconds(node);
}

std::vector<std::string> KernelModel::membound_ops() const {
  std::set<std::string> ops;
  for (const KernelSample& s : samples_) {
    if (s.shape.kind == KernelKind::kMembound) ops.insert(s.shape.op);
  }
  return {ops.begin(), ops.end()};
}

std::vector<KernelModel::SeriesInfo> KernelModel::series() const {
  fit();
  std::vector<SeriesInfo> out;
  for (const auto& s : series_) {
    SeriesInfo info;
    info.name = s->name;
    info.rows = s->t.size();
    info.fitted = s->fitted;
    info.floor_s = s->floor;
    info.overhead_s = s->overhead;
    info.rate = s->rate;
    info.l2_speedup = s->l2_speedup;
    for (std::size_t j = 0; j < s->terms; ++j) info.shape_sizes.push_back(s->a[j]);
    info.load_share = s->load_share;
    info.load_work = s->load_work;
    info.efficiency = s->efficiency;
    out.push_back(std::move(info));
  }
  return out;
}

std::string KernelModel::describe() const {
  std::size_t rows = 0;
  for (const auto& s : series_) rows += s->t.size();
  char buf[160];
  std::snprintf(buf, sizeof buf, "measured kernels: %zu samples in %zu series, GEMMs within %gx of the table; beyond: ",
                rows, series_.size(), std::exp2(options_.reach_octaves));
  return buf + roofline_->describe();
}

}  // namespace sim
