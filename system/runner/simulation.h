// One simulation: every rank's dependency graph run on one network.
//
// Per-rank resource rule (what may overlap with what):
//   * GPU compute: COMP nodes (not CPU ops) run one at a time;
//   * CPU: COMP and COMM_COLL nodes marked is_cpu_op run one at a time (replayed);
//   * memory: MEM_LOAD / MEM_STORE run one at a time;
//   * communication: COMM_SEND, COMM_RECV and COMM_COLL never wait for a
//     resource; any number overlap with each other and with compute;
//   * METADATA and INVALID nodes complete at once.
// Ready nodes are issued in ascending node id; a node whose resource is busy
// waits for it, and waiting nodes are taken in ascending id too.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compute/compute_model.h"
#include "core/event_queue.h"
#include "core/index_pool.h"
#include "network/network.h"
#include "system/registry/algorithm_registry.h"
#include "system/runner/engine/collective_engine.h"
#include "system/groups/group_table.h"
#include "system/runner/rank_pair_matcher.h"
#include "system/runner/rank_stats.h"
#include "system/config/system_config.h"
#include "workload/rank_graph.h"

namespace sim {

struct RankRun;  // a rank's run state (system/runner/simulation_run.h)


struct CollectiveRecord {
  std::uint32_t rank = 0;
  std::uint64_t node_id = 0;
  CollectiveType type = CollectiveType::kAllReduce;
  std::uint64_t bytes = 0;
  std::uint32_t group_size = 0;
  std::uint32_t npu = 0;     // where the rank runs
  std::uint32_t group = 0;   // its group: SimulationResult::groups[group]
  Time start = 0;
  Time duration = 0;
  std::string algorithm;  // "ring", "et:<prefix>", or "replay" (trace duration)
};

// One node's run, for the timeline (--timeline).
struct TimelineSlice {
  std::uint32_t rank = 0;
  std::uint8_t lane = 0;  // 0 GPU compute, 1 CPU, 2 memory, 3 communication, 4 instant
  Time start = 0;
  Time end = 0;
  std::uint64_t node_id = 0;
  std::string_view name;  // valid during the call only
  NodeKind kind = NodeKind::kInvalid;
};

// Receives each node's run as it completes (in completion order, so `end`
// never decreases), so a timeline is written as the run goes instead of
// being held in memory (report/timeline_writer.h).
class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  // Asked first, so a filtered-out node costs no name lookup.
  virtual bool wants(std::uint32_t /*rank*/, Time /*start*/, Time /*end*/) const { return true; }
  virtual void slice(const TimelineSlice& slice) = 0;
  // The run's rank count, told before the first slice: a sink asked for ranks
  // the run does not have throws InputError then, before the run.
  virtual void ranks(std::uint32_t /*count*/) {}
};

// One directed link of the topology and what it carried.
struct LinkRecord {
  NodeId from = 0, to = 0;
  BytesPerSecond bandwidth = 0;
  LinkUsage usage;
};

// One job of a run of several (--workload NAME=PATH ...).
struct JobResult {
  std::string name;
  std::uint32_t first_rank = 0, ranks = 0;  // its ranks in SimulationResult::ranks
  Time makespan = 0;
  std::uint8_t service_level = 0;  // its messages' (--service-level)
};

// A group collectives ran on, as reports name it.
struct GroupRecord {
  std::string label;                // "all ranks", "pg_name '4'", "involved_dim [true, false]"
  std::vector<std::uint32_t> dims;  // topology dimensions its NPUs span
  std::uint32_t hosts = 1;          // hosts (machines) its NPUs sit in (Topology::host)
};

struct SimulationResult {
  Time makespan = 0;
  std::vector<GroupRecord> groups;  // indexed by CollectiveRecord::group
  std::vector<JobResult> jobs;  // empty for a run of one job
  std::vector<RankStats> ranks;
  std::vector<CollectiveRecord> collectives;
  std::uint64_t events = 0;
  std::uint64_t messages = 0;
  // Exact step aggregation: collectives advanced as one for all their ranks,
  // and the events their representative runs took (not in `events`).
  std::uint64_t aggregated_collectives = 0, aggregated_events = 0;
  std::vector<std::string> warnings;
  // Per link of the topology (in link id order); busy time and peak flows
  // only when `link_time_known` (a contention model measured them).
  std::vector<LinkRecord> links;
  bool link_time_known = false;
  // Whether the links also have packets, drops and peak queues (a packet-level backend).
  bool packet_level = false;
  std::uint32_t npu_count = 0;  // node ids below it are NPUs, the rest switches
  // Folded replicas: each simulated rank stands for this many (1: none folded),
  // and the rank number of each entry of `ranks` (empty: its index).
  std::uint32_t folded_replicas = 1;
  std::uint32_t replica_period = 1;  // replicas simulated (each standing for folded_replicas copies)
  // Copies in cycles of this many context-parallel ranks (ReplicaFolding::ring; 1: replicas only).
  std::uint32_t context_ring = 1;
  // Folded with stand-ins (system/runner/aggregation/stand_in.h): collectives
  // over copies timed alone, the private runs that timed them and their
  // events, and the largest spread between a timing's members' ends.
  bool stand_ins = false;
  std::uint64_t stand_in_collectives = 0, stand_in_timings = 0, stand_in_events = 0;
  // Stand-ins whose load shared their simulated rank's port (a backend that
  // shares links: network/capabilities.h, PortLoads); 0: they shared nothing.
  std::uint64_t stand_in_port_loads = 0;
  // Copies whose mirrored routes queue past their ports (ReplicaFolding::queues_approximate):
  // the routes checked that do (0: the fold is exact).
  std::uint64_t queued_past_port_routes = 0;
  Time stand_in_spread = 0;
  std::vector<std::uint32_t> rank_numbers;
  // Identical ranks folded (ReplicaFolding::expand_copies): how many ranks
  // rank 0's run stood for (0: none). Everything above lists every rank.
  std::uint32_t identical_ranks = 0;
  std::vector<std::pair<std::string, std::uint64_t>> network_counters;
};

// Where a running simulation is, for progress lines on long runs.
struct SimulationProgress {
  Time now = 0;
  std::uint64_t events = 0;
  std::uint64_t nodes_done = 0, nodes_total = 0;
};

struct SimulationOptions {
  // One job: process-group name -> ranks (the --comm-group file; see
  // system/groups/process_groups.h for how pg_name finds them).
  std::map<std::string, std::vector<std::uint32_t>> comm_groups;
  std::string comm_group_file;  // where they came from, for messages
  // Several jobs: the graphs are the jobs' ranks in job order; each job has
  // its own ranks (comm_src/comm_dst, process groups, tags). Empty: one job.
  std::vector<JobSpec> jobs;
  // The NPU each graph runs on (distinct); empty: graph r on NPU r.
  std::vector<std::uint32_t> npu_of;
  // One job's service level (several jobs: each JobSpec's): every message its
  // ranks send carries it (Connection::service_level).
  std::uint8_t service_level = 0;
  TimelineSink* timeline = nullptr;  // given every node's start and end, if set
  // Called every 2^20 events when set (the caller decides when to print).
  std::function<void(const SimulationProgress&)> progress;
  // Loads injected collective algorithms (default: from disk, per simulation).
  AlgorithmRegistry::EtLoader load_algorithm;
  // Replicas folded into one (system/groups/replica_folding.h): the graphs are
  // replica 0's ranks, npu_of their rank numbers; one job only.
  ReplicaFolding folding;
};

class Simulation final : public EventHandler, public CollectiveListener {
 public:
  // Throws InputError if the workload does not fit the topology.
  Simulation(std::vector<RankGraph> graphs, const Topology& topology, const SystemConfig& config,
             SimulationOptions options);
  // The same on graphs shared read-only with other simulations (a sweep's
  // points that run one workload on threads load it once).
  Simulation(std::shared_ptr<const std::vector<RankGraph>> graphs, const Topology& topology,
             const SystemConfig& config, SimulationOptions options);
  ~Simulation();

  // Runs to the end. Throws IncompleteError naming what each stuck rank waits
  // for when the event queue drains with work left; InputError for
  // inconsistent input found while running (e.g. send/recv size mismatch).
  SimulationResult run();

  void on_event(const Event& event) override;
  void on_collective_done(std::uint32_t rank, std::uint64_t cookie) override;
  bool runs_only_collective(std::uint64_t cookie) const override;
  bool finished_outside(const std::vector<std::uint32_t>& npus) const override;

 private:
  struct P2PMessage {
    std::uint32_t src_rank, src_index;  // the COMM_SEND node
    std::int64_t recv_rank;             // the matched COMM_RECV node, or -1
    std::uint32_t recv_index;
    bool delivered;                     // arrived at the receiving rank (NCCL's: through its proxy and the hop)
    // NCCL's send and receive (algorithms.send_recv; null: one message on the network).
    const AlgorithmRegistry::PointToPoint* nccl = nullptr;
    std::uint64_t wire = 0;      // the bytes the network carries: the payload and the device's writes
    std::uint64_t messages = 0;  // NCCL's network chunks (0: inside a node)
  };
  enum Resource : std::uint8_t { kGpu = 0, kCpu = 1, kMem = 2, kNumLimited = 3, kComm = 3, kNone = 4 };
  static_assert(kNumLimited == kLimitedResources);

  static Resource resource_of(NodeKind kind, bool is_cpu_op);
  void drain(std::uint32_t rank);
  // drain()'s loop, with r.draining set; `ready_first`: the caller has just
  // issued ready nodes, so the loop goes on with the ready ones before it
  // looks at the waiting ones again (as drain() itself does).
  void drain_loop(std::uint32_t rank, RankRun& r, bool ready_first);
  void issue(std::uint32_t rank, std::uint32_t index);
  void start(std::uint32_t rank, std::uint32_t index);  // issue() without the error context
  void complete(std::uint32_t rank, std::uint32_t index);
  void account(RankRun& r);
  Time compute_time(std::uint32_t rank, const TaskNode& node) const;
  void issue_send(std::uint32_t rank, std::uint32_t index);
  void issue_recv(std::uint32_t rank, std::uint32_t index);
  // The NPU a COMM_SEND node's message goes to.
  std::uint32_t p2p_to(std::uint32_t rank, std::uint32_t index) const;
  void p2p_delivered(std::uint32_t message);   // the network delivered it
  void p2p_landed(std::uint32_t message);      // the receiving rank has it
  void issue_collective(std::uint32_t rank, std::uint32_t index);
  // The number reports and timelines give graph `rank` (folded: its rank in the world).
  std::uint32_t rank_number(std::uint32_t rank) const {
    return options_.folding.active() ? options_.folding.real_rank[rank] : rank;
  }
  // The graph a send's comm_dst or a receive's comm_src names.
  std::uint32_t peer_graph(std::uint32_t rank, std::int32_t named) const {
    return options_.folding.active() ? options_.folding.graph_of[static_cast<std::uint32_t>(named)]
                                     : job_first_[rank] + static_cast<std::uint32_t>(named);
  }
  void check_folding();
  void check_copy_exchanges(std::uint32_t rank);
  // Per rank sending to its own copies: the copy offsets it sends to (until check_folding).
  std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> copy_offsets_;
  void expand_copies();
  std::string describe_node(std::uint32_t rank, std::uint32_t index) const;
  std::string rank_label(std::uint32_t rank) const;  // "rank 3" or "job 'b' rank 3"
  std::string doing_instead(std::uint32_t rank) const;
  std::string describe_stuck_collectives() const;
  [[noreturn]] void report_stuck();
  void check_unreceived();
  void run_events();

  std::shared_ptr<const std::vector<RankGraph>> shared_graphs_;
  const std::vector<RankGraph>& graphs_;  // *shared_graphs_
  const Topology& topology_;
  const SystemConfig& config_;
  SimulationOptions options_;
  EventQueue queue_;
  std::unique_ptr<Network> network_;
  AlgorithmRegistry algorithms_;
  CollectiveEngine engine_;
  std::vector<RankRun> runs_;
  std::vector<std::uint32_t> npu_of_;     // per rank (graph index)
  std::vector<std::uint32_t> job_first_;  // per rank: the first rank of its job
  std::vector<std::uint32_t> job_size_;   // per rank: its job's rank count
  std::unique_ptr<GroupTable> groups_;
  // Point-to-point: a message lives in p2p_ from its send until it is both
  // delivered and received; the matcher pairs sends (their p2p_ index) with
  // posted receives (their node index at the receiving rank) FIFO per
  // (src, dst, tag), in issue order.
  struct P2PKey {  // for diagnostics
    std::uint32_t src, dst;
    std::int64_t tag;
  };
  IndexPool<P2PMessage> p2p_;
  RankPairMatcher p2p_match_;
  // What the first rank to reach each collective instance asked for; every
  // other rank must ask for the same (type, bytes).
  struct InstanceSignature {
    CollectiveType type;
    std::uint64_t bytes;
    std::uint32_t rank;
    std::uint64_t node_id;
    std::uint32_t joined;
  };
  std::map<std::pair<std::uint32_t, std::uint64_t>, InstanceSignature> signatures_;
  SimulationResult result_;
  std::map<std::string, std::size_t> warned_;
  // How COMP nodes are timed (compute/compute_model.h); null: by their durations.
  std::shared_ptr<const ComputeModel> compute_;
  // With measured kernels, a node's time depends on its kernel shape alone:
  // per rank, per shape index (-1: not yet computed), and per distinct shape.
  bool kernel_model_ = false;
  mutable std::vector<std::vector<Time>> kernel_times_;
  mutable std::map<KernelShape, Time> kernel_cache_;
};

}  // namespace sim
