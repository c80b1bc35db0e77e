// `sim calibrate REFERENCE --system DIR [--fit NAME,...] [--filter
// column=value] [--sizes A:B] -o OUT` (workflows/calibrate.h, docs/calibrate.md).
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace sim {

struct CalibrateCommand {
  std::string reference, system, output, sizes, fit, collective;
  std::vector<std::string> filters;
  CLI::App* app = nullptr;
};

void add_calibrate_command(CLI::App& app, CalibrateCommand& command);
// Returns the exit code; throws SimError for bad input.
int run_calibrate_command(const CalibrateCommand& command, std::ostream& out);

}  // namespace sim
