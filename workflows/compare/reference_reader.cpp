#include "workflows/compare/reference_reader.h"

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "core/input_file.h"
#include "workflows/compare/nccl_tests_parser.h"

namespace sim::workflows {

namespace {

std::size_t find_column(const std::vector<std::string>& header, const std::string& name) {
  return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
}

// "file:12: column 5 (time_us)", as every value's message starts.
std::string at_column(const std::string& where, std::size_t k, const std::string& column) {
  return where + ": column " + std::to_string(k + 1) + " (" + column + ")";
}

// A time in the column's unit, as ns: finite, at most kMaxCurveTimeNs, and
// above zero when `measured` (a measurement of nothing is no measurement; a
// simulated time may be 0: a collective of one rank).
double time_ns(const std::string& text, double scale, bool measured, const std::string& at) {
  const std::optional<double> v = parse_finite(text);
  if (!v) throw InputError(at + ": '" + text + "' is not a finite number");
  const double ns = *v * scale;
  if (measured ? !(ns > 0) : !(ns >= 0)) {
    throw InputError(at + ": time '" + text + "' must be " + (measured ? "above 0" : "0 or more"));
  }
  if (measured && ns < kMinMeasuredTimeNs) {
    throw InputError(at + ": time '" + text + "' is below 1 ps, the simulator's resolution: no measurement");
  }
  if (!(ns <= kMaxCurveTimeNs)) throw InputError(at + ": time '" + text + "' is above 10^16 ns (116 days)");
  return ns;
}

double bandwidth(const std::string& text, const std::string& at) {
  const std::optional<double> v = parse_finite(text);
  if (!v) throw InputError(at + ": '" + text + "' is not a finite number");
  if (!(*v >= 0)) throw InputError(at + ": bandwidth '" + text + "' is negative");
  return *v;
}

std::uint64_t size_bytes(const std::string& text, const std::string& at) {
  const std::optional<std::uint64_t> v = parse_byte_count(text);
  if (!v) throw InputError(at + ": '" + text + "' is not a byte count (digits, below 2^64)");
  if (*v == 0) {
    throw InputError(at + ": size 0 B: a collective that moves nothing has no time or bandwidth to fit or compare "
                          "(delete the row)");
  }
  return *v;
}

// Reads rows of `csv` into points: `collective`, `bytes` and the value
// columns by name; every column in `labels` becomes a label.
struct CsvLayout {
  std::string collective, bytes, time, busbw;
  double time_scale = 1;  // to ns
  std::vector<std::string> labels;
  std::string skip_unless_column, skip_unless_value;  // e.g. status == ok
  bool measured = false;        // times must be above 0, bandwidths agree with them (algbw_GBps, busbw on `ranks`)
  bool other_columns = false;   // every other column is kept in CurvePoint::columns
};

Curve read_csv_curve(const std::vector<CsvRow>& rows, const std::string& path, const std::string& format,
                     const CsvLayout& layout) {
  Curve curve{path, format, {}};
  const std::vector<std::string>& header = rows.front().fields;
  const std::string header_at = path + ":" + std::to_string(rows.front().line);
  auto col = [&](const std::string& name) {
    const std::size_t k = find_column(header, name);
    if (k == header.size()) throw InputError(header_at + ": no column '" + name + "' in the " + format + " header");
    return k;
  };
  const std::size_t c_coll = col(layout.collective), c_bytes = col(layout.bytes);
  const std::size_t c_time = layout.time.empty() ? header.size() : col(layout.time);
  const std::size_t c_busbw = layout.busbw.empty() ? header.size() : col(layout.busbw);
  const std::size_t c_skip = layout.skip_unless_column.empty() ? header.size() : col(layout.skip_unless_column);
  const std::size_t c_point = find_column(header, "point");
  const std::size_t c_algbw = layout.measured ? find_column(header, "algbw_GBps") : header.size();
  const std::size_t c_ranks = layout.measured ? find_column(header, "ranks") : header.size();
  std::vector<std::pair<std::string, std::size_t>> labels, others;
  for (const std::string& l : layout.labels) labels.emplace_back(l, col(l));
  for (std::size_t k = 0; k < header.size(); ++k) {
    if (find_column(header, header[k]) != k) {
      throw InputError(header_at + ": column " + std::to_string(k + 1) + " ('" + header[k] + "') is named twice in the header");
    }
    const bool used = k == c_coll || k == c_bytes || k == c_time || k == c_busbw || k == c_skip ||
                      std::any_of(labels.begin(), labels.end(), [&](const auto& l) { return l.second == k; });
    if (layout.other_columns && !used && !header[k].empty()) others.emplace_back(header[k], k);
  }
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& f = rows[r].fields;
    const std::string where = path + ":" + std::to_string(rows[r].line);
    if (f.size() != header.size()) {
      throw InputError(where + ": " + std::to_string(f.size()) + " fields, the header has " + std::to_string(header.size()));
    }
    if (c_skip < header.size() && f[c_skip] != layout.skip_unless_value) continue;
    if (f[c_coll].empty()) {
      // A sweep point without collectives has no row to compare; a measured row names what it measured.
      if (layout.measured) throw InputError(at_column(where, c_coll, layout.collective) + ": empty: which collective was measured?");
      continue;
    }
    CurvePoint p;
    p.where = where;
    if (c_point < header.size()) p.id = "point " + f[c_point];
    p.collective = canonical_collective(f[c_coll]);
    if (p.collective.empty()) throw InputError(where + ": unknown collective '" + f[c_coll] + "'");
    p.bytes = size_bytes(f[c_bytes], at_column(where, c_bytes, layout.bytes));
    if (c_time < header.size()) {
      p.time_ns = time_ns(f[c_time], layout.time_scale, layout.measured, at_column(where, c_time, layout.time));
    }
    if (c_busbw < header.size()) p.busbw_gbps = bandwidth(f[c_busbw], at_column(where, c_busbw, layout.busbw));
    if (layout.measured && p.time_ns) {
      MeasuredRow m{p.collective, p.bytes, f[c_time], *p.time_ns, 0};
      const std::optional<std::uint64_t> ranks = c_ranks < header.size() ? parse_byte_count(f[c_ranks]) : std::nullopt;
      if (ranks && *ranks <= std::numeric_limits<std::uint32_t>::max()) m.ranks = static_cast<std::uint32_t>(*ranks);
      if (c_algbw < header.size() && !f[c_algbw].empty()) {
        const std::string at = at_column(where, c_algbw, header[c_algbw]);
        bandwidth(f[c_algbw], at);
        check_given_bandwidth(m, BandwidthKind::kAlgbw, at, f[c_algbw]);
      }
      if (p.busbw_gbps)
        check_given_bandwidth(m, BandwidthKind::kBusbw, at_column(where, c_busbw, layout.busbw), f[c_busbw]);
    }
    for (const auto& [name, k] : labels) p.labels[name] = f[k];
    for (const auto& [name, k] : others) p.columns[name] = f[k];
    curve.points.push_back(std::move(p));
  }
  return curve;
}

Curve read_sim_results(const std::vector<CsvRow>& rows, const std::string& path) {
  const auto& header = rows.front().fields;
  CsvLayout layout{"collective", "bytes", "time_ns", "busbw_gbps", 1, {}, "status", "ok", false, false};
  const std::size_t status = find_column(header, "status");
  for (std::size_t k = 1; k < status && k < header.size(); ++k) layout.labels.push_back(header[k]);  // the axes
  layout.labels.push_back("algorithm");
  layout.labels.push_back("npus");
  return read_csv_curve(rows, path, "sim", layout);
}

Curve read_astrasim_results(const std::vector<CsvRow>& rows, const std::string& path) {
  CsvLayout layout{"collective", "size_bytes", "sim_time_ns", "", 1, {"backend", "topology", "npus", "algorithm"}, "", "",
                   false, false};
  Curve curve = read_csv_curve(rows, path, "astra-sim", layout);
  for (CurvePoint& p : curve.points) {
    std::string& b = p.labels["backend"];
    if (b == "congestion_unaware") b = "analytical";
    else if (b == "congestion_aware") b = "flow";
  }
  return curve;
}

Curve read_reference_curve(const std::vector<CsvRow>& rows, const std::string& path) {
  // Measured: every other column (system, nodes, source, algbw_GBps) may be filtered on.
  CsvLayout layout{"collective", "size_bytes", "time_us", "busbw_GBps", 1e3, {"ranks"}, "", "", true, true};
  Curve curve = read_csv_curve(rows, path, "reference-curve", layout);
  // Counts are matched and filtered on as numbers ("016" is 16; what is no
  // number is left for the reader of the count to refuse); the rank count is
  // the simulator's `npus`, and a file giving both must agree.
  const auto count = [](std::string& text) {
    if (const std::optional<std::uint64_t> v = parse_byte_count(text)) text = std::to_string(*v);
  };
  for (CurvePoint& p : curve.points) {
    std::string ranks = p.labels["ranks"];
    count(ranks);
    p.labels.erase("ranks");
    p.labels["npus"] = ranks;
    if (const auto it = p.columns.find("nodes"); it != p.columns.end()) count(it->second);
    if (const auto it = p.columns.find("npus"); it != p.columns.end()) {
      std::string npus = it->second;
      count(npus);
      if (npus != ranks) {
        throw InputError(p.where + ": npus '" + it->second + "' and ranks '" + ranks +
                         "' disagree: which is the rank count?");
      }
      p.columns.erase(it);
    }
  }
  return curve;
}

}  // namespace

Curve read_curve(const std::string& path, const std::string& nccl_collective) {
  return parse_curve(read_input_file(path, "curve", kMaxCurveFileBytes), path, nccl_collective);
}

Curve parse_curve(const std::string& text, const std::string& path, const std::string& nccl_collective) {
  if (looks_like_nccl_tests(text)) return parse_nccl_tests(text, path, nccl_collective).curve;
  if (!nccl_collective.empty()) {
    // A CSV names its collective per row: a collective given for it is a mistake, not a default.
    throw InputError(path + ": a CSV names each row's collective; the collective '" + nccl_collective +
                     "' given for it applies to nccl-tests output only");
  }
  const std::vector<CsvRow> rows = parse_csv(text, path);
  if (rows.empty()) throw InputError(path + ": empty file");
  const auto& header = rows.front().fields;
  auto has = [&](const char* name) { return find_column(header, name) < header.size(); };
  if (!header.empty() && header[0] == "point" && has("status") && has("busbw_gbps")) return read_sim_results(rows, path);
  if (has("backend") && has("size_bytes") && has("sim_time_ns")) return read_astrasim_results(rows, path);
  if (has("size_bytes") && has("time_us") && has("busbw_GBps")) return read_reference_curve(rows, path);
  throw InputError(path + ":1: not a sim results CSV, an ASTRA-sim results CSV, a reference curve CSV "
                   "(size_bytes,time_us,busbw_GBps) or nccl-tests output");
}

}  // namespace sim::workflows
