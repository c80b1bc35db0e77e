#include "workflows/compare/compare.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "report/report.h"
#include "workflows/compare/plot_launcher.h"
#include "workflows/compare/reference_reader.h"

namespace sim::workflows {

double parse_tolerance(const std::string& text) {
  try {
    std::size_t used = 0;
    const bool percent = !text.empty() && text.back() == '%';
    const std::string number = percent ? text.substr(0, text.size() - 1) : text;
    double v = std::stod(number, &used);
    if (used != number.size() || !(v >= 0) || !std::isfinite(v)) throw std::invalid_argument("bad");
    return percent ? v / 100 : v;
  } catch (const std::exception&) {
    throw InputError("--tolerance " + text + ": expected a percentage (5%) or a fraction (0.05)");
  }
}

namespace {

std::set<std::string> common_labels(const Curve& c) {
  std::set<std::string> names;
  if (c.points.empty()) return names;
  for (const auto& [k, v] : c.points.front().labels) names.insert(k);
  for (const CurvePoint& p : c.points) {
    for (auto it = names.begin(); it != names.end();) it = p.labels.count(*it) ? std::next(it) : names.erase(it);
  }
  return names;
}

std::optional<double> metric_of(const CurvePoint& p, const std::string& metric) {
  return metric == "time" ? p.time_ns : p.busbw_gbps;
}

std::string describe(const CurvePoint& p, const std::set<std::string>& shown) {
  std::string s = (p.id.empty() ? "" : p.id + " ") + "(" + p.collective + " " + std::to_string(p.bytes) + " B";
  for (const std::string& k : shown) s += ", " + k + "=" + p.labels.at(k);
  return s + ")";
}

void apply_filters(Curve& ref, const std::vector<std::string>& filters) {
  for (const std::string& f : filters) {
    const auto eq = f.find('=');
    if (eq == std::string::npos) throw InputError("--filter " + f + ": expected key=value");
    const std::string key = f.substr(0, eq), value = f.substr(eq + 1);
    bool known = false;
    std::vector<CurvePoint> kept;
    for (CurvePoint& p : ref.points) {
      const std::string* v = column_value(p, key);
      known = known || v != nullptr;
      if (v && *v == value) kept.push_back(std::move(p));
    }
    if (!known) throw InputError("--filter " + f + ": " + ref.source + " has no column '" + key + "'");
    ref.points = std::move(kept);
  }
}

struct Match {
  const CurvePoint* ours;
  const CurvePoint* ref;
  double a, b, deviation;
};

void write_overlay(const std::string& path, const std::vector<Match>& matches, const std::set<std::string>& shared) {
  std::string csv = "series,collective,bytes,results,reference\n";
  for (const Match& m : matches) {
    std::string series = m.ours->collective;
    for (const std::string& k : shared) {
      if (k != "size") series.append(" ").append(k).append("=").append(m.ours->labels.at(k));  // size is the x axis
    }
    char buf[128];
    std::snprintf(buf, sizeof buf, ",%.9g,%.9g\n", m.a, m.b);
    csv += "\"" + series + "\"," + m.ours->collective + "," + std::to_string(m.ours->bytes) + buf;
  }
  write_file_atomically(path, csv);
}

}  // namespace

int compare_curves(const CompareOptions& o, std::ostream& out) {
  if (o.metric != "time" && o.metric != "busbw") throw InputError("--metric " + o.metric + ": expected time or busbw");
  const Curve ours = read_curve(o.results);
  Curve ref = read_curve(o.reference, o.reference_collective);
  apply_filters(ref, o.filters);
  const std::set<std::string> a = common_labels(ours), b = common_labels(ref);
  std::set<std::string> shared;
  for (const std::string& k : a) {
    if (b.count(k)) shared.insert(k);
  }
  std::vector<Match> matches;
  std::vector<std::pair<const CurvePoint*, const CurvePoint*>> zero;  // reference value 0: no relative deviation
  for (const CurvePoint& p : ours.points) {
    const CurvePoint* found = nullptr;
    for (const CurvePoint& r : ref.points) {
      if (r.collective != p.collective || r.bytes != p.bytes) continue;
      bool same = true;
      for (const std::string& k : shared) same = same && r.labels.at(k) == p.labels.at(k);
      if (!same) continue;
      if (found) {
        throw InputError(p.where + ": matches both " + found->where + " and " + r.where +
                         " (narrow the reference with --filter key=value)");
      }
      found = &r;
    }
    if (!found) continue;
    const auto va = metric_of(p, o.metric), vb = metric_of(*found, o.metric);
    if (!va || !vb) {
      throw InputError((va ? found->where : p.where) + ": has no " + o.metric + " to compare (try --metric " +
                       (o.metric == "time" ? "busbw" : "time") + ")");
    }
    // Both 0 agree; against a reference of 0 (nccl-tests prints busbw 0.00
    // below its resolution) any other value has no relative deviation.
    const std::optional<double> dev = *va == 0 && *vb == 0 ? std::optional<double>(0) : relative_deviation(*va, *vb);
    if (!dev) {
      zero.emplace_back(&p, found);
      continue;
    }
    matches.push_back(Match{&p, found, *va, *vb, *dev});
  }
  std::string on = "collective, bytes";
  for (const std::string& k : shared) on += ", " + k;
  if (matches.empty()) {
    throw InputError("no point of " + o.results + " matches a point of " + o.reference + " (matched on " + on + ")" +
                     (zero.empty() ? "" : "; " + std::to_string(zero.size()) + " matched a reference " + o.metric +
                                              " of 0, which has no relative deviation"));  // or one too small for a finite deviation
  }
  const char* unit = o.metric == "time" ? "ns" : "GB/s";
  out << "compare " << o.results << " with " << o.reference << " (" << ref.format << "): " << o.metric << " in "
      << unit << ", matched on " << on << "; tolerance " << o.tolerance * 100 << "%\n";
  std::size_t outside = 0;
  for (const Match& m : matches) {
    const bool bad = !(std::fabs(m.deviation) <= o.tolerance);
    outside += bad;
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %14.3f %14.3f %+9.3f%%  %s  ", m.a, m.b, 100 * m.deviation, bad ? "OUTSIDE" : "ok     ");
    out << buf << describe(*m.ours, shared) << "\n";
  }
  for (const auto& [p, r] : zero) {
    char value[32];
    std::snprintf(value, sizeof value, "%.6g", *metric_of(*r, o.metric));
    out << "  not compared: " << describe(*p, shared) << ": the reference " << o.metric << " at " << r->where << " is "
        << value << " (no finite relative deviation)\n";
  }
  out << matches.size() << " points compared (" << ours.points.size() - matches.size() - zero.size()
      << " without a reference point";
  if (!zero.empty()) out << ", " << zero.size() << " against a reference of 0";
  out << "), " << outside << " outside " << o.tolerance * 100 << "%\n";
  for (const Match& m : matches) {
    if (std::fabs(m.deviation) <= o.tolerance) continue;
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.6g %s vs reference %.6g %s (%+.2f%%)", m.a, unit, m.b, unit, 100 * m.deviation);
    out << "outside tolerance: " << describe(*m.ours, shared) << " at " << m.ours->where << ": " << o.metric << " "
        << buf << ", reference " << m.ref->where << "\n";
  }
  if (!o.plot.empty()) {
    const std::string overlay = o.plot + ".overlay." + std::to_string(::getpid()) + ".csv";
    write_overlay(overlay, matches, shared);
    const int code = run_plot_script({"--overlay", overlay, "--metric", o.metric, "-o", o.plot});
    std::error_code ec;
    std::filesystem::remove(overlay, ec);
    if (code != 0) throw InputError("the plotting script failed (exit " + std::to_string(code) + ")");
  }
  return outside ? 1 : 0;
}

}  // namespace sim::workflows
