#include "system/simulation.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <unordered_map>

#include "core/error.h"

namespace sim {

namespace {
constexpr std::uint32_t kNodeDone = 1;
constexpr std::uint32_t kP2PDelivered = 2;

std::uint64_t pack(std::uint32_t rank, std::uint32_t index) {
  return static_cast<std::uint64_t>(rank) << 32 | index;
}
}  // namespace

// Min-heap of (node id, node index): ready nodes in ascending id.
using ReadyHeap = std::priority_queue<std::pair<std::uint64_t, std::uint32_t>,
                                      std::vector<std::pair<std::uint64_t, std::uint32_t>>, std::greater<>>;

struct Simulation::RankRun {
  std::vector<std::uint32_t> pending;  // unfinished parents per node
  std::vector<Time> started;           // issue time per node (only for the timeline)
  ReadyHeap ready;
  ReadyHeap waiting[kNumLimited];
  bool busy[kNumLimited] = {false, false, false};
  bool draining = false;
  std::uint64_t done = 0;
  std::vector<std::uint64_t> coll_seq;  // per communicator (global group id)
  std::unordered_map<std::uint32_t, std::size_t> coll_record;  // COMM_COLL node index -> report row
  // Activity counters for the time breakdown.
  std::uint32_t active_compute = 0, active_comm = 0, active_mem = 0;
  Time last = 0;
  RankStats stats;
};

std::size_t Simulation::P2PKeyHash::operator()(const P2PKey& k) const noexcept {
  // splitmix64 finalizer: the flat map indexes with the low bits.
  std::uint64_t h = static_cast<std::uint64_t>(k.tag) * 0x9e3779b97f4a7c15ull ^
                    (static_cast<std::uint64_t>(k.src) << 32 | k.dst);
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return static_cast<std::size_t>(h ^ (h >> 31));
}

Simulation::Simulation(std::vector<RankGraph> graphs, const Topology& topology, const SystemConfig& config,
                       SimulationOptions options)
    : graphs_(std::move(graphs)),
      topology_(topology),
      config_(config),
      options_(std::move(options)),
      network_(make_network(config_.network, topology_, queue_)),
      algorithms_(config_, topology_.dims()),
      engine_(queue_, *network_, config_, *this) {
  const auto ranks = static_cast<std::uint32_t>(graphs_.size());
  if (ranks > topology_.npu_count()) {
    throw InputError("the workload has " + std::to_string(ranks) + " ranks but the network has only " +
                     std::to_string(topology_.npu_count()) + " NPUs");
  }
  if (ranks < topology_.npu_count()) {
    result_.warnings.push_back("the workload has " + std::to_string(ranks) + " ranks and the network " +
                               std::to_string(topology_.npu_count()) + " NPUs: ranks run on NPUs 0.." +
                               std::to_string(ranks - 1));
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
  // Communicators: the world plus every named group a rank refers to.
  std::vector<std::uint32_t> world(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) world[r] = r;
  group_members_.push_back(std::make_shared<const std::vector<std::uint32_t>>(std::move(world)));
  group_ids_[""] = 0;
  for (const auto& [name, members] : options_.comm_groups) {
    for (std::uint32_t m : members) {
      if (m >= ranks) {
        throw InputError("communicator '" + name + "' lists rank " + std::to_string(m) + " but the workload has " +
                         std::to_string(ranks) + " ranks");
      }
    }
    if (name.empty()) continue;
    group_ids_[name] = static_cast<std::uint32_t>(group_members_.size());
    group_members_.push_back(std::make_shared<const std::vector<std::uint32_t>>(members));
  }
  runs_.resize(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const RankGraph& g = graphs_[r];
    for (const std::string& name : g.group_names()) {
      if (!group_ids_.count(name)) {
        throw InputError(g.path() + ": rank " + std::to_string(r) + " uses communicator pg_name '" + name +
                         "', which no --comm-group file defines");
      }
    }
    RankRun& run = runs_[r];
    run.pending.resize(g.size());
    if (options_.timeline) run.started.assign(g.size(), 0);
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      const TaskNode& n = g.node(i);
      run.pending[i] = n.num_parents;
      if (n.kind == NodeKind::kCommSend && (n.comm_dst < 0 || static_cast<std::uint32_t>(n.comm_dst) >= ranks)) {
        throw InputError(g.path() + ": rank " + std::to_string(r) + ", node " + std::to_string(n.id) + " '" +
                         g.name(i) + "': comm_dst " + std::to_string(n.comm_dst) + " is not a rank (0.." + std::to_string(ranks - 1) + ")");
      }
      if (n.kind == NodeKind::kCommRecv && (n.comm_src < 0 || static_cast<std::uint32_t>(n.comm_src) >= ranks)) {
        throw InputError(g.path() + ": rank " + std::to_string(r) + ", node " + std::to_string(n.id) + " '" +
                         g.name(i) + "': comm_src " + std::to_string(n.comm_src) + " is not a rank (0.." + std::to_string(ranks - 1) + ")");
      }
    }
    run.coll_seq.assign(group_members_.size(), 0);
    if (g.dangling_ctrl_deps() > 0) {
      result_.warnings.push_back(g.path() + ": " + std::to_string(g.dangling_ctrl_deps()) +
                                 " control dependencies point at absent nodes; ignored");
    }
    if (g.self_ctrl_deps() > 0) {
      result_.warnings.push_back(g.path() + ": " + std::to_string(g.self_ctrl_deps()) +
                                 " control dependencies of a node on itself; ignored");
    }
  }
}

Simulation::~Simulation() = default;

Simulation::Resource Simulation::resource_of(const TaskNode& n) const {
  switch (n.kind) {
    case NodeKind::kComp: return n.is_cpu_op ? kCpu : kGpu;
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore: return kMem;
    case NodeKind::kCommColl: return n.is_cpu_op ? kCpu : kComm;
    case NodeKind::kCommSend:
    case NodeKind::kCommRecv: return kComm;
    default: return kNone;
  }
}

Time Simulation::compute_time(const TaskNode& n) const {
  if (n.kind == NodeKind::kComp && config_.roofline() && n.has_roofline && !n.is_cpu_op) {
    // Roofline: limited by peak FLOP/s or by streaming tensor_size bytes.
    const double flops_time = static_cast<double>(n.num_ops) / config_.peak_flops;
    const double bytes_time = static_cast<double>(n.tensor_size) / static_cast<double>(config_.compute_memory_bandwidth);
    const double ps = std::ceil(std::max(flops_time, bytes_time) * 1e12);
    // 2^63 as a double: anything at or above it does not fit a Time.
    if (!(ps < 9223372036854775808.0)) {
      throw TimeLimitError("its roofline time (" + std::to_string(n.num_ops) + " ops, " +
                           std::to_string(n.tensor_size) + " B) is longer than the largest representable time, " +
                           describe_time_limit());
    }
    return static_cast<Time>(ps);
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
    if (r.active_compute > 0) r.stats.compute += dt;
    else if (r.active_comm > 0) r.stats.exposed_comm += dt;
    else if (r.active_mem > 0) r.stats.memory += dt;
    else r.stats.idle += dt;
    if (r.active_comm > 0) r.stats.comm += dt;
  }
  r.last = now;
}

SimulationResult Simulation::run() {
  for (std::uint32_t r = 0; r < runs_.size(); ++r) {
    for (std::uint32_t i : graphs_[r].roots()) runs_[r].ready.emplace(graphs_[r].node(i).id, i);
  }
  try {
    for (std::uint32_t r = 0; r < runs_.size(); ++r) drain(r);
    queue_.run();
  } catch (const TimeLimitError& e) {  // raised inside the network, between node issues
    e.rethrow_with("at simulated time " + format_time(queue_.now()), true);
  }
  for (std::uint32_t r = 0; r < runs_.size(); ++r) {
    if (runs_[r].done != graphs_[r].size()) report_stuck();
  }
  check_unreceived();
  result_.ranks.reserve(runs_.size());
  for (RankRun& r : runs_) {
    result_.makespan = std::max(result_.makespan, r.stats.finish);
    result_.ranks.push_back(r.stats);
  }
  result_.events = queue_.processed();
  result_.messages = network_->messages_sent();
  const std::vector<LinkUsage> usage = network_->link_usage();
  result_.links.reserve(usage.size());
  for (LinkId i = 0; i < usage.size(); ++i) {
    const Link& l = topology_.links()[i];
    result_.links.push_back(LinkRecord{l.from, l.to, l.bandwidth, usage[i]});
  }
  result_.link_time_known = network_->measures_link_time();
  result_.npu_count = topology_.npu_count();
  result_.network_counters = network_->counters();
  std::stable_sort(result_.collectives.begin(), result_.collectives.end(),
                   [](const CollectiveRecord& a, const CollectiveRecord& b) {
                     return a.rank != b.rank ? a.rank < b.rank : a.start != b.start ? a.start < b.start : a.node_id < b.node_id;
                   });
  return std::move(result_);
}

void Simulation::drain(std::uint32_t rank) {
  RankRun& r = runs_[rank];
  if (r.draining) return;  // an outer call on this rank picks up the new work
  r.draining = true;
  const RankGraph& g = graphs_[rank];
  for (;;) {
    bool progressed = false;
    for (int res = 0; res < kNumLimited; ++res) {
      if (!r.busy[res] && !r.waiting[res].empty()) {
        const std::uint32_t i = r.waiting[res].top().second;
        r.waiting[res].pop();
        issue(rank, i);
        progressed = true;
      }
    }
    while (!r.ready.empty()) {
      const auto [id, i] = r.ready.top();
      r.ready.pop();
      const Resource res = resource_of(g.node(i));
      if (res < kNumLimited && r.busy[res]) {
        r.waiting[res].emplace(id, i);
      } else {
        issue(rank, i);
      }
      progressed = true;
    }
    if (!progressed) break;
  }
  r.draining = false;
}

void Simulation::issue(std::uint32_t rank, std::uint32_t index) {
  try {
    start(rank, index);
  } catch (const TimeLimitError& e) {  // the node whose time passed the limit, named once
    e.rethrow_with(graphs_[rank].path() + ": " + describe_node(rank, index) + " '" + graphs_[rank].name(index) + "'", true);
  }
}

void Simulation::start(std::uint32_t rank, std::uint32_t index) {
  RankRun& r = runs_[rank];
  const TaskNode& n = graphs_[rank].node(index);
  const Resource res = resource_of(n);
  account(r);
  if (options_.timeline) r.started[index] = queue_.now();
  if (res < kNumLimited) r.busy[res] = true;
  switch (n.kind) {
    case NodeKind::kComp:
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore:
      if (n.kind == NodeKind::kComp) ++r.active_compute; else ++r.active_mem;
      queue_.schedule_in(compute_time(n), this, kNodeDone, pack(rank, index));
      return;
    case NodeKind::kCommColl:
      ++r.active_comm;
      if (n.is_cpu_op) {  // a host-side collective call: replay its duration
        queue_.schedule_in(compute_time(n), this, kNodeDone, pack(rank, index));
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
  const TaskNode& n = g.node(index);
  account(r);
  switch (n.kind) {
    case NodeKind::kComp: --r.active_compute; break;
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore: --r.active_mem; break;
    case NodeKind::kCommColl:
      if (const auto it = r.coll_record.find(index); it != r.coll_record.end()) {
        CollectiveRecord& rec = result_.collectives[it->second];
        rec.duration = queue_.now() - rec.start;
        r.coll_record.erase(it);
      }
      --r.active_comm;
      break;
    case NodeKind::kCommSend:
    case NodeKind::kCommRecv: --r.active_comm; break;
    default: break;
  }
  const Resource res = resource_of(n);
  if (res < kNumLimited) r.busy[res] = false;
  if (options_.timeline) {
    result_.timeline.push_back(TimelineSlice{rank, static_cast<std::uint8_t>(res), r.started[index], queue_.now(), n.id,
                                             std::string(g.name(index)), n.kind});
  }
  ++r.done;
  ++r.stats.nodes;
  r.stats.finish = queue_.now();
  for (std::uint32_t c : g.children(index)) {
    if (--r.pending[c] == 0) r.ready.emplace(g.node(c).id, c);
  }
  drain(rank);
}

void Simulation::on_event(const Event& event) {
  if (event.kind == kP2PDelivered) {
    p2p_delivered(static_cast<std::uint32_t>(event.payload));
    return;
  }
  complete(static_cast<std::uint32_t>(event.payload >> 32), static_cast<std::uint32_t>(event.payload));
}

// --- collectives -------------------------------------------------------------

void Simulation::issue_collective(std::uint32_t rank, std::uint32_t index) {
  RankRun& r = runs_[rank];
  const RankGraph& g = graphs_[rank];
  const TaskNode& n = g.node(index);
  const std::uint32_t gid = group_ids_.at(g.group_names()[n.group]);
  const auto& members = group_members_[gid];
  const auto it = std::find(members->begin(), members->end(), rank);
  if (it == members->end()) {
    throw InputError(g.path() + ": rank " + std::to_string(rank) + ", node " + std::to_string(n.id) +
                     ": rank is not a member of communicator '" + g.group_names()[n.group] + "'");
  }
  const auto pos = static_cast<std::uint32_t>(it - members->begin());
  const std::uint64_t seq = r.coll_seq[gid]++;
  // Ranks meet in the k-th collective of a communicator; they must agree on what it is.
  const auto [sig, first] = signatures_.try_emplace({gid, seq}, InstanceSignature{n.coll, n.comm_size, rank, n.id, 0});
  if (!first && (sig->second.type != n.coll || sig->second.bytes != n.comm_size)) {
    const std::string name = g.group_names()[n.group].empty() ? "the world" : "'" + g.group_names()[n.group] + "'";
    throw InputError("collective #" + std::to_string(seq) + " of communicator " + name + ": rank " +
                     std::to_string(rank) + " node " + std::to_string(n.id) + " issues " + collective_name(n.coll) +
                     " of " + std::to_string(n.comm_size) + " B but rank " + std::to_string(sig->second.rank) +
                     " node " + std::to_string(sig->second.node_id) + " issued " +
                     collective_name(sig->second.type) + " of " + std::to_string(sig->second.bytes) +
                     " B (ranks must issue a communicator's collectives in the same order)");
  }
  if (++sig->second.joined == members->size()) signatures_.erase(sig);  // everyone agreed: forget it
  if (config_.astrasim_lifo && !r.coll_record.empty() && warned_["lifo"]++ == 0) {
    result_.warnings.push_back("rank " + std::to_string(rank) + " runs collectives concurrently (node " +
                               std::to_string(n.id) + " starts while another is running): ASTRA-sim would queue "
                               "them and run the newest first (scheduling-policy LIFO); times may differ from ASTRA-sim's");
  }
  auto program = algorithms_.program_for(CollectiveRequest{n.coll, n.comm_size, members, config_.collective_chunks});
  CollectiveRecord rec;
  rec.rank = rank;
  rec.node_id = n.id;
  rec.type = n.coll;
  rec.bytes = n.comm_size;
  rec.group_size = static_cast<std::uint32_t>(members->size());
  rec.start = queue_.now();
  if (!program) {
    if (warned_[collective_name(n.coll)]++ == 0) {
      result_.warnings.push_back(std::string("no algorithm simulates ") + collective_name(n.coll) +
                                 ": such nodes replay their trace duration");
    }
    rec.algorithm = "replay";
    r.coll_record[index] = result_.collectives.size();
    result_.collectives.push_back(rec);
    queue_.schedule_in(compute_time(n), this, kNodeDone, pack(rank, index));
    return;
  }
  rec.algorithm = program->name();
  r.coll_record[index] = result_.collectives.size();
  result_.collectives.push_back(rec);
  engine_.join(InstanceKey{gid, seq}, std::move(program), members, pos, pack(rank, index));
}

void Simulation::on_collective_done(std::uint32_t rank, std::uint64_t cookie) {
  complete(rank, static_cast<std::uint32_t>(cookie));
}

// --- point-to-point ----------------------------------------------------------

void Simulation::issue_send(std::uint32_t rank, std::uint32_t index) {
  const TaskNode& n = graphs_[rank].node(index);
  const std::uint32_t m = p2p_.alloc(P2PMessage{rank, index, -1, 0, false});
  P2PRecv recv;
  if (p2p_match_.arrive(P2PKey{rank, static_cast<std::uint32_t>(n.comm_dst), n.comm_tag}, m, recv)) {
    if (graphs_[recv.rank].node(recv.index).comm_size != n.comm_size) {
      throw InputError("size mismatch: " + describe_node(rank, index) + " matched " + describe_node(recv.rank, recv.index));
    }
    p2p_[m].recv_rank = recv.rank;
    p2p_[m].recv_index = recv.index;
  }
  network_->send(rank, static_cast<NodeId>(n.comm_dst), n.comm_size, Delivery{this, kP2PDelivered, m});
}

void Simulation::issue_recv(std::uint32_t rank, std::uint32_t index) {
  const TaskNode& n = graphs_[rank].node(index);
  std::uint32_t m;
  if (!p2p_match_.post(P2PKey{static_cast<std::uint32_t>(n.comm_src), rank, n.comm_tag}, P2PRecv{rank, index}, m)) {
    return;  // no send yet: waits in the matcher
  }
  P2PMessage& msg = p2p_[m];
  if (graphs_[msg.src_rank].node(msg.src_index).comm_size != n.comm_size) {
    throw InputError("size mismatch: " + describe_node(rank, index) + " matched " +
                     describe_node(msg.src_rank, msg.src_index));
  }
  if (msg.delivered) {  // the message waited for this receive: it is done with
    p2p_.free(m);
    complete(rank, index);
    return;
  }
  msg.recv_rank = rank;
  msg.recv_index = index;
}

void Simulation::p2p_delivered(std::uint32_t message) {
  const P2PMessage msg = p2p_[message];
  if (msg.recv_rank >= 0) {
    p2p_.free(message);  // delivered and received
  } else {
    p2p_[message].delivered = true;  // stays queued in the matcher until a receive takes it
  }
  complete(msg.src_rank, msg.src_index);  // eager: a send is done when delivered
  if (msg.recv_rank >= 0) complete(static_cast<std::uint32_t>(msg.recv_rank), msg.recv_index);
}

// --- diagnostics -------------------------------------------------------------

std::string Simulation::describe_node(std::uint32_t rank, std::uint32_t index) const {
  const TaskNode& n = graphs_[rank].node(index);
  std::string s = "rank " + std::to_string(rank) + " node " + std::to_string(n.id) + " (" + node_kind_name(n.kind);
  if (n.kind == NodeKind::kCommSend) s += " to rank " + std::to_string(n.comm_dst);
  if (n.kind == NodeKind::kCommRecv) s += " from rank " + std::to_string(n.comm_src);
  if (n.kind == NodeKind::kCommSend || n.kind == NodeKind::kCommRecv) {
    s += ", tag " + std::to_string(n.comm_tag) + ", " + std::to_string(n.comm_size) + " B";
  }
  if (n.kind == NodeKind::kCommColl) s += std::string(" ") + collective_name(n.coll) + ", " + std::to_string(n.comm_size) + " B";
  return s + ")";
}

void Simulation::report_stuck() {
  std::string msg = "simulation cannot complete: the event queue drained at " + format_time(queue_.now()) +
                    " with unfinished nodes\n";
  // Posted receives nobody sent to, by rank, then (src, tag), then posting order;
  // collectives are described by the engine below.
  struct Posted {
    std::uint32_t rank, src;
    std::int64_t tag;
    std::size_t order;
    std::uint32_t index;
  };
  std::vector<Posted> posted;
  p2p_match_.for_each_receive([&](const P2PKey& k, const P2PRecv& r) {
    posted.push_back(Posted{r.rank, k.src, k.tag, posted.size(), r.index});
  });
  std::sort(posted.begin(), posted.end(), [](const Posted& a, const Posted& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.src != b.src ? a.src < b.src : a.tag != b.tag ? a.tag < b.tag : a.order < b.order;
  });
  auto next_posted = posted.begin();
  std::size_t lines = 0;
  for (std::uint32_t rank = 0; rank < runs_.size() && lines < 40; ++rank) {
    const RankRun& r = runs_[rank];
    const RankGraph& g = graphs_[rank];
    if (r.done == g.size()) continue;
    std::vector<std::string> waiting;
    std::size_t blocked = 0;
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      if (r.pending[i] > 0) ++blocked;
    }
    while (next_posted != posted.end() && next_posted->rank < rank) ++next_posted;
    for (; next_posted != posted.end() && next_posted->rank == rank; ++next_posted) {
      waiting.push_back(describe_node(rank, next_posted->index) + " waits for a message no send matched");
    }
    msg += "  rank " + std::to_string(rank) + ": " + std::to_string(g.size() - r.done) + " of " +
           std::to_string(g.size()) + " nodes unfinished (" + std::to_string(blocked) + " waiting on dependencies)\n";
    ++lines;
    for (const std::string& w : waiting) {
      msg += "    " + w + "\n";
      if (++lines >= 40) break;
    }
  }
  for (const std::string& line : engine_.describe_pending(16)) msg += "  " + line + "\n";
  msg.pop_back();
  throw IncompleteError(msg);
}

void Simulation::check_unreceived() {
  // Sends no receive took, in (src, dst, tag) order, then sending order.
  struct Unreceived {
    P2PKey key;
    std::size_t order;
    std::uint32_t message;
  };
  std::vector<Unreceived> left;
  p2p_match_.for_each_message([&](const P2PKey& k, std::uint32_t m) { left.push_back(Unreceived{k, left.size(), m}); });
  if (left.empty()) return;
  std::sort(left.begin(), left.end(), [](const Unreceived& a, const Unreceived& b) {
    if (a.key.src != b.key.src) return a.key.src < b.key.src;
    if (a.key.dst != b.key.dst) return a.key.dst < b.key.dst;
    return a.key.tag != b.key.tag ? a.key.tag < b.key.tag : a.order < b.order;
  });
  std::string msg;
  for (std::size_t i = 0; i < left.size() && i < 16; ++i) {
    const P2PMessage& m = p2p_[left[i].message];
    msg += "\n  " + describe_node(m.src_rank, m.src_index) + " was never received by rank " + std::to_string(left[i].key.dst);
  }
  throw IncompleteError("simulation cannot complete: " + std::to_string(left.size()) +
                        " message(s) sent but never received:" + msg);
}

}  // namespace sim
