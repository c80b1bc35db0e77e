#include "workflows/compare/compare.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include <limits>

#include "core/error.h"
#include "core/output_file.h"
#include "presets/preset.h"
#include "report/report.h"
#include "workflows/compare/parallel_rows.h"
#include "workflows/compare/plot_launcher.h"
#include "workflows/compare/preset_sizes.h"
#include "workflows/compare/reference_reader.h"
#include "workflows/compare/row_simulation.h"

namespace sim::workflows {

double parse_tolerance(const std::string& text) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  double v = 0;
  try {
    std::size_t used = 0;
    v = std::stod(number, &used);
    if (used != number.size() || !(v >= 0) || !std::isfinite(v)) throw std::invalid_argument("bad");
  } catch (const std::exception&) {
    throw InputError("--tolerance " + text + ": expected a percentage (5%) or a fraction (0.05)");
  }
  if (percent) return v / 100;
  // 5 meaning 5% would allow 500% and pass every point.
  if (v > 1) {
    char fraction[32];
    std::snprintf(fraction, sizeof fraction, "%.6g", v / 100);
    throw InputError("--tolerance " + text + ": a number without '%' is a fraction, so " + text + " allows " +
                     fixed_or_exponent(v * 100, 0) + "%: write " + text + "% or " + fraction +
                     " (a fraction is at most 1)");
  }
  return v;
}

namespace {

std::optional<double> metric_of(const CurvePoint& p, const std::string& metric) {
  return metric == "time" ? p.time_ns : p.busbw_gbps;
}

void apply_filters(Curve& ref, const std::vector<std::string>& filters) {
  for (const std::string& f : filters) {
    const auto eq = f.find('=');
    if (eq == std::string::npos) throw InputError("--filter " + f + ": expected key=value");
    const std::string key = f.substr(0, eq), value = f.substr(eq + 1);
    bool known = false;
    std::vector<CurvePoint> kept;
    for (CurvePoint& p : ref.points) {
      const std::optional<bool> match = filter_matches(p, key, value);
      known = known || match.has_value();
      if (match.value_or(false)) kept.push_back(std::move(p));
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

// Every reference row simulated on the preset at its node count: the curve
// to compare. Both curves get a `nodes` label (matched on, and shown).
Curve simulate_on_preset(Curve& ref, const std::string& name, const std::vector<std::string>& filters, unsigned jobs) {
  const presets::Preset& preset = presets::find_preset(name);
  for (CurvePoint& p : ref.points) {
    const std::uint32_t nodes = row_nodes(p, preset);
    p.columns.erase("nodes");
    p.labels["nodes"] = std::to_string(nodes);  // matched on and shown
  }
  apply_filters(ref, filters);
  Curve ours{"preset " + name, "sim", {}};
  // Each node count's files made once, before the rows run side by side.
  PresetSizes sizes(preset);
  std::vector<const SizedSystem*> systems;
  for (const CurvePoint& r : ref.points) {
    systems.push_back(&sizes.at(static_cast<std::uint32_t>(std::stoul(r.labels.at("nodes"))), r.where));
  }
  ours.points.resize(ref.points.size());
  for_each_row(ref.points.size(), jobs, [&](std::size_t i) {
    const CurvePoint& r = ref.points[i];
    const SizedSystem& s = *systems[i];
    const std::uint32_t n = s.nodes;
    const std::uint64_t bytes = simulator_bytes(ref, r, s.npus);
    if (bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw InputError(r.where + ": size " + std::to_string(bytes) +
                       " B is above the largest a collective carries (2^63 - 1 B, Chakra's comm_size)");
    }
    CurvePoint p;
    p.collective = r.collective;
    p.bytes = r.bytes;
    p.labels = r.labels;
    p.labels["npus"] = std::to_string(s.npus);
    p.where = name + " --nodes " + std::to_string(n);
    double busbw = 0;
    std::uint64_t ps = 0;
    try {
      ps = simulate_collective(s.network_text, s.network_source, s.system_text, s.system_source, r.collective, bytes,
                               &busbw);
    } catch (const SimError& e) {  // the row that could not run, and why
      throw SimError(e.exit_code(), r.where + ": " + r.collective + " of " + std::to_string(bytes) + " B on " +
                                        p.where + ": " + e.what());
    }
    p.time_ns = static_cast<double>(ps) / 1e3;
    p.busbw_gbps = busbw;
    ours.points[i] = std::move(p);
  });
  return ours;
}

}  // namespace

int compare_curves(const CompareOptions& o, std::ostream& out) {
  if (o.metric != "time" && o.metric != "busbw") throw InputError("--metric " + o.metric + ": expected time or busbw");
  std::error_code ec;
  const std::filesystem::file_status plot_status = std::filesystem::status(o.plot, ec);
  if (!o.plot.empty() && !std::filesystem::is_character_file(plot_status) && !std::filesystem::is_fifo(plot_status)) {
    // A folder or a missing folder at --plot was found by the plotting script
    // after every row had run (with --preset, every simulation), and named as
    // its own "-o" or as the overlay's temporary file. (A device or a FIFO is
    // the script's to open: opened here, a FIFO's reader would see it close.)
    try {
      const OutputFile check(o.plot);
    } catch (const InputError& e) {
      throw InputError(std::string("--plot: ") + e.what());
    }
  }
  Curve ref = read_curve(o.reference, o.reference_collective);
  Curve ours;
  if (o.preset.empty()) {
    ours = read_curve(o.results);
    apply_filters(ref, o.filters);
  } else {
    ours = simulate_on_preset(ref, o.preset, o.filters, o.jobs);
  }
  const std::string results = o.preset.empty() ? o.results : ours.source + " at each row's node count";
  const std::set<std::string> a = common_labels(ours), b = common_labels(ref);
  std::set<std::string> shared;
  for (const std::string& k : a) {
    if (b.count(k)) shared.insert(k);
  }
  std::vector<Match> matches;
  std::vector<std::pair<const CurvePoint*, const CurvePoint*>> zero;  // reference value 0: no relative deviation
  // Two of our rows that are one point (on every label our curve has) would
  // count a measurement twice; rows apart on a label the reference lacks
  // (two backends of a sweep) are each compared with it.
  std::map<std::string, const CurvePoint*> ours_seen;
  for (const CurvePoint& p : ours.points) {
    std::string key = p.collective + '\n' + std::to_string(p.bytes);
    for (const std::string& k : a) key += '\n' + k + '=' + p.labels.at(k);
    if (const auto [it, added] = ours_seen.emplace(key, &p); !added) {
      throw InputError(p.where + ": the same point as " + it->second->where + " " + describe_point(p, a) +
                       ": a comparison would count it twice (delete a row)");
    }
  }
  for (const CurvePoint& p : ours.points) {
    const CurvePoint* found = nullptr;
    for (const CurvePoint& r : ref.points) {
      if (!same_point(p, r, shared)) continue;
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
    throw InputError("no point of " + results + " matches a point of " + o.reference + " (matched on " + on + ")" +
                     (zero.empty() ? "" : "; " + std::to_string(zero.size()) + " matched a reference " + o.metric +
                                              " of 0, which has no relative deviation"));  // or one too small for a finite deviation
  }
  const char* unit = o.metric == "time" ? "ns" : "GB/s";
  out << "compare " << results << " with " << o.reference << " (" << ref.format << "): " << o.metric << " in "
      << unit << ", matched on " << on << "; tolerance " << o.tolerance * 100 << "%\n";
  std::size_t outside = 0;
  for (const Match& m : matches) {
    const bool bad = !(std::fabs(m.deviation) <= o.tolerance);
    outside += bad;
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %14s %14s %9s%%  %s  ", fixed_or_exponent(m.a, 3).c_str(),
                  fixed_or_exponent(m.b, 3).c_str(), fixed_or_exponent(100 * m.deviation, 3, true).c_str(),
                  bad ? "OUTSIDE" : "ok     ");
    out << buf << describe_point(*m.ours, shared) << "\n";
  }
  for (const auto& [p, r] : zero) {
    char value[32];
    std::snprintf(value, sizeof value, "%.6g", *metric_of(*r, o.metric));
    out << "  not compared: " << describe_point(*p, shared) << ": the reference " << o.metric << " at " << r->where
        << " is " << value << " (no finite relative deviation)\n";
  }
  out << matches.size() << " points compared (" << ours.points.size() - matches.size() - zero.size()
      << " without a reference point";
  if (!zero.empty()) out << ", " << zero.size() << " against a reference of 0";
  out << "), " << outside << " outside " << o.tolerance * 100 << "%\n";
  for (const Match& m : matches) {
    if (std::fabs(m.deviation) <= o.tolerance) continue;
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.6g %s vs reference %.6g %s (%s%%)", m.a, unit, m.b, unit,
                  fixed_or_exponent(100 * m.deviation, 2, true).c_str());
    out << "outside tolerance: " << describe_point(*m.ours, shared) << " at " << m.ours->where << ": " << o.metric
        << " " << buf << ", reference " << m.ref->where << "\n";
  }
  if (!o.plot.empty()) {
    // In the temporary folder: beside a device (--plot /dev/null) it would be
    // a file in /dev.
    const std::string overlay =
        (std::filesystem::temp_directory_path() / ("sim_compare_overlay." + std::to_string(::getpid()) + ".csv")).string();
    write_overlay(overlay, matches, shared);
    const int code = run_plot_script("sim compare --plot", {"--overlay", overlay, "--metric", o.metric, "-o", o.plot});
    std::error_code ec;
    std::filesystem::remove(overlay, ec);
    if (code != 0) throw InputError("the plotting script failed (exit " + std::to_string(code) + ")");
  }
  return outside ? 1 : 0;
}

}  // namespace sim::workflows
