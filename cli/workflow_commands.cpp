#include "workflow_commands.h"

#include <cmath>
#include <iostream>
#include <string>

#include "core/error.h"
#include "core/plugin.h"
#include "option_checks.h"

#include "workflows/compare/compare.h"
#include "workflows/compare/plot_launcher.h"
#include "workflows/sweep/sweep_merge.h"
#include "workflows/sweep/sweep_runner.h"
#include "workflows/sweep/mpi_sweep.h"

namespace sim {

struct WorkflowCommands {
  CLI::App* sweep = nullptr;
  CLI::App* merge = nullptr;
  CLI::App* compare = nullptr;
  CLI::App* plot = nullptr;
  workflows::SweepOptions sweep_options;
  std::string shard, tolerance = "5%";
  bool no_cache = false;
  std::vector<std::string> merge_dirs;
  std::string merge_out;
  workflows::CompareOptions compare_options;
  std::vector<std::string> plot_inputs;
  std::string plot_out, plot_metric = "busbw", plot_baseline, plot_facet, plot_style;
  bool plot_log = false;
};

namespace {

void add_sweep(CLI::App& app, WorkflowCommands& c) {
  c.sweep = app.add_subcommand("sweep", "run a sweep spec: many simulations, cached, in parallel (docs/workflows.md)");
  c.sweep->require_subcommand(0, 1);
  auto& o = c.sweep_options;
  c.sweep->add_option("spec", o.spec, "sweep spec YAML (configs/sweeps/)");
  c.sweep->add_option("-o,--output", o.out_dir, "output folder: results.csv, results.json, cache/");
  c.sweep->add_option("-j,--jobs", o.jobs, "points run at once on threads (default: one per core)")
      ->check(CLI::Range(1, 4096));
  c.sweep->add_option("--shard", c.shard, "run one share I/K of the points (merge the shares with `sim sweep merge`)");
  c.sweep->add_flag("--no-cache", c.no_cache, "recompute every point, even those already in OUTDIR/cache");
  c.sweep->add_flag("-q,--quiet", o.quiet, "no progress and no summary");
  c.sweep->add_option("--progress-interval", o.progress_interval,
                      "seconds between progress lines when stderr is not a terminal (default 10)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            // CLI11's PositiveNumber lets nan through and names its range as 300 digits.
            double v = 0;
            std::size_t used = 0;
            try {
              v = std::stod(text, &used);
            } catch (const std::exception&) {
              used = 0;
            }
            if (used == text.size() && std::isfinite(v) && v > 0 && v <= 1e9) return "";
            return "expected seconds, a number above 0 and at most 1e9, got '" + text + "'";
          },
          "SECONDS"));
  // A look for the file, not a load: only `mpirun ... sim sweep` loads it.
  c.sweep->footer(std::string("Under mpirun (mpirun -n K sim sweep SPEC -o OUTDIR) each rank runs every K-th point and "
                              "rank 0 writes the output; MPI is the module ") +
                  workflows::kMpiModuleFile +
                  (find_module(workflows::kMpiModuleFile).empty()
                       ? " (module not found: install libopenmpi-dev, scripts/setup.sh, and rebuild)"
                       : "") +
                  ", loaded only under mpirun (docs/workflows.md).");
  c.merge = c.sweep->add_subcommand("merge", "join the output folders of a sweep's shards into one");
  c.merge->add_option("dirs", c.merge_dirs, "the shards' output folders")->required();
  c.merge->add_option("-o,--output", c.merge_out, "merged output folder")->required();
}

void add_compare(CLI::App& app, WorkflowCommands& c) {
  auto& o = c.compare_options;
  c.compare = app.add_subcommand("compare", "compare results with a reference curve; exit 0 within tolerance, 1 outside");
  // Two files, or with --preset only the reference (the results are simulated).
  c.compare->add_option("results", o.results, "a sim sweep results.csv (with --preset: the reference)")->required();
  c.compare->add_option("reference", o.reference,
                        "sim results.csv, ASTRA-sim results CSV, reference curve CSV, or nccl-tests output");
  c.compare->add_option("--preset", o.preset,
                        "simulate every reference row on this preset at the row's node count (sim compare REFERENCE "
                        "--preset p5) instead of reading results")
      ->check(not_empty("value"));
  c.compare->add_option("-j,--jobs", o.jobs, "--preset: threads simulating the rows side by side (default: one per core)");
  c.compare->add_option("--tolerance", c.tolerance, "largest relative deviation allowed (default 5%)");
  c.compare->add_option("--metric", o.metric, "time (default) or busbw");
  c.compare->add_option("--plot", o.plot, "write an overlay of both curves as PNG here (python3-matplotlib)")
      ->check(not_empty("path"));
  c.compare->add_option("--filter", o.filters, "keep reference rows with column=value (repeatable)");
  c.compare->add_option("--reference-collective", o.reference_collective,
                        "the collective of nccl-tests output whose file name does not say (allreduce, allgather, ...)")
      ->check(not_empty("value"));
}

void add_plot(CLI::App& app, WorkflowCommands& c) {
  c.plot = app.add_subcommand("plot", "plot sweep results: busbw or time vs size, one line per series (python3-matplotlib)");
  c.plot->add_option("results", c.plot_inputs, "results.csv files (or sweep output folders)")->required();
  c.plot->add_option("-o,--output", c.plot_out, "PNG to write")->required();
  c.plot->add_option("--metric", c.plot_metric, "busbw (default), time (each collective) or makespan (each point)")
      ->check(CLI::IsMember({"busbw", "time", "makespan"}));
  c.plot->add_option("--baseline", c.plot_baseline, "AXIS=VALUE: time relative to that series (Fig. 4's slowdown)");
  c.plot->add_option("--facet", c.plot_facet, "AXIS: one panel per value of this axis (e.g. network)");
  c.plot->add_flag("--log", c.plot_log, "logarithmic y axis for busbw too");
  c.plot->add_option("--style", c.plot_style, "AXIS: one line style per value of this axis (e.g. backend), one color per rest");
}

int run_sweep_command(WorkflowCommands& c) {
  auto& o = c.sweep_options;
  if (o.spec.empty()) throw InputError("sim sweep: give a sweep spec (sim sweep SPEC.yml -o OUTDIR)");
  // Given at all, it must be a share: `--shard ''` (an unset variable in a
  // job script) ran every point where one share was meant.
  if (c.sweep->count("--shard") > 0) workflows::parse_shard(c.shard, o.shard_index, o.shard_count);
  o.reuse = !c.no_cache;
  const std::unique_ptr<workflows::Communicator> mpi = workflows::mpi_communicator_if_launched();
  o.communicator = mpi.get();
  return workflows::run_sweep(o, std::cout);
}

}  // namespace

std::shared_ptr<WorkflowCommands> add_workflow_commands(CLI::App& app) {
  auto c = std::make_shared<WorkflowCommands>();
  add_sweep(app, *c);
  add_compare(app, *c);
  add_plot(app, *c);
  return c;
}

std::optional<int> run_workflow_commands(WorkflowCommands& c) {
  if (*c.merge) return workflows::merge_sweeps(c.merge_dirs, c.merge_out, std::cout);
  if (*c.sweep) return run_sweep_command(c);
  if (*c.compare) {
    auto& o = c.compare_options;
    o.tolerance = workflows::parse_tolerance(c.tolerance);
    if (!o.preset.empty()) {
      if (!o.reference.empty()) {
        throw InputError("compare --preset " + o.preset + ": give only the reference (the results are simulated): sim compare REFERENCE --preset " + o.preset);
      }
      o.reference = std::move(o.results);
      o.results.clear();
    } else if (o.reference.empty()) {
      throw InputError("compare: give RESULTS and REFERENCE, or REFERENCE --preset NAME");
    }
    return workflows::compare_curves(c.compare_options, std::cout);
  }
  if (*c.plot) {
    std::vector<std::string> args{"--metric", c.plot_metric, "-o", c.plot_out};
    if (!c.plot_baseline.empty()) args.insert(args.end(), {"--baseline", c.plot_baseline});
    if (!c.plot_facet.empty()) args.insert(args.end(), {"--facet", c.plot_facet});
    if (c.plot_log) args.emplace_back("--log");
    if (!c.plot_style.empty()) args.insert(args.end(), {"--style", c.plot_style});
    args.insert(args.end(), c.plot_inputs.begin(), c.plot_inputs.end());
    const int code = workflows::run_plot_script("sim plot", args);
    return code == 0 ? 0 : kExitBadInput;
  }
  return std::nullopt;
}

}  // namespace sim
