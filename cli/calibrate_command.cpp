#include "calibrate_command.h"

#include <sstream>

#include "core/error.h"
#include "core/units.h"
#include "workflows/calibrate.h"

namespace sim {

void add_calibrate_command(CLI::App& app, CalibrateCommand& c) {
  c.app = app.add_subcommand("calibrate",
                             "fit a system folder's free parameters to a measured curve (docs/calibrate.md)");
  c.app->add_option("reference", c.reference, "measured curve: nccl-tests output, reference CSV or sim results CSV")
      ->required();
  c.app->add_option("--system", c.system, "folder with network.yml, system.yml, calibration.yml (sim system gen)")
      ->required();
  c.app->add_option("--fit", c.fit, "parameters to fit, comma-separated (default: every one calibration.yml lists)");
  c.app->add_option("--filter", c.filters, "fit only on rows where column=value (collective=allreduce); repeatable");
  c.app->add_option("--sizes", c.sizes, "fit only on sizes A:B, inclusive (16MiB:256MiB)");
  c.app->add_option("--collective", c.collective, "the collective of nccl-tests output whose file name does not say");
  c.app->add_option("-o,--output", c.output, "folder to write the calibrated files and errors.csv to")->required();
}

int run_calibrate_command(const CalibrateCommand& c, std::ostream& out) {
  workflows::CalibrateOptions o;
  o.reference = c.reference;
  o.system_dir = c.system;
  o.output = c.output;
  o.nccl_collective = c.collective;
  if (!c.fit.empty()) {
    std::istringstream in(c.fit);
    std::string name;
    while (std::getline(in, name, ',')) {
      if (name.empty()) throw InputError("--fit '" + c.fit + "': an empty name");
      o.fit.push_back(name);
    }
  }
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
  const workflows::CalibrationResult r = workflows::calibrate(o);
  workflows::write_calibration(r, o);
  out << workflows::describe_calibration(r);
  out << "wrote " << c.output << "/{network,system,calibration}.yml and " << c.output << "/errors.csv\n";
  return kExitOk;
}

}  // namespace sim
