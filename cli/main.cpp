// The `sim` command line.
//
//   sim                                   the bundled example (8-rank training step on a ring)
//   sim --workload et/ --network ring8.yml [--system sys.yml] [--collective ...]
//   sim collective gen ring --coll allreduce --npus 8 [--chunks k] -o algo/ring
//   sim collective check algo/ring
//   sim collective import msccl algo.xml -o algo/msccl [--size 1MiB]
//   sim collective synth --coll allgather --network mesh8x8.yml [--chunks k] -o algo/ag
//   sim workload gen collectives --npus 1024 --coll allreduce --size 1GiB -o wl/ar
//   sim compute time --system sys.yml --kernels gemm.csv [-o OUT]   (cli/compute_command.h)
//   sim sweep SPEC.yml -o OUT, sim compare RESULTS REFERENCE, sim plot   (cli/workflow_commands.h)
//   sim --workload-configuration=<prefix> --system-configuration=<json> ...   ASTRA-sim's
//                                         command line, unchanged (cli/astrasim_cli.h)
//
// Exit codes: 0 success, 2 bad usage / config / input, 3 the simulation cannot complete.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <new>
#include <optional>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "astrasim_cli.h"
#include "collective_import_cli.h"
#include "core/plugin.h"
#include "core/error.h"
#include "core/temp_file_registry.h"
#include "core/time.h"
#include "core/units.h"
#include "network/backend_registry.h"
#include "network/topology.h"
#include "system/registry/algorithm_choices.h"
#include "system/registry/collective_tools.h"
#include "system/scenario/scenario.h"
#include "compute_command.h"
#include "synth_command.h"
#include "pytorch_import_command.h"
#include "system_command.h"
#include "calibrate_command.h"
#include "presets/system_folder.h"
#include "option_checks.h"
#include "run_outputs.h"
#include "system/groups/job_placement.h"
#include "system/groups/process_groups.h"
#include "workflows/run/run.h"
#include "report/training_run.h"
#include "transformer_command.h"
#include "workflow_commands.h"
#include "workflows/sweep/progress.h"
#include "report/physical_bounds.h"
#include "report/report.h"
#include "system/runner/simulation.h"
#include "workload/example_workload.h"
#include "workload/loader/workload_loader.h"
#include "workload/generators/workload_generator.h"

namespace {

using namespace sim;

struct RunOptions {
  std::string network, system, backend, report, csv, timeline, link_stats, placement;
  std::string system_folder_without_network;  // --system DIR without network.yml, --network not given
  std::string timeline_ranks, timeline_window, timeline_format = "auto";
  std::vector<std::string> workloads, comm_groups, collectives, service_levels;
  bool ctrl_deps = false, strict_deps = false, quiet = false, strict = false, no_aggregation = false,
       exact_folding = false;
};

int run_simulation(const RunOptions& o) {
  const auto wall_start = std::chrono::steady_clock::now();
  // The bundled topology only goes with the bundled workload: a user's
  // workload silently run on an 8-NPU ring would answer the wrong question.
  if (!o.workloads.empty() && o.network.empty()) {
    throw InputError("--workload needs --network <topology.yml>" +
                     (o.system_folder_without_network.empty()
                          ? std::string()
                          : " (the --system folder " + o.system_folder_without_network + " holds no network.yml)"));
  }
  // Without --workload the bundled example runs on its own ring: a network,
  // groups, placement or levels given with it would change nothing, silently.
  if (o.workloads.empty() &&
      (!o.network.empty() || !o.comm_groups.empty() || !o.placement.empty() || !o.service_levels.empty())) {
    throw InputError("--network, --comm-group, --placement and --service-level need --workload");
  }
  ScenarioSpec spec;
  spec.system = o.system;
  spec.collectives = o.collectives;
  spec.backend = o.backend;
  spec.no_aggregation = o.no_aggregation;
  spec.stand_ins = !o.exact_folding;
  spec.fold_identical_ranks = o.timeline.empty();  // a timeline shows every rank's nodes
  spec.graph_options = GraphOptions{o.ctrl_deps, o.strict_deps};
  if (o.workloads.empty()) {
    // The bundled example: its own topology, no file read.
    spec.topology = std::make_shared<const Topology>(parse_topology(kExampleTopologyYaml, "<bundled ring8>"));
    auto graphs = std::make_shared<std::vector<RankGraph>>();
    const std::vector<EtTrace> traces = example_workload();
    for (std::size_t r = 0; r < traces.size(); ++r) graphs->emplace_back(traces[r], static_cast<int>(r), spec.graph_options);
    spec.graphs = std::move(graphs);
    spec.workload_name = "bundled example: data-parallel step, 4 layers, ring all-reduce of gradients";
  } else {
    spec.network = o.network;
    spec.jobs = parse_job_args(o.workloads, o.comm_groups);  // one job, or several (system/groups/job_placement.h)
    apply_service_levels(spec.jobs, o.service_levels);
    spec.placement = o.placement;
  }
  RunOutputs outputs({o.report, o.csv, o.link_stats, o.timeline, o.timeline_ranks, o.timeline_window,
                      o.timeline_format});
  RunHooks hooks;
  hooks.wall_start = wall_start;
  hooks.timeline = outputs.timeline();
  if (!o.quiet) hooks.progress = workflows::long_run_progress(std::cerr);
  hooks.note = [](const std::string& why) { std::cerr << "sim: note: " << why << "\n"; };
  hooks.log_warnings = true;
  RunOutcome run = sim::run(spec, hooks);
  const SimulationResult& result = run.result;
  const RunInfo& info = run.info;
  outputs.write(result, info);
  if (outputs.timeline() && outputs.timeline_slices() == 0) {
    // A timeline with nothing in it, written without a word, looks like a broken viewer.
    std::cerr << "sim: warning: the timeline " << o.timeline << " holds no node run: "
              << (o.timeline_window.empty() ? std::string("the run ran none")
                                            : "none overlaps --timeline-window '" + o.timeline_window +
                                                  "' (the run ends at " + format_time(result.makespan) + ")")
              << "\n";
  }
  if (!o.quiet) {
    // With an output on stdout ("-") the summary goes to stderr, out of its way.
    std::ostream& out = outputs.uses_stdout() ? std::cerr : std::cout;
    print_summary(out, result, info);
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    out << "peak memory: " << ru.ru_maxrss / 1024 << " MiB\n";
  }
  if (o.strict && run.implausible > 0) {
    throw InputError("--strict: " + std::to_string(run.implausible) +
                     " collective result(s) exceed what their ranks can inject (see the warnings above)");
  }
  if (o.strict && run.impossible_mfu > 0) {
    throw InputError("--strict: the training iteration's MFU exceeds 100 %, which no GPU can do (see the warning above)");
  }
  return kExitOk;
}

}  // namespace

// Runs `command`; a SimError becomes its message and exit code (2 bad input,
// 3 cannot finish), running out of memory exit 2, anything else an internal
// error (exit 1).
template <typename F>
int reporting_errors(F&& command) {
  try {
    return command();
  } catch (const SimError& e) {
    std::cerr << "sim: error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::bad_alloc&) {  // e.g. under ulimit -v: a clear message, not a crash (docs/reliability.md)
    std::cerr << "sim: error: out of memory: the workload does not fit in the memory this process may use "
                 "(RAM, ulimit -v or the cgroup's memory.max); run it on a machine with more memory\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "sim: internal error: " << e.what() << "\n";
    return 1;
  }
}

// `sim --version`: the version, the commit it was built from (at configure
// time; "-dirty" when the tree had changes) and the optional modules: built
// or not, and where the one this run would load is.
std::string version_text() {
  std::string out = std::string("sim ") + SIM_VERSION + " (commit " + SIM_GIT_COMMIT + ")";
  for (const auto& [file, what] : {std::pair<const char*, const char*>{"libsim_ns3.so", "ns-3 backend (--backend ns3)"},
                                   {"libsim_mpi.so", "MPI sweeps (mpirun sim sweep)"}}) {
    const std::string path = sim::find_module(file);
    out.append("\n  ").append(what).append(": ").append(path.empty() ? "not built" : path);
  }
  return out;
}

int main(int argc, char** argv) {
  sim::install_temp_file_cleanup();
  auto logger = spdlog::stderr_color_st("sim");
  logger->set_pattern("sim: %l: %v");
  spdlog::set_default_logger(logger);

  if (is_astrasim_invocation(argc, argv)) return reporting_errors([&] { return run_astrasim_cli(argc, argv); });

  CLI::App app{"sim: a discrete-event simulator of distributed machine-learning systems.\n"
               "With no options it runs a bundled example: one data-parallel training step on 8 ranks\n"
               "on a 50 GB/s, 500 ns ring. Exit codes: 0 ok, 2 bad usage/config/input, 3 cannot complete."};
  app.set_version_flag("--version", version_text);
  app.require_subcommand(0, 1);

  RunOptions o;
  app.add_option("--workload", o.workloads,
                 "Chakra ETs: a folder of <prefix>.<rank>.et files, or the <prefix> itself (.et, .et.gz, .json); "
                 "several jobs on one cluster: NAME=PATH, repeated; pytorch:DIR runs PyTorch host execution traces (and "
                 "Kineto traces) directly (docs/traces.md); 'gen:transformer?...' a generated training iteration, "
                 "'gen:collectives?npus=N&coll=allreduce&size=1MiB' (gen:chain, gen:p2p-ring) a microbenchmark, made "
                 "in memory (docs/generators.md)")
      ->check(not_empty("path"));
  app.add_option("--network", o.network, "network topology YAML (see configs/ and docs/network.md)")
      ->check(not_empty("path"));
  app.add_option("--system", o.system, "system config YAML: compute, memory and collective models (docs/system.md); or a folder `sim system gen` "
                 "wrote (its system.yml, and its network.yml unless --network is given)")
      ->check(not_empty("path"));
  app.add_option("--collective", o.collectives,
                 "collective algorithm as Chakra ETs, <prefix> or <type>=<prefix> (e.g. allreduce=algos/ring); "
                 "default: ring (all-reduce, reduce-scatter, all-gather, all-to-all; hierarchical, a ring per "
                 "dimension, on a topology of several dimensions when the group spans two or more), binaryTree "
                 "(reduce, broadcast), direct (gather, scatter, barrier); "
                 "<type>=<algorithm> a native one: ring, direct, halvingDoubling, doubleBinaryTree, binaryTree, astrasimTree, "
                 "nccl (NCCL's choice; nccl:algo=ring|tree|nvls|nvlstree|collnet|collnetchain|collnetdirect,"
                 "proto=ll|ll128|simple,channels=N,arch=sm70|sm80|sm90,overhead=T,nvls_efficiency=F,nvls_latency=T,proxy=T,net_latency=T,plugin_latency=T,buffsize=S,p2p_net_chunk=S,version=2.17..2.27,tuner=none|aws-p5, "
                 "docs/nccl.md), "
                 "with parameters as direct:window=4,chunks=2; a comma list is hierarchical, one per topology "
                 "dimension (allreduce=ring,direct or hierarchical:optimization=baseline,active_chunks=1,ring,direct); "
                 "send_recv=nccl[:keys] runs COMM_SEND / COMM_RECV as NCCL's send and receive, send_recv=network "
                 "as one message each; repeatable")
      ->take_all()
      ->check(not_empty("value"));
  app.add_option("--backend", o.backend,
                 "network backend (default analytical, or the system config's network.backend); its options go in "
                 "the system config's network: section:\n" + describe_backends())
      ->check([](const std::string& name) {
        return find_backend(name) ? std::string() : "unknown network backend '" + name + "'";
      });
  // An output given an empty path was written nowhere, with exit 0.
  const auto a_path = [](const std::string& path) {
    return path.empty() ? std::string("an empty path: give a file name, or - for standard output") : std::string();
  };
  app.add_option("--report", o.report,
                 "write the JSON report here (docs/reports.md; \"-\" is stdout; a symlink, device or FIFO is "
                 "written through, a regular file replaced atomically keeping its mode)")
      ->check(a_path);
  app.add_option("--csv", o.csv, "write the per-collective table as CSV here")->check(a_path);
  app.add_option("--link-stats", o.link_stats,
                 "write every link's bytes, busy time, utilization and peak concurrent flows as CSV here")
      ->check(a_path);
  CLI::Option* timeline = app.add_option("--timeline", o.timeline,
                                         "write every node's run here as the simulation goes: Perfetto protobuf "
                                         "(ui.perfetto.dev), or Chrome trace-event JSON for a *.json name")
                              ->check(a_path);
  // Without --timeline they would change nothing, silently.
  app.add_option("--timeline-format", o.timeline_format, "auto (by the file name), perfetto or json")->needs(timeline);
  app.add_option("--timeline-ranks", o.timeline_ranks, "only these ranks in the timeline, e.g. 0-3,7")
      ->needs(timeline)
      ->check([](const std::string& s) {
        return s.empty() ? std::string("an empty list: give ranks like 0-3,7, or leave the option out for every rank")
                         : std::string();
      });
  app.add_option("--timeline-window", o.timeline_window,
                 "only node runs overlapping this simulated-time window in the timeline, e.g. 1ms:2ms, 1ms:, :2ms")
      ->needs(timeline);
  app.add_option("--comm-group", o.comm_groups,
                 "process groups JSON {\"<pg_name>\": [ranks...]} (NAME=FILE per job); a group it (or a trace's "
                 "METADATA node) defines is that group, \"0\" included; \"4.0\" finds \"4\"; absent/empty pg_name "
                 "means all ranks (docs/traces.md)")
      ->check(not_empty("path"));
  app.add_option("--service-level", o.service_levels,
                 "the job's service level, 0 to 15 (LEVEL, or NAME=LEVEL per job; default 0): on ns3 with "
                 "network.traffic_classes > 1 its messages take traffic class LEVEL mod traffic_classes, with their "
                 "own queues and flow control (docs/network.md)");
  app.add_option("--placement", o.placement,
                 "several jobs: JSON {\"<job>-<rank>\": <npu>, ...} (default: jobs packed in the order given)")
      ->check(not_empty("path"));
  app.add_flag("--strict", o.strict,
               "exit 2 when a collective's bus bandwidth exceeds what its ranks can inject, or a training iteration's "
               "MFU exceeds 100 % (otherwise a warning)");
  CLI::Option* ctrl_deps =
      app.add_flag("--ctrl-deps", o.ctrl_deps, "also follow ctrl_deps (dangling ones are warned about and ignored)");
  app.add_flag("--strict-deps", o.strict_deps, "with --ctrl-deps: a ctrl dep on an absent node is an error")
      ->needs(ctrl_deps);
  app.add_flag("-q,--quiet", o.quiet, "print nothing on success");
  app.add_flag("--no-aggregation", o.no_aggregation,
               "simulate every message of every collective: by default a collective whose ranks all start at once "
               "and run nothing else, on the analytical backend (or flow, when each of its flows is alone on its "
               "links), is advanced as one for all its ranks, with "
               "identical results (docs/system.md, exact step aggregation)");

  app.add_flag("--exact-folding", o.exact_folding,
               "fold a generated iteration's data-parallel replicas only where that is exact (a period of replicas, "
               "else every rank): by default collectives over the copies that do not mirror (NCCL's tree, rings "
               "through leaf and spine) are timed alone, approximately, when the exact fold would simulate more "
               "than 8 replicas, and on the flow backend, which folds nothing exactly, always (docs/system.md, "
               "stand-ins)");

  CLI::App* coll = app.add_subcommand("collective", "write or check collective algorithms as Chakra ETs");
  coll->require_subcommand(1);
  CLI::App* gen = coll->add_subcommand("gen", "write a native algorithm as per-rank Chakra ETs <prefix>.<rank>.et");
  GenOptions g;
  gen->add_option("algorithm", g.algorithm,
                  "algorithm to write: ring, direct, halvingDoubling, doubleBinaryTree, binaryTree, astrasimTree "
                  "(parameters as name:key=value, e.g. direct:window=2)")
      ->required();
  gen->add_option("--coll", g.collective,
                  "collective: allreduce, allgather, reducescatter, alltoall, broadcast, reduce, gather, scatter, "
                  "barrier")
      ->required();
  gen->add_option("--npus", g.npus, "number of ranks")->required()->check(CLI::Range(1, 1 << 20));
  gen->add_option("--chunks", g.chunks, "pipelined chunks (default 1)")->check(CLI::Range(1, 1 << 16));
  gen->add_option("--size", g.size_text, "collective size the file is written for (default 1MiB); runs rescale it");
  gen->add_option("-o,--output", g.prefix, "output prefix")->required();
  gen->add_option("--network", g.network,
                  "topology YAML: a hierarchical algorithm (a comma list, e.g. ring,direct) runs on its dimensions")
      ->check(not_empty("path"));
  CLI::App* check = coll->add_subcommand("check", "check an algorithm written as Chakra ETs");
  CheckOptions c;
  check->add_option("algorithm", c.prefix, "folder or <prefix> of <prefix>.<rank>.et files")->required();
  check->add_option("--coll", c.collective, "collective it must implement (default: from its metadata)");
  check->add_option("--size", c.size_text, "collective size to check message sizes at (default 1MiB)");
  MscclImportOptions mi;
  CLI::App* msccl_import = add_collective_import(*coll, mi);
  SynthCommand synth;
  add_synth_command(*coll, synth);

  CLI::App* wl = app.add_subcommand("workload", "write synthetic workloads as Chakra ETs");
  wl->require_subcommand(1);
  CLI::App* wgen = wl->add_subcommand("gen", "write a synthetic workload as per-rank Chakra ETs <prefix>.<rank>.et");
  WorkloadGenOptions w;
  // Not required() here: `workload gen transformer` is a subcommand with options of its own
  // (generate_workload checks kind, --npus and -o itself).
  wgen->add_option("kind", w.kind, "collectives | chain | p2p-ring (or the subcommand transformer)");
  wgen->add_option("--npus", w.npus, "number of ranks")->check(CLI::Range(1, 1 << 20));
  wgen->add_option("--coll", w.collectives, "collectives: the chain of collectives, comma-separated (default allreduce)");
  wgen->add_option("--size", w.size_text,
                   "collectives, p2p-ring: bytes per collective / message (default 1MiB; all-gather: the per-rank "
                   "input; reduce-scatter, all-to-all: a multiple of --npus)");
  wgen->add_option("--compute", w.compute_text, "collectives: a compute node of this duration before each")
      ->check(not_empty("value"));
  wgen->add_option("--nodes", w.nodes, "chain: compute nodes per rank (default 1000)")->check(CLI::Range(1, 1 << 30));
  wgen->add_option("--duration", w.duration_text, "chain: duration of each compute node (default 10us)");
  wgen->add_option("--iterations", w.iterations, "p2p-ring: rounds (default 1)")->check(CLI::Range(1, 1 << 30));
  wgen->add_option("-o,--output", w.prefix, "output prefix");
  TransformerCommand transformer;
  add_transformer_command(*wgen, transformer);
  PytorchImportCommand pt_import;
  add_pytorch_import_command(*wl, pt_import);

  SystemCommand system_cmd;  // sim system list|gen (presets/)
  add_system_command(app, system_cmd);
  CalibrateCommand calibrate;  // sim calibrate (workflows/calibrate/calibrate.h)
  add_calibrate_command(app, calibrate);
  const auto workflows = add_workflow_commands(app);  // sweep, sweep merge, compare, plot
  ComputeCommand compute;  // sim compute time (cli/compute_command.h)
  add_compute_command(app, compute);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // One line, in the form of every other error.
    std::string what = e.what();
    for (char& ch : what) {
      if (ch == '\n') ch = ' ';
    }
    std::cerr << "sim: error: " << what << " (sim --help lists the options)\n";
    return kExitBadInput;
  }
  return reporting_errors([&] {
    if (*gen) return generate_algorithm(g, std::cout);
    if (*check) return check_algorithm(c, std::cout);
    if (*msccl_import) return run_msccl_import(mi, std::cout);
    if (*synth.app) return run_synth_command(synth, std::cout);
    if (*transformer.app) return run_transformer_command(transformer, std::cout);
    if (*wgen) return generate_workload(w, std::cout);
    if (*compute.time) return run_compute_command(compute, std::cout, std::cerr);
    if (*pt_import.app) return run_pytorch_import_command(pt_import, std::cout, std::cerr);
    if (system_command_given(system_cmd)) return run_system_command(system_cmd, std::cout);
    if (*calibrate.app) {
      calibrate.quiet = calibrate.quiet || o.quiet;  // sim -q calibrate ...
      return run_calibrate_command(calibrate, std::cout, std::cerr);
    }
    if (const auto code = run_workflow_commands(*workflows)) return *code;
    presets::use_system_folder(o.system, o.network, o.system_folder_without_network);  // --system DIR (sim system gen)
    return run_simulation(o);
  });
}
