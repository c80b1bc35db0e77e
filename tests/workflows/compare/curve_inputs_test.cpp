// What the curve readers of `sim calibrate` and `sim compare` refuse, and the
// launcher prefixes they strip: every value is checked where it is read, and
// an error names the file, line and column.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "core/error.h"
#include "workflows/sweep_fixture.h"
#include "workflows/compare/compare.h"
#include "workflows/compare/curve_table.h"
#include "workflows/compare/nccl_tests_parser.h"
#include "workflows/compare/reference_reader.h"

namespace sim::testing {
namespace {

using workflows::Curve;
using workflows::parse_curve;

const std::string kHeader = "system,ranks,collective,size_bytes,time_us,algbw_GBps,busbw_GBps,source\n";

std::string error_of(const std::string& text, const std::string& path, const std::string& collective = "") {
  try {
    parse_curve(text, path, collective);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CurveInputs, NonFiniteZeroOrNegativeTimesAndSizesInAReferenceCsvNameFileLineAndColumn) {
  const auto row = [](const std::string& size, const std::string& time) {
    return kHeader + "x,8,all_reduce,1024,35.8,0.03,0.05,s\nx,8,all_reduce," + size + "," + time + ",0.03,0.05,s\n";
  };
  EXPECT_EQ(error_of(row("2048", "nan"), "r.csv"), "r.csv:3: column 5 (time_us): 'nan' is not a finite number");
  EXPECT_EQ(error_of(row("2048", "inf"), "r.csv"), "r.csv:3: column 5 (time_us): 'inf' is not a finite number");
  EXPECT_EQ(error_of(row("2048", "-inf"), "r.csv"), "r.csv:3: column 5 (time_us): '-inf' is not a finite number");
  EXPECT_EQ(error_of(row("2048", "0"), "r.csv"), "r.csv:3: column 5 (time_us): time '0' must be above 0");
  EXPECT_EQ(error_of(row("2048", "-3"), "r.csv"), "r.csv:3: column 5 (time_us): time '-3' must be above 0");
  EXPECT_EQ(error_of(row("2048", "1e300"), "r.csv"), "r.csv:3: column 5 (time_us): time '1e300' is above 10^16 ns (116 days)");
  EXPECT_EQ(error_of(row("0", "35"), "r.csv"),
            "r.csv:3: column 4 (size_bytes): size 0 B: a collective that moves nothing has no time or bandwidth to fit "
            "or compare (delete the row)");
  EXPECT_EQ(error_of(row("-1024", "35"), "r.csv"),
            "r.csv:3: column 4 (size_bytes): '-1024' is not a byte count (digits, below 2^64)");
  EXPECT_EQ(error_of(row("18446744073709551616", "35"), "r.csv"),
            "r.csv:3: column 4 (size_bytes): '18446744073709551616' is not a byte count (digits, below 2^64)");
  EXPECT_EQ(error_of(kHeader + "x,8,all_reduce,1024,35.8,0.03,nan,s\n", "r.csv"),
            "r.csv:2: column 7 (busbw_GBps): 'nan' is not a finite number");
  EXPECT_EQ(error_of(kHeader + "x,8,all_reduce,1024,35.8,0.03,-1,s\n", "r.csv"),
            "r.csv:2: column 7 (busbw_GBps): bandwidth '-1' is negative");
  EXPECT_EQ(error_of("ranks,collective,size_bytes,time_us,time_us,busbw_GBps\n8,all_reduce,1024,1,2,3\n", "r.csv"),
            "r.csv:1: column 5 ('time_us') is named twice in the header");
  // A simulated curve may hold a time of 0 (a collective of one rank); not nan.
  const std::string sim = "point,size,status,collective,bytes,time_ns,busbw_gbps,algorithm,npus\n";
  EXPECT_EQ(parse_curve(sim + "0,8,ok,ALL_REDUCE,1024,0,0,ring,1\n", "s.csv").points.at(0).time_ns, 0.0);
  EXPECT_EQ(error_of(sim + "0,8,ok,ALL_REDUCE,1024,nan,0,ring,1\n", "s.csv"),
            "s.csv:2: column 6 (time_ns): 'nan' is not a finite number");
}

TEST(CurveInputs, AByteOrderMarkBeforeTheHeaderIsSkipped) {
  const std::string text = kHeader + "x,8,all_reduce,1024,35.84,0.03,0.05,s\n";
  const Curve plain = parse_curve(text, "r.csv"), bom = parse_curve("\xEF\xBB\xBF" + text, "r.csv");
  ASSERT_EQ(bom.points.size(), 1u);
  EXPECT_EQ(bom.format, "reference-curve");
  EXPECT_EQ(bom.points[0].time_ns, plain.points[0].time_ns);
  EXPECT_EQ(bom.points[0].columns.at("system"), "x");
}

TEST(CurveInputs, EveryOtherColumnOfAReferenceCsvCanBeFilteredOn) {
  const Curve c = parse_curve(kHeader + "\"H100 x8\",8,all_reduce,1024,35.84,0.03,0.05,xla\n", "r.csv");
  ASSERT_EQ(c.points.size(), 1u);
  EXPECT_EQ(*workflows::column_value(c.points[0], "system"), "H100 x8");
  EXPECT_EQ(*workflows::column_value(c.points[0], "source"), "xla");
  EXPECT_EQ(*workflows::column_value(c.points[0], "npus"), "8");
  EXPECT_EQ(workflows::column_value(c.points[0], "colour"), nullptr);
  EXPECT_EQ(c.points[0].labels.count("system"), 0u);  // not matched on
}

// A small all_reduce_perf log, and its rows at `line` (1-based) on.
const std::vector<std::string> kLog = {
    "# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 4(factor) warmup iters: 5 iters: 20",
    "#",
    "# Using devices",
    "#  Rank  0 Group  0 Pid  1 on node device  0 [0x18] NVIDIA H100 80GB HBM3",
    "#  Rank  1 Group  0 Pid  2 on node device  1 [0x28] NVIDIA H100 80GB HBM3",
    "#",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
    "        1024           256     float     sum      -1   250.00    0.00    0.00      0   249.70    0.00    0.00      0",
    "        4096          1024     float     sum      -1    30.01    0.14    0.14      0    29.71    0.14    0.14      0",
    "# Avg bus bandwidth    : 0.12",
};

std::string joined(const std::vector<std::string>& lines, const std::string& prefix) {
  std::string s;
  for (const std::string& l : lines) s += prefix + l + "\n";
  return s;
}

void expect_same_curve(const Curve& a, const Curve& b) {
  ASSERT_EQ(a.points.size(), b.points.size());
  for (std::size_t i = 0; i < a.points.size(); ++i) {
    EXPECT_EQ(a.points[i].bytes, b.points[i].bytes);
    EXPECT_EQ(a.points[i].time_ns, b.points[i].time_ns);
    EXPECT_EQ(a.points[i].busbw_gbps, b.points[i].busbw_gbps);
    EXPECT_EQ(a.points[i].labels, b.points[i].labels);
    EXPECT_EQ(a.points[i].where, b.points[i].where);  // the same line numbers
  }
}

TEST(CurveInputs, NcclTestsLogsThroughMpirunTagOutputOrSrunLabelGiveThePlainLogsCurve) {
  const Curve plain = parse_curve(joined(kLog, ""), "all_reduce_perf.txt");
  ASSERT_EQ(plain.points.size(), 2u);
  EXPECT_EQ(plain.points[1].where, "all_reduce_perf.txt:10");
  EXPECT_EQ(plain.points[1].labels.at("npus"), "2");
  expect_same_curve(plain, parse_curve(joined(kLog, "[1,0]<stdout>:"), "all_reduce_perf.txt"));
  expect_same_curve(plain, parse_curve(joined(kLog, "0: "), "all_reduce_perf.txt"));
  expect_same_curve(plain, parse_curve(joined(kLog, " 0: "), "all_reduce_perf.txt"));  // srun pads to the widest task id
  // Other ranks' lines (NCCL's log) are left out; blank lines need no prefix.
  std::string mixed;
  for (const std::string& l : kLog) {
    mixed += "[1,0]<stdout>:" + l + "\n[1,1]<stdout>:node:2:2 [1] NCCL INFO comm 0x1 rank 1 nranks 2\n";
  }
  const Curve m = parse_curve(mixed + "\n", "all_reduce_perf.txt");
  ASSERT_EQ(m.points.size(), 2u);
  EXPECT_EQ(m.points[1].where, "all_reduce_perf.txt:19");
  EXPECT_EQ(m.points[1].time_ns, plain.points[1].time_ns);
  // Errors name the file's line.
  std::vector<std::string> bad = kLog;
  bad[9] = "        4096          1024     float     sum      -1      nan    0.14    0.24      0    29.71    0.14    0.24      0";
  EXPECT_EQ(error_of(joined(bad, "3: "), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:10: column 6 (time): 'nan' is not a time in us (a finite number above 0, at most 1e13)");
  // Two forms, or a line without a prefix: not one launcher's output, not stripped.
  std::string two = joined({kLog.begin(), kLog.begin() + 5}, "0: ") + joined({kLog.begin() + 5, kLog.end()}, "[1,0]<stdout>:");
  EXPECT_NE(error_of(two, "all_reduce_perf.txt").find("all_reduce_perf.txt:1: not a sim results CSV"), std::string::npos);
}

TEST(CurveInputs, NcclTestsValuesAreChecked) {
  const auto with_row = [](const std::string& size, const std::string& time, const std::string& busbw) {
    std::vector<std::string> lines(kLog.begin(), kLog.begin() + 8);
    lines.push_back("  " + size + "  256  float  sum  -1  " + time + "  0.03  " + busbw + "  0  29.70  0.03  0.06  0");
    return joined(lines, "");
  };
  EXPECT_EQ(error_of(with_row("1024", "inf", "0.1"), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:9: column 6 (time): 'inf' is not a time in us (a finite number above 0, at most 1e13)");
  EXPECT_EQ(error_of(with_row("1024", "0", "0.1"), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:9: column 6 (time): '0' is not a time in us (a finite number above 0, at most 1e13)");
  EXPECT_EQ(error_of(with_row("1024", "30", "nan"), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:9: column 8 (busbw): 'nan' is not a bandwidth in GB/s (a finite number, 0 or more)");
  EXPECT_EQ(error_of(with_row("0", "30", "0"), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:9: column 1 (size): size 0 B: a collective that moves nothing has no time or bandwidth "
            "to fit or compare (delete the row, or run nccl-tests with -b above 0)");
  EXPECT_EQ(error_of(with_row("-1024", "30", "0.1"), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:9: column 1 (size): '-1024' is not a byte count (digits, below 2^64)");
  EXPECT_EQ(error_of(with_row("1e3", "30", "0.1"), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:9: column 1 (size): '1e3' is not a byte count (digits, below 2^64)");
  EXPECT_EQ(error_of(with_row("1001", "30", "0.02"), "all_gather_perf.txt"),
            "all_gather_perf.txt:9: column 1 (size): all-gather size 1001 B is not a multiple of the 2 ranks the "
            "'# Rank' lines list");
  // A second header with more columns than the rows before it (found by fuzzing: read past the rows).
  EXPECT_EQ(error_of(joined(kLog, "") + "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  "
                                        "busbw  #wrong  extra\n",
                     "all_reduce_perf.txt"),
            "all_reduce_perf.txt:12: a second column header with other columns than the first (one nccl-tests run per "
            "file)");
  // The same header again is read on (a second run's '# Rank' lines are not: NcclTestsRankLinesListEachRankOnce...).
  EXPECT_EQ(error_of(joined(kLog, "") + joined({kLog.begin() + 6, kLog.end()}, ""), "all_reduce_perf.txt"), "no error");
  EXPECT_EQ(error_of(joined(kLog, "") + "# Avg bus bandwidth    : fast\n", "all_reduce_perf.txt"),
            "all_reduce_perf.txt:12: the 'Avg bus bandwidth' summary 'fast' is not a bandwidth (a finite number, 0 or more)");
}

// A failed run is no measurement: a row whose check counted wrong values,
// and a log whose summary says FAILED.
TEST(CurveInputs, NcclTestsRunsThatFailedTheirCheckAreRefused) {
  std::vector<std::string> lines(kLog.begin(), kLog.begin() + 8);
  lines.push_back("  1024  256  float  sum  -1  30.00  0.03  0.03  17  29.70  0.03  0.03  0");
  EXPECT_EQ(error_of(joined(lines, ""), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:9: column 9 (#wrong): 17 wrong values: nccl-tests' check failed on this row, which is "
            "no measurement");
  lines.back() = "  1024  256  float  sum  -1  30.00  0.03  0.03  N/A  29.70  0.03  0.03  N/A";  // run without -c
  EXPECT_EQ(error_of(joined(lines, ""), "all_reduce_perf.txt"), "no error");
  EXPECT_EQ(error_of(joined(kLog, "") + "# Out of bounds values : 2048 FAILED\n", "all_reduce_perf.txt"),
            "all_reduce_perf.txt:12: nccl-tests' check FAILED (Out of bounds values : 2048 FAILED): a run with wrong "
            "results is no measurement");
  EXPECT_EQ(error_of(joined(kLog, "") + "# Out of bounds values : 0 OK\n", "all_reduce_perf.txt"), "no error");
}

// The collective given for a file: unknown names are refused, and a CSV,
// which names each row's own, takes none.
TEST(CurveInputs, AGivenCollectiveIsKnownAndOnlyForNcclTestsLogs) {
  EXPECT_EQ(error_of(joined(kLog, ""), "log.txt", "bogus"),
            "unknown collective 'bogus' for log.txt: expected allreduce, allgather, reducescatter, alltoall, broadcast, "
            "reduce, ...");
  EXPECT_EQ(error_of(joined(kLog, ""), "log.txt", "allreduce"), "no error");
  EXPECT_EQ(error_of(kHeader + "x,8,all_reduce,1024,35.84,0.03,0.05,s\n", "r.csv", "allreduce"),
            "r.csv: a CSV names each row's collective; the collective 'allreduce' given for it applies to nccl-tests "
            "output only");
}

// A measured row says what it measured, at a time the simulator can resolve;
// counts are numbers, and two columns of the rank count agree.
TEST(CurveInputs, AReferenceRowNamesItsCollectiveAndOneRankCount) {
  EXPECT_EQ(error_of(kHeader + "x,8,all_reduce,1024,35.84,0.03,0.05,s\nx,8,,2048,35,0.06,0.1,s\n", "r.csv"),
            "r.csv:3: column 3 (collective): empty: which collective was measured?");
  EXPECT_EQ(error_of(kHeader + "x,8,all_reduce,1024,1e-7,1.024e7,1.792e7,s\n", "r.csv"),
            "r.csv:2: column 5 (time_us): time '1e-7' is below 1 ps, the simulator's resolution: no measurement");
  const std::string both = "ranks,npus,collective,size_bytes,time_us,busbw_GBps\n";
  EXPECT_EQ(error_of(both + "16,32,all_reduce,1024,35.84,0.05\n", "r.csv"),
            "r.csv:2: npus '32' and ranks '16' disagree: which is the rank count?");
  const Curve c = parse_curve(both + "016,16,all_reduce,1024,35.84,0.05\n", "r.csv");
  ASSERT_EQ(c.points.size(), 1u);
  EXPECT_EQ(c.points[0].labels.at("npus"), "16");  // matched as the number it is
  EXPECT_EQ(c.points[0].columns.count("npus"), 0u);
  // --filter reads the rank count by either name, counts as numbers, the collective by any spelling.
  using workflows::filter_matches;
  EXPECT_EQ(filter_matches(c.points[0], "ranks", "16"), std::optional<bool>(true));
  EXPECT_EQ(filter_matches(c.points[0], "npus", "0016"), std::optional<bool>(true));
  EXPECT_EQ(filter_matches(c.points[0], "npus", "8"), std::optional<bool>(false));
  EXPECT_EQ(filter_matches(c.points[0], "collective", "allreduce"), std::optional<bool>(true));
  EXPECT_EQ(filter_matches(c.points[0], "collective", "all_gather"), std::optional<bool>(false));
  EXPECT_EQ(filter_matches(c.points[0], "colour", "red"), std::nullopt);
}

TEST(CurveInputs, CompareNeverReportsADeviationFromAReferenceOfZero) {
  TempDir tmp("compare_zero_reference");
  // nccl-tests prints busbw 0.00 below its resolution (the 1 KiB row of kLog).
  spit(tmp / "all_reduce_perf.txt", joined(kLog, ""));
  spit(tmp / "ours.csv", kHeader + "x,2,all_reduce,1024,200,0.01,0.01,s\nx,2,all_reduce,4096,30.01,0.14,0.14,s\n");
  workflows::CompareOptions o;
  o.results = tmp / "ours.csv";
  o.reference = tmp / "all_reduce_perf.txt";
  o.metric = "busbw";
  o.tolerance = 0.05;
  std::ostringstream out;
  EXPECT_EQ(workflows::compare_curves(o, out), 0) << out.str();
  EXPECT_EQ(out.str().find("nan"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("inf"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("not compared: (ALL_REDUCE 1024 B, npus=2): the reference busbw at " + (tmp / "all_reduce_perf.txt") +
                           ":9 is 0 (no finite relative deviation)"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("1 points compared (0 without a reference point, 1 against a reference of 0), 0 outside 5%"),
            std::string::npos)
      << out.str();
  // --filter on a column that is not a label (a reference CSV's `system`).
  o.results = tmp / "all_reduce_perf.txt";
  o.reference = tmp / "ours.csv";
  o.metric = "time";
  o.tolerance = 0.5;
  o.filters = {"system=x"};
  std::ostringstream filtered;
  EXPECT_EQ(workflows::compare_curves(o, filtered), 0) << filtered.str();
  o.filters = {"system=y"};
  EXPECT_THROW(workflows::compare_curves(o, filtered), InputError);  // nothing left to match
}

// nccl-tests lists each rank once, from 0 up: a rank twice (two runs in one
// file) or one skipped is an error naming it and its line, not a rank count.
TEST(CurveInputs, NcclTestsRankLinesListEachRankOnceFromZero) {
  const std::string fixture = slurp(source_path("tests/workflows/compare/data/all_reduce_perf_8xH100.txt"));
  std::istringstream in(fixture);
  std::vector<std::string> head, rest;  // the 3 lines before its '# Rank' lines, and those after them
  for (std::string line; std::getline(in, line);) {
    if (line.find("Rank") == std::string::npos) (head.size() < 3 ? head : rest).push_back(line);
  }
  // The '# Rank' lines of `ranks`, in order, between the header and the rows.
  const auto log = [&](const std::vector<int>& ranks) {
    std::string text;
    for (const std::string& l : head) text += l + "\n";
    for (const int r : ranks) {
      text += "#  Rank " + std::to_string(r) + " Group  0 Pid  4" + std::to_string(1000 + r) +
              " on   node-000 device  " + std::to_string(r % 8) + " [0x18] NVIDIA H100 80GB HBM3\n";
    }
    for (const std::string& l : rest) text += l + "\n";
    return text;
  };
  std::vector<int> eight{0, 1, 2, 3, 4, 5, 6, 7}, twice = eight, skipped = eight;
  twice.insert(twice.end(), eight.begin(), eight.end());
  for (int r = 9; r <= 16; ++r) skipped.push_back(r);
  ASSERT_EQ(parse_curve(log(eight), "all_reduce_perf.txt").points.at(0).labels.at("npus"), "8");
  EXPECT_EQ(error_of(log(twice), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:12: rank 0 is listed again (first at line 4): each rank has one '# Rank' line (one "
            "nccl-tests run per file)");
  EXPECT_EQ(error_of(log(skipped), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:12: rank 9 is listed but rank 8 is not: the '# Rank' lines list every rank from 0 up, "
            "once");
  EXPECT_EQ(error_of(log({1, 2}), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:4: rank 1 is listed but rank 0 is not: the '# Rank' lines list every rank from 0 up, "
            "once");
  EXPECT_EQ(error_of(log({0, -1}), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:5: '# Rank -1': expected a rank number (0, 1, 2, ...)");
  // Two runs' logs one after the other list the ranks twice.
  EXPECT_EQ(error_of(joined(kLog, "") + joined(kLog, ""), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:15: rank 0 is listed again (first at line 4): each rank has one '# Rank' line (one "
            "nccl-tests run per file)");
}

// A bandwidth a measured row gives agrees with its size and time as
// nccl-tests derives it (algbw = size / time, busbw = algbw x the
// collective's factor on its ranks), within 2% and the rounding of its text.
TEST(CurveInputs, AMeasuredBandwidthThatDisagreesWithItsTimeIsAnErrorNamingBoth) {
  const std::string p5 = kHeader.substr(0, 7) + "nodes," + kHeader.substr(7);
  const auto row = [&](const std::string& algbw, const std::string& busbw) {
    return p5 + "x,2,16,all_reduce,33554432,427.1," + algbw + "," + busbw + ",s\n";
  };
  EXPECT_EQ(error_of(row("78.57", "147.32"), "r.csv"), "no error");
  EXPECT_EQ(error_of(row("78.57", "1e300"), "r.csv"),
            "r.csv:2: column 8 (busbw_GBps): 1e300 GB/s disagrees with the row's time: 33554432 B in 427.1 us on 16 "
            "ranks is a busbw of 147.31 GB/s (nccl-tests' size / time x 1.875 for ALL_REDUCE), and a given bandwidth "
            "must be within 2% of it");
  EXPECT_EQ(error_of(row("90", "147.32"), "r.csv"),
            "r.csv:2: column 7 (algbw_GBps): 90 GB/s disagrees with the row's time: 33554432 B in 427.1 us is an algbw "
            "of 78.56 GB/s (nccl-tests' size / time), and a given bandwidth must be within 2% of it");
  EXPECT_EQ(error_of(row("fast", "147.32"), "r.csv"), "r.csv:2: column 7 (algbw_GBps): 'fast' is not a finite number");
  EXPECT_EQ(error_of(row("", "147.32"), "r.csv"), "no error");  // not given
  // 2% off passes, 3% does not; a value written to one decimal is read to its rounding.
  EXPECT_EQ(error_of(row("78.57", "150.2"), "r.csv"), "no error");
  EXPECT_NE(error_of(row("78.57", "151.8"), "r.csv"), "no error");
  EXPECT_EQ(error_of(kHeader + "x,8,all_reduce,4096,36.19,0.11,0.2,s\n", "r.csv"), "no error");  // 0.198
  // All-gather: the size is the gathered total, busbw x (n-1)/n.
  EXPECT_EQ(error_of(kHeader + "x,8,all_gather,8388608,100,83.89,73.40,s\n", "r.csv"), "no error");
  EXPECT_NE(error_of(kHeader + "x,8,all_gather,8388608,100,83.89,146.80,s\n", "r.csv").find("x 0.875 for ALL_GATHER"),
            std::string::npos);
  // nccl-tests: the out-of-place algbw and busbw.
  std::vector<std::string> lines = kLog;
  lines[9] = "        4096          1024     float     sum      -1    30.01    0.14    0.24      0    29.71    0.14    0.14      0";
  EXPECT_EQ(
      error_of(joined(lines, ""), "all_reduce_perf.txt"),
      "all_reduce_perf.txt:10: column 8 (busbw): 0.24 GB/s disagrees with the row's time: 4096 B in 30.01 us on 2 "
      "ranks is a busbw of 0.14 GB/s (nccl-tests' size / time x 1 for ALL_REDUCE), and a given bandwidth must be "
      "within 2% of it");
  lines[9] = "        4096          1024     float     sum      -1    30.01     nan    0.14      0    29.71    0.14    0.14      0";
  EXPECT_EQ(error_of(joined(lines, ""), "all_reduce_perf.txt"),
            "all_reduce_perf.txt:10: column 7 (algbw): 'nan' is not a bandwidth in GB/s (a finite number, 0 or more)");
  // The public curves and the fixture agree with their times.
  for (const std::string name : {"h100_sxm_x8_xla.csv", "p5_efa_allreduce_2-32nodes.csv"}) {
    const std::string file = std::string(SIM_SOURCE_DIR) + "/../shared/testdata/reference-curves/" + name;
    if (std::filesystem::exists(file)) {
      EXPECT_NO_THROW(workflows::read_curve(file)) << file;
    }
  }
  EXPECT_NO_THROW(workflows::read_curve(source_path("tests/workflows/compare/data/all_reduce_perf_8xH100.txt")));
}

TEST(CurveInputs, PrintedNumbersNeverRunToHundredsOfDigits) {
  EXPECT_EQ(workflows::fixed_or_exponent(147.3249, 2), "147.32");
  EXPECT_EQ(workflows::fixed_or_exponent(5, 1, true), "+5.0");
  EXPECT_EQ(workflows::fixed_or_exponent(-2.5, 3, true), "-2.500");
  EXPECT_EQ(workflows::fixed_or_exponent(1e300, 2), "1e+300");
  EXPECT_EQ(workflows::fixed_or_exponent(-1e20, 3, true), "-1e+20");
  EXPECT_EQ(workflows::fixed_or_exponent(999999999999999.0, 0), "999999999999999");
  // A sim results CSV is not checked against its times: its busbw reaches the table as written.
  TempDir tmp("compare_huge_busbw");
  const std::string sim = "point,size,status,collective,bytes,time_ns,busbw_gbps,algorithm,npus\n";
  spit(tmp / "ours.csv", sim + "0,8,ok,ALL_REDUCE,4096,30010,1e300,ring,2\n");
  workflows::CompareOptions o;
  o.results = tmp / "ours.csv";
  spit(tmp / "all_reduce_perf.txt", joined(kLog, ""));
  o.reference = tmp / "all_reduce_perf.txt";
  o.metric = "busbw";
  std::ostringstream out;
  EXPECT_EQ(workflows::compare_curves(o, out), 1);
  EXPECT_NE(out.str().find("1e+300 "), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("+7.14286e+302%"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("0000000000000000000"), std::string::npos) << out.str();
}

TEST(CurveInputs, RelativeDeviationIsFiniteOrNothing) {
  EXPECT_EQ(workflows::relative_deviation(1.5, 1.0).value_or(-1), 0.5);
  EXPECT_FALSE(workflows::relative_deviation(1, 0));
  EXPECT_FALSE(workflows::relative_deviation(1e300, 1e-300));
  EXPECT_FALSE(workflows::relative_deviation(NAN, 1));
}

}  // namespace
}  // namespace sim::testing
