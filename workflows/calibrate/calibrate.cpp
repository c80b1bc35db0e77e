#include "workflows/calibrate/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <unistd.h>
#include <sstream>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/input_file.h"
#include "core/output_file.h"
#include "core/units.h"
#include "core/config_reader.h"
#include "network/topology.h"
#include "system/runner/simulation.h"
#include "system/scenario/scenario.h"
#include "system/scenario/system_files.h"
#include "presets/preset.h"
#include "workflows/compare/parallel_rows.h"
#include "workflows/compare/preset_sizes.h"
#include "workflows/compare/reference_reader.h"
#include "workflows/compare/row_simulation.h"
#include "workflows/sweep/point_result.h"
#include "workflows/sweep/sweep_spec.h"
#include "workflows/sweep/yaml_override.h"
#include "workload/generators/workload_generator.h"

namespace sim::workflows {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

// How a parameter's text reads: by its unit.
std::string kind_of(const std::string& text) {
  if (text.find("/s") != std::string::npos || text.find("bps") != std::string::npos ||
      text.find("Bps") != std::string::npos) {
    return "bandwidth";
  }
  if (!text.empty() && text.back() == 's') return "time";
  return "number";
}

double read_value(const ConfigReader& r, const YAML::Node& n, const std::string& key, const std::string& kind) {
  if (kind == "bandwidth") return static_cast<double>(r.bandwidth(n, key));
  if (kind == "time") return static_cast<double>(r.latency(n, key));
  return r.real(n, key);
}

// The value as a file takes it, exactly: GB/s and ns with few enough digits
// that they are whole B/s and ps, so what was evaluated is what is written.
std::string format_value(const std::string& kind, double v) {
  char buf[64];
  if (kind == "bandwidth") {
    std::snprintf(buf, sizeof buf, "%.6gGB/s", v / 1e9);
    if (parse_bandwidth(buf) == 0) std::snprintf(buf, sizeof buf, "%.0fB/s", std::max(1.0, v));
  } else if (kind == "time") {
    std::snprintf(buf, sizeof buf, "%.3fns", std::round(v) / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", v);
  }
  return buf;
}

// A value as written back to its kind's base unit (B/s, ps, plain); nothing
// when it does not read as one.
std::optional<double> value_of(const std::string& kind, const std::string& text) {
  try {
    if (kind == "bandwidth") return static_cast<double>(parse_bandwidth(text));
    if (kind == "time") return static_cast<double>(parse_time(text));
    const std::optional<double> v = parse_finite(text);
    return v;
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

bool within(const FreeParameterSpec& p, const std::string& text) {
  const std::optional<double> v = value_of(p.kind, text);
  return v && *v >= p.min && *v <= p.max;
}

// `v` as written (format_value), moved inside [min, max] when the writing
// rounds it out (456.7891GB/s as 456.789GB/s above a max of 456.7889GB/s).
std::string bounded_value(const FreeParameterSpec& p, double v) {
  v = std::clamp(v, p.min, p.max);
  for (int i = 0; i < 8; ++i) {
    const std::string text = format_value(p.kind, v);
    const std::optional<double> x = value_of(p.kind, text);
    if (!x) break;
    if (*x >= p.min && *x <= p.max) return text;
    v = std::clamp(*x > p.max ? 2 * p.max - *x : 2 * p.min - *x, p.min, p.max);  // mirrored inside
  }
  throw InputError(p.where + ": parameter '" + p.name + "': no value between min and max can be written " +
                   "(the bounds are closer together than a file's precision: 6 digits, or 1 ps)");
}

struct Files {
  std::string network_text, network_source, system_text, system_source;
};

// A key "path.to.algorithm:param" names a parameter inside an algorithm
// string (`all_reduce: nccl:nvls_efficiency=0.85`): the YAML path and the
// parameter ("" for a plain key).
std::pair<std::string, std::string> key_parts(const std::string& key) {
  const std::size_t colon = key.find(':');
  if (colon == std::string::npos) return {key, ""};
  return {key.substr(0, colon), key.substr(colon + 1)};
}

// The algorithm string `text` ("name:k=v,...") with `param` set to `value`
// (appended when absent).
std::string with_param(const std::string& text, const std::string& param, const std::string& value) {
  const std::size_t colon = text.find(':');
  std::vector<std::string> items = colon == std::string::npos ? std::vector<std::string>{} : split(text.substr(colon + 1), ',');
  bool found = false;
  for (std::string& item : items) {
    if (item.substr(0, item.find('=')) == param) {
      item = param + "=" + value;
      found = true;
    }
  }
  if (!found) items.push_back(param + "=" + value);
  std::string out = text.substr(0, colon);
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? "," : ":") + items[i];
  return out;
}

// `param`'s value in the algorithm string `text`, or "" when it has none.
std::string param_of(const std::string& text, const std::string& param) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) return "";
  for (const std::string& item : split(text.substr(colon + 1), ',')) {
    const std::size_t eq = item.find('=');
    if (eq != std::string::npos && item.substr(0, eq) == param) return item.substr(eq + 1);
  }
  return "";
}

YAML::Node find_key(YAML::Node root, const std::vector<std::string>& path);

// The algorithm strings a parameter key reaches: its path, or with a `*`
// component (`collective.algorithms.*:overhead`) every key of that map whose
// algorithm string has the parameter.
std::vector<std::string> param_targets(const YAML::Node& root, const std::string& path, const std::string& param) {
  const std::size_t star = path.find('*');
  if (star == std::string::npos) return {path};
  const std::string head = path.substr(0, star), tail = path.substr(star + 1);
  const YAML::Node map = head.empty() ? root : find_key(root, split(head.substr(0, head.size() - 1), '.'));
  std::vector<std::string> out;
  if (!map || !map.IsMap()) return out;
  for (const auto& kv : map) {
    const std::string at = head + kv.first.Scalar() + tail;
    const YAML::Node v = find_key(root, split(at, '.'));
    if (v && v.IsScalar() && !param_of(v.Scalar(), param).empty()) out.push_back(at);
  }
  return out;
}

// The files with `values` (one per parameter, as written) set.
Files with_values(const Files& base, const std::vector<FreeParameterSpec>& params, const std::vector<std::string>& values,
                  const std::string& calibration_path) {
  std::vector<PointSettings::Override> net, sys;
  // Algorithm parameters: every one of a key's applied to its string first.
  std::map<std::pair<std::string, std::string>, std::string> strings;  // (file, path) -> algorithm string
  std::map<std::pair<std::string, std::string>, std::size_t> first;   // (file, path) -> the first parameter setting it
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto [path, param] = key_parts(params[i].key);
    if (param.empty()) continue;
    const YAML::Node root = YAML::Load(params[i].file == "network" ? base.network_text : base.system_text);
    for (const std::string& target : param_targets(root, path, param)) {
      const auto at = std::make_pair(params[i].file, target);
      if (!strings.count(at)) {
        strings[at] = find_key(root, split(target, '.')).Scalar();
        first[at] = i;
      }
      strings[at] = with_param(strings[at], param, values[i]);
    }
  }
  const auto add = [&](std::size_t i, const std::string& path, const std::string& value) {
    PointSettings::Override o;
    o.path = split(path, '.');
    o.value = YAML::Node(value);
    o.line = std::stoi(params[i].where.substr(params[i].where.rfind(':') + 1));
    o.axis = params[i].name;
    (params[i].file == "network" ? net : sys).push_back(std::move(o));
  };
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (key_parts(params[i].key).second.empty()) add(i, params[i].key, values[i]);
  }
  for (const auto& [at, text] : strings) add(first[at], at.second, text);
  Files f = base;
  f.network_text = apply_overrides(base.network_text, base.network_source, net, calibration_path);
  f.system_text = apply_overrides(base.system_text, base.system_source, sys, calibration_path);
  return f;
}

// A row passes when, for every column the filters name, it has one of the
// values given for that column (--filter nodes=2 --filter nodes=4: either).
bool passes(const CurvePoint& p, const CalibrateOptions& o) {
  const auto matches = [&p](const std::string& column, const std::string& value) {
    return filter_matches(p, column, value).value_or(false);
  };
  for (const auto& filter : o.filters) {
    const std::string& column = filter.first;
    if (matches(column, filter.second)) continue;
    const bool other = std::any_of(o.filters.begin(), o.filters.end(), [&](const auto& f) {
      return f.first == column && matches(f.first, f.second);
    });
    if (!other) return false;
  }
  if (o.sizes && (p.bytes < o.sizes->first || p.bytes > o.sizes->second)) return false;
  return true;
}


// One system the rows run on: the --system folder, or the preset on one
// node count.
struct Machine {
  std::uint32_t nodes = 0, npus = 0;
  Files base;
  std::string calibration_source, calibration_text;
  std::vector<FreeParameterSpec> declared;  // its calibration.yml
  // The fitted parameters it declares: (index in the fitted list, its own
  // declaration, which names its own file and line).
  std::vector<std::pair<std::size_t, FreeParameterSpec>> fitted;
  bool fitting = false;  // it runs a fitting row
};

// The machine's files with the fitted parameters it declares set to `values`.
Files machine_files(const Machine& m, const std::vector<std::string>& values) {
  std::vector<FreeParameterSpec> params;
  std::vector<std::string> own;
  for (const auto& [k, spec] : m.fitted) {
    params.push_back(spec);
    own.push_back(values[k]);
  }
  return with_values(m.base, params, own, m.calibration_source);
}

class Evaluator {
 public:
  Evaluator(const std::vector<Machine>& machines, std::vector<CalibratedRow>& rows, unsigned jobs)
      : machines_(machines), rows_(rows), jobs_(jobs) {}

  // Mean squared log ratio over the fitting rows (simulating them).
  double objective(const std::vector<std::string>& values) {
    const std::string key = [&] {
      std::string k;
      for (const std::string& v : values) k += v + "\n";
      return k;
    }();
    if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
    std::vector<std::optional<Files>> files(machines_.size());
    for (std::size_t m = 0; m < machines_.size(); ++m) {
      if (machines_[m].fitting) files[m] = machine_files(machines_[m], values);
    }
    std::vector<std::size_t> fitting;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      if (rows_[i].fitted) fitting.push_back(i);
    }
    std::vector<double> times(fitting.size());
    // Threads pay off for rows of milliseconds or more, not for microsecond
    // rows evaluated thousands of times: the first evaluation, on one
    // thread, says which.
    const auto start = std::chrono::steady_clock::now();
    for_each_row(fitting.size(), threaded_ ? jobs_ : 1, [&](std::size_t k) {
      CalibratedRow& row = rows_[fitting[k]];
      try {
        times[k] = simulate(*files[row.system], row);
      } catch (const SimError& e) {
        throw SimError(e.exit_code(), e.what() + trying(machines_[row.system], values));
      }
    });
    if (evaluations_ == 0) {
      threaded_ = std::chrono::steady_clock::now() - start > std::chrono::milliseconds(20) * fitting.size();
    }
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t k = 0; k < fitting.size(); ++k) {  // in row order: the same sum on any number of threads
      // The time is 1 ps to 2^63 ps and the measured time 1 ps to 10^16 ns
      // (simulate, calibrate and the readers check), so the quotient and its
      // log are finite.
      sum += std::pow(std::log(times[k] / rows_[fitting[k]].measured_ns), 2);
      ++n;
    }
    ++evaluations_;
    const double mean = sum / static_cast<double>(n);
    if (!std::isfinite(mean)) throw std::logic_error("calibrate: the objective is not finite");
    best_ = std::min(best_, mean);
    return cache_[key] = mean;
  }

  // Simulated ns of `row` with the files `f` (also sets its busbw).
  double simulate(const Files& f, CalibratedRow& row) {
    const std::uint64_t bytes = row.point.bytes;
    std::uint64_t ps = 0;
    try {
      ps = simulate_collective(f.network_text, f.network_source, f.system_text, f.system_source, row.point.collective,
                               bytes, &row.simulated_busbw);
    } catch (const SimError& e) {  // the row that could not run, and why
      throw SimError(e.exit_code(), row.point.where + ": " + row.point.collective + " of " + std::to_string(bytes) +
                                        " B: " + e.what());
    }
    if (ps == 0) {
      throw InputError(row.point.where + ": the network simulates this " + row.point.collective + " of " +
                       std::to_string(bytes) + " B in 0 ns (one NPU?): a fit needs simulated times above 0");
    }
    row.simulated_ns = static_cast<double>(ps) / 1e3;
    return row.simulated_ns;
  }

  std::size_t evaluations() const { return evaluations_; }
  double best() const { return best_; }

  // What a row that could not run was tried with: a search that reaches a
  // bound no row can run at (a latency of 10^6 s passing the largest time)
  // stopped with the row's error alone, the values it ran with unsaid.
  std::string trying(const Machine& m, const std::vector<std::string>& values) const {
    std::string s;
    for (const auto& [k, spec] : m.fitted) s += (s.empty() ? "" : ", ") + spec.name + " = " + values[k];
    if (s.empty()) return {};
    s = " (the fit was trying " + s;
    if (evaluations_ > 0) s += "; narrow the bounds in " + m.calibration_source;
    // A search tries values between the bounds: a key of whole numbers (a
    // count, a release) refuses the fractions any bounds lead to.
    bool fraction = false;
    for (const auto& [k, spec] : m.fitted) {
      fraction = fraction || (spec.kind == "number" && values[k].find_first_of(".eE") != std::string::npos);
    }
    if (fraction) s += "; a key that takes whole numbers only (a count, a release) cannot be a free parameter";
    return s + ")";
  }

 private:
  const std::vector<Machine>& machines_;
  std::vector<CalibratedRow>& rows_;
  unsigned jobs_;
  bool threaded_ = false;
  std::map<std::string, double> cache_;
  std::size_t evaluations_ = 0;
  double best_ = std::numeric_limits<double>::infinity();
};

// Golden-section search of parameter k over its bracket in log space, the
// others held; returns the best value (as written) among those evaluated,
// which lies within [min, max] (the starting value is a candidate only when
// it does).
std::string golden_section(Evaluator& ev, const FreeParameterSpec& p, std::vector<std::string> values, std::size_t k,
                           int steps) {
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double a = std::log(p.min), b = std::log(p.max);
  std::string best;
  double best_f = std::numeric_limits<double>::infinity();
  if (within(p, values[k])) {
    best = values[k];
    best_f = ev.objective(values);
  }
  auto eval = [&](double x) {
    values[k] = bounded_value(p, std::exp(x));
    const double f = ev.objective(values);
    if (f < best_f || best.empty()) {
      best_f = f;
      best = values[k];
    }
    return f;
  };
  // A coarse scan first (9 points), so a bracket with several dips starts
  // around the lowest one; then golden sections inside its neighbours.
  const int grid = 9;
  int at = 0;
  double lowest = 0;
  for (int i = 0; i < grid; ++i) {
    const double f = eval(a + (b - a) * i / (grid - 1));
    if (i == 0 || f < lowest) {
      lowest = f;
      at = i;
    }
  }
  const double h = (b - a) / (grid - 1);
  double lo = a + h * std::max(0, at - 1), hi = a + h * std::min(grid - 1, at + 1);
  double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
  double f1 = eval(x1), f2 = eval(x2);
  for (int i = 0; i < steps; ++i) {
    if (f1 <= f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - phi * (hi - lo);
      f1 = eval(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + phi * (hi - lo);
      f2 = eval(x2);
    }
  }
  return best;
}

constexpr std::size_t kNoneHeld = static_cast<std::size_t>(-1);

// Coordinate descent over every parameter but `held` until a round no
// longer lowers the objective (by a part in 1e9), at most `rounds` rounds:
// parameters that trade off against each other (a bandwidth and a latency)
// need several.
void descend(Evaluator& ev, const std::vector<FreeParameterSpec>& params, std::vector<std::string>& values, int rounds,
             int steps, std::size_t held, const std::function<void(const CalibrateProgress&)>& progress) {
  double last = ev.objective(values);
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k < params.size(); ++k) {
      if (k == held) continue;
      values[k] = golden_section(ev, params[k], values, k, steps);
      if (progress) progress(CalibrateProgress{round + 1, params[k].name, ev.evaluations(), std::sqrt(ev.best())});
    }
    const double now = ev.objective(values);
    if (now >= last * (1 - 1e-9)) break;
    last = now;
  }
}

// Values the fitting rows do not pin (`--trade-offs`): each fitted value in
// turn doubled and halved (within its bounds), the others fitted again (up to
// 3 rounds), and the rows' rms log error compared with the fit's. Where it
// rises by less than half a point, the rows fit about as well with that
// value moved: they fix a combination of the values, not each (a per-call
// overhead and a per-hop latency on one node count), and rows elsewhere
// depend on a split the fit happened to land on.
std::vector<std::string> trade_offs(Evaluator& ev, const std::vector<FreeParameterSpec>& params,
                                    const std::vector<std::string>& values, int steps) {
  constexpr double kTolerance = 0.005;
  const double fitted = std::sqrt(ev.objective(values));
  std::vector<std::string> out;
  for (std::size_t k = 0; k < params.size(); ++k) {
    const FreeParameterSpec& p = params[k];
    const double x = std::log(*value_of(p.kind, values[k]));
    for (const double factor : {2.0, 0.5}) {
      const double moved = std::clamp(x + std::log(factor), std::log(p.min), std::log(p.max));
      std::vector<std::string> trial = values;
      trial[k] = bounded_value(p, std::exp(moved));
      if (trial[k] == values[k]) continue;  // on that bound already
      if (params.size() > 1) descend(ev, params, trial, 3, steps, k, {});  // the others fitted again
      const double rms = std::sqrt(ev.objective(trial));
      if (rms > fitted + kTolerance) continue;
      std::ostringstream w;
      w << "calibrate: the fitting rows do not pin " << p.name << ": at " << trial[k] << " (fitted " << values[k]
        << ")";
      std::string others;
      for (std::size_t j = 0; j < params.size(); ++j) {
        if (j != k && trial[j] != values[j]) others += (others.empty() ? "" : ", ") + params[j].name + " " + trial[j];
      }
      w << (others.empty() ? std::string(", the others as fitted,") : ", with " + others + ",")
        << " they fit with rms log error " << rms << " against the fit's " << fitted
        << ": rows where these parameters act differently (another node count, other sizes), or fewer --fit "
           "parameters, decide it (docs/calibrate.md, \"Values the rows do not pin\")";
      out.push_back(w.str());
      break;
    }
  }
  return out;
}

YAML::Node find_key(YAML::Node root, const std::vector<std::string>& path) {
  YAML::Node at;
  at.reset(root);
  for (const std::string& k : path) {
    YAML::Node next;
    if (at.IsMap() && at[k]) {
      next.reset(at[k]);
    } else if (at.IsSequence() && !k.empty() && k.find_first_not_of("0123456789") == std::string::npos &&
               std::stoul(k) < at.size()) {
      next.reset(at[std::stoul(k)]);
    } else {
      return YAML::Node();
    }
    at.reset(next);
  }
  return at;
}

// `text` as one word of a shell command: quoted when it holds anything but
// the characters of plain paths and values, so the header's command runs as written.
std::string shell_word(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.,:/=+-") ==
                           std::string::npos) {
    return text;
  }
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string header_comment(const CalibrateOptions& o, const CalibrationResult& r) {
  std::ostringstream h;
  h << "# Calibrated by `sim calibrate " << shell_word(o.reference)
    << (o.preset.empty() ? " --system " + shell_word(o.system_dir) : " --preset " + shell_word(o.preset)) << " --fit ";
  for (std::size_t i = 0; i < r.parameters.size(); ++i) h << (i ? "," : "") << r.parameters[i].name;
  if (!o.nccl_collective.empty()) h << " --collective " << shell_word(o.nccl_collective);
  for (const auto& [c, v] : o.filters) h << " --filter " << shell_word(c + "=" + v);
  if (o.sizes) h << " --sizes " << o.sizes->first << ":" << o.sizes->second;
  h << "` (docs/calibrate.md).\n# Fitted (a fit, not a spec-sheet number), on " << std::count_if(r.rows.begin(), r.rows.end(), [](const CalibratedRow& x) { return x.fitted; })
    << " rows, rms log error " << r.fit_rms_log_error << ":\n";
  for (std::size_t i = 0; i < r.parameters.size(); ++i) {
    h << "#   " << r.parameters[i].name << " (" << r.parameters[i].file << ".yml " << r.parameters[i].key
      << ") = " << r.values[i] << "\n";
  }
  h << (o.preset.empty() ? "# Errors on every other row: errors.csv next to this file.\n"
                         : "# Errors on every other row: errors.csv in the folder above this one.\n");
  return h.str();
}

}  // namespace



std::optional<double> CalibratedRow::busbw_error() const {
  return relative_deviation(simulated_busbw, measured_busbw);
}

void check_calibration_output(const std::string& output) {
  namespace fs = std::filesystem;
  if (output.empty()) throw InputError("-o: an empty folder name");
  std::error_code ec;
  const fs::path out(output);
  if (fs::exists(out, ec)) {
    if (!fs::is_directory(out, ec)) throw InputError("-o " + output + ": exists and is not a folder");
    for (const char* f : {"network.yml", "system.yml", "calibration.yml", "errors.csv"}) {
      const fs::path file = out / f;
      if (fs::exists(file, ec) && !fs::is_regular_file(file, ec)) {
        throw InputError("-o " + output + ": " + file.string() + " exists and is not a file");
      }
    }
    if (::access(output.c_str(), W_OK | X_OK) != 0) throw InputError("-o " + output + ": the folder is not writable");
    return;
  }
  // The nearest ancestor that exists must be a folder we may create in.
  fs::path at = fs::absolute(out, ec).parent_path();
  while (!at.empty() && !fs::exists(at, ec) && at != at.root_path()) at = at.parent_path();
  if (!fs::is_directory(at, ec)) throw InputError("-o " + output + ": " + at.string() + " is not a folder");
  if (::access(at.c_str(), W_OK | X_OK) != 0) {
    throw InputError("-o " + output + ": cannot create the folder (" + at.string() + " is not writable)");
  }
}

std::vector<FreeParameterSpec> read_free_parameters(const std::string& path) {
  return parse_free_parameters(read_input_file(path, "calibration file"), path);
}

std::vector<FreeParameterSpec> parse_free_parameters(const std::string& text, const std::string& path) {
  const ConfigReader r(path);
  const YAML::Node root = r.load(text);
  if (!root.IsMap()) r.fail(root, "expected a map with 'free:' (docs/calibrate.md)");
  r.check_keys(root, "", {"preset", "free"});
  const YAML::Node list = r.require_list(root, "free");
  std::vector<FreeParameterSpec> params;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node n = list[i];
    const std::string at = "free[" + std::to_string(i) + "].";
    if (!n.IsMap()) r.fail(n, "free[" + std::to_string(i) + "]: expected a map {name, file, key, min, max}");
    r.check_keys(n, at, {"name", "file", "key", "min", "max"});
    FreeParameterSpec p;
    p.name = r.text(r.require(n, "name"), at + "name");
    // Names go into --fit lists and the files' headers: a word, no comma or space.
    if (p.name.empty() || p.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
                              std::string::npos) {
      r.fail(n["name"], "'" + at + "name' '" + p.name + "': a name is letters, digits, '_', '.' or '-' (it is given to --fit)");
    }
    p.file = r.text(r.require(n, "file"), at + "file");
    if (p.file != "network" && p.file != "system") r.fail(n["file"], "'" + at + "file' must be network or system, not '" + p.file + "'");
    p.key = r.text(r.require(n, "key"), at + "key");
    p.min_text = r.text(r.require(n, "min"), at + "min");
    p.max_text = r.text(r.require(n, "max"), at + "max");
    p.kind = kind_of(p.min_text);
    p.min = read_value(r, n["min"], at + "min", p.kind);
    p.max = read_value(r, n["max"], at + "max", kind_of(p.max_text));
    if (kind_of(p.max_text) != p.kind) {
      r.fail(n["max"], "'" + at + "max' (" + p.max_text + ", a " + kind_of(p.max_text) + ") is not in the unit of '" +
                           at + "min' (" + p.min_text + ", a " + p.kind + ")");
    }
    if (!(p.min > 0) || !(p.max > p.min)) r.fail(n["max"], "'" + at + "min' must be > 0 and below 'max' (a log-space search)");
    for (const FreeParameterSpec& q : params) {
      if (q.name == p.name) r.fail(n["name"], "parameter '" + p.name + "' twice");
    }
    p.where = path + ":" + std::to_string(n.Mark().line + 1);
    params.push_back(std::move(p));
  }
  if (params.empty()) r.fail(list, "'free' lists no parameter");
  return params;
}

bool on_bound(const FreeParameterSpec& p, double value) {
  // The search's own space: a value 0.1% of the way from a bound in log space.
  const double lo = std::log(p.min), hi = std::log(p.max), x = std::log(value);
  const double margin = 1e-3 * (hi - lo);
  return x - lo <= margin || hi - x <= margin;
}

namespace {

// The --system folder as the one machine every row runs on.
Machine folder_machine(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw InputError(dir + ": --system must be a folder with network.yml, system.yml and calibration.yml (`sim system gen`)");
  Machine m;
  m.base.network_source = (fs::path(dir) / "network.yml").string();
  m.base.system_source = (fs::path(dir) / "system.yml").string();
  m.calibration_source = (fs::path(dir) / "calibration.yml").string();
  m.base.network_text = read_input_file(m.base.network_source, "network file");
  m.base.system_text = read_input_file(m.base.system_source, "system file");
  m.calibration_text = read_input_file(m.calibration_source, "calibration file");
  m.declared = parse_free_parameters(m.calibration_text, m.calibration_source);
  m.npus = parse_topology(m.base.network_text, m.base.network_source).npu_count();
  return m;
}

Machine preset_machine(const SizedSystem& s) {
  Machine m;
  m.nodes = s.nodes;
  m.npus = s.npus;
  m.base = Files{s.network_text, s.network_source, s.system_text, s.system_source};
  m.calibration_source = s.calibration_source;
  m.calibration_text = s.calibration_text;
  m.declared = parse_free_parameters(s.calibration_text, s.calibration_source);
  return m;
}

bool declared_alike(const FreeParameterSpec& a, const FreeParameterSpec& b) {
  return a.file == b.file && a.key == b.key && a.kind == b.kind && a.min == b.min && a.max == b.max;
}

// The value the machine's files hold for `p` (its key must exist).
std::string starting_value(const Machine& m, const FreeParameterSpec& p) {
  const bool network = p.file == "network";
  const ConfigReader reader(network ? m.base.network_source : m.base.system_source);
  const YAML::Node root = reader.load(network ? m.base.network_text : m.base.system_text);
  const auto [path, param] = key_parts(p.key);
  const std::vector<std::string> targets = param.empty() ? std::vector<std::string>{path} : param_targets(root, path, param);
  const YAML::Node v = targets.empty() ? YAML::Node() : find_key(root, split(targets.front(), '.'));
  const std::string value = !v || !v.IsScalar() ? "" : param.empty() ? v.Scalar() : param_of(v.Scalar(), param);
  if (value.empty()) {
    throw InputError(p.where + ": parameter '" + p.name + "': " + (network ? m.base.network_source : m.base.system_source) +
                     " has no key '" + p.key + "'" +
                     (param.empty() ? "" : " (an algorithm string with '" + param + "=<value>' at '" + path + "')"));
  }
  // Bounds of another kind than the value (a time for a bandwidth) were
  // written into the file and refused there, blaming a reference row and the
  // file's line rather than calibration.yml.
  if (!value_of(p.kind, value)) {
    throw InputError(p.where + ": parameter '" + p.name + "': its bounds (" + p.min_text + ", " + p.max_text +
                     ") are a " + p.kind + ", but '" + p.key + "' in " +
                     (network ? m.base.network_source : m.base.system_source) + " is '" + value + "', " +
                     (kind_of(value) != p.kind ? "a " + kind_of(value) : "not a " + p.kind));
  }
  return value;
}

// Two fitted parameters that set one value (the same key, or the same
// parameter of one algorithm string, however the paths are spelled): the fit
// would search one, write the other, and report both as fitted.
void check_distinct_targets(const Machine& m) {
  struct Target {
    YAML::Node node;
    std::string param;
    const FreeParameterSpec* spec;
  };
  std::vector<Target> taken;
  for (const std::string file : {"network", "system"}) {
    const YAML::Node root = YAML::Load(file == "network" ? m.base.network_text : m.base.system_text);
    for (const auto& [k, p] : m.fitted) {
      if (p.file != file) continue;
      const auto [path, param] = key_parts(p.key);
      for (const std::string& t : param.empty() ? std::vector<std::string>{path} : param_targets(root, path, param)) {
        const YAML::Node node = find_key(root, split(t, '.'));
        for (const Target& other : taken) {
          if (!other.node.is(node) || (!param.empty() && !other.param.empty() && other.param != param)) continue;
          throw InputError(p.where + ": parameter '" + p.name + "' sets '" + t + (param.empty() ? "" : ":" + param) +
                           "' in " + (file == "network" ? m.base.network_source : m.base.system_source) +
                           ", as parameter '" + other.spec->name + "' (" + other.spec->where +
                           ") does: the fit would search one and write the other; give each value one parameter");
        }
        taken.push_back(Target{node, param, &p});
      }
    }
  }
}

std::string sizes_folder(const std::string& output, std::uint32_t nodes) {
  return (std::filesystem::path(output) / ("nodes-" + std::to_string(nodes))).string();
}

}  // namespace

CalibrationResult calibrate(const CalibrateOptions& o) {
  if (o.system_dir.empty() == o.preset.empty()) {
    throw InputError("give --system DIR or --preset NAME: the system the rows run on (one of them)");
  }
  CalibrationResult result;
  result.preset = o.preset;
  std::vector<Machine> machines;
  const presets::Preset* preset = o.preset.empty() ? nullptr : &presets::find_preset(o.preset);
  if (!preset) machines.push_back(folder_machine(o.system_dir));

  const Curve curve = read_curve(o.reference, o.nccl_collective);
  std::vector<CurvePoint> points = curve.points;
  // With --preset: each row's node count, and each count's files made once
  // (in increasing order); a row without a `nodes` column gets one, so
  // --filter nodes=N selects by it whatever the file calls its sizes.
  std::vector<std::size_t> machine_of(points.size(), 0);
  if (preset) {
    std::vector<std::uint32_t> nodes(points.size());
    std::map<std::uint32_t, std::string> first_row;  // node count -> the first row asking for it
    for (std::size_t i = 0; i < points.size(); ++i) {
      nodes[i] = row_nodes(points[i], *preset);
      if (!column_value(points[i], "nodes")) points[i].columns["nodes"] = std::to_string(nodes[i]);
      first_row.emplace(nodes[i], points[i].where);
    }
    PresetSizes sizes(*preset);
    std::map<std::uint32_t, std::size_t> index;
    for (const auto& [n, where] : first_row) {
      index[n] = machines.size();
      machines.push_back(preset_machine(sizes.at(n, where)));
    }
    for (std::size_t i = 0; i < points.size(); ++i) machine_of[i] = index.at(nodes[i]);
  }

  for (const auto& filter : o.filters) {
    const std::string& column = filter.first;
    const bool known = std::any_of(points.begin(), points.end(), [&](const CurvePoint& p) {
      return filter_matches(p, column, filter.second).has_value();
    });
    if (!known) {
      std::string columns = "collective";
      if (!points.empty()) {
        for (const auto& [c, v] : points.front().labels) columns += ", " + c;
        for (const auto& [c, v] : points.front().columns) columns += ", " + c;
      }
      throw InputError("--filter " + column + "=" + filter.second + ": " + o.reference + " has no column '" + column +
                       "' (it has: " + columns + ")");
    }
  }
  std::size_t other_npus = 0, filtered = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const CurvePoint& p = points[i];
    if (!p.time_ns) throw InputError(p.where + ": no time to fit on");
    // Times are above 0 in measured curves (reference_reader.h); a simulated
    // curve used as a reference may hold 0 (one rank), and a time below the
    // simulator's resolution has no ratio to fit.
    if (!(*p.time_ns >= 1e-3)) {
      throw InputError(p.where + ": time " + std::to_string(*p.time_ns) + " ns: a fit needs measured times of 1 ps or more");
    }
    Machine& m = machines[machine_of[i]];
    if (const auto it = p.labels.find("npus"); !preset && it != p.labels.end() && it->second != std::to_string(m.npus)) {
      ++other_npus;
      continue;
    }
    CalibratedRow row;
    row.point = p;
    row.system = machine_of[i];
    row.nodes = m.nodes;
    row.point.bytes = simulator_bytes(curve, p, m.npus);
    if (row.point.bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw InputError(p.where + ": size " + std::to_string(row.point.bytes) +
                       " B is above the largest a collective carries (2^63 - 1 B, Chakra's comm_size)");
    }
    row.fitted = passes(p, o);
    filtered += !row.fitted;
    m.fitting = m.fitting || row.fitted;
    row.measured_ns = *p.time_ns;
    row.measured_busbw = p.busbw_gbps.value_or(0);
    result.rows.push_back(std::move(row));
  }
  const auto fitting = std::count_if(result.rows.begin(), result.rows.end(), [](const CalibratedRow& r) { return r.fitted; });
  if (fitting == 0) {
    throw InputError(o.reference + ": no row to fit on: of its " + std::to_string(curve.points.size()) + " rows, " +
                     (preset ? std::string()
                             : std::to_string(other_npus) + " are on another NPU count than the network's " +
                                   std::to_string(machines[0].npus) + " and ") +
                     std::to_string(filtered) + " are left out by --filter and --sizes");
  }
  // Two fitting rows that are one point, as `sim compare` matches points,
  // would weigh one measurement twice (or two that disagree) in the fit.
  std::set<std::string> keys = common_labels(curve);
  if (preset) keys.insert("nodes");
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    for (std::size_t j = 0; j < i && result.rows[i].fitted; ++j) {
      const CurvePoint &a = result.rows[j].point, &b = result.rows[i].point;
      if (result.rows[j].fitted && same_point(a, b, keys)) {
        throw InputError(b.where + ": the same point as " + a.where + " " + describe_point(b, keys) +
                         ": a fit would count it twice (delete a row, or narrow the fitting rows with --filter "
                         "column=value)");
      }
    }
  }

  // The free parameters: those the systems with fitting rows declare, in the
  // order of first declaration; a name every system declares alike.
  std::map<std::string, const FreeParameterSpec*> seen;
  for (const Machine& m : machines) {
    for (const FreeParameterSpec& p : m.declared) {
      const auto it = seen.find(p.name);
      if (it == seen.end()) {
        seen.emplace(p.name, &p);
      } else if (!declared_alike(p, *it->second)) {
        throw InputError(p.where + ": parameter '" + p.name + "' is declared otherwise at " + it->second->where +
                         " (one fit sets one value for every node count: the same file, key and bounds)");
      }
    }
  }
  std::vector<FreeParameterSpec> all;
  std::string declared_by;
  for (const Machine& m : machines) {
    if (!m.fitting) continue;
    declared_by += (declared_by.empty() ? "" : ", ") + m.calibration_source;
    for (const FreeParameterSpec& p : m.declared) {
      if (std::none_of(all.begin(), all.end(), [&](const FreeParameterSpec& q) { return q.name == p.name; })) all.push_back(p);
    }
  }
  if (o.fit.empty()) {
    result.parameters = all;
  } else {
    for (const std::string& name : o.fit) {
      if (name.empty()) throw InputError("--fit: an empty parameter name");
      if (std::count(o.fit.begin(), o.fit.end(), name) > 1) throw InputError("--fit: parameter '" + name + "' given twice");
      const auto it = std::find_if(all.begin(), all.end(), [&](const FreeParameterSpec& p) { return p.name == name; });
      if (it == all.end()) {
        std::string known;
        for (const FreeParameterSpec& p : all) known += (known.empty() ? "" : ", ") + p.name;
        throw InputError("--fit " + name + ": " + declared_by + " has no such parameter (it has: " + known + ")");
      }
      result.parameters.push_back(*it);
    }
  }

  // Each system sets the fitted parameters it declares; the starting value is
  // the first fitting system's (each key must exist in every system's files).
  result.values.assign(result.parameters.size(), "");
  for (Machine& m : machines) {
    for (std::size_t k = 0; k < result.parameters.size(); ++k) {
      const auto own = std::find_if(m.declared.begin(), m.declared.end(),
                                    [&](const FreeParameterSpec& p) { return p.name == result.parameters[k].name; });
      if (own == m.declared.end()) continue;
      m.fitted.emplace_back(k, *own);
      const std::string value = starting_value(m, *own);
      if (m.fitting && result.values[k].empty()) result.values[k] = value;
    }
    check_distinct_targets(m);
  }
  if (preset && !o.output.empty()) {
    for (const Machine& m : machines) check_calibration_output(sizes_folder(o.output, m.nodes));
  }

  Evaluator ev(machines, result.rows, o.jobs);
  descend(ev, result.parameters, result.values, std::max(o.rounds, 1), o.steps, kNoneHeld, o.progress);
  result.fit_rms_log_error = std::sqrt(ev.objective(result.values));
  result.evaluations = ev.evaluations();
  for (std::size_t k = 0; k < result.parameters.size(); ++k) {
    const FreeParameterSpec& p = result.parameters[k];
    if (!within(p, result.values[k])) {
      throw std::logic_error("calibrate: the fitted " + p.name + " = " + result.values[k] + " lies outside its bounds");
    }
    if (on_bound(p, *value_of(p.kind, result.values[k]))) {
      const bool low = std::log(*value_of(p.kind, result.values[k])) - std::log(p.min) <
                       std::log(p.max) - std::log(*value_of(p.kind, result.values[k]));
      result.warnings.push_back("calibrate: fitted " + p.name + " = " + result.values[k] + " sits on its " +
                                (low ? "lower bound " + p.min_text : "upper bound " + p.max_text) + " (bounds [" +
                                p.min_text + ", " + p.max_text + "], " + p.where +
                                "): the rows ask for a value beyond it, so the other parameters absorb the rest");
    }
  }
  if (o.trade_offs) {
    for (const std::string& w : trade_offs(ev, result.parameters, result.values, o.steps)) result.warnings.push_back(w);
  }

  // Every row with the fitted files.
  std::vector<Files> fitted_files;
  for (const Machine& m : machines) fitted_files.push_back(machine_files(m, result.values));
  for_each_row(result.rows.size(), o.jobs,
               [&](std::size_t i) { ev.simulate(fitted_files[result.rows[i].system], result.rows[i]); });
  const std::string head = header_comment(o, result);
  for (std::size_t i = 0; i < machines.size(); ++i) {
    const Machine& m = machines[i];
    const Files& fitted = fitted_files[i];
    const std::string size_head =
        m.nodes ? head + "# These files: preset " + o.preset + " on " + std::to_string(m.nodes) + " nodes.\n" : head;
    result.systems.push_back(CalibratedSystem{m.nodes, size_head + fitted.network_text, size_head + fitted.system_text,
                                              size_head + m.calibration_text});
  }
  if (!preset) {
    result.network_text = result.systems[0].network_text;
    result.system_text = result.systems[0].system_text;
    result.calibration_text = result.systems[0].calibration_text;
  }
  return result;
}

void write_calibration(const CalibrationResult& r, const CalibrateOptions& o) {
  namespace fs = std::filesystem;
  const bool by_nodes = !r.preset.empty();
  std::vector<std::string> folders{o.output};
  if (by_nodes) {
    for (const CalibratedSystem& s : r.systems) folders.push_back(sizes_folder(o.output, s.nodes));
  }
  for (const std::string& folder : folders) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec || !fs::is_directory(folder)) throw InputError(folder + ": cannot create the folder (" + ec.message() + ")");
  }
  std::ostringstream csv;
  csv << (by_nodes ? "nodes," : "")
      << "collective,bytes,role,measured_us,simulated_us,time_error_pct,measured_busbw_gbps,simulated_busbw_gbps,"
         "busbw_error_pct\n";
  for (const CalibratedRow& row : r.rows) {
    char line[512];
    if (by_nodes) csv << row.nodes << ",";
    // The simulated time to the picosecond, the simulator's resolution.
    std::snprintf(line, sizeof line, "%s,%llu,%s,%s,%s,%s,%s,%s,", row.point.collective.c_str(),
                  static_cast<unsigned long long>(row.point.bytes), row.fitted ? "fit" : "held-out",
                  fixed_or_exponent(row.measured_ns / 1e3, 3).c_str(),
                  fixed_or_exponent(row.simulated_ns / 1e3, 6).c_str(), fixed_or_exponent(row.error() * 100, 2).c_str(),
                  fixed_or_exponent(row.measured_busbw, 2).c_str(), fixed_or_exponent(row.simulated_busbw, 2).c_str());
    csv << line;
    if (const std::optional<double> e = row.busbw_error()) {  // empty: no measured busbw to compare with
      csv << fixed_or_exponent(*e * 100, 2);
    }
    csv << "\n";
  }
  // Every file written beside its final name first, then all renamed.
  std::vector<std::unique_ptr<OutputFile>> files;
  const auto add = [&](const std::string& path, const std::string& text) {
    files.push_back(std::make_unique<OutputFile>(path));
    files.back()->write(text);
  };
  for (std::size_t i = 0; i < r.systems.size(); ++i) {
    const std::string folder = by_nodes ? folders[i + 1] : o.output;
    add((fs::path(folder) / "network.yml").string(), r.systems[i].network_text);
    add((fs::path(folder) / "system.yml").string(), r.systems[i].system_text);
    add((fs::path(folder) / "calibration.yml").string(), r.systems[i].calibration_text);
  }
  add((fs::path(o.output) / "errors.csv").string(), csv.str());
  for (const auto& f : files) f->commit();
}

std::string describe_calibration(const CalibrationResult& r) {
  std::ostringstream o;
  o << "fitted " << r.parameters.size() << " parameters (" << r.evaluations << " evaluations, rms log error "
    << r.fit_rms_log_error << " on the fitting rows), each beside its bounds:\n";
  for (std::size_t i = 0; i < r.parameters.size(); ++i) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-20s %-16s [%s, %s]\n", r.parameters[i].name.c_str(), r.values[i].c_str(),
                  r.parameters[i].min_text.c_str(), r.parameters[i].max_text.c_str());
    o << line;
  }
  const bool by_nodes = !r.preset.empty();
  if (std::none_of(r.rows.begin(), r.rows.end(), [](const CalibratedRow& row) { return !row.fitted; })) {
    o << "no held-out rows: every row was fitted on (leave some out with --filter or --sizes to judge the fit)\n";
    return o.str();
  }
  o << "rows not fitted on (time and busbw error of the simulation against the measurement"
    << (by_nodes ? ", by node count of " + r.preset : std::string()) << "):\n";
  o << (by_nodes ? "  nodes " : "") << "  collective       bytes        measured us  simulated us  time err  busbw err\n";
  // By node count (in increasing order), each in the file's order.
  std::vector<const CalibratedRow*> rows;
  for (const CalibratedRow& row : r.rows) {
    if (!row.fitted) rows.push_back(&row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const CalibratedRow* a, const CalibratedRow* b) { return a->nodes < b->nodes; });
  double worst = 0;
  std::map<std::uint32_t, double> worst_by_nodes;
  for (const CalibratedRow* row : rows) {
    char line[256], busbw[32] = "      n/a";
    if (const std::optional<double> e = row->busbw_error()) {
      std::snprintf(busbw, sizeof busbw, "%8s%%", fixed_or_exponent(*e * 100, 1, true).c_str());
    }
    if (by_nodes) {
      std::snprintf(line, sizeof line, "  %5u ", static_cast<unsigned>(row->nodes));
      o << line;
    }
    std::snprintf(line, sizeof line, "  %-15s %12llu %12s %12s %8s%% %s\n", row->point.collective.c_str(),
                  static_cast<unsigned long long>(row->point.bytes),
                  fixed_or_exponent(row->measured_ns / 1e3, 2).c_str(),
                  fixed_or_exponent(row->simulated_ns / 1e3, 2).c_str(),
                  fixed_or_exponent(row->error() * 100, 1, true).c_str(), busbw);
    o << line;
    worst = std::max(worst, std::abs(row->error()));
    worst_by_nodes[row->nodes] = std::max(worst_by_nodes[row->nodes], std::abs(row->error()));
  }
  if (by_nodes && worst_by_nodes.size() > 1) {
    o << "worst held-out time error by node count:";
    for (const auto& [n, e] : worst_by_nodes) o << " " << n << " nodes " << e * 100 << "%" << (n == worst_by_nodes.rbegin()->first ? "" : ",");
    o << "\n";
  }
  o << "worst held-out time error " << worst * 100 << "%\n";
  return o.str();
}

}  // namespace sim::workflows
