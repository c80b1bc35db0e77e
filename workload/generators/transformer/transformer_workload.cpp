#include "workload/generators/transformer/transformer_workload.h"

#include <malloc.h>

#include <numeric>

#include <atomic>
#include <exception>
#include <filesystem>
#include <optional>
#include <thread>

#include "core/error.h"
#include "workload/et/rank_set_writer.h"
#include "workload/generators/spec/model_flops.h"
#include "workload/generators/transformer/generation_memory.h"
#include "workload/generators/transformer/transformer_graph.h"

namespace sim::gen {
namespace {

constexpr const char* kScheme = "gen:transformer";

// Runs work(r) for r in [0, n) on up to `threads` threads; the lowest rank's error is rethrown.
// work(rank, trace) gets one reusable trace per thread.
template <typename Work>
void for_each_rank(std::uint32_t n, unsigned threads, Work&& work) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::uint32_t> next{0};
  auto loop = [&] {
    EtTrace trace;
    for (std::uint32_t r; (r = next.fetch_add(1)) < n;) {
      try {
        work(r, trace);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(loop);
  loop();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace

int write_transformer_workload(const TrainingOptions& options, const std::string& prefix, std::ostream& out,
                               unsigned threads) {
  const TrainingSpec spec = make_training_spec(options);
  // Each generating thread holds one rank's decoded trace at a time.
  check_memory_for_generation(spec, std::min<std::uint64_t>(threads ? threads : std::max(1u, std::thread::hardware_concurrency()),
                                                            spec.plan.world()),
                              kTraceBytesPerNode, "workload gen transformer");
  const std::uint32_t n = spec.plan.world();
  RankSetWriter writer(prefix, n);
  std::atomic<std::uint64_t> nodes{0};
  for_each_rank(n, threads, [&](std::uint32_t r, EtTrace& trace) {
    transformer_rank_trace(spec, r, trace, writer.path(r));
    writer.write(r, trace);
    nodes += trace.nodes.size();
  });
  writer.commit();
  out << "wrote " << n << " ranks (" << nodes.load() << " nodes, " << writer.bytes() << " B) to " << prefix
      << ".<rank>.et: " << spec.describe() << "; model FLOPs per iteration " << model_flops_per_iteration(spec)
      << writer.removed_note() << "\n";
  return 0;
}

std::vector<RankGraph> transformer_rank_graphs(const TrainingSpec& spec, const GraphOptions& options,
                                               const std::string& name, unsigned threads) {
  std::vector<std::uint32_t> all(spec.plan.world());
  for (std::uint32_t r = 0; r < all.size(); ++r) all[r] = r;
  return transformer_rank_graphs(spec, options, name, all, threads);
}

std::vector<RankGraph> transformer_rank_graphs(const TrainingSpec& spec, const GraphOptions& options,
                                               const std::string& name, const std::vector<std::uint32_t>& ranks,
                                               unsigned threads) {
  const auto n = static_cast<std::uint32_t>(ranks.size());
  // Every rank's graph is kept for the run: refused before the first is built when they cannot all fit.
  check_memory_for_generation(spec, n, kGraphBytesPerNode, name);
  std::vector<std::optional<RankGraph>> graphs(n);
  for_each_rank(n, threads, [&](std::uint32_t i, EtTrace&) {
    const std::uint32_t r = ranks[i];
    graphs[i].emplace(static_cast<int>(r), name + " rank " + std::to_string(r), options,
                      [&](const RankGraph::NodeSink& sink) { transformer_rank_stream(spec, r, sink); });
  });
  std::vector<RankGraph> out;
  out.reserve(n);
  for (auto& g : graphs) out.push_back(std::move(*g));
  malloc_trim(0);  // the traces' freed pages (as workload_loader does)
  return out;
}

Replicas data_parallel_replicas(const TrainingSpec& spec) {
  Replicas r;
  const ParallelPlan& p = spec.plan;
  if (spec.model.is_moe()) return expert_replicas(spec);
  // Context parallelism: the gradient groups join each replica's context ranks too.
  if (p.dp < 2 || p.cp > 1) return r;
  for (std::uint32_t rank = 0; rank < p.world(); ++rank) {
    if (coords_of(p, rank).dp == 0) r.replica0.push_back(rank);
  }
  r.count = p.dp;
  r.stride = p.tp;  // rank = tp + tp (cp + cp (dp + dp pp)), cp = 1
  return r;
}

Replicas context_copies(const TrainingSpec& spec) {
  Replicas r;
  const ParallelPlan& p = spec.plan;
  if (p.cp < 2 || spec.model.is_moe()) return r;
  for (std::uint32_t rank = 0; rank < p.world(); ++rank) {
    const RankCoords c = coords_of(p, rank);
    if (c.cp == 0 && c.dp == 0) r.replica0.push_back(rank);
  }
  r.count = p.cp * p.dp;
  r.stride = p.tp;
  r.ring = p.cp;
  return r;
}

Replicas expert_replicas(const TrainingSpec& spec) {
  Replicas r;
  const ParallelPlan& p = spec.plan;
  // Expert-parallel groups (with their expert-tensor-parallel peers) fill
  // ep x etp consecutive (tp, dp) positions: the smallest block of
  // data-parallel replicas holding whole tensor- and expert-parallel groups
  // is lcm(tp, ep x etp) / tp of them. Such blocks repeat
  // (the same expert-parallel positions, hence the same experts and loads);
  // data-parallel and expert-data-parallel groups join several members of
  // each block, which the period fold mirrors as it does context-parallel ranks.
  const std::uint64_t block = std::lcm(std::uint64_t{p.tp}, std::uint64_t{p.ep} * p.etp) / p.tp;
  if (p.dp % block != 0 || p.dp / block < 2) return r;
  for (std::uint32_t rank = 0; rank < p.world(); ++rank) {
    if (coords_of(p, rank).dp < block) r.replica0.push_back(rank);
  }
  r.count = static_cast<std::uint32_t>(p.dp / block);
  r.stride = static_cast<std::uint32_t>(block * p.tp * p.cp);  // rank = tp + tp (cp + cp (dp + dp pp))
  return r;
}

Replicas expert_copies(const TrainingSpec& spec) {
  Replicas r;
  const ParallelPlan& p = spec.plan;
  if (!spec.model.is_moe() || spec.model.moe.routing.zipf || p.dp < 2) return r;
  const std::uint64_t block = std::lcm(std::uint64_t{p.tp}, std::uint64_t{p.ep} * p.etp) / p.tp;
  if (block < 2) return r;
  for (std::uint32_t rank = 0; rank < p.world(); ++rank) {
    if (coords_of(p, rank).dp == 0) r.replica0.push_back(rank);
  }
  r.count = p.dp;
  r.stride = p.tp * p.cp;  // rank = tp + tp (cp + cp (dp + dp pp))
  return r;
}

TrainingSpec generated_workload_spec(const std::string& workload) {
  const std::string scheme(kScheme);
  if (workload.rfind(scheme, 0) != 0 || (workload.size() > scheme.size() && workload[scheme.size()] != '?')) {
    throw InputError("--workload '" + workload + "': the generated workloads are " + scheme +
                     "?model=...&parallel=...&global-batch=...&seq=..., gen:collectives?npus=...&coll=...&size=..., "
                     "gen:chain?npus=... and gen:p2p-ring?npus=...");
  }
  const std::string query = workload.size() > scheme.size() ? workload.substr(scheme.size() + 1) : "";
  try {
    return make_training_spec(parse_training_query(query));
  } catch (const InputError& e) {
    // Every message of the query names its keys (seq=); say which workload they are of.
    if (std::string(e.what()).rfind(scheme, 0) == 0) throw;
    throw InputError(scheme + ": " + e.what());
  }
}

}  // namespace sim::gen
