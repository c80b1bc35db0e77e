// A curve to compare: points keyed by collective, size and labels (the
// columns that say which series a point belongs to), each with a simulated or
// measured time and bus bandwidth. Every reference format reads into it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace sim::workflows {

struct CurvePoint {
  std::string collective;  // Chakra name, ALL_REDUCE
  std::uint64_t bytes = 0; // per-rank buffer as the simulator counts it (comm_size)
  std::map<std::string, std::string> labels;
  // Other text columns of the row (a reference CSV's `system`, `source`):
  // --filter may select on them, points are not matched on them.
  std::map<std::string, std::string> columns;
  std::optional<double> time_ns, busbw_gbps;
  std::string where;  // "file:line", for messages
  std::string id;     // "point 7" in a sim results CSV, else empty
  // nccl-tests' '# Rank' lines: the distinct hosts they name (0: not known),
  // and the most ranks any one of them holds.
  std::uint32_t hosts = 0, most_on_a_host = 0;
};

struct Curve {
  std::string source;
  std::string format;  // "sim", "astra-sim", "reference-curve", "nccl-tests"
  std::vector<CurvePoint> points;
};

// Splits CSV text into rows of fields (RFC 4180 quoting; a leading UTF-8
// byte order mark, as spreadsheet programs write, is skipped); throws
// InputError naming `source` and the line for an unterminated quote.
struct CsvRow {
  std::size_t line = 0;  // where the row starts, from 1
  std::vector<std::string> fields;
};
std::vector<CsvRow> parse_csv(const std::string& text, const std::string& source);

// `column`'s value for `p`: a label, or one of its other columns; null when
// the point has no such column.
const std::string* column_value(const CurvePoint& p, const std::string& column);

// Whether `p` holds `value` in `column` as --filter column=value means it:
// `collective` by any spelling (all_reduce, allreduce), `ranks` as the rank
// count the reader names `npus`, whole-number columns (nodes, npus) as
// numbers (016 is 16); nothing when `p` has no such column.
std::optional<bool> filter_matches(const CurvePoint& p, const std::string& column, const std::string& value);

// (a - b) / b, or nothing when b is not positive or the quotient is not a
// finite number: a relative deviation never reaches a report as inf or nan.
std::optional<double> relative_deviation(double a, double b);

// The text with a leading UTF-8 byte order mark (EF BB BF) removed.
std::string_view without_bom(std::string_view text);

// A decimal number as a measurement is written ("35.84", "1e3", spaces
// around it allowed): nothing for anything else, and for nan and inf.
std::optional<double> parse_finite(std::string_view text);
// A byte count: digits only (spaces around allowed), below 2^64; nothing else.
std::optional<std::uint64_t> parse_byte_count(std::string_view text);

// Times in curves are at most this (ns): the simulator's own limit (2^63 ps
// is 9.2e15 ns), so no time read from a curve overflows a report's sums.
inline constexpr double kMaxCurveTimeNs = 1e16;
// A measured time below the simulator's resolution (1 ps) measures nothing.
inline constexpr double kMinMeasuredTimeNs = 1e-3;

// "ALL_REDUCE" from any spelling (all_reduce, allreduce); empty if unknown.
std::string canonical_collective(const std::string& name);

// The labels every point of `c` has.
std::set<std::string> common_labels(const Curve& c);

// Whether `a` and `b` are one point: the same collective, size and value of
// each of `keys` (a label or another column, column_value). `sim compare`
// refuses a point that two reference rows are, `sim calibrate` two fitting
// rows that are one point: either would count one measurement twice.
bool same_point(const CurvePoint& a, const CurvePoint& b, const std::set<std::string>& keys);

// "point 3 (ALL_REDUCE 1048576 B, nodes=2, npus=16)": its id, collective,
// size and `keys`.
std::string describe_point(const CurvePoint& p, const std::set<std::string>& keys);

// `v` with `decimals` decimals (a leading '+' when `sign` and v >= 0), in
// exponent form (1.5e+300) from 1e15 on: a number read from a file or derived
// from one never prints as hundreds of digits.
std::string fixed_or_exponent(double v, int decimals, bool sign = false);

// A bandwidth a measured row gives (`text`, GB/s, read at `at`: "file:12:
// column 7 (busbw_GBps)") against what nccl-tests derives from the row's
// size (its size column: an all-gather's gathered total) and time: algbw =
// size / time, busbw = algbw x the collective's factor on `ranks` ranks
// (report.h's, as for simulated collectives). InputError naming both when
// they are further apart than 2% plus half a unit of the given text's last
// digit (logs round to 2 decimals; nccl-tests prints 0.00 below 0.005): a
// bandwidth that disagrees with its row's time is not one measurement.
struct MeasuredRow {
  std::string collective;  // canonical
  std::uint64_t size = 0;  // bytes, as the row writes it
  std::string time_text;   // us, as the row writes it
  double time_ns = 0;
  std::uint32_t ranks = 0;  // 0: unknown, busbw not checked
};
enum class BandwidthKind { kAlgbw, kBusbw };
void check_given_bandwidth(const MeasuredRow& row, BandwidthKind kind, const std::string& at, const std::string& text);

}  // namespace sim::workflows
