// A measured or simulated curve as `sim calibrate` and `sim compare` read it
// (workflows/compare/reference_reader.h): reference CSVs, sim and ASTRA-sim results
// CSVs, and nccl-tests logs, plain or with launcher prefixes. The input is
// read under two names: one naming an all-gather test (nccl-tests sizes are
// then divided by the rank count) and one naming no collective, given as
// all-reduce. Every point read must hold what the readers promise.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "fuzz/harness.h"
#include "workflows/compare/nccl_tests_parser.h"
#include "workflows/compare/reference_reader.h"

namespace {

void check(const sim::workflows::Curve& curve) {
  for (const sim::workflows::CurvePoint& p : curve.points) {
    const bool time_ok = !p.time_ns || (std::isfinite(*p.time_ns) && *p.time_ns >= 0 &&
                                        *p.time_ns <= sim::workflows::kMaxCurveTimeNs);
    const bool busbw_ok = !p.busbw_gbps || (std::isfinite(*p.busbw_gbps) && *p.busbw_gbps >= 0);
    if (p.bytes == 0 || !time_ok || !busbw_ok || p.collective.empty()) {
      std::fprintf(stderr, "reference_curve: a point breaks the reader's promises at %s\n", p.where.c_str());
      std::abort();
    }
  }
  // What compare computes between two points: finite or nothing.
  for (std::size_t i = 1; i < curve.points.size() && i < 64; ++i) {
    const auto& a = curve.points[i - 1].time_ns;
    const auto& b = curve.points[i].time_ns;
    if (!a || !b) continue;
    const std::optional<double> d = sim::workflows::relative_deviation(*a, *b);
    if (d && !std::isfinite(*d)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  const std::string text = fuzz::text_of(data, size);
  fuzz::expect_clean("reference_curve", [&] { check(workflows::parse_curve(text, "fuzz/all_gather_perf.txt")); });
  fuzz::expect_clean("reference_curve", [&] { check(workflows::parse_curve(text, "fuzz/curve.txt", "allreduce")); });
  // Stripping keeps every line: the same count of newlines in and out.
  const std::string stripped = workflows::without_launcher_prefixes(text);
  const auto lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n') + (!s.empty() && s.back() != '\n'); };
  if (stripped != text && lines(stripped) != lines(text)) {
    std::fprintf(stderr, "reference_curve: stripping launcher prefixes changed the line count\n");
    std::abort();
  }
  return 0;
}
