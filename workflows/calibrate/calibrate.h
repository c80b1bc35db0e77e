// `sim calibrate REFERENCE --system DIR`: fits a system folder's free
// parameters to a measured curve.
//
// `sim calibrate REFERENCE --preset NAME` instead simulates each row on the
// preset generated at that row's node count (workflows/compare/preset_sizes.h) and
// fits one set of values over every node count: each size's calibration.yml
// declares its free parameters, and a parameter several sizes declare (by
// name) must be declared alike.
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
  std::string system_dir;       // network.yml, system.yml, calibration.yml; or
  std::string preset;           // a preset, generated at each row's node count
  std::vector<std::string> fit;                                  // names; empty: every free parameter
  std::vector<std::pair<std::string, std::string>> filters;      // column=value: one per column must hold
  std::optional<std::pair<std::uint64_t, std::uint64_t>> sizes;  // bytes, inclusive
  std::string output;
  int rounds = 20;              // coordinate-descent rounds at most (it stops when a round gains nothing)
  int steps = 24;               // golden-section evaluations per parameter and round
  unsigned jobs = 0;            // threads simulating rows side by side (0: one per core)
  // Also check which fitted values the rows pin (--trade-offs): each doubled
  // and halved with the others fitted again; a warning for each the rows fit
  // about as well without. About 2 x (parameters - 1) searches per parameter.
  bool trade_offs = false;
  std::function<void(const CalibrateProgress&)> progress;  // may be empty
};

struct FreeParameterSpec {
  std::string name, file, key;
  std::string kind;       // "bandwidth" (B/s), "time" (ps), "number"
  double min = 0, max = 0;  // in the kind's base unit
  std::string min_text, max_text;  // as calibration.yml writes them ("100ns", "100us")
  std::string where;      // "calibration.yml:4"
};

struct CalibratedRow {
  CurvePoint point;
  std::uint32_t nodes = 0;       // the preset's node count it ran on (--preset; 0 with --system)
  std::size_t system = 0;        // index in CalibrationResult::systems
  bool fitted = false;           // a fitting row
  double measured_ns = 0, simulated_ns = 0;
  double measured_busbw = 0, simulated_busbw = 0;  // GB/s (nccl-tests definitions)
  // Of time; finite, as the fit refuses measured times below 1 ps and the
  // simulator's times are below 2^63 ps.
  double error() const { return simulated_ns / measured_ns - 1; }
  // Of busbw, when the measurement has one above 0.
  std::optional<double> busbw_error() const;
};

// The calibrated files of one system: the --system folder's, or one size of
// the preset's.
struct CalibratedSystem {
  std::uint32_t nodes = 0;  // 0: the --system folder
  std::string network_text, system_text, calibration_text;
};

struct CalibrationResult {
  std::vector<FreeParameterSpec> parameters;  // the fitted ones
  std::vector<std::string> values;            // fitted value per parameter, as written ("391.2GB/s")
  std::vector<CalibratedRow> rows;            // every reference row the network can run
  double fit_rms_log_error = 0;
  std::size_t evaluations = 0;
  std::string preset;                          // --preset's name, or empty
  std::vector<CalibratedSystem> systems;       // by node count with --preset
  std::string network_text, system_text, calibration_text;  // the calibrated files (--system)
  // Fitted values on a bound (within 0.1% of the searched range, in log
  // space as the search): the data pull the value beyond what its bounds allow.
  std::vector<std::string> warnings;
};

// Reads DIR/calibration.yml strictly (unknown keys, bad bounds: InputError
// naming the file and line).
std::vector<FreeParameterSpec> read_free_parameters(const std::string& path);
// The same from the text of such a file (`source` names it in messages).
std::vector<FreeParameterSpec> parse_free_parameters(const std::string& text, const std::string& source);

// Whether `value` (in the kind's base unit) lies within 0.1% of p's searched
// range (in log space) of min or max.
bool on_bound(const FreeParameterSpec& p, double value);

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
// and busbw, the error); each file atomically. With --preset: OUT/errors.csv
// (with a `nodes` column) and OUT/nodes-N/{network,system,calibration}.yml
// for each node count N of the reference.
void write_calibration(const CalibrationResult& result, const CalibrateOptions& options);

// The fitted values beside their bounds and the table of held-out rows
// (by node count with --preset), for people (printed by `sim calibrate`).
std::string describe_calibration(const CalibrationResult& result);

}  // namespace sim::workflows
