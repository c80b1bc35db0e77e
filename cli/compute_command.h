// `sim compute time --system FILE --kernels CSV [-o OUT]`: the system
// config's compute model (compute/compute_config.h) timing every row of a
// kernel table (compute/kernel_table.h), written back with the prediction
// appended, so a model can be checked against measurements:
//
//   gemm, membound rows   + predicted_us
//   attention rows        + predicted_us (forward), predicted_fwd_bwd_us
//
// --smooth predicts with the kernel model's fitted curves alone (no per-row
// correction): how far the smooth fit is from each measurement, and what
// scripts/kernels/derive_kernel_table.py writes as a derived table.
// A summary line (rows, median and largest error against the measured times)
// goes to standard error, or to standard output when -o names a file.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

namespace sim {

struct ComputeCommand {
  std::string system, kernels, output;
  bool smooth = false;  // the kernel model's fitted curves alone, without the per-row correction
  CLI::App* time = nullptr;  // the `compute time` subcommand, once added
};

// Adds `compute` and its `time` subcommand to the app.
void add_compute_command(CLI::App& app, ComputeCommand& command);
// Runs it; returns the exit code, throws SimError for bad input.
int run_compute_command(const ComputeCommand& command, std::ostream& out, std::ostream& err);

}  // namespace sim
