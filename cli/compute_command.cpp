#include "compute_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "compute/kernel_model.h"
#include "compute/kernel_table.h"
#include "core/error.h"
#include "core/output_file.h"
#include "option_checks.h"
#include "system/scenario/system_files.h"

namespace sim {

void add_compute_command(CLI::App& app, ComputeCommand& c) {
  CLI::App* compute = app.add_subcommand("compute", "compute models of COMP nodes (docs/compute.md)");
  compute->require_subcommand(1);
  c.time = compute->add_subcommand(
      "time", "time every row of a kernel table with the system config's compute model; writes the rows back "
              "with predicted_us appended");
  c.time->add_option("--system", c.system, "system config YAML whose compute: section gives the model")->required();
  c.time->add_option("--kernels", c.kernels,
                     "kernel table CSV (gemm, attention or membound format, as measure.sh writes them)")
      ->required();
  c.time->add_option("-o,--output", c.output, "write the table here (default: standard output)")
      ->check(not_empty("path"));
  c.time->add_flag("--smooth", c.smooth,
                   "predict with the kernel model's fitted curves alone, without the correction that makes it "
                   "reproduce each measured row");
}

namespace {

std::string micros(double seconds) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.6g", seconds * 1e6);
  return buf;
}

// A prediction longer than a day is no GPU kernel's: the largest measured
// GEMMs take milliseconds, and one step of the largest training runs
// minutes. Such a row is a shape typed wrong (a 2^32-cube: 1.6e20 us on an
// H100) or in the wrong unit. The size is not refused: FLOPs are counted in
// double, whose rounding past 2^53 (a relative 1e-16) is far below the
// model's own error, so the number is that shape's roofline; it is printed
// with a warning. (A run refuses a COMP node that would end past the
// largest simulated time, about 106 days, with exit 3.)
constexpr double kLongestKernelSeconds = 86'400;

}  // namespace

int run_compute_command(const ComputeCommand& c, std::ostream& out, std::ostream& err) {
  const SystemConfig config = load_system_config(c.system);
  for (const std::string& w : config.warnings) err << "sim: warning: " << w << "\n";  // rows past the roofline
  if (!config.compute_model) {
    throw InputError(c.system + ": the system config has no compute model (a 'compute:' section with peak_tflops "
                                "and memory_bandwidth, and optionally kernels)");
  }
  const KernelCsv csv = read_kernel_csv(c.kernels);
  for (const std::string_view column : {"predicted_us", "predicted_fwd_bwd_us"}) {
    if (csv.header.find(column) != std::string::npos) {
      throw InputError(c.kernels + ":1: the table has a '" + std::string(column) +
                       "' column already (it is the output of this command)");
    }
  }
  std::shared_ptr<const ComputeModel> chosen = config.compute_model;
  if (c.smooth) {
    const auto* kernels = dynamic_cast<const KernelModel*>(chosen.get());
    if (!kernels) throw InputError(c.system + ": --smooth needs a kernel model (compute.kernels)");
    KernelModelOptions options = kernels->options();
    options.residual_octaves = 0;
    chosen = kernels->with_options(options);
  }
  const ComputeModel& model = *chosen;
  // A memory-bound op the tables did not measure would be timed as another
  // (the closest series: `copy`), and its row compared with a prediction
  // for a different kernel. The roofline times every op by its bytes.
  if (const auto* kernels = dynamic_cast<const KernelModel*>(chosen.get())) {
    const std::vector<std::string> ops = kernels->membound_ops();
    for (const KernelCsvRow& row : csv.rows) {
      const KernelShape& s = row.samples[0].shape;
      if (s.kind != KernelKind::kMembound || std::binary_search(ops.begin(), ops.end(), s.op)) continue;
      std::string known;
      for (const std::string& op : ops) known += (known.empty() ? "" : ", ") + op;
      throw InputError(c.kernels + ":" + std::to_string(row.line) + ": membound op '" + s.op + "' is not one the model's kernel tables measured (" +
                       (known.empty() ? std::string("they measure no memory-bound op") : "known: " + known) + ")");
    }
  }
  const auto time_of = [&](const KernelSample& s) {
    ComputeNode node;
    node.kernel = &s.shape;
    const std::optional<double> t = model.seconds(node);
    if (!t) throw InputError(c.kernels + ":" + std::to_string(s.line) + ": the model gives no time for " + s.shape.describe());
    return *t;
  };
  const bool attention = csv.format == KernelCsvFormat::kAttention;
  std::ostringstream table;
  table << csv.header << ",predicted_us" << (attention ? ",predicted_fwd_bwd_us" : "") << "\n";
  std::vector<double> errors;  // |predicted / measured - 1| per measured time
  std::vector<std::string> too_long;  // rows predicted past kLongestKernelSeconds
  const auto check_length = [&](const KernelCsvRow& row, double seconds) {
    if (!(seconds > kLongestKernelSeconds)) return;
    char days[64];
    std::snprintf(days, sizeof days, "%.3g days", seconds / kLongestKernelSeconds);
    too_long.push_back(c.kernels + ":" + std::to_string(row.line) + ": " + row.samples[0].shape.describe() +
                       " is predicted at " + micros(seconds) + " us (" + days + ")");
  };
  for (const KernelCsvRow& row : csv.rows) {
    table << row.text;
    if (attention) {
      const double fwd = time_of(row.samples[0]);
      const double both = fwd + time_of(row.samples[1]);
      check_length(row, both);
      table << "," << micros(fwd) << "," << micros(both);
      errors.push_back(std::fabs(fwd / row.samples[0].seconds - 1));
      errors.push_back(std::fabs(both / (row.samples[0].seconds + row.samples[1].seconds) - 1));
    } else {
      const double t = time_of(row.samples[0]);
      check_length(row, t);
      table << "," << micros(t);
      errors.push_back(std::fabs(t / row.samples[0].seconds - 1));
    }
    table << "\n";
  }
  // The first three rows by place, then how many more: a table of typos warns in a few lines.
  for (std::size_t i = 0; i < too_long.size() && i < 3; ++i) {
    err << "sim: warning: " << too_long[i] << ": no GPU kernel runs for a day; check the row's sizes\n";
  }
  if (too_long.size() > 3) {
    err << "sim: warning: " << too_long.size() - 3 << " more row(s) of " << c.kernels << " are predicted past a day\n";
  }
  if (c.output.empty()) {
    out << table.str();
  } else {
    write_output_file(c.output, table.str());
  }
  std::ostream& summary = c.output.empty() ? err : out;
  std::sort(errors.begin(), errors.end());
  char line[256];
  if (errors.empty()) {
    std::snprintf(line, sizeof line, "%zu rows", csv.rows.size());
  } else {
    const std::size_t n = errors.size();
    const double median = n % 2 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
    std::snprintf(line, sizeof line,
                  "%zu rows (%s): |predicted/measured - 1| median %.1f%%, max %.1f%%, %zu of %zu within 10%%",
                  csv.rows.size(), kernel_csv_format_name(csv.format), 100 * median, 100 * errors.back(),
                  static_cast<std::size_t>(std::count_if(errors.begin(), errors.end(), [](double e) { return e <= 0.1; })),
                  n);
  }
  summary << line << "\n" << model.describe() << "\n";
  return kExitOk;
}

}  // namespace sim
