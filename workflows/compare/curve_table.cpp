#include "workflows/compare/curve_table.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "report/report.h"
#include "workload/rank_graph.h"

namespace sim::workflows {

std::string_view without_bom(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  return text;
}

const std::string* column_value(const CurvePoint& p, const std::string& column) {
  if (const auto it = p.labels.find(column); it != p.labels.end()) return &it->second;
  if (const auto it = p.columns.find(column); it != p.columns.end()) return &it->second;
  return nullptr;
}

std::optional<bool> filter_matches(const CurvePoint& p, const std::string& column, const std::string& value) {
  if (column == "collective") return p.collective == canonical_collective(value);
  const std::string* v = column_value(p, column == "ranks" && !column_value(p, column) ? "npus" : column);
  if (!v) return std::nullopt;
  if (*v == value) return true;
  const std::optional<std::uint64_t> a = parse_byte_count(*v), b = parse_byte_count(value);
  return a && b && *a == *b;
}

std::optional<double> relative_deviation(double a, double b) {
  if (!(b > 0) || !std::isfinite(a) || !std::isfinite(b)) return std::nullopt;
  const double d = (a - b) / b;
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<double> parse_finite(std::string_view text) {
  text = trimmed(text);
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> parse_byte_count(std::string_view text) {
  text = trimmed(text);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;  // 2^64 or more
  return v;
}

std::vector<CsvRow> parse_csv(const std::string& all, const std::string& source) {
  const std::string_view text = without_bom(all);
  std::vector<CsvRow> rows;
  std::size_t row_line = 1;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  std::size_t line = 1, quote_line = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      quote_line = line;
      any = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        row.push_back(std::move(field));
        rows.push_back(CsvRow{row_line, std::move(row)});
      }
      row.clear();
      field.clear();
      any = false;
      row_line = ++line;
    } else {
      field += c;
      any = true;
    }
  }
  if (quoted) throw InputError(source + ":" + std::to_string(quote_line) + ": unterminated quoted field");
  if (any || !field.empty()) {
    row.push_back(std::move(field));
    rows.push_back(CsvRow{row_line, std::move(row)});
  }
  return rows;
}

std::string canonical_collective(const std::string& name) {
  CollectiveType t;
  return parse_collective_name(name, t) ? collective_name(t) : "";
}

std::set<std::string> common_labels(const Curve& c) {
  std::set<std::string> names;
  if (c.points.empty()) return names;
  for (const auto& [k, v] : c.points.front().labels) names.insert(k);
  for (const CurvePoint& p : c.points) {
    for (auto it = names.begin(); it != names.end();) it = p.labels.count(*it) ? std::next(it) : names.erase(it);
  }
  return names;
}

bool same_point(const CurvePoint& a, const CurvePoint& b, const std::set<std::string>& keys) {
  if (a.collective != b.collective || a.bytes != b.bytes) return false;
  for (const std::string& k : keys) {
    const std::string *x = column_value(a, k), *y = column_value(b, k);
    if ((x == nullptr) != (y == nullptr) || (x && *x != *y)) return false;
  }
  return true;
}

std::string describe_point(const CurvePoint& p, const std::set<std::string>& keys) {
  std::string s = (p.id.empty() ? "" : p.id + " ") + "(" + p.collective + " " + std::to_string(p.bytes) + " B";
  for (const std::string& k : keys) {
    if (const std::string* v = column_value(p, k)) s += ", " + k + "=" + *v;
  }
  return s + ")";
}

std::string fixed_or_exponent(double v, int decimals, bool sign) {
  char buf[64];
  if (std::isfinite(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, sign ? "%+.*f" : "%.*f", decimals, v);
  } else {
    std::snprintf(buf, sizeof buf, sign ? "%+.6g" : "%.6g", v);
  }
  return buf;
}

namespace {

// Half a unit of the last digit `text` (a finite number) is written to:
// 0.005 for "147.32", 0.05 for "0.2", 5e299 for "1e300".
double half_last_digit(std::string_view text) {
  text = trimmed(text);
  int exponent = 0;
  if (const std::size_t e = text.find_first_of("eE"); e != std::string_view::npos) {
    std::string_view digits = text.substr(e + 1);
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    std::from_chars(digits.data(), digits.data() + digits.size(), exponent);
    text = text.substr(0, e);
  }
  const std::size_t dot = text.find('.');
  const int decimals = dot == std::string_view::npos ? 0 : static_cast<int>(text.size() - dot - 1);
  return 0.5 * std::pow(10.0, exponent - decimals);
}

// busbw / algbw of `collective` on `ranks` ranks: report.h's factor, from a
// record of one second (any duration and size give the same quotient).
double bus_factor(const std::string& collective, std::uint32_t ranks) {
  CollectiveRecord r;
  if (!parse_collective_name(collective, r.type)) return 1;
  r.group_size = ranks;
  r.bytes = 1;
  r.duration = kSecond;
  return busbw_gbps(r) / algbw_gbps(r);
}

}  // namespace

void check_given_bandwidth(const MeasuredRow& row, BandwidthKind kind, const std::string& at, const std::string& text) {
  const bool busbw = kind == BandwidthKind::kBusbw;
  if (busbw && row.ranks == 0) return;
  const std::optional<double> given = parse_finite(text);
  if (!given) return;                                                // the reader refuses it
  const double algbw = static_cast<double>(row.size) / row.time_ns;  // B/ns = GB/s
  const double factor = busbw ? bus_factor(row.collective, row.ranks) : 1;
  const double expected = algbw * factor;
  if (std::fabs(*given - expected) <= 0.02 * expected + half_last_digit(text)) return;
  char how[64] = "";
  if (busbw) std::snprintf(how, sizeof how, " x %.6g for %s", factor, row.collective.c_str());
  throw InputError(at + ": " + std::string(trimmed(text)) + " GB/s disagrees with the row's time: " +
                   std::to_string(row.size) + " B in " + std::string(trimmed(row.time_text)) + " us" +
                   (busbw ? " on " + std::to_string(row.ranks) + " ranks is a busbw" : std::string(" is an algbw")) +
                   " of " + fixed_or_exponent(expected, 2) + " GB/s (nccl-tests' size / time" + how +
                   "), and a given bandwidth must be within 2% of it");
}

}  // namespace sim::workflows
