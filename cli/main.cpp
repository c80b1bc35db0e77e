// The `sim` command line.
//
//   sim                                   the bundled example (8-rank training step on a ring)
//   sim --workload et/ --network ring8.yml [--system sys.yml] [--collective ...]
//   sim collective gen ring --coll allreduce --npus 8 [--chunks k] -o algo/ring
//   sim collective check algo/ring
//   sim workload gen collectives --npus 1024 --coll allreduce --size 1GiB -o wl/ar
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
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "astrasim_cli.h"
#include "core/error.h"
#include "core/units.h"
#include "network/backend_registry.h"
#include "network/topology.h"
#include "system/collective_tools.h"
#include "timed_run.h"
#include "workflow_commands.h"
#include "workflows/progress.h"
#include "system/report.h"
#include "system/simulation.h"
#include "workload/example_workload.h"
#include "workload/workload_loader.h"
#include "workload/workload_generator.h"

namespace {

using namespace sim;

struct RunOptions {
  std::string workload, network, system, backend, report, csv, timeline, link_stats, comm_groups;
  std::vector<std::string> collectives;
  bool ctrl_deps = false, strict_deps = false, quiet = false;
};

int run_simulation(const RunOptions& o) {
  const auto wall_start = std::chrono::steady_clock::now();
  // The bundled topology only goes with the bundled workload: a user's
  // workload silently run on an 8-NPU ring would answer the wrong question.
  if (!o.workload.empty() && o.network.empty()) throw InputError("--workload needs --network <topology.yml>");
  SystemConfig config = o.system.empty() ? SystemConfig{} : load_system_config(o.system);
  for (const std::string& c : o.collectives) apply_collective_option(config, c);

  Topology topology = o.network.empty() ? parse_topology(kExampleTopologyYaml, "<bundled ring8>")
                                        : load_topology(o.network);
  SimulationOptions options;
  if (!o.backend.empty()) config.network.backend = o.backend;
  options.timeline = !o.timeline.empty();
  if (!o.quiet) options.progress = workflows::long_run_progress(std::cerr);
  if (!o.comm_groups.empty()) options.comm_groups = load_comm_groups(o.comm_groups);

  // Each rank's trace is compacted into its graph as soon as it is read, so
  // only a few decoded traces (one per loading thread) are in memory at a time.
  const GraphOptions gopt{o.ctrl_deps, o.strict_deps};
  std::vector<RankGraph> graphs;
  std::string workload_name;
  if (o.workload.empty()) {
    const std::vector<EtTrace> traces = example_workload();
    for (std::size_t r = 0; r < traces.size(); ++r) graphs.emplace_back(traces[r], static_cast<int>(r), gopt);
    workload_name = "bundled example: data-parallel step, 4 layers, ring all-reduce of gradients";
  } else {
    graphs = load_rank_graphs(resolve_rank_files(o.workload), gopt);
    workload_name = o.workload;
  }

  Simulation simulation(std::move(graphs), topology, config, options);
  const auto [result, info] = run_timed(simulation, topology, workload_name, config.network.backend, wall_start);
  if (!o.report.empty()) write_json_report(o.report, result, info);
  if (!o.csv.empty()) write_csv_report(o.csv, result);
  if (!o.timeline.empty()) write_timeline(o.timeline, result);
  if (!o.link_stats.empty()) write_link_stats(o.link_stats, result);
  if (!o.quiet) {
    print_summary(std::cout, result, info);
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::cout << "peak memory: " << ru.ru_maxrss / 1024 << " MiB\n";
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  auto logger = spdlog::stderr_color_st("sim");
  logger->set_pattern("sim: %l: %v");
  spdlog::set_default_logger(logger);

  if (is_astrasim_invocation(argc, argv)) {
    try {
      return run_astrasim_cli(argc, argv);
    } catch (const SimError& e) {
      std::cerr << "sim: error: " << e.what() << "\n";
      return e.exit_code();
    } catch (const std::exception& e) {
      std::cerr << "sim: internal error: " << e.what() << "\n";
      return 1;
    }
  }

  CLI::App app{"sim: a discrete-event simulator of distributed machine-learning systems.\n"
               "With no options it runs a bundled example: one data-parallel training step on 8 ranks\n"
               "on a 50 GB/s, 500 ns ring. Exit codes: 0 ok, 2 bad usage/config/input, 3 cannot complete."};
  app.set_version_flag("--version", std::string("sim ") + SIM_VERSION);
  app.require_subcommand(0, 1);

  RunOptions o;
  app.add_option("--workload", o.workload,
                 "Chakra ETs: a folder of <prefix>.<rank>.et files, or the <prefix> itself (.et, .et.gz, .json)");
  app.add_option("--network", o.network, "network topology YAML (see configs/ and docs/network.md)");
  app.add_option("--system", o.system, "system config YAML: compute, memory and collective models (docs/system.md)");
  app.add_option("--collective", o.collectives,
                 "collective algorithm as Chakra ETs, <prefix> or <type>=<prefix> (e.g. allreduce=algos/ring); "
                 "<type>=<algorithm> a native one: ring, direct, halvingDoubling, doubleBinaryTree, binaryTree, astrasimTree, "
                 "with parameters as direct:window=4,chunks=2; a comma list is hierarchical, one per topology "
                 "dimension (allreduce=ring,direct or hierarchical:optimization=baseline,active_chunks=1,ring,direct); "
                 "repeatable")
      ->take_all();
  app.add_option("--backend", o.backend,
                 "network backend (default analytical, or the system config's network.backend); its options go in "
                 "the system config's network: section:\n" + describe_backends())
      ->check([](const std::string& name) {
        return find_backend(name) ? std::string() : "unknown network backend '" + name + "'";
      });
  app.add_option("--report", o.report, "write the JSON report here (docs/reports.md)");
  app.add_option("--csv", o.csv, "write the per-collective table as CSV here");
  app.add_option("--link-stats", o.link_stats,
                 "write every link's bytes, busy time, utilization and peak concurrent flows as CSV here");
  app.add_option("--timeline", o.timeline, "write a Chrome/Perfetto trace of every node's run here");
  app.add_option("--comm-group", o.comm_groups, "communicator JSON {\"<pg_name>\": [ranks...]}; pg_name \"\"/\"0\" is the world");
  app.add_flag("--ctrl-deps", o.ctrl_deps, "also follow ctrl_deps (dangling ones are warned about and ignored)");
  app.add_flag("--strict-deps", o.strict_deps, "with --ctrl-deps: a ctrl dep on an absent node is an error");
  app.add_flag("-q,--quiet", o.quiet, "print nothing on success");

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
  CLI::App* check = coll->add_subcommand("check", "check an algorithm written as Chakra ETs");
  CheckOptions c;
  check->add_option("algorithm", c.prefix, "folder or <prefix> of <prefix>.<rank>.et files")->required();
  check->add_option("--coll", c.collective, "collective it must implement (default: from its metadata)");
  check->add_option("--size", c.size_text, "collective size to check message sizes at (default 1MiB)");

  CLI::App* wl = app.add_subcommand("workload", "write synthetic workloads as Chakra ETs");
  wl->require_subcommand(1);
  CLI::App* wgen = wl->add_subcommand("gen", "write a synthetic workload as per-rank Chakra ETs <prefix>.<rank>.et");
  WorkloadGenOptions w;
  wgen->add_option("kind", w.kind, "collectives | chain | p2p-ring")->required();
  wgen->add_option("--npus", w.npus, "number of ranks")->required()->check(CLI::Range(1, 1 << 20));
  wgen->add_option("--coll", w.collectives, "collectives: the chain of collectives, comma-separated (default allreduce)");
  wgen->add_option("--size", w.size_text, "collectives, p2p-ring: bytes per collective / message (default 1MiB)");
  wgen->add_option("--compute", w.compute_text, "collectives: a compute node of this duration before each");
  wgen->add_option("--nodes", w.nodes, "chain: compute nodes per rank (default 1000)")->check(CLI::Range(1, 1 << 30));
  wgen->add_option("--duration", w.duration_text, "chain: duration of each compute node (default 10us)");
  wgen->add_option("--iterations", w.iterations, "p2p-ring: rounds (default 1)")->check(CLI::Range(1, 1 << 30));
  wgen->add_option("-o,--output", w.prefix, "output prefix")->required();

  const auto workflows = add_workflow_commands(app);  // sweep, sweep merge, compare, plot

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }
  try {
    if (*gen) return generate_algorithm(g, std::cout);
    if (*check) return check_algorithm(c, std::cout);
    if (*wgen) return generate_workload(w, std::cout);
    if (const auto code = run_workflow_commands(*workflows)) return *code;
    return run_simulation(o);
  } catch (const SimError& e) {
    std::cerr << "sim: error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "sim: internal error: " << e.what() << "\n";
    return 1;
  }
}
