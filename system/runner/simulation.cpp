#include "system/runner/simulation.h"
#include "system/runner/simulation_run.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include "compute/kernel_model.h"
#include "compute/roofline.h"
#include "core/error.h"

namespace sim {

namespace {

// The service level of graph r's job (jobs in order, their ranks in order).
std::uint8_t jobs_service_level(const std::vector<JobSpec>& jobs, std::uint32_t r) {
  for (const JobSpec& j : jobs) {
    if (r < j.ranks) return j.service_level;
    r -= j.ranks;
  }
  return 0;
}

constexpr std::uint32_t kNodeDone = 1;
constexpr std::uint32_t kP2PDelivered = 2;
constexpr std::uint32_t kP2PInject = 3;  // NCCL's send: its message leaves (after the call and the proxy)
constexpr std::uint32_t kP2PLanded = 4;  // NCCL's receive: the message is through the proxy and the hop

std::uint64_t pack(std::uint32_t rank, std::uint32_t index) {
  return static_cast<std::uint64_t>(rank) << 32 | index;
}

// Where `rank` stands in `group`. Every rank joins each collective, so a
// search per join is O(ranks^2) for a collective over all of them (10% of
// docs/benchmarks.md's case (b), 4,096 ranks); most groups are consecutive ranks,
// where the offset from the first member is the answer. A group lists each
// rank once (process_groups.cpp refuses a rank named twice), so a match there
// is the one the search would find.
std::uint32_t position_in(const CommGroup& group, std::uint32_t rank) {
  const std::vector<std::uint32_t>& ranks = group.ranks;
  if (!ranks.empty() && rank >= ranks.front()) {
    const std::size_t guess = rank - ranks.front();
    if (guess < ranks.size() && ranks[guess] == rank) return static_cast<std::uint32_t>(guess);
  }
  return static_cast<std::uint32_t>(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
}
}  // namespace

Simulation::Simulation(std::vector<RankGraph> graphs, const Topology& topology, const SystemConfig& config,
                       SimulationOptions options)
    : Simulation(std::make_shared<const std::vector<RankGraph>>(std::move(graphs)), topology, config,
                 std::move(options)) {}

Simulation::Simulation(std::shared_ptr<const std::vector<RankGraph>> graphs, const Topology& topology,
                       const SystemConfig& config, SimulationOptions options)
    : shared_graphs_(std::move(graphs)),
      graphs_(*shared_graphs_),
      topology_(topology),
      config_(config),
      options_(std::move(options)),
      network_(make_network(config_.network, topology_, queue_)),
      algorithms_(config_, topology_.dims(), options_.load_algorithm,
                  std::none_of(topology_.dimensions().begin(), topology_.dimensions().end(),
                               [](const TopologyDimension& d) { return d.kind == DimensionKind::kOther; })),
      engine_(queue_, *network_, config_, *this),
      p2p_match_(static_cast<std::uint32_t>(graphs_.size())) {
  algorithms_.set_topology(&topology_);  // topology-aware algorithms (nccl) and hierarchical dimension costs
  const auto ranks = static_cast<std::uint32_t>(graphs_.size());
  // COMP nodes: the config's compute model, else the roofline of its two
  // fields (ASTRA-sim's JSON), else they replay their durations.
  compute_ = config_.compute_model;
  if (!compute_ && config_.roofline()) {
    RooflineParams roofline;
    roofline.default_peak_flops = config_.peak_flops;
    roofline.memory_bandwidth = static_cast<double>(config_.compute_memory_bandwidth);
    compute_ = std::make_shared<const RooflineModel>(roofline);
  }
  kernel_model_ = dynamic_cast<const KernelModel*>(compute_.get()) != nullptr;
  if (kernel_model_) kernel_times_.resize(ranks);
  if (ranks > topology_.npu_count()) {
    throw InputError("the workload has " + std::to_string(ranks) + " ranks but the network has only " +
                     std::to_string(topology_.npu_count()) + " NPUs");
  }
  // (Identical ranks folded: the workload's ranks are the world's, on NPUs 0..world-1.)
  const bool packed = options_.npu_of.empty() || options_.folding.expand_copies;
  const std::uint32_t workload_ranks = options_.folding.expand_copies ? options_.folding.world : ranks;
  if (workload_ranks < topology_.npu_count() && packed) {
    result_.warnings.push_back("the workload has " + std::to_string(workload_ranks) + " ranks and the network " +
                               std::to_string(topology_.npu_count()) + " NPUs: ranks run on NPUs 0.." +
                               std::to_string(workload_ranks - 1));
  }
  for (const std::string& w : config_.warnings) result_.warnings.push_back(w);
  // ASTRA-sim's per-dimension algorithm lists must match the topology's dimensions.
  for (const auto& [type, d] : config_.algorithm_dims) {
    const std::size_t dims = topology_.dims().size();
    if (d != dims) {
      throw InputError(std::string("the system config gives ") + std::to_string(d) + " per-dimension algorithm(s) for " +
                       collective_name(type) + " but the network has " + std::to_string(dims) + " dimension(s)");
    }
  }
  // Jobs and where their ranks run.
  std::vector<JobSpec> jobs = options_.jobs;
  if (jobs.empty()) jobs.push_back(JobSpec{"", ranks, options_.comm_groups, options_.comm_group_file});
  std::uint32_t total = 0;
  for (const JobSpec& j : jobs) {
    job_first_.insert(job_first_.end(), j.ranks, total);
    job_size_.insert(job_size_.end(), j.ranks, j.ranks);
    total += j.ranks;
  }
  if (total != ranks) {
    throw InputError("the jobs have " + std::to_string(total) + " ranks in all but " + std::to_string(ranks) +
                     " rank graphs were given");
  }
  npu_of_ = options_.npu_of;
  if (npu_of_.empty()) {
    for (std::uint32_t r = 0; r < ranks; ++r) npu_of_.push_back(r);
  }
  if (npu_of_.size() != ranks) throw InputError("the placement gives NPUs for " + std::to_string(npu_of_.size()) +
                                                " ranks but the workload has " + std::to_string(ranks));
  // Folded, the world's rank count is what must fit (a simulated rank's NPU
  // is its number in the world, which the check below would name instead).
  if (options_.folding.active() && options_.folding.world > topology_.npu_count()) {
    throw InputError("the workload has " + std::to_string(options_.folding.world) + " ranks but the network has only " +
                     std::to_string(topology_.npu_count()) + " NPUs");
  }
  {
    std::vector<std::int64_t> at(topology_.npu_count(), -1);
    for (std::uint32_t r = 0; r < ranks; ++r) {
      if (npu_of_[r] >= topology_.npu_count()) {
        throw InputError(rank_label(r) + " is placed on NPU " + std::to_string(npu_of_[r]) + " but the network has " +
                         std::to_string(topology_.npu_count()) + " NPUs");
      }
      if (at[npu_of_[r]] >= 0) {
        throw InputError(rank_label(r) + " and " + rank_label(static_cast<std::uint32_t>(at[npu_of_[r]])) +
                         " are both placed on NPU " + std::to_string(npu_of_[r]));
      }
      at[npu_of_[r]] = r;
    }
  }
  if (options_.timeline) options_.timeline->ranks(options_.folding.active() ? options_.folding.world : ranks);
  // Service levels: one job's for every message, or each job's for its NPUs'.
  std::vector<std::uint8_t> level_of_npu;
  if (std::any_of(jobs.begin(), jobs.end(), [](const JobSpec& j) { return j.service_level != 0; })) {
    level_of_npu.assign(topology_.npu_count(), 0);
    for (std::uint32_t r = 0; r < ranks; ++r) level_of_npu[npu_of_[r]] = jobs_service_level(jobs, r);
  }
  if ((options_.service_level != 0 || !level_of_npu.empty()) && network_->traffic_classes() == 1) {
    result_.warnings.push_back("--service-level changes nothing here: the " + std::string(network_->name()) +
                               " network carries one traffic class (set network.traffic_classes under ns3's "
                               "transport roce or ib; docs/network.md, \"Traffic classes\")");
  }
  engine_.set_service_levels(options_.service_level, std::move(level_of_npu));
  // Communicators: every group a rank's collectives name (system/groups/group_table.h).
  groups_ = std::make_unique<GroupTable>(graphs_, jobs, npu_of_, topology_.dims(), topology_.npu_count(),
                                         options_.folding);
  runs_.resize(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const RankGraph& g = graphs_[r];
    const std::uint32_t job_ranks = options_.folding.active() ? options_.folding.world : job_size_[r];
    RankRun& run = runs_[r];
    run.pending.resize(g.size());
    if (options_.timeline) run.started.assign(g.size(), 0);
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      const TaskNode& n = g.node(i);
      if (n.num_parents < 0xffffu) {
        run.pending[i] = static_cast<std::uint16_t>(n.num_parents);
      } else {
        run.pending[i] = 0xffffu;
        run.big_pending.emplace(i, n.num_parents);
      }
      if (n.kind == NodeKind::kCommSend && (n.comm_dst < 0 || static_cast<std::uint32_t>(n.comm_dst) >= job_ranks)) {
        throw InputError(g.path() + ": rank " + std::to_string(g.rank()) + ", node " + std::to_string(n.id) + " '" +
                         g.name(i) + "': comm_dst " + std::to_string(n.comm_dst) + " is not a rank (0.." +
                         std::to_string(job_ranks - 1) + ")");
      }
      if (n.kind == NodeKind::kCommRecv && (n.comm_src < 0 || static_cast<std::uint32_t>(n.comm_src) >= job_ranks)) {
        throw InputError(g.path() + ": rank " + std::to_string(g.rank()) + ", node " + std::to_string(n.id) + " '" +
                         g.name(i) + "': comm_src " + std::to_string(n.comm_src) + " is not a rank (0.." +
                         std::to_string(job_ranks - 1) + ")");
      }
    }
    if (options_.folding.active()) check_copy_exchanges(r);
    run.coll_seq.assign(groups_->size(), 0);
    if (g.dangling_ctrl_deps() > 0) {
      result_.warnings.push_back(g.path() + ": " + std::to_string(g.dangling_ctrl_deps()) +
                                 " control dependencies point at absent nodes; ignored");
    }
    if (g.self_ctrl_deps() > 0) {
      result_.warnings.push_back(g.path() + ": " + std::to_string(g.self_ctrl_deps()) +
                                 " control dependencies of a node on itself; ignored");
    }
  }
  if (options_.folding.active()) check_folding();
}

Simulation::~Simulation() = default;

// A folded rank's point-to-point messages go to simulated ranks, or to its
// own copies (context-parallel ranks folded as copies, replica_folding.h):
// a message to copy k is delivered back to the rank as the one from copy
// mirror(k), matched by (rank, rank, tag). That is the full run's pairing
// only if each such tag is sent once and received once, from exactly that
// copy; anything else is refused before the run.
void Simulation::check_copy_exchanges(std::uint32_t r) {
  const ReplicaFolding& f = options_.folding;
  const RankGraph& g = graphs_[r];
  const std::uint32_t self = f.real_rank[r];
  std::unordered_map<std::int64_t, std::pair<std::uint32_t, std::uint32_t>> sent, received;  // tag -> (copy, node)
  std::vector<std::uint32_t> offsets;
  const auto refuse = [&](std::uint32_t i, const std::string& why) {
    throw FoldingRefused(FoldingRefused::kPointToPoint, g.path() + ": rank " + std::to_string(self) + ", node " +
                                                            std::to_string(g.id(i)) + " '" + g.name(i) + "' " + why);
  };
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeKind kind = g.kind(i);
    if (kind != NodeKind::kCommSend && kind != NodeKind::kCommRecv) continue;
    const bool send = kind == NodeKind::kCommSend;
    const auto peer = static_cast<std::uint32_t>(send ? g.comm_dst(i) : g.comm_src(i));
    if (f.graph_of[peer] != r || (peer == self && f.period != 1)) {
      if (f.simulated(peer)) continue;
      refuse(i, "talks to rank " + std::to_string(peer) + " of another replica: replicas cannot be folded (run with "
                "--no-aggregation)");
    }
    if (f.period != 1) {
      refuse(i, "talks to rank " + std::to_string(peer) + ", a copy of itself, which folding " +
                    std::to_string(f.period) + " replicas at a time does not mirror");
    }
    const std::uint32_t k = (peer - self) / f.stride;
    auto& side = send ? sent : received;
    if (!side.emplace(g.comm_tag(i), std::make_pair(send ? f.mirror(k) : k, i)).second) {
      refuse(i, std::string(send ? "sends" : "receives") + " a second message of tag " +
                    std::to_string(g.comm_tag(i)) + " between copies of rank " + std::to_string(self) +
                    ", which a folded run cannot tell apart");
    }
    if (send && k != 0 && std::find(offsets.begin(), offsets.end(), k) == offsets.end()) offsets.push_back(k);
  }
  for (const auto& [tag, want] : sent) {
    const auto it = received.find(tag);
    if (it == received.end() || it->second.first != want.first) {
      refuse(want.second, "sends tag " + std::to_string(tag) + " to rank " +
                              std::to_string(self + f.mirror(want.first) * f.stride) + ", but rank " +
                              std::to_string(self) + " receives it " +
                              (it == received.end() ? std::string("from no copy")
                                                    : "from rank " + std::to_string(self + it->second.first * f.stride)) +
                              ", not from rank " + std::to_string(self + want.first * f.stride) +
                              ": the exchange is not the same at every copy");
    }
  }
  for (const auto& [tag, got] : received) {
    if (!sent.count(tag)) {
      refuse(got.second, "receives tag " + std::to_string(tag) + " from rank " +
                             std::to_string(self + got.first * f.stride) + ", which rank " + std::to_string(self) +
                             " sends to none of its copies: the exchange is not the same at every copy");
    }
  }
  if (!offsets.empty()) copy_offsets_.emplace_back(r, std::move(offsets));
}

// Folded replicas are exact only if every copy of replica 0 sees the routes
// replica 0 sees: for each pair of replica-0 ranks that talk (point to point
// or in a group of replica 0), the same pair in replica k must have the same
// latency and bottleneck bandwidth and leave through the same port of its
// NPU (so each copy's egress ports carry what the original's carry). The
// analytical backend prices exactly that; other backends share links inside
// the fabric, which folding cannot see.
void Simulation::check_folding() {
  const ReplicaFolding& f = options_.folding;
  result_.folded_replicas = f.replicas / f.period;
  result_.replica_period = f.period;
  result_.context_ring = f.ring;
  ClosedFormRoutes* analytical = network_->closed_form_routes();
  // A backend that shares links inside the fabric folds one replica with
  // stand-ins at most: its routes are not checked (the fold is approximate
  // anyway), and every collective over the copies is timed alone.
  if (!analytical && !f.stand_ins) {
    throw FoldingRefused("folded replicas need the analytical backend (the " + std::string(network_->name()) +
                     " backend shares links between replicas; run with --no-aggregation)");
  }
  if (f.world > topology_.npu_count()) {
    throw InputError("the workload has " + std::to_string(f.world) + " ranks but the network has only " +
                     std::to_string(topology_.npu_count()) + " NPUs");
  }
  {
    std::vector<bool> simulated(topology_.npu_count(), false);
    // (none with queues at ports only: a route queueing past its port is then refused)
    for (std::uint32_t r = 0; r < graphs_.size(); ++r) simulated[npu_of_[r]] = true;
    engine_.set_simulated_npus(f.queues_at_ports_only ? std::vector<bool>{} : std::move(simulated));
  }
  engine_.set_stand_ins(f.stand_ins);
  result_.stand_ins = f.stand_ins;
  // A link's position among its source's links: the port it leaves by.
  std::vector<std::uint32_t> port(topology_.links().size());
  {
    std::vector<std::uint32_t> seen(topology_.node_count(), 0);
    for (std::size_t l = 0; l < port.size(); ++l) port[l] = seen[topology_.links()[l].from]++;
  }
  std::uint64_t queued_past_port = 0;  // routes accepted with a bottleneck past their port
  const auto same = [&](std::uint32_t a, std::uint32_t b, std::uint32_t k) {
    const auto c0 = analytical->path_cost(a, b);
    const auto ck = analytical->path_cost_once(a + k * f.stride, b + k * f.stride);
    if (c0.latency_sum != ck.latency_sum || c0.min_bandwidth != ck.min_bandwidth ||
        port[c0.first_link] != port[ck.first_link]) {
      return false;
    }
    if (c0.bottleneck_link == c0.first_link) return ck.bottleneck_link == ck.first_link;
    if (f.queues_at_ports_only) return false;
    // A bottleneck past the port is a queue: folding is exact only if it is
    // a replica-0 NPU's link (so no other replica's messages use it) and the
    // copy's route queues on that NPU's copy's link of the same port.
    const auto owner = [&](LinkId l) {
      const Link& link = topology_.links()[l];
      return link.from < topology_.npu_count() ? link.from : link.to;
    };
    const NodeId o0 = owner(c0.bottleneck_link), ok = owner(ck.bottleneck_link);
    const bool queued = o0 < f.world && f.simulated(o0) && ok == o0 + k * f.stride &&
                        port[c0.bottleneck_link] == port[ck.bottleneck_link];
    queued_past_port += queued;
    return queued;
  };
  for (std::uint32_t r = 0; analytical && r < graphs_.size(); ++r) {
    std::vector<std::uint32_t> partners;
    const RankGraph& g = graphs_[r];
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      const NodeKind kind = g.kind(i);
      if (kind == NodeKind::kCommSend) partners.push_back(npu_of_[peer_graph(r, g.comm_dst(i))]);
      if (kind == NodeKind::kCommRecv) partners.push_back(npu_of_[peer_graph(r, g.comm_src(i))]);
    }
    for (std::uint32_t spec = 0; spec < g.communicators().size(); ++spec) {
      const CommGroup& group = groups_->group(groups_->group_of(r, spec));
      if (group.mirrored_pos < 0) partners.insert(partners.end(), group.npus->begin(), group.npus->end());
    }
    std::sort(partners.begin(), partners.end());
    partners.erase(std::unique(partners.begin(), partners.end()), partners.end());
    for (const std::uint32_t p : partners) {
      if (p == npu_of_[r]) continue;
      for (std::uint32_t k = f.period; k < f.replicas; k += f.period) {
        if (!same(npu_of_[r], p, k) || !same(p, npu_of_[r], k)) {
          throw FoldingRefused(FoldingRefused::kRoutes, "replicas cannot be folded: the route from NPU " + std::to_string(npu_of_[r]) + " to NPU " +
                           std::to_string(p) + " differs from its copy in replica " + std::to_string(k) + " (NPU " +
                           std::to_string(npu_of_[r] + k * f.stride) + " to " + std::to_string(p + k * f.stride) +
                           "); run with --no-aggregation");
        }
      }
    }
  }
  // Messages to a rank's own copies: every copy's message to its counterpart
  // (copy j to copy j + k, digit by digit) must be priced as the rank's, leave
  // by the same port and queue nowhere past it (the counterpart's links are
  // not simulated).
  if (!analytical) copy_offsets_.clear();
  for (const auto& [r, offsets] : copy_offsets_) {
    for (const std::uint32_t k : offsets) {
      const std::uint32_t a0 = npu_of_[r], b0 = a0 + k * f.stride;
      const auto c0 = analytical->path_cost(a0, b0);
      for (std::uint32_t j = 0; j < f.replicas; ++j) {
        const std::uint32_t a = a0 + j * f.stride, b = a0 + f.shifted(j, k) * f.stride;
        const auto cj = analytical->path_cost_once(a, b);
        if (cj.latency_sum != c0.latency_sum || cj.min_bandwidth != c0.min_bandwidth ||
            port[cj.first_link] != port[c0.first_link] || cj.bottleneck_link != cj.first_link) {
          const std::string how = cj.bottleneck_link != cj.first_link
                                      ? " queues past its port"
                                      : " differs from NPU " + std::to_string(a0) + " to " + std::to_string(b0);
          throw FoldingRefused(FoldingRefused::kPointToPoint,
                               "rank " + std::to_string(a0) + "'s copies cannot be folded: the route from NPU " +
                                   std::to_string(a) + " to NPU " + std::to_string(b) + how +
                                   " (messages between copies: context-parallel ranks)");
        }
      }
    }
  }
  copy_offsets_.clear();
  // Every collective over a rank's copies, checked now rather than when first
  // reached (the engine's cache keeps the verdict): a run that cannot fold is
  // refused before it has simulated anything.
  std::set<std::tuple<std::uint32_t, int, std::uint64_t>> checked;
  for (std::uint32_t r = 0; r < graphs_.size(); ++r) {
    const RankGraph& g = graphs_[r];
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      if (g.kind(i) != NodeKind::kCommColl) continue;
      const TaskNode& n = g.node(i);
      const std::uint32_t gid = groups_->group_of(r, n.group);
      const CommGroup& group = groups_->group(gid);
      if (group.mirrored_pos < 0 || !checked.insert({gid, static_cast<int>(n.coll), n.comm_size}).second) continue;
      std::shared_ptr<const CollectiveProgram> program;
      try {
        program = algorithms_.program_for(
            CollectiveRequest{n.coll, n.comm_size, group.npus, config_.collective_chunks, n.id});
      } catch (const FoldingRefused&) {
        throw;
      } catch (const InputError&) {
        continue;  // the run says so, naming the node, when it gets there
      }
      if (program) {
        const auto pos = group.period == 1 ? static_cast<std::uint32_t>(group.mirrored_pos) : position_in(group, r);
        engine_.check_mirror(std::move(program), group.npus, group.period, pos);
      }
    }
  }
  if (f.queues_approximate) result_.queued_past_port_routes = queued_past_port + engine_.queued_past_port_routes();
}

// Every rank a copy of rank 0 (identical traces, system/scenario/identical_ranks.h,
// which admits only one Switch dimension and rank-symmetric collectives over
// all ranks): each rank did what rank 0 did, its collective rows are rank 0's
// under its number, and its link up and link down each carried what rank 0's
// link up carried (a rank-symmetric collective receives on every rank what
// it sends). Messages: rank 0's (all in its mirrored collectives), once per rank.
void Simulation::expand_copies() {
  const std::uint32_t world = options_.folding.world;
  result_.ranks.assign(world, result_.ranks.front());
  std::vector<CollectiveRecord> rows;
  rows.reserve(result_.collectives.size() * world);
  for (std::uint32_t k = 0; k < world; ++k) {
    for (const CollectiveRecord& c : result_.collectives) {
      rows.push_back(c);
      rows.back().rank = k;
      rows.back().npu = k;
    }
  }
  result_.collectives = std::move(rows);
  const auto& links = topology_.links();
  LinkUsage up{};
  for (LinkId i = 0; i < links.size(); ++i) {
    if (links[i].from == 0) up = result_.links[i].usage;
  }
  for (LinkId i = 0; i < links.size(); ++i) {
    if (links[i].from < world || links[i].to < world) result_.links[i].usage = up;
  }
  result_.messages = engine_.mirrored_messages() * world;
  result_.rank_numbers.clear();
  result_.folded_replicas = 1;
  result_.identical_ranks = world;
}

Simulation::Resource Simulation::resource_of(NodeKind kind, bool is_cpu_op) {
  switch (kind) {
    case NodeKind::kComp: return is_cpu_op ? kCpu : kGpu;
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore: return kMem;
    case NodeKind::kCommColl: return is_cpu_op ? kCpu : kComm;
    case NodeKind::kCommSend:
    case NodeKind::kCommRecv: return kComm;
    default: return kNone;
  }
}

Time Simulation::compute_time(std::uint32_t rank, const TaskNode& n) const {
  if (n.kind == NodeKind::kComp && compute_ && !n.is_cpu_op) {
    // The compute model (compute/compute_model.h): measured kernels or the
    // roofline, by the node's kernel attributes or num_ops / tensor_size.
    const KernelShape* kernel = graphs_[rank].kernel_shape(n.kernel);
    if (kernel && kernel_model_) {  // its time depends on the shape alone: computed once per shape
      std::vector<Time>& times = kernel_times_[rank];
      if (times.empty()) times.assign(graphs_[rank].kernel_shape_count(), -1);
      Time& t = times[n.kernel - 1];
      if (t < 0) {
        const auto it = kernel_cache_.find(*kernel);
        t = it != kernel_cache_.end()
                ? it->second
                : kernel_cache_.emplace(*kernel, compute_seconds_to_time(*compute_->seconds(ComputeNode{kernel}) /
                                                                             config_.compute_efficiency,
                                                                         "its compute time (" + kernel->describe() + ")"))
                      .first->second;
      }
      return t;
    }
    const ComputeNode node{kernel, n.has_roofline, n.num_ops, n.tensor_size};
    if (const std::optional<double> s = compute_->seconds(node)) {
      return compute_seconds_to_time(*s / config_.compute_efficiency, n.has_roofline ? "its roofline time (" + std::to_string(n.num_ops) + " ops, " +
                                                              std::to_string(n.tensor_size) + " B)"
                                                        : "its compute time (" + kernel->describe() + ")");
    }
  }
  if ((n.kind == NodeKind::kMemLoad || n.kind == NodeKind::kMemStore) && config_.has_memory_model) {
    return add_time(config_.memory_latency, transfer_time(n.tensor_size, config_.memory_bandwidth), "its duration");
  }
  return scale_time(n.duration_micros, kMicrosecond, "its duration_micros");
}

void Simulation::account(RankRun& r) {
  const Time now = queue_.now();
  const Time dt = now - r.last;
  if (dt > 0) {
    if (r.active_cpu > 0) r.stats.cpu_busy += dt;
    if (r.active_compute > r.active_cpu) r.stats.gpu_busy += dt;
    if (r.active_compute > 0) r.stats.compute += dt;
    else if (r.active_comm > 0) r.stats.exposed_comm += dt;
    else if (r.active_mem > 0) r.stats.memory += dt;
    else r.stats.idle += dt;
    if (r.active_comm > 0) r.stats.comm += dt;
  }
  r.last = now;
}

void Simulation::run_events() {
  if (!options_.progress) return queue_.run();
  constexpr std::uint64_t kEvery = std::uint64_t{1} << 20;
  SimulationProgress p;
  for (const RankGraph& g : graphs_) p.nodes_total += g.size();
  while (queue_.step()) {
    if (queue_.processed() % kEvery != 0) continue;
    p.now = queue_.now();
    p.events = queue_.processed();
    p.nodes_done = 0;
    for (const RankRun& r : runs_) p.nodes_done += r.done;
    options_.progress(p);
  }
}

SimulationResult Simulation::run() {
  for (std::uint32_t r = 0; r < runs_.size(); ++r) {
    for (std::uint32_t i : graphs_[r].roots()) runs_[r].ready.emplace(graphs_[r].node(i).id, i);
  }
  try {
    for (std::uint32_t r = 0; r < runs_.size(); ++r) drain(r);
    run_events();
  } catch (const TimeLimitError& e) {  // raised inside the network, between node issues
    e.rethrow_with("at simulated time " + format_time(queue_.now()), true);
  }
  for (std::uint32_t r = 0; r < runs_.size(); ++r) {
    if (runs_[r].done != graphs_[r].size()) report_stuck();
  }
  check_unreceived();
  if (options_.folding.active()) result_.rank_numbers = options_.folding.real_rank;
  result_.ranks.reserve(runs_.size());
  for (RankRun& r : runs_) {
    result_.makespan = std::max(result_.makespan, r.stats.finish);
    result_.ranks.push_back(r.stats);
  }
  for (std::uint32_t g = 0; g < groups_->size(); ++g) {
    const CommGroup& group = groups_->group(g);
    std::vector<std::uint32_t> hosts;
    for (const std::uint32_t npu : *group.npus) hosts.push_back(topology_.host(npu));
    std::sort(hosts.begin(), hosts.end());
    const auto distinct = static_cast<std::uint32_t>(std::unique(hosts.begin(), hosts.end()) - hosts.begin());
    result_.groups.push_back(GroupRecord{group.label, group.dims, std::max<std::uint32_t>(1, distinct)});
  }
  for (const JobSpec& j : options_.jobs) {
    JobResult job{j.name, result_.jobs.empty() ? 0 : result_.jobs.back().first_rank + result_.jobs.back().ranks, j.ranks, 0,
                  j.service_level};
    for (std::uint32_t k = 0; k < j.ranks; ++k) job.makespan = std::max(job.makespan, runs_[job.first_rank + k].stats.finish);
    result_.jobs.push_back(std::move(job));
  }
  result_.events = queue_.processed();
  result_.aggregated_collectives = engine_.aggregated_collectives();
  result_.aggregated_events = engine_.aggregated_events();
  result_.stand_in_collectives = engine_.stand_in_stats().collectives;
  result_.stand_in_timings = engine_.stand_in_stats().timings;
  result_.stand_in_events = engine_.stand_in_stats().events;
  result_.stand_in_spread = engine_.stand_in_stats().spread;
  result_.stand_in_port_loads = engine_.stand_in_stats().port_loads;
  result_.messages = network_->messages_sent();
  const std::vector<LinkUsage> usage = network_->link_usage();
  result_.links.reserve(usage.size());
  for (LinkId i = 0; i < usage.size(); ++i) {
    const Link& l = topology_.links()[i];
    result_.links.push_back(LinkRecord{l.from, l.to, l.bandwidth, usage[i]});
  }
  result_.link_time_known = network_->measures_link_time();
  result_.packet_level = network_->carries_packets();
  result_.npu_count = topology_.npu_count();
  result_.network_counters = network_->counters();
  // Rows in (rank, start, node id) order, as a stable sort would give them:
  // moved into per-rank buckets in their order (appended as collectives
  // started, so usually already in order within a rank), then each rank's
  // rows sorted only if they are not. (A stable sort of a training loop's
  // 10^5-10^6 rows was a tenth of an aggregated run.)
  {
    const auto earlier = [](const CollectiveRecord& a, const CollectiveRecord& b) {
      return a.start != b.start ? a.start < b.start : a.node_id < b.node_id;
    };
    std::vector<std::size_t> first(runs_.size() + 1, 0);
    for (const CollectiveRecord& c : result_.collectives) ++first[c.rank + 1];
    for (std::size_t r = 1; r < first.size(); ++r) first[r] += first[r - 1];
    // Each row's place, then the rows moved there in place (cycle by cycle: no second copy of the rows).
    std::vector<CollectiveRecord>& rows = result_.collectives;
    std::vector<std::size_t> next(first.begin(), first.end() - 1);
    std::vector<std::size_t> dest(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) dest[i] = next[rows[i].rank]++;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      while (dest[i] != i) {
        const std::size_t j = dest[i];
        std::swap(rows[i], rows[j]);
        std::swap(dest[i], dest[j]);
      }
    }
    for (std::size_t r = 0; r + 1 < first.size(); ++r) {
      const auto b = rows.begin() + static_cast<std::ptrdiff_t>(first[r]);
      const auto e = rows.begin() + static_cast<std::ptrdiff_t>(first[r + 1]);
      if (!std::is_sorted(b, e, earlier)) std::stable_sort(b, e, earlier);
    }
  }
  if (options_.folding.expand_copies) expand_copies();
  return std::move(result_);
}

void Simulation::drain(std::uint32_t rank) {
  RankRun& r = runs_[rank];
  if (r.draining) return;  // an outer call on this rank picks up the new work
  r.draining = true;
  drain_loop(rank, r, false);
  r.draining = false;
}

void Simulation::drain_loop(std::uint32_t rank, RankRun& r, bool ready_first) {
  const RankGraph& g = graphs_[rank];
  for (;;) {
    bool progressed = ready_first;
    if (!ready_first && r.waiting_nodes > 0) {
      for (int res = 0; res < kNumLimited; ++res) {
        if (!r.busy[res] && !r.waiting[res].empty()) {
          const std::uint32_t i = r.waiting[res].top().second;
          r.waiting[res].pop();
          --r.waiting_nodes;
          issue(rank, i);
          progressed = true;
        }
      }
    }
    ready_first = false;
    while (!r.ready.empty()) {
      const auto [id, i] = r.ready.top();
      r.ready.pop();
      const Resource res = resource_of(g.kind(i), g.is_cpu_op(i));
      if (res < kNumLimited && r.busy[res]) {
        r.waiting[res].emplace(id, i);
        ++r.waiting_nodes;
      } else {
        issue(rank, i);
      }
      progressed = true;
    }
    if (!progressed) break;
  }
}

void Simulation::issue(std::uint32_t rank, std::uint32_t index) {
  try {
    start(rank, index);
  } catch (const TimeLimitError& e) {  // the node whose time passed the limit, named once
    e.rethrow_with(graphs_[rank].path() + ": " + describe_node(rank, index), true);
  }
}

void Simulation::start(std::uint32_t rank, std::uint32_t index) {
  RankRun& r = runs_[rank];
  const RankGraph& g = graphs_[rank];
  const NodeKind kind = g.kind(index);
  const Resource res = resource_of(kind, g.is_cpu_op(index));
  account(r);
  if (options_.timeline) r.started[index] = queue_.now();
  if (res < kNumLimited) r.busy[res] = true;
  switch (kind) {
    case NodeKind::kComp:
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore:
      if (kind == NodeKind::kComp) {
        ++r.active_compute;
        if (g.is_cpu_op(index)) ++r.active_cpu;
      } else {
        ++r.active_mem;
      }
      queue_.schedule_in(compute_time(rank, g.node(index)), this, kNodeDone, pack(rank, index));
      return;
    case NodeKind::kCommColl:
      ++r.active_comm;
      if (g.is_cpu_op(index)) {  // a host-side collective call: replay its duration
        queue_.schedule_in(compute_time(rank, g.node(index)), this, kNodeDone, pack(rank, index));
      } else {
        issue_collective(rank, index);
      }
      return;
    case NodeKind::kCommSend:
      ++r.active_comm;
      issue_send(rank, index);
      return;
    case NodeKind::kCommRecv:
      ++r.active_comm;
      issue_recv(rank, index);
      return;
    default:
      complete(rank, index);
      return;
  }
}

void Simulation::complete(std::uint32_t rank, std::uint32_t index) {
  RankRun& r = runs_[rank];
  const RankGraph& g = graphs_[rank];
  const NodeKind kind = g.kind(index);
  account(r);
  switch (kind) {
    case NodeKind::kComp:
      --r.active_compute;
      if (g.is_cpu_op(index)) --r.active_cpu;
      break;
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore: --r.active_mem; break;
    case NodeKind::kCommColl:
      if (const auto it = r.coll_record.find(index); it != r.coll_record.end()) {
        CollectiveRecord& rec = result_.collectives[it->second];
        rec.duration = queue_.now() - rec.start;
        r.coll_record.erase(it);
      }
      r.coll_running.erase(index);
      --r.active_comm;
      break;
    case NodeKind::kCommSend:
    case NodeKind::kCommRecv: --r.active_comm; break;
    default: break;
  }
  const Resource res = resource_of(kind, g.is_cpu_op(index));
  if (res < kNumLimited) r.busy[res] = false;
  if (options_.timeline && options_.timeline->wants(rank_number(rank), r.started[index], queue_.now())) {
    const std::string name = g.name(index);
    options_.timeline->slice(TimelineSlice{rank_number(rank), static_cast<std::uint8_t>(res), r.started[index],
                                           queue_.now(), g.id(index), name, kind});
  }
  ++r.done;
  ++r.stats.nodes;
  r.stats.finish = queue_.now();
  // Children made ready: the first few kept here, so that the usual case
  // (nothing else ready or waiting on this rank) issues them without the heap.
  constexpr unsigned kFew = 4;
  std::uint32_t few[kFew];
  unsigned count = 0;
  bool many = false;
  for (std::uint32_t c : g.children(index)) {
    std::uint16_t& p = r.pending[c];
    if (p != 0xffffu) [[likely]] {
      if (--p != 0) continue;
    } else if (const auto it = r.big_pending.find(c); --it->second == 0) {
      p = 0;
      r.big_pending.erase(it);
    } else {
      continue;
    }
    if (count < kFew) {
      few[count++] = c;
    } else {
      many = true;
      r.ready.emplace(g.id(c), c);
    }
  }
  if (many || r.draining || !r.ready.empty() || r.waiting_nodes > 0) {
    for (unsigned k = 0; k < count; ++k) r.ready.emplace(g.id(few[k]), few[k]);
    drain(rank);
    return;
  }
  if (count == 0) return;  // drain() would find nothing to do
  // Ascending id, as the heap would give them (children are usually in id order already).
  for (unsigned k = 1; k < count; ++k) {
    const std::uint32_t c = few[k];
    unsigned j = k;
    for (; j > 0 && g.id(few[j - 1]) > g.id(c); --j) few[j] = few[j - 1];
    few[j] = c;
  }
  r.draining = true;
  for (unsigned k = 0; k < count; ++k) {
    if (!r.ready.empty()) {  // an issue completed nodes that readied others: the heap orders them all
      for (; k < count; ++k) r.ready.emplace(g.id(few[k]), few[k]);
      break;
    }
    const std::uint32_t i = few[k];
    const Resource child_res = resource_of(g.kind(i), g.is_cpu_op(i));
    if (child_res < kNumLimited && r.busy[child_res]) {
      r.waiting[child_res].emplace(g.id(i), i);
      ++r.waiting_nodes;
    } else {
      issue(rank, i);
    }
  }
  drain_loop(rank, r, true);
  r.draining = false;
}

void Simulation::on_event(const Event& event) {
  if (event.kind == kP2PDelivered) {
    p2p_delivered(static_cast<std::uint32_t>(event.payload));
    return;
  }
  if (event.kind == kP2PInject) {
    const auto m = static_cast<std::uint32_t>(event.payload);
    const P2PMessage& msg = p2p_[m];
    const std::uint32_t from = npu_of_[msg.src_rank];
    network_->send_on(engine_.connection(0, from), from, p2p_to(msg.src_rank, msg.src_index), msg.wire,
                      Delivery{this, kP2PDelivered, m});
    return;
  }
  if (event.kind == kP2PLanded) {
    p2p_landed(static_cast<std::uint32_t>(event.payload));
    return;
  }
  complete(static_cast<std::uint32_t>(event.payload >> 32), static_cast<std::uint32_t>(event.payload));
}

// --- collectives -------------------------------------------------------------

void Simulation::issue_collective(std::uint32_t rank, std::uint32_t index) {
  RankRun& r = runs_[rank];
  const RankGraph& g = graphs_[rank];
  const TaskNode& n = g.node(index);
  const std::uint32_t gid = groups_->group_of(rank, n.group);
  const CommGroup& group = groups_->group(gid);
  if (group.unfoldable) {
    throw FoldingRefused(describe_node(rank, index) + ": a collective over all ranks cannot be folded into one replica "
                     "(run with --no-aggregation)");
  }
  const auto& members = group.npus;
  const auto pos = group.mirrored_pos >= 0 && group.period == 1 ? static_cast<std::uint32_t>(group.mirrored_pos)
                                                                 : position_in(group, rank);
  const std::uint64_t seq = r.coll_seq[gid]++;
  r.coll_running[index] = seq;
  // Ranks meet in the k-th collective of a communicator; they must agree on what it is.
  const auto [sig, first] = signatures_.try_emplace({gid, seq}, InstanceSignature{n.coll, n.comm_size, rank, n.id, 0});
  if (!first && (sig->second.type != n.coll || sig->second.bytes != n.comm_size)) {
    const RankGraph& first_graph = graphs_[sig->second.rank];
    const auto first_index = static_cast<std::uint32_t>(first_graph.index_of(sig->second.node_id));
    throw InputError("collective number " + std::to_string(seq + 1) + " of " + group.label + ": " + g.path() + ": " +
                     rank_label(rank) + " node " + std::to_string(n.id) + " '" + g.name(index) + "' issues " +
                     collective_name(n.coll) + " of " + std::to_string(n.comm_size) + " B but " + first_graph.path() +
                     ": " + rank_label(sig->second.rank) + " node " + std::to_string(sig->second.node_id) + " '" +
                     first_graph.name(first_index) + "' issued " + collective_name(sig->second.type) + " of " +
                     std::to_string(sig->second.bytes) +
                     " B (ranks must issue a group's collectives in the same order)");
  }
  if (++sig->second.joined == group.ranks.size()) signatures_.erase(sig);  // everyone agreed: forget it
  if (config_.astrasim_lifo && !r.coll_record.empty() && warned_["lifo"]++ == 0) {
    result_.warnings.push_back("rank " + std::to_string(rank) + " runs collectives concurrently (node " +
                               std::to_string(n.id) + " starts while another is running): ASTRA-sim 2.x would start "
                               "it only when the other ends (one communication node per rank at a time, whatever its "
                               "scheduling-policy); times may differ from ASTRA-sim's");
  }
  auto program =
      algorithms_.program_for(CollectiveRequest{n.coll, n.comm_size, members, config_.collective_chunks, n.id});
  CollectiveRecord rec;
  rec.rank = rank;
  rec.node_id = n.id;
  rec.type = n.coll;
  rec.bytes = n.comm_size;
  rec.group_size = static_cast<std::uint32_t>(members->size());
  rec.npu = npu_of_[rank];
  rec.group = gid;
  rec.start = queue_.now();
  if (!program) {
    if (warned_[collective_name(n.coll)]++ == 0) {
      result_.warnings.push_back(std::string("no algorithm simulates ") + collective_name(n.coll) +
                                 ": such nodes replay their trace duration");
    }
    rec.algorithm = "replay";
    r.coll_record[index] = result_.collectives.size();
    result_.collectives.push_back(rec);
    queue_.schedule_in(compute_time(rank, n), this, kNodeDone, pack(rank, index));
    return;
  }
  rec.algorithm = program->name();
  r.coll_record[index] = result_.collectives.size();
  result_.collectives.push_back(rec);
  engine_.join(InstanceKey{gid, seq}, std::move(program), members, pos, pack(rank, index),
               group.mirrored_pos >= 0 ? group.period : 0);
}

bool Simulation::runs_only_collective(std::uint64_t cookie) const {
  const RankRun& r = runs_[static_cast<std::uint32_t>(cookie >> 32)];
  return r.active_compute == 0 && r.active_mem == 0 && r.active_comm == 1 && r.ready.empty() &&
         r.waiting_nodes == 0 && !r.draining && r.coll_running.size() == 1;
}

bool Simulation::finished_outside(const std::vector<std::uint32_t>& npus) const {
  std::vector<bool> inside(topology_.npu_count(), false);
  for (const std::uint32_t npu : npus) {
    if (npu < inside.size()) inside[npu] = true;
  }
  for (std::size_t r = 0; r < runs_.size(); ++r) {
    if (r < npu_of_.size() && npu_of_[r] < inside.size() && inside[npu_of_[r]]) continue;
    if (runs_[r].done != graphs_[r].size()) return false;
  }
  return true;
}

void Simulation::on_collective_done(std::uint32_t /*npu*/, std::uint64_t cookie) {
  complete(static_cast<std::uint32_t>(cookie >> 32), static_cast<std::uint32_t>(cookie));
}

// --- point-to-point ----------------------------------------------------------

std::uint32_t Simulation::p2p_to(std::uint32_t rank, std::uint32_t index) const {
  // Folded, a rank's NPU is its number: a copy's too (replica_folding.h).
  const RankGraph& g = graphs_[rank];
  return options_.folding.active() ? static_cast<std::uint32_t>(g.comm_dst(index))
                                   : npu_of_[peer_graph(rank, g.comm_dst(index))];
}

void Simulation::issue_send(std::uint32_t rank, std::uint32_t index) {
  const RankGraph& g = graphs_[rank];
  const std::uint64_t size = g.comm_size(index);
  const std::uint32_t m = p2p_.alloc(P2PMessage{rank, index, -1, 0, false});
  const std::uint32_t dst = peer_graph(rank, g.comm_dst(index));
  std::uint32_t recv_index;
  if (p2p_match_.arrive(rank, dst, g.comm_tag(index), m, recv_index)) {
    if (graphs_[dst].comm_size(recv_index) != size) {
      throw InputError("size mismatch: " + describe_node(rank, index) + " matched " + describe_node(dst, recv_index));
    }
    p2p_[m].recv_rank = dst;
    p2p_[m].recv_index = recv_index;
  }
  const std::uint32_t from = npu_of_[rank], to = p2p_to(rank, index);
  const AlgorithmRegistry::PointToPoint* nccl = algorithms_.point_to_point(from, to);
  if (!nccl) {
    network_->send_on(engine_.connection(0, from), from, to, size, Delivery{this, kP2PDelivered, m});
    return;
  }
  // NCCL's send (docs/nccl.md, "Send and receive"): the call's overhead, then
  // across nodes the sending proxy posts the message's chunks one after another
  // (busy with all of them; the first leaves after one), and the network carries
  // the payload with the device's cost per write.
  P2PMessage& msg = p2p_[m];
  msg.nccl = nccl;
  const nccl::P2pModel& model = nccl->model;
  const std::uint64_t chunk = model.net_chunk_for(size);
  msg.messages = nccl->across && size > 0 ? (size + chunk - 1) / chunk : 0;
  msg.wire = size + (msg.messages > 0 ? model.writes.extra(size, msg.messages) : 0);
  Time leave = add_time(queue_.now(), model.base, "a send's start");
  if (msg.messages > 0 && model.proxy > 0) {
    const Time all = scale_time(msg.messages, model.proxy, "a send's proxy time");
    leave = engine_.proxy_through(from, leave, all) - (all - model.proxy);
  }
  queue_.schedule_in(leave - queue_.now(), this, kP2PInject, m);
}

void Simulation::issue_recv(std::uint32_t rank, std::uint32_t index) {
  const RankGraph& g = graphs_[rank];
  std::uint32_t m;
  const std::uint32_t src = peer_graph(rank, g.comm_src(index));
  if (!p2p_match_.post(src, rank, g.comm_tag(index), index, m)) {
    return;  // no send yet: waits in the matcher
  }
  P2PMessage& msg = p2p_[m];
  if (graphs_[msg.src_rank].comm_size(msg.src_index) != g.comm_size(index)) {
    throw InputError("size mismatch: " + describe_node(rank, index) + " matched " +
                     describe_node(msg.src_rank, msg.src_index));
  }
  if (msg.delivered) {  // the message waited for this receive: it is done with
    const Time call = msg.nccl ? msg.nccl->model.base : 0;  // NCCL's receive is a call of its own
    p2p_.free(m);
    if (call > 0) {
      queue_.schedule_in(call, this, kNodeDone, pack(rank, index));
    } else {
      complete(rank, index);
    }
    return;
  }
  msg.recv_rank = rank;
  msg.recv_index = index;
}

void Simulation::p2p_delivered(std::uint32_t message) {
  const P2PMessage& sent = p2p_[message];
  if (sent.nccl) {
    // NCCL's receive: the receiving proxy completes each chunk as it comes in
    // (the last one as the message ends), then the protocol's hop.
    const nccl::P2pModel& model = sent.nccl->model;
    Time landed = queue_.now();
    if (sent.messages > 0 && model.proxy > 0) {
      const Time all = scale_time(sent.messages, model.proxy, "a receive's proxy time");
      landed = engine_.proxy_through(p2p_to(sent.src_rank, sent.src_index), landed - (all - model.proxy), all);
    }
    landed = add_time(landed, sent.nccl->across ? model.hop_inter : model.hop_intra, "a receive's end");
    const std::uint32_t src_rank = sent.src_rank, src_index = sent.src_index;
    queue_.schedule_in(landed - queue_.now(), this, kP2PLanded, message);
    complete(src_rank, src_index);  // eager: a send is done when delivered
    return;
  }
  p2p_landed(message);
}

void Simulation::p2p_landed(std::uint32_t message) {
  const P2PMessage msg = p2p_[message];
  if (msg.recv_rank >= 0) {
    p2p_.free(message);  // delivered and received
  } else {
    p2p_[message].delivered = true;  // stays queued in the matcher until a receive takes it
  }
  if (!msg.nccl) complete(msg.src_rank, msg.src_index);  // eager: a send is done when delivered (NCCL's: done then)
  if (msg.recv_rank >= 0) complete(static_cast<std::uint32_t>(msg.recv_rank), msg.recv_index);
}

}  // namespace sim
