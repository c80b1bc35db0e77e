#include "calibrate_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "core/units.h"
#include "option_checks.h"
#include "workflows/calibrate/calibrate.h"

namespace sim {

void add_calibrate_command(CLI::App& app, CalibrateCommand& c) {
  c.app = app.add_subcommand("calibrate",
                             "fit a system folder's free parameters to a measured curve (docs/calibrate.md)");
  c.app->add_option("reference", c.reference, "measured curve: nccl-tests output, reference CSV or sim results CSV")
      ->required();
  auto* system = c.app->add_option("--system", c.system, "folder with network.yml, system.yml, calibration.yml (sim system gen)")
                     ->check(not_empty("path"));
  auto* preset = c.app->add_option("--preset", c.preset,
                                   "a preset (sim system list): each row runs on it at the row's node count")
                     ->check(not_empty("value"));
  system->excludes(preset);
  preset->excludes(system);
  c.fit_option = c.app->add_option("--fit", c.fit, "parameters to fit, comma-separated (default: every one calibration.yml lists)");
  c.app->add_option("--filter", c.filters, "fit only on rows where column=value (collective=allreduce); repeatable: a row must match one value of every column named");
  c.app->add_option("--sizes", c.sizes, "fit only on sizes A:B, inclusive (16MiB:256MiB)")->check(not_empty("value"));
  c.app->add_option("--collective", c.collective, "the collective of nccl-tests output whose file name does not say")
      ->check(not_empty("value"));
  c.app->add_option("-o,--output", c.output, "folder to write the calibrated files and errors.csv to")->required();
  c.app->add_flag("-q,--quiet", c.quiet, "no progress lines on stderr");
  c.app->add_flag("--trade-offs", c.trade_offs,
                  "also check which fitted values the rows pin: each doubled and halved, the others fitted again; a warning for each the rows fit about as well without");
  c.app->add_option("-j,--jobs", c.jobs, "threads simulating the rows side by side (default: one per core)");
}

namespace {

// "a,b" -> {a, b}; an empty name (--fit '', a,,b, a,) or one given twice is an error.
std::vector<std::string> fit_names(const std::string& text) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name.empty()) throw InputError("--fit '" + text + "': an empty parameter name (expected NAME,NAME,...)");
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      throw InputError("--fit '" + text + "': parameter '" + name + "' given twice");
    }
    names.push_back(name);
    if (comma == std::string::npos) return names;
    start = comma + 1;
  }
}

}  // namespace

int run_calibrate_command(const CalibrateCommand& c, std::ostream& out, std::ostream& err) {
  workflows::CalibrateOptions o;
  o.reference = c.reference;
  o.system_dir = c.system;
  o.preset = c.preset;
  if (c.system.empty() == c.preset.empty()) {
    throw InputError("calibrate: give --system DIR or --preset NAME (the system the reference's rows run on)");
  }
  o.output = c.output;
  o.nccl_collective = c.collective;
  o.jobs = c.jobs;
  o.trade_offs = c.trade_offs;
  if (c.fit_option && c.fit_option->count() > 0) o.fit = fit_names(c.fit);
  for (const std::string& f : c.filters) {
    const auto eq = f.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == f.size()) {
      throw InputError("--filter '" + f + "': expected column=value");
    }
    o.filters.emplace_back(f.substr(0, eq), f.substr(eq + 1));
  }
  if (!c.sizes.empty()) {
    const auto colon = c.sizes.find(':');
    if (colon == std::string::npos) throw InputError("--sizes '" + c.sizes + "': expected A:B, e.g. 16MiB:256MiB");
    try {
      o.sizes = std::make_pair(parse_size(c.sizes.substr(0, colon)), parse_size(c.sizes.substr(colon + 1)));
    } catch (const std::invalid_argument& e) {
      throw InputError("--sizes '" + c.sizes + "': " + e.what());
    }
    if (o.sizes->first > o.sizes->second) throw InputError("--sizes '" + c.sizes + "': A is above B");
  }
  workflows::check_calibration_output(o.output);  // before the fit, not after it
  // Written over the folder it read, the fit replaced the values (and the
  // sources in their comments) it started from, and its header named a
  // command that no longer gives the files it wrote.
  if (std::error_code ec; !c.system.empty() && std::filesystem::equivalent(c.system, c.output, ec)) {
    throw InputError("-o " + c.output + " names the --system folder " + c.system +
                     ": the calibrated files would replace the ones the fit starts from; write them to another folder");
  }
  const auto start = std::chrono::steady_clock::now();
  double last_line = 0;
  if (!c.quiet) {
    o.progress = [&](const workflows::CalibrateProgress& p) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (elapsed < 2 || elapsed - last_line < 5) return;
      last_line = elapsed;
      char line[256];
      std::snprintf(line, sizeof line, "calibrate: round %d, %s searched: %zu evaluations, best rms log error %.4g, %.0f s\n",
                    p.round, p.parameter.c_str(), p.evaluations, p.best_rms_log_error, elapsed);
      err << line << std::flush;
    };
  }
  const workflows::CalibrationResult r = workflows::calibrate(o);
  workflows::write_calibration(r, o);
  for (const std::string& w : r.warnings) err << "sim: warning: " << w << "\n";
  out << workflows::describe_calibration(r);
  if (c.preset.empty()) {
    out << "wrote " << c.output << "/{network,system,calibration}.yml and " << c.output << "/errors.csv\n";
  } else {
    out << "wrote " << c.output << "/errors.csv and, for each node count N (";
    for (std::size_t i = 0; i < r.systems.size(); ++i) out << (i ? ", " : "") << r.systems[i].nodes;
    out << "), " << c.output << "/nodes-N/{network,system,calibration}.yml\n";
  }
  return kExitOk;
}

}  // namespace sim
