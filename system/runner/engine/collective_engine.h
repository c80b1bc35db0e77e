// The one executor of collective programs.
//
// Each COMM_COLL node becomes (or joins) an instance of a program over its
// group. The engine issues every op when the program says it is ready: sends
// go through the Network, receives are matched first-in-first-out per
// (instance, src, dst, tag) -- never across instances -- by a MessageMatcher,
// and compute ops (reduce/copy) are charged with the system's reduction model
// or their own duration. When a rank's ops are all done, its COMM_COLL node completes.
//
// Sends are eager: a send op is done when its message is delivered; a receive
// is done when its message has arrived and it has been posted. With
// collective.endpoint_delay a send reaches the network that long after it is
// issued (ASTRA-sim's endpoint-delay, paid at the sender before injection).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/event_queue.h"
#include "core/index_pool.h"
#include "network/capabilities.h"
#include "network/network.h"
#include "system/program/collective_program.h"
#include "system/program/message_matcher.h"
#include "system/runner/aggregation/stand_in.h"
#include "system/config/system_config.h"

namespace sim {

class CollectiveListener {
 public:
  // Rank `rank` finished its part of a collective it joined with `cookie`.
  virtual void on_collective_done(std::uint32_t rank, std::uint64_t cookie) = 0;
  // Whether the rank that joined with `cookie` runs nothing but that
  // collective (no other node running, ready or waiting), so that it can
  // issue nothing else before the collective ends. Exact step aggregation
  // (system/runner/aggregation/) needs it of every rank; the default says no.
  virtual bool runs_only_collective(std::uint64_t /*cookie*/) const { return false; }
  // Whether every rank on an NPU outside `npus` has run all its nodes (or no
  // rank is there), so that nothing but `npus` can send from now on. Exact
  // step aggregation on the flow backend needs it; the default says no.
  virtual bool finished_outside(const std::vector<std::uint32_t>& /*npus*/) const { return false; }

 protected:
  ~CollectiveListener() = default;
};

// Identifies one collective across ranks: the communicator and the sequence
// number of the collective on that communicator (ranks issue collectives of a
// communicator in the same order, as NCCL requires).
struct InstanceKey {
  std::uint32_t group;
  std::uint64_t seq;
  bool operator==(const InstanceKey&) const = default;
};

class CollectiveEngine final : public EventHandler {
 public:
  CollectiveEngine(EventQueue& queue, Network& network, const SystemConfig& config, CollectiveListener& listener);
  ~CollectiveEngine();

  // Rank at group position `pos` (NPU members[pos]) joins instance `key`.
  // Every rank of the instance must pass the same program and members.
  // Throws InputError if they disagree (naming both ranks).
  //
  // `mirrored` = P > 0 (folded replicas, system/groups/replica_folding.h):
  // the other members are copies of the P members at positions 0..P-1 (P = 1:
  // of this rank alone), member k doing what member k mod P does at the same
  // time. Only those P run. With P = 1 each message this rank is to receive
  // arrives when its own matching send (CollectiveProgram::matched_send, the
  // same op on the copy that sends it) is delivered; with P > 1 a message sent
  // to member z arrives at member z mod P as the message from the sender
  // shifted by as many positions (matched by tag). The program must be
  // rank-symmetric (for P > 1: the same every P members, tags included) and
  // every member's routes the same as its original's (checked;
  // FoldingRefused otherwise).
  void join(const InstanceKey& key, std::shared_ptr<const CollectiveProgram> program,
            std::shared_ptr<const std::vector<std::uint32_t>> members, std::uint32_t pos, std::uint64_t cookie,
            std::uint32_t mirrored = 0);

  // Checks now, as join() would when the collective is first reached, that
  // `program` may run mirrored on `members` (FoldingRefused otherwise), so a
  // run that cannot fold is refused before it simulates anything.
  void check_mirror(std::shared_ptr<const CollectiveProgram> program,
                    std::shared_ptr<const std::vector<std::uint32_t>> members, std::uint32_t period, std::uint32_t pos);

  // Folded replicas: which NPUs are simulated ranks' (a mirrored route may
  // queue on such an NPU's link, whose traffic is all simulated).
  void set_simulated_npus(std::vector<bool> simulated) { simulated_npu_ = std::move(simulated); }

  // Folded replicas with stand-ins (system/runner/aggregation/stand_in.h): a
  // collective over one rank's copies, or over P simulated members and their
  // copies (context parallelism's data x context group), whose program does
  // not mirror exactly (not rank-symmetric, not the same every P members,
  // routes that differ, switch operations) is timed alone on a private
  // network instead of being refused: once its P simulated members have
  // joined, each ends when the slowest of its copies would. An
  // approximation; off by default.
  void set_stand_ins(bool on) { stand_ins_ = on; }
  // The service level every message carries (Connection::service_level), or
  // per sending NPU when `per_npu` is not empty (several jobs).
  void set_service_levels(std::uint8_t level, std::vector<std::uint8_t> per_npu) {
    service_level_ = level;
    service_level_of_npu_ = std::move(per_npu);
  }
  // Channel `channel` of a message NPU `from` sends, with its job's service
  // level (point-to-point messages use it too, on channel 0).
  // A collective's messages travel on its group's connections (communicator
  // group + 1, Connection::communicator); point-to-point ones on the pair's (0).
  static std::uint32_t communicator_of(const InstanceKey& key) { return key.group + 1; }
  Connection connection(std::uint32_t channel, NodeId from, std::uint32_t communicator = 0) const {
    return Connection{channel, service_level_of_npu_.empty() ? service_level_ : service_level_of_npu_[from],
                      communicator};
  }
  struct StandInStats {
    std::uint64_t collectives = 0;  // instances ended by a stand-in
    std::uint64_t timings = 0;      // private runs (the rest were cached)
    std::uint64_t events = 0;       // events of those runs
    Time spread = 0;                // largest slowest-minus-fastest member end of a timing
    std::uint64_t port_loads = 0;   // stand-ins carried as loads on their ranks' ports (PortLoads)
  };
  const StandInStats& stand_in_stats() const { return stand_in_stats_; }
  // The proxy thread of `npu` (CollectiveOp::proxy_ns): it takes a message
  // at `at` or when free, whichever is later, and is through with it
  // `cost` later, which it returns. Collectives' network messages and NCCL's
  // point-to-point sends and receives (algorithms.send_recv) share it.
  Time proxy_through(NodeId npu, Time at, Time cost);

  // Compute ops finishing and messages delivered (the engine is each of its sends' Delivery target).
  void on_event(const Event& event) override;

  std::size_t active_instances() const { return live_instances_; }
  // Collectives advanced as one (exact step aggregation), and the events of
  // the representative runs that took (one run per program and group, cached).
  std::uint64_t aggregated_collectives() const { return aggregated_; }
  std::uint64_t aggregated_events() const { return aggregated_events_; }
  // Messages the running ranks of mirrored instances sent (their copies' not
  // counted), whether sent one by one or aggregated.
  std::uint64_t mirrored_messages() const { return mirrored_messages_; }
  // Mirrored routes accepted with a bottleneck past their port (a queue several
  // simulated senders share; see ReplicaFolding::queues_approximate).
  std::uint64_t queued_past_port_routes() const { return queued_past_port_; }

 private:
  struct RankState {
    RankCursor cursor;
    std::vector<Time> pacer;  // per channel: when its pacer is free (ops with a rate)
    std::uint64_t ops_done = 0;
    std::uint64_t op_count = 0;
    std::uint64_t cookie = 0;
    bool joined = false;
    bool done = false;
  };
  struct Instance {
    InstanceKey key{};
    std::shared_ptr<const CollectiveProgram> program;
    std::shared_ptr<const std::vector<std::uint32_t>> members;
    std::vector<RankState> ranks;
    std::uint32_t ranks_done = 0;
    std::uint64_t unreceived = 0;  // messages arrived that no receive has taken yet
    bool live = false;
    // Exact step aggregation (system/runner/aggregation/). An instance whose
    // ranks have all joined at one instant and done nothing yet but issue
    // their first ops ("tentative") may still be advanced as one: its sends
    // and posted receives are logged so they can be taken back.
    bool tentative = false;
    bool fused = false;  // advanced as one: done at one event
    bool mirrored = false;  // only ranks[mirrored_pos] runs (folded replicas), or ranks[0..period)
    std::uint32_t mirrored_pos = 0;
    std::uint32_t period = 1;
    bool stand_in = false;  // mirrored, timed alone (set_stand_ins)
    // Ranks that run it: every member, or the mirrored ones.
    std::size_t running() const { return mirrored ? period : ranks.size(); }
    Time joined_at = 0;
    std::uint32_t joined = 0;
    std::vector<std::uint32_t> tentative_sends;  // in_flight_ indices
    std::vector<std::uint64_t> tentative_recvs;  // (src << 32 | dst) of posted receives, with their tags below
    std::vector<std::uint64_t> tentative_tags;
    std::vector<std::uint32_t> tentative_computes;  // pending_ indices (NCCL's base latency)
    std::unordered_map<NodeId, std::vector<std::uint32_t>> under;  // switch -> positions under it (switch ops)
  };
  // What a message in flight is (switch ops: docs/nccl.md, system/program/collective_program.h).
  enum class Carry : std::uint8_t {
    kSend,         // a plain send
    kUpReduce,     // a switch-reduce upload (or, without switch ops, the contribution sent to the owner)
    kUpMulticast,  // a multicast upload to the switch
    kDown,         // a reduced message or a multicast copy coming down from the switch
    kCopy,         // without switch ops: one copy of a multicast, from the sender
    kCopies,       // without switch ops: a multicast's copies still in flight (`count`)
  };
  struct InFlight {  // a message sent and not yet delivered
    std::uint32_t instance;
    std::uint32_t src;  // group positions
    std::uint32_t dst;
    std::uint64_t tag;
    std::uint64_t bytes;
    OpRef send_ref;
    bool injected = false;   // handed to the network
    bool cancelled = false;  // taken back by aggregation: its events do nothing
    Carry carry = Carry::kSend;
    NodeId node = 0;         // switch ops: the switch
    Time not_before = 0;     // its channel's pacer is through with it then
    std::uint32_t proxy_ns = 0;  // the receiving rank's proxy has yet to complete it (CollectiveOp::proxy_ns)
    std::uint32_t count = 0;  // kCopies: copies in flight; kCopy: its kCopies record
    std::uint32_t channel = 0;  // CollectiveOp::channel: the pair's connection it travels on
  };
  struct SwitchKey {
    std::uint32_t instance;
    NodeId node;
    std::uint64_t tag;
    bool operator==(const SwitchKey&) const = default;
  };
  struct SwitchKeyHash {
    std::size_t operator()(const SwitchKey& k) const noexcept {
      return std::hash<std::uint64_t>()(k.tag * 0x9e3779b97f4a7c15ull ^ (std::uint64_t{k.instance} << 32 | k.node));
    }
  };
  struct PostedRecv {
    OpRef ref;
    std::uint64_t bytes;
  };
  struct MatchKey {
    std::uint32_t instance, src, dst;
    std::uint64_t tag;
    bool operator==(const MatchKey&) const = default;
  };
  struct MatchKeyHash {
    std::size_t operator()(const MatchKey& k) const noexcept;
  };
  struct Pending {  // a compute op in flight
    std::uint32_t instance, pos;
    OpRef ref;
    bool cancelled = false;  // taken back: its collective was aggregated
  };
  // Two plain words, written and read one word at a time: a work item is
  // usually popped right after it was pushed, and a wider read of narrower
  // writes would stall on store forwarding.
  struct Work {
    std::uint64_t packed;  // instance << 33 | pos << 1 | finished
    OpRef ref;
  };
  static Work make_work(std::uint32_t inst, std::uint32_t pos, OpRef ref, bool finished) {
    return Work{static_cast<std::uint64_t>(inst) << 33 | static_cast<std::uint64_t>(pos) << 1 | (finished ? 1u : 0u),
                ref};
  }
  struct InstanceKeyHash {
    std::size_t operator()(const InstanceKey& k) const noexcept {
      return std::hash<std::uint64_t>()(k.seq * 0x9e3779b97f4a7c15ull ^ k.group);
    }
  };
  void delivered(std::uint32_t message);
  // Mirrored instances: the program's routes seen from every member are the
  // ones its origin sees (checked once per program and member list).
  void check_mirrored(const Instance& in);
  void check_period(const Instance& in, const std::function<void(const std::string&, FoldingRefused::Reason)>& fail);
  // Members 0..P-1's ops in walking order; the first member that does not
  // repeat them P, 2P, ... members on (n: none); whether some longer period
  // would (refusals say kNoPeriod when none does: no period of replicas folds it).
  static std::vector<std::vector<std::pair<OpRef, CollectiveOp>>> walk_ops(const CollectiveProgram& program,
                                                                           std::uint32_t members);
  static std::uint32_t first_not_repeating(const CollectiveProgram& program,
                                           const std::vector<std::vector<std::pair<OpRef, CollectiveOp>>>& walk,
                                           std::uint32_t n);
  static bool repeats_at_a_longer_period(const CollectiveProgram& program, std::uint32_t period);
  static constexpr std::uint32_t kMirrorPeer = 0xfffffffeu;  // a mirrored message's source in match keys
  // Stand-ins on: whether a mirrored instance mirrors exactly
  // (check_mirrored passes and it has no switch operations), cached per
  // program and members.
  bool mirrors_exactly(const Instance& in);
  // A mirrored instance's stand-in, timed alone: every member's end, and the
  // load the collective puts on its busiest link (stand_in.h).
  struct StandInEnds {
    std::vector<Time> ends;  // per member, from the common start
    double load = 0;
  };
  StandInEnds stand_in_timing(const Instance& in);
  // Its P simulated members are in: each ends, sharing its NPU's links with
  // the NPU's other stand-ins, when the slowest of its copies would.
  void start_stand_in(std::uint32_t inst);
  // The next end among `npu`'s stand-ins, and the ends that are due.
  void schedule_stand_ins(std::uint32_t npu);
  void stand_ins_due(std::uint64_t payload);
  // The stand-in `inst` ends on its simulated member on `npu`.
  void end_stand_in(std::uint32_t inst, std::uint32_t npu);
  // Puts message `m` on the network (a send, a switch upload, or their split into sends).
  void inject(std::uint32_t m);
  // When a send or upload with a rate may be delivered at the earliest; moves the channel's pacer.
  Time pace(std::uint32_t inst, std::uint32_t pos, const CollectiveOp& op);
  void issue_switch_op(std::uint32_t inst, std::uint32_t pos, OpRef ref, const CollectiveOp& op);
  void uploaded(std::uint32_t m);       // a switch upload (or its split-up send) arrived
  void came_down(std::uint32_t m);      // a message from the switch (or a multicast copy) arrived
  // Switch `sw` sends `bytes` down to member `p`.
  void send_down(std::uint32_t inst, std::uint32_t p, NodeId sw, std::uint64_t tag, std::uint64_t bytes);
  void arrive_from_switch(std::uint32_t inst, std::uint32_t dst, std::uint64_t tag, std::uint64_t bytes);
  const std::vector<std::uint32_t>& under(std::uint32_t inst, NodeId sw);
  LinkId link_between(NodeId from, NodeId to);  // throws InputError when there is none
  void index_links();
  bool switch_ops(NodeId sw) const;
  void run_work();
  void issue(std::uint32_t inst, std::uint32_t pos, OpRef ref);
  void issue_op(std::uint32_t inst, std::uint32_t pos, OpRef ref);
  void finished(std::uint32_t inst, std::uint32_t pos, OpRef ref);
  void check_sizes(const Instance& in, std::uint32_t src, std::uint32_t dst, std::uint64_t tag,
                   std::uint64_t sent, std::uint64_t expected) const {
    if (sent != expected) [[unlikely]] size_mismatch(in, src, dst, tag, sent, expected);
  }
  [[noreturn]] void size_mismatch(const Instance& in, std::uint32_t src, std::uint32_t dst, std::uint64_t tag,
                                  std::uint64_t sent, std::uint64_t expected) const;
  void notify_done();
  // --- exact step aggregation ---
  struct Plan;
  void drop_tentative(Instance& in);
  void resolve(std::uint32_t inst);
  const Plan* plan_for(const Instance& in);
  void resolve_on_flow(std::uint32_t inst, const Plan& plan, Time end);
  void fused_done(std::uint32_t inst);
  void release(std::uint32_t inst);
  [[noreturn]] void report_unreceived(std::uint32_t inst) const;

  EventQueue& queue_;
  Network& network_;
  const SystemConfig& config_;
  CollectiveListener& listener_;

  std::vector<Instance> instances_;
  std::vector<std::uint32_t> free_instances_;
  std::unordered_map<InstanceKey, std::uint32_t, InstanceKeyHash> by_key_;
  std::size_t live_instances_ = 0;

  IndexPool<InFlight> in_flight_;  // a send's Delivery payload is its index here
  std::vector<Time> proxy_free_;   // per NPU: when its proxy thread is free
  IndexPool<Pending> pending_;
  // Arrived messages (their sizes) and posted receives, FIFO per key.
  MessageMatcher<MatchKey, std::uint64_t, PostedRecv, MatchKeyHash> match_;

  struct Uploads {
    std::uint32_t count = 0;  // arrived so far
    std::uint64_t bytes = 0;  // their sum (a gather sends it down)
  };
  std::unordered_map<SwitchKey, Uploads, SwitchKeyHash> uploads_;  // switch reduce and gather uploads
  std::unordered_map<std::uint64_t, LinkId> link_index_;                 // from << 32 | to, for switch links

  std::vector<Work> work_;
  std::vector<OpRef> ready_scratch_;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> done_;  // (rank, cookie) to report
  bool running_ = false;

  // Exact step aggregation: on when the config allows it and the backend
  // prices routes in closed form (only the sender's egress port is shared);
  // plans cached per (program, members).
  ClosedFormRoutes* closed_form_ = nullptr;
  // ... or offers solo flows, when every message of a collective is alone on its links
  // (system/runner/aggregation/flow_carrier.h).
  SoloFlows* solo_flows_ = nullptr;
  std::map<std::tuple<const void*, const void*, std::uint32_t>, std::unique_ptr<Plan>> plans_;
  std::vector<bool> simulated_npu_;
  std::set<std::pair<const void*, const void*>> mirror_checked_;  // (program, members) checked for mirroring
  std::vector<std::uint32_t> port_;  // per link: its position among its source's links
  std::uint64_t aggregated_ = 0, aggregated_events_ = 0, mirrored_messages_ = 0, queued_past_port_ = 0;
  // Stand-ins: verdicts per (algorithm, members), timings per program and per
  // (program fingerprint, placement shape) (stand_in.h).
  bool stand_ins_ = false;
  std::uint8_t service_level_ = 0;
  std::vector<std::uint8_t> service_level_of_npu_;  // empty: service_level_ for all
  std::map<std::pair<const void*, const void*>, bool> mirror_verdict_;
  std::map<const void*, std::pair<std::shared_ptr<const CollectiveProgram>, StandInEnds>> stand_in_by_program_;
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::vector<std::uint32_t>>, StandInEnds> stand_in_by_shape_;
  StandInStats stand_in_stats_;
  std::unordered_map<std::uint32_t, StandInShare> stand_in_shares_;  // per simulated NPU
  // On a backend with port loads (flow): a simulated NPU's stand-ins as loads
  // on its port. Where messages between two NPUs on one communicator go one
  // after another (pair_order fifo), the stand-ins of one group (which send to
  // one peer: a ring's next member) take it one connection's worth at a time: one load
  // for them all, whose share of the port paces them at a common rate; it
  // carries the work of the one with the least left, then the next, and a
  // stand-in joining takes it back and starts the next from what it carried.
  // Otherwise (shared) each stand-in is a load of its own.
  struct PortStandIns {
    StandInShare share;
    NodeId npu = 0, peer = 0;  // the port, towards the group's next member
    std::uint32_t load = 0;    // the network's id of the load on the port
    double target = 0;         // the alone-time it carries
    std::uint32_t seq = 0;     // its number: a delivery of an earlier one is stale
    bool live = false;
    std::uint32_t next_free = 0xffffffffu;
  };
  static constexpr std::uint32_t kNoPortStandIn = 0xffffffffu;
  std::vector<PortStandIns> port_stand_ins_;
  std::uint32_t free_port_stand_in_ = kNoPortStandIn;
  std::uint32_t new_port_stand_in();
  std::unordered_map<std::uint64_t, std::uint32_t> port_stand_in_of_;  // npu << 32 | peer -> index
  void launch_port_load(std::uint32_t index);
  void port_stand_ins_due(std::uint64_t payload);
};

}  // namespace sim
