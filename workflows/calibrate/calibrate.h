// `sim calibrate REFERENCE --system DIR`: fits a system folder's free
// parameters to a measured curve.
//
// DIR holds network.yml and system.yml (what `sim --network --system` take)
// and calibration.yml, the parameters that may be fitted (written by `sim
// system gen`, presets/preset.h):
//
//   free:
//     - {name: nvlink_bandwidth, file: network, key: bandwidth.0, min: 180GB/s, max: 450GB/s}
//
// Each parameter is one key of one file, a bandwidth, time or plain number,
// searched in log space between min and max. The fit minimises the mean
// squared log ratio of simulated to measured time over the fitting rows (the
// reference rows that pass every --filter and lie within --sizes), so a 10%
// miss weighs the same at 16 MiB as at 1 GiB. Search: coordinate descent,
// each parameter in turn (in the file's order) by a golden-section search on
// a fixed bracket, for a fixed number of rounds: no randomness, so the same
// inputs give the same parameters. Each simulated point is one microbenchmark
// (the reference row's collective and size on every NPU of the network) run
// exactly as `sim --workload ... --network --system` would run it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "workflows/compare/curve_table.h"

namespace sim::workflows {

// Where a fit is, for a progress line: reported after each parameter's
// search in each round.
struct CalibrateProgress {
  int round = 0;                  // from 1
  std::string parameter;          // the one just searched
  std::size_t evaluations = 0;    // objective evaluations so far
  double best_rms_log_error = 0;  // sqrt of the lowest objective so far
};

struct CalibrateOptions {
  std::string reference;        // any curve read_curve reads
  std::string nccl_collective;  // for nccl-tests output whose file name does not say
  std::string system_dir;       // network.yml, system.yml, calibration.yml
  std::vector<std::string> fit;                                  // names; empty: every free parameter
  std::vector<std::pair<std::string, std::string>> filters;      // column=value, all must hold
  std::optional<std::pair<std::uint64_t, std::uint64_t>> sizes;  // bytes, inclusive
  std::string output;
  int rounds = 20;              // coordinate-descent rounds at most (it stops when a round gains nothing)
  int steps = 24;               // golden-section evaluations per parameter and round
  std::function<void(const CalibrateProgress&)> progress;  // may be empty
};

struct FreeParameterSpec {
  std::string name, file, key;
  std::string kind;       // "bandwidth" (B/s), "time" (ps), "number"
  double min = 0, max = 0;  // in the kind's base unit
  std::string where;      // "calibration.yml:4"
};

struct CalibratedRow {
  CurvePoint point;
  bool fitted = false;           // a fitting row
  double measured_ns = 0, simulated_ns = 0;
  double measured_busbw = 0, simulated_busbw = 0;  // GB/s (nccl-tests definitions)
  // Of time; finite, as the fit refuses measured times below 1 ps and the
  // simulator's times are below 2^63 ps.
  double error() const { return simulated_ns / measured_ns - 1; }
  // Of busbw, when the measurement has one above 0.
  std::optional<double> busbw_error() const;
};

struct CalibrationResult {
  std::vector<FreeParameterSpec> parameters;  // the fitted ones
  std::vector<std::string> values;            // fitted value per parameter, as written ("391.2GB/s")
  std::vector<CalibratedRow> rows;            // every reference row the network can run
  double fit_rms_log_error = 0;
  std::size_t evaluations = 0;
  std::string network_text, system_text, calibration_text;  // the calibrated files
};

// Reads DIR/calibration.yml strictly (unknown keys, bad bounds: InputError
// naming the file and line).
std::vector<FreeParameterSpec> read_free_parameters(const std::string& path);

// Throws InputError for bad input (no fitting row, an unknown parameter or
// filter column, a key the files lack, a point that fails to simulate, a
// measured time below 1 ps, a simulated time of 0). Every fitted value lies
// within its parameter's [min, max] (checked before returning).
CalibrationResult calibrate(const CalibrateOptions& options);

// Throws InputError when `output` cannot become the output folder (a file is
// there, a file of the folder's is a folder, an ancestor is not a folder or
// not writable): checked before a fit, so a fit is not run for nothing.
void check_calibration_output(const std::string& output);

// Writes OUT/network.yml, OUT/system.yml, OUT/calibration.yml and
// OUT/errors.csv (every row: fitted or held out, measured and simulated time
// and busbw, the error); each file atomically.
void write_calibration(const CalibrationResult& result, const CalibrateOptions& options);

// The table of held-out rows for people (also printed by `sim calibrate`).
std::string describe_calibration(const CalibrationResult& result);

// Simulated time (ps) of one collective of `bytes` per rank on every NPU of
// the network, with the given files: what a calibration point costs.
std::uint64_t simulate_collective(const std::string& network_text, const std::string& network_source,
                                  const std::string& system_text, const std::string& system_source,
                                  const std::string& collective, std::uint64_t bytes, double* busbw_gbps = nullptr);

}  // namespace sim::workflows
