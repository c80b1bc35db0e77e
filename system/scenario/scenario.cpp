#include "system/scenario/scenario.h"

#include <algorithm>
#include <iterator>

#include "core/error.h"
#include "network/backend_registry.h"
#include "system/groups/comm_group_file.h"
#include "system/registry/algorithm_choices.h"
#include "system/scenario/identical_ranks.h"
#include "system/scenario/system_files.h"
#include "workload/et/et_io.h"
#include "workload/generators/spec/parallel_plan.h"
#include "workload/generators/transformer/transformer_workload.h"
#include "workload/source/workload_source.h"

namespace sim {

std::vector<std::shared_ptr<const WorkloadSource>> workload_sources(const ScenarioSpec& spec) {
  if (spec.sources.size() == spec.jobs.size()) return spec.sources;
  std::vector<std::shared_ptr<const WorkloadSource>> sources;
  for (const JobInput& job : spec.jobs) sources.push_back(open_workload(job.workload));
  return sources;
}

namespace {

// The generated training iteration that the spec's one job runs; null when
// it has graphs given, several jobs, or a workload that is not generated.
std::shared_ptr<const WorkloadSource> generated_job(const ScenarioSpec& spec) {
  if (spec.graphs || spec.jobs.size() != 1 || !is_generated_training(spec.jobs[0].workload)) return nullptr;
  return workload_sources(spec)[0];
}

}  // namespace

namespace {

// The data-parallel replicas to fold. With context parallelism (cp > 1) the
// gradient group is data x context (Megatron-LM's dp-cp group), so it joins
// each replica's cp ranks; those are all simulated, and the group is replica
// 0's cp members followed by their copies shifted by cp positions, which the
// period fold runs (system/groups/group_table.cpp, add_mirrored). Rank r of
// replica k is then r + k x tp x cp (rank = tp + tp (cp + cp (dp + dp pp))).
// A mixture of experts folds single replicas with `expert_copies` and
// uniform routing (gen::expert_copies), else blocks of replicas holding whole
// expert-parallel groups (gen::expert_replicas), any cp. With `context_copies` a dense
// model's cp ranks are copies too (gen::context_copies): only ranks with
// cp = dp = 0 are simulated.
gen::Replicas folding_replicas(const gen::TrainingSpec& training, bool context_copies, bool expert_copies) {
  if (context_copies) {
    gen::Replicas copies = gen::context_copies(training);
    if (copies.count > 1) return copies;
  }
  if (expert_copies) {
    gen::Replicas copies = gen::expert_copies(training);
    if (copies.count > 1) return copies;
  }
  const gen::ParallelPlan& p = training.plan;
  if (p.cp == 1 || p.dp < 2 || training.model.is_moe()) return gen::data_parallel_replicas(training);
  gen::Replicas r;
  for (std::uint32_t rank = 0; rank < p.world(); ++rank) {
    if (gen::coords_of(p, rank).dp == 0) r.replica0.push_back(rank);
  }
  r.count = p.dp;
  r.stride = p.tp * p.cp;
  return r;
}

}  // namespace

BackendFolding folding_on(const std::string& backend) {
  const BackendInfo* b = find_backend(backend);
  if (b == nullptr) return BackendFolding::kNone;
  if (b->capabilities.closed_form_routes) return BackendFolding::kExact;
  return b->capabilities.stand_in_folds ? BackendFolding::kStandInsOnly : BackendFolding::kNone;
}

std::uint32_t replica_period(const std::vector<TopologyDimension>& dims, std::uint32_t world, std::uint32_t replicas,
                             std::uint32_t stride) {
  std::uint64_t below = 1, spanned = 1;
  for (const TopologyDimension& d : dims) {
    if (spanned >= world) break;
    below = spanned;
    spanned *= d.size;
  }
  for (std::uint32_t p = 1; p < replicas; ++p) {
    if (replicas % p == 0 && (std::uint64_t{p} * stride) % below == 0) return p;
  }
  return replicas;
}

namespace {

// The system and the network, as the run will have them: a bad config or
// --collective fails before any workload is read.
void load_system_and_network(const ScenarioSpec& spec, Scenario& s) {
  if (spec.system_config) {
    s.config = *spec.system_config;
  } else if (!spec.system.empty()) {
    s.config = load_system_config(spec.system);
  }
  for (const std::string& c : spec.collectives) apply_collective_option(s.config, c);
  if (!spec.backend.empty()) {
    if (!find_backend(spec.backend)) throw InputError("unknown network backend '" + spec.backend + "'");
    s.config.network.backend = spec.backend;
  }
  if (spec.no_aggregation) s.config.aggregation = false;

  if (spec.topology) {
    s.topology = spec.topology;
  } else if (!spec.network.empty()) {
    s.topology = std::make_shared<const Topology>(load_topology(spec.network));
  } else {
    throw InputError("no network: a topology YAML is needed (--network)");
  }
}

// Whether the spec's fold is one `backend` allows: any on a backend that
// prices routes in closed form; one replica at a time with stand-ins on one
// that allows only that.
bool backend_folds(const ScenarioSpec& spec, const std::string& backend) {
  const BackendFolding how = folding_on(backend);
  return how == BackendFolding::kExact ||
         (how == BackendFolding::kStandInsOnly && spec.use_stand_ins && spec.replica_period == 1);
}

// Whether the scenario's one job may be folded (replicas or identical ranks):
// one unplaced job, step aggregation on, a backend with closed-form routes
// (network/capabilities.h) or one replica with stand-ins on a backend that
// allows that, and a stack
// of Switch dimensions, which gives each NPU one link per dimension in the
// same order on every NPU, so a copy's ports mirror the original's (rings
// and meshes number them otherwise).
bool foldable_job(const ScenarioSpec& spec, const Scenario& s) {
  const bool switches = !s.topology->dimensions().empty() &&
                        std::all_of(s.topology->dimensions().begin(), s.topology->dimensions().end(),
                                    [](const TopologyDimension& d) { return d.kind == DimensionKind::kSwitch; });
  return spec.jobs.size() == 1 && spec.jobs[0].name.empty() && spec.jobs[0].comm_group_file.empty() &&
         spec.placement.empty() && s.config.aggregation && switches && backend_folds(spec, s.config.network.backend);
}

// The world's ranks on the network's NPUs, checked before a fold plans
// collectives over them (an algorithm's own checks on NPUs past the last
// would give another reason).
void check_world_fits(std::uint64_t world, const Topology& topology) {
  if (world > topology.npu_count()) {
    throw InputError("the workload has " + std::to_string(world) + " ranks but the network has only " +
                     std::to_string(topology.npu_count()) + " NPUs");
  }
}

// Rank 0 alone stands for `world` ranks running its graph `one`, when
// identical_ranks_fold allows it: sets the fold and the graphs, and says so.
bool fold_identical(Scenario& s, RankGraph one, std::uint32_t world) {
  check_world_fits(world, *s.topology);
  if (world < 2 || !identical_ranks_fold(one, world, s.config, *s.topology)) return false;
  ReplicaFolding& f = s.options.folding;
  f.world = world;
  f.replicas = world;
  f.stride = 1;
  f.real_rank = {0};
  f.graph_of.assign(world, 0);
  f.expand_copies = true;
  s.options.npu_of = {0};
  auto graphs = std::make_shared<std::vector<RankGraph>>();
  graphs->push_back(std::move(one));
  s.graphs = std::move(graphs);
  return true;
}

}  // namespace

std::pair<std::uint32_t, std::uint32_t> folding_period(const ScenarioSpec& spec) {
  if (spec.graphs || !spec.fold_replicas) return {0, 0};
  Scenario s;
  load_system_and_network(spec, s);
  const auto source = generated_job(spec);
  if (!foldable_job(spec, s) || !source) return {0, 0};
  const gen::TrainingSpec& training = *source->training_spec();
  const gen::Replicas replicas = folding_replicas(training, spec.context_copies && spec.replica_period == 1, spec.expert_copies);
  if (replicas.count < 2) return {0, 0};
  if (spec.replica_period != 0) return {spec.replica_period, replicas.count};
  return {replica_period(s.topology->dimensions(), training.plan.world(), replicas.count, replicas.stride),
          replicas.count};
}

std::string backend_of(const ScenarioSpec& spec) {
  if (!spec.backend.empty()) return spec.backend;
  if (spec.system_config) return spec.system_config->network.backend;
  return spec.system.empty() ? SystemConfig{}.network.backend : load_system_config(spec.system).network.backend;
}

BackendFolding backend_folding(const ScenarioSpec& spec) { return folding_on(backend_of(spec)); }

bool folds_expert_copies(const ScenarioSpec& spec) {
  const auto source = generated_job(spec);
  return source && gen::expert_copies(*source->training_spec()).count > 1;
}

std::vector<std::uint32_t> expert_copy_periods(const ScenarioSpec& spec) {
  std::vector<std::uint32_t> periods;
  if (!folds_expert_copies(spec)) return periods;
  Scenario s;
  load_system_and_network(spec, s);
  const gen::TrainingSpec& training = *generated_job(spec)->training_spec();
  const gen::Replicas copies = gen::expert_copies(training);
  const gen::Replicas blocks = gen::expert_replicas(training);
  const std::uint32_t block = blocks.count > 1 ? copies.count / blocks.count : copies.count;
  std::uint64_t below = 1;
  for (const TopologyDimension& d : s.topology->dimensions()) {
    below *= d.size;
    if (below % copies.stride != 0) continue;
    const std::uint64_t p = below / copies.stride;
    if (p >= block) break;
    if (p > 1 && copies.count % p == 0) periods.push_back(static_cast<std::uint32_t>(p));
  }
  return periods;
}

bool folds_context_copies(const ScenarioSpec& spec) {
  const auto source = generated_job(spec);
  return source && gen::context_copies(*source->training_spec()).count > 1;
}

Scenario build_scenario(const ScenarioSpec& spec) {
  Scenario s;
  load_system_and_network(spec, s);

  s.options.load_algorithm = spec.load_algorithm;
  if (spec.graphs) {
    if (!spec.jobs.empty()) throw InputError("a scenario takes loaded graphs or jobs to load, not both");
    s.graphs = spec.graphs;
    s.workload_name = spec.workload_name;
    if (!spec.comm_group_file.empty()) {
      s.options.comm_groups = load_comm_groups(spec.comm_group_file);
      s.options.comm_group_file = spec.comm_group_file;
    }
    const auto switches = std::all_of(s.topology->dimensions().begin(), s.topology->dimensions().end(),
                                      [](const TopologyDimension& d) { return d.kind == DimensionKind::kSwitch; });
    if (spec.graphs_identical && spec.fold_identical_ranks && spec.comm_group_file.empty() && spec.placement.empty() &&
        s.config.aggregation && switches && backend_folds(spec, s.config.network.backend) && !spec.graphs->empty()) {
      const RankGraph& first = spec.graphs->front();
      fold_identical(s, RankGraph(first, 0, first.path()), static_cast<std::uint32_t>(spec.graphs->size()));
    }
  } else {
    if (spec.jobs.empty()) throw InputError("no workload: a scenario needs graphs or at least one job");
    if (spec.jobs.size() == 1 && spec.jobs[0].name.empty()) s.options.service_level = spec.jobs[0].service_level;
    // Each rank's trace is compacted into its graph as soon as it is read, so
    // only a few decoded traces (one per loading thread) are in memory at once.
    auto graphs = std::make_shared<std::vector<RankGraph>>();
    // A generated training iteration's data-parallel replicas are simulated
    // as one when the run allows it (system/groups/replica_folding.h).
    const auto sources = workload_sources(spec);
    const bool foldable = foldable_job(spec, s);
    if (foldable && spec.fold_replicas && sources[0]->training_spec()) {
      const gen::TrainingSpec& training = *sources[0]->training_spec();
      const gen::Replicas replicas = folding_replicas(training, spec.context_copies && spec.replica_period == 1, spec.expert_copies);
      if (replicas.count > 1) {
        check_world_fits(training.plan.world(), *s.topology);
        ReplicaFolding& f = s.options.folding;
        f.world = training.plan.world();
        f.replicas = replicas.count;
        f.stride = replicas.stride;
        f.ring = replicas.ring;
        const bool expert = spec.expert_copies && gen::expert_copies(training).count > 1;
        f.queues_at_ports_only = expert && !spec.stand_ins;
        f.queues_approximate = expert && spec.stand_ins;
        f.stand_ins = spec.use_stand_ins;
        f.period = spec.replica_period != 0
                       ? spec.replica_period
                       : replica_period(s.topology->dimensions(), f.world, f.replicas, f.stride);
        if (f.period == 1 && spec.replica_period == 0) {
          throw FoldingRefused("no period of replicas maps the network onto itself short of every replica");
        }
        if (f.period >= f.replicas || f.replicas % f.period != 0) {
          throw FoldingRefused("a period of " + std::to_string(f.period) + " replicas does not fold " +
                               std::to_string(f.replicas) + " replicas");
        }
        // Graph i + k x n0 is replica k's copy of replica 0's rank i (k < period).
        const auto n0 = static_cast<std::uint32_t>(replicas.replica0.size());
        f.real_rank.clear();
        for (std::uint32_t k = 0; k < f.period; ++k) {
          for (const std::uint32_t r : replicas.replica0) f.real_rank.push_back(r + k * f.stride);
        }
        f.graph_of.resize(f.world);
        for (std::uint32_t i = 0; i < n0; ++i) {
          for (std::uint32_t k = 0; k < f.replicas; ++k) {
            f.graph_of[replicas.replica0[i] + k * f.stride] = i + (k % f.period) * n0;
          }
        }
        ScenarioSpec::FoldedGraphs* kept = spec.folded_graphs.get();
        if (kept && kept->graphs && kept->workload == spec.jobs[0].workload && kept->ranks == f.real_rank) {
          s.graphs = kept->graphs;  // an earlier try of this spec built them
        } else {
          *graphs = gen::transformer_rank_graphs(training, spec.graph_options, "gen:transformer", f.real_rank,
                                                 spec.load_threads);
          s.graphs = std::move(graphs);
          if (kept) *kept = {spec.jobs[0].workload, f.real_rank, s.graphs};
        }
        s.options.npu_of = f.real_rank;
        s.workload_name = spec.jobs[0].workload;
        return s;
      }
    }
    if (foldable && spec.fold_identical_ranks) {
      // Every rank running the same trace (a microbenchmark, identical rank
      // files): perhaps one rank can stand for all.
      if (auto same = sources[0]->identical_ranks(spec.graph_options)) {
        if (fold_identical(s, std::move(same->first), same->ranks)) {
          s.workload_name = spec.jobs[0].workload;
          return s;
        }
      }
    }
    for (std::size_t i = 0; i < spec.jobs.size(); ++i) {
      const JobInput& job = spec.jobs[i];
      std::vector<RankGraph> g = sources[i]->graphs(spec.graph_options, spec.load_threads);
      JobSpec js{job.name, static_cast<std::uint32_t>(g.size()), {}, job.comm_group_file, job.service_level};
      if (!job.comm_group_file.empty()) js.comm_groups = load_comm_groups(job.comm_group_file);
      // One job's graphs are taken whole; a vector grown one graph at a time
      // moved and touched every graph's ~600 B again at each doubling.
      if (graphs->empty()) {
        *graphs = std::move(g);
      } else {
        graphs->insert(graphs->end(), std::make_move_iterator(g.begin()), std::make_move_iterator(g.end()));
      }
      s.options.jobs.push_back(std::move(js));
      s.workload_name += (s.workload_name.empty() ? "" : ", ") +
                         (job.name.empty() ? job.workload : job.name + "=" + job.workload);
    }
    s.graphs = std::move(graphs);
  }
  if (!spec.placement.empty()) {
    if (s.options.jobs.empty()) throw InputError("--placement needs the workload given as jobs");
    s.options.npu_of = load_placement(spec.placement, s.options.jobs, s.topology->npu_count());
  }
  if (s.options.jobs.size() == 1 && s.options.jobs[0].name.empty()) {
    // One unnamed job: its groups are the run's, and no jobs list in the report.
    s.options.comm_groups = std::move(s.options.jobs[0].comm_groups);
    s.options.comm_group_file = s.options.jobs[0].comm_group_file;
    s.options.jobs.clear();
  }
  return s;
}

}  // namespace sim
