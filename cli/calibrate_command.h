// `sim calibrate REFERENCE --system DIR|--preset NAME [--fit NAME,...]
// [--filter column=value] [--sizes A:B] -o OUT` (workflows/calibrate/calibrate.h,
// docs/calibrate.md).
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace sim {

struct CalibrateCommand {
  std::string reference, system, preset, output, sizes, fit, collective;
  std::vector<std::string> filters;
  bool quiet = false;
  bool trade_offs = false;
  unsigned jobs = 0;  // 0: one per core
  CLI::App* app = nullptr;
  CLI::Option* fit_option = nullptr;  // given at all (an empty --fit '' is an error, not the default)
};

void add_calibrate_command(CLI::App& app, CalibrateCommand& command);
// Returns the exit code; throws SimError for bad input. Progress lines go to
// `err` (unless --quiet): after 2 s, then at most one every 5 s; so does a
// warning for each fitted value on a bound.
int run_calibrate_command(const CalibrateCommand& command, std::ostream& out, std::ostream& err);

}  // namespace sim
