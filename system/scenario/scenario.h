// One simulation, assembled: the single place that turns what a user names
// (a topology, a system config with --collective and --backend on top, one
// workload or several jobs, process groups, a placement) into the parts a
// Simulation runs on. The native command line, ASTRA-sim's command line and
// every sweep point build their runs here, so each can use all of it.
//
//   ScenarioSpec spec;                  // paths, or parts already loaded
//   Scenario s = build_scenario(spec);  // throws InputError naming the input
//   Simulation sim(s.graphs, *s.topology, s.config, s.options);
//
// A Scenario owns what the Simulation refers to, so it must outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "network/topology.h"
#include "system/config/system_config.h"
#include "system/groups/job_placement.h"
#include "system/runner/simulation.h"
#include "workload/rank_graph.h"
#include "workload/source/workload_source.h"

namespace sim {

struct ScenarioSpec {
  // The network: a topology already parsed (a sweep shares one among its
  // points), else the YAML at `network`.
  std::shared_ptr<const Topology> topology;
  std::string network;

  // The system: a config already read (shared), else the file at `system`
  // (YAML or ASTRA-sim JSON), else the defaults. Then, in order: each
  // --collective value, and the backend when `backend` is set.
  std::shared_ptr<const SystemConfig> system_config;
  std::string system;
  std::vector<std::string> collectives;
  std::string backend;
  // --no-aggregation: every message simulated, no replicas folded.
  bool no_aggregation = false;
  // Ranks whose traces are identical may be simulated once
  // (system/scenario/identical_ranks.h); off when a timeline is written,
  // which shows every rank's nodes.
  bool fold_identical_ranks = true;
  // A generated iteration's data-parallel replicas may be simulated once
  // (system/groups/replica_folding.h); off after a run found they do not
  // mirror each other (FoldingRefused, core/error.h).
  bool fold_replicas = true;
  // Replicas simulated per period (replica_folding.h): 1, or 0 for the
  // shortest period whose shift maps the network onto itself
  // (replica_period); folding is refused when that is every replica.
  std::uint32_t replica_period = 1;
  // Where replicas do not mirror one at a time, whether collectives over the
  // copies may be timed alone (stand-ins, system/runner/aggregation/stand_in.h:
  // approximate) rather than simulating a period of more than
  // kLongestExactPeriod replicas, or every rank. The command line turns it on
  // (off with --exact-folding); `use_stand_ins` is the retry that does it.
  bool stand_ins = false;
  bool use_stand_ins = false;
  // A dense model's context-parallel ranks are folded as copies of each other
  // with its replicas (gen::context_copies; one copy at a time only); off
  // after that was refused, and each replica's cp ranks are simulated.
  bool context_copies = true;
  // A mixture of experts with uniform routing folds single data-parallel
  // replicas, a period at a time (gen::expert_copies), rather than blocks of
  // whole expert-parallel groups; off after that was refused.
  bool expert_copies = true;
  // The graphs of the last folded generated workload built for this spec and
  // the later steps of its fold plan (fold_plan.h): a step that folds the same ranks
  // again (one replica, now with stand-ins) reuses them instead of generating
  // them anew. Null: none kept.
  struct FoldedGraphs {
    std::string workload;
    std::vector<std::uint32_t> ranks;  // ReplicaFolding::real_rank
    std::shared_ptr<const std::vector<RankGraph>> graphs;
  };
  std::shared_ptr<FoldedGraphs> folded_graphs;

  // The workload: graphs already loaded (shared), else one job per entry of
  // `jobs` (a lone unnamed job is a plain --workload). `workload_name` names
  // graphs given directly in reports.
  std::shared_ptr<const std::vector<RankGraph>> graphs;
  std::string workload_name;
  // Every graph of `graphs` is the same trace on its rank (a microbenchmark):
  // one rank may stand for all, as with identical rank files.
  bool graphs_identical = false;
  std::vector<JobInput> jobs;
  // Each job's workload, opened once (workload_sources): the fold plan sets
  // them so that none of its steps parses a workload again; empty: opened
  // when the scenario is built.
  std::vector<std::shared_ptr<const WorkloadSource>> sources;
  std::string placement;  // JSON {"<job>-<rank>": npu}; "" packs jobs in order
  // One unnamed job's process groups when `graphs` are given directly.
  std::string comm_group_file;
  GraphOptions graph_options;
  unsigned load_threads = 0;  // 0: every core

  // Loads injected algorithms (a sweep shares them among points); null: from disk.
  AlgorithmRegistry::EtLoader load_algorithm;
};

struct Scenario {
  std::shared_ptr<const Topology> topology;
  SystemConfig config;
  std::shared_ptr<const std::vector<RankGraph>> graphs;
  SimulationOptions options;  // jobs, groups, placement, algorithm loader
  std::string workload_name;  // for reports: the paths or names of the jobs
};

// Throws InputError naming the file, job or key at fault.
Scenario build_scenario(const ScenarioSpec& spec);

// The shortest period of `replicas` copies, `stride` NPUs apart in a job of
// `world` NPUs, whose shift maps the network onto itself: on a stack of
// Switch dimensions two NPUs' route depends on the highest dimension they
// differ in, which a shift keeps when it is a multiple of the dimensions
// below the highest one the job spans (a whole leaf's NPUs on a two-level
// fat-tree). `replicas` when no shorter period divides them.
std::uint32_t replica_period(const std::vector<TopologyDimension>& dims, std::uint32_t world, std::uint32_t replicas,
                             std::uint32_t stride);

// The period of replicas build_scenario(spec) folds (spec.replica_period, or
// the shortest that maps the network onto itself when it is 0: the number of
// replicas when none shorter does) and the number of replicas; {0, 0} when
// the spec's workload is not folded. Reads the topology and the generated
// workload's spec, nothing else.
std::pair<std::uint32_t, std::uint32_t> folding_period(const ScenarioSpec& spec);

// The longest period of replicas folded exactly when stand-ins are allowed
// (a node's worth of GPUs); a longer one is timed with stand-ins instead.
inline constexpr std::uint32_t kLongestExactPeriod = 8;

// How the backend a spec runs on lets a generated job fold: any way, exact
// where the run accepts it (the backend prices routes in closed form:
// analytical); only one replica at a time with stand-ins (links are shared
// inside the fabric, so nothing folds exactly: flow); or not at all (ns3).
enum class BackendFolding { kNone, kStandInsOnly, kExact };
BackendFolding backend_folding(const ScenarioSpec& spec);
// The same, for a backend named in the registry (kNone if it is unknown).
BackendFolding folding_on(const std::string& backend);
// The backend a spec runs on: --backend, else its system config's.
std::string backend_of(const ScenarioSpec& spec);

// Whether build_scenario(spec) folds context-parallel ranks as copies
// (spec.context_copies, one copy at a time, a generated dense model with
// cp > 1). Reads the generated workload's spec, nothing else.
bool folds_context_copies(const ScenarioSpec& spec);
// Whether build_scenario(spec) folds a mixture of experts' replicas one by
// one (spec.expert_copies, gen::expert_copies) rather than as blocks.
bool folds_expert_copies(const ScenarioSpec& spec);
// The periods of replicas worth trying when a mixture of experts' replicas do
// not fold one by one, shortest first: a node's worth of replicas, a leaf's,
// ... (each a whole number of replicas dividing dp), shorter than a block of
// whole expert-parallel groups (which folds at least as well as a longer
// period). Whether a period is exact the run checks.
std::vector<std::uint32_t> expert_copy_periods(const ScenarioSpec& spec);

// Each job's workload opened (workload/source/workload_source.h):
// spec.sources when the spec carries them, else opened now.
std::vector<std::shared_ptr<const WorkloadSource>> workload_sources(const ScenarioSpec& spec);

}  // namespace sim
