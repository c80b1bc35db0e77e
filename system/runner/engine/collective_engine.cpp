#include "system/runner/engine/collective_engine.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "system/runner/aggregation/flow_carrier.h"
#include "system/runner/aggregation/stand_in.h"
#include "system/runner/aggregation/symmetric_run.h"
#include "system/runner/engine/time_alone.h"

namespace sim {

namespace {
constexpr std::uint32_t kComputeDone = 1;
constexpr std::uint32_t kDelivered = 2;
constexpr std::uint32_t kInject = 3;  // a send's endpoint delay is over
constexpr std::uint32_t kResolve = 4;    // every rank joined at this instant: aggregate?
constexpr std::uint32_t kFusedDone = 5;  // an aggregated collective ends on every rank
constexpr std::uint32_t kUploaded = 6;  // a switch upload arrived at the switch
constexpr std::uint32_t kCameDown = 7;  // a message from a switch arrived at its member
constexpr std::uint32_t kStandInDone = 8;  // a collective timed alone ends on its simulated rank
constexpr std::uint32_t kProxyPost = 9;    // a send is ready for its rank's proxy thread
constexpr std::uint32_t kStandInCarried = 10;  // a stand-in's load on its rank's port is through (PortLoads)
}  // namespace

// What an aggregated collective does, found once per (program, members).
struct CollectiveEngine::Plan {
  bool exact = false;
  SymmetricOutcome outcome;
  std::vector<Time> busy;  // flow backend: per outcome.peers, the time its messages spent sending
};

std::size_t CollectiveEngine::MatchKeyHash::operator()(const MatchKey& k) const noexcept {
  const std::uint64_t h = k.tag ^ (static_cast<std::uint64_t>(k.src) << 40) ^ (static_cast<std::uint64_t>(k.dst) << 20) ^
                    (static_cast<std::uint64_t>(k.instance) << 52) ^ (static_cast<std::uint64_t>(k.instance) >> 12);
  return mix64(h);
}

CollectiveEngine::CollectiveEngine(EventQueue& queue, Network& network, const SystemConfig& config,
                                   CollectiveListener& listener)
    : queue_(queue), network_(network), config_(config), listener_(listener) {
  if (config_.aggregation) {
    closed_form_ = network_.closed_form_routes();
    solo_flows_ = network_.solo_flows();
  }
}

CollectiveEngine::~CollectiveEngine() = default;

void CollectiveEngine::join(const InstanceKey& key, std::shared_ptr<const CollectiveProgram> program,
                            std::shared_ptr<const std::vector<std::uint32_t>> members, std::uint32_t pos,
                            std::uint64_t cookie, std::uint32_t mirrored) {
  std::uint32_t idx;
  auto it = by_key_.find(key);
  if (it == by_key_.end()) {
    if (!free_instances_.empty()) {
      idx = free_instances_.back();
      free_instances_.pop_back();
    } else {
      idx = static_cast<std::uint32_t>(instances_.size());
      instances_.emplace_back();
    }
    Instance& in = instances_[idx];
    in.key = key;
    in.program = program;
    in.members = members;
    in.ranks.assign(program->group_size(), RankState{});
    in.ranks_done = 0;
    in.live = true;
    in.fused = false;
    in.joined = 0;
    in.joined_at = queue_.now();
    in.mirrored = mirrored != 0;
    in.mirrored_pos = pos;
    in.period = std::max<std::uint32_t>(mirrored, 1);
    // (a period of replicas runs per message: its members' routes differ)
    in.tentative = (closed_form_ != nullptr || solo_flows_ != nullptr) && program->rank_symmetric() &&
                   program->op_count(program->symmetric_origin()) > 0 && in.period == 1;
    in.stand_in = false;
    if (in.mirrored && stand_ins_) {
      in.stand_in = !mirrors_exactly(in);
      if (in.stand_in) in.tentative = false;
    } else if (in.mirrored) {
      check_mirrored(in);
    }
    ++live_instances_;
    by_key_.emplace(key, idx);
  } else {
    idx = it->second;
    const Instance& in = instances_[idx];
    if (in.program != program && (in.program->group_size() != program->group_size() ||
                                  in.program->name() != program->name())) {
      throw InputError("collective #" + std::to_string(key.seq) + " of communicator " + std::to_string(key.group) +
                       ": rank " + std::to_string((*members)[pos]) + " runs '" + program->name() + "' on " +
                       std::to_string(program->group_size()) + " ranks but rank " +
                       std::to_string((*in.members)[0]) + "'s group runs '" + in.program->name() + "' on " +
                       std::to_string(in.program->group_size()) + " ranks");
    }
  }
  Instance& in = instances_[idx];
  RankState& rs = in.ranks[pos];
  if (rs.joined) {
    throw InputError("rank " + std::to_string((*members)[pos]) + " joined collective #" + std::to_string(key.seq) +
                     " of communicator " + std::to_string(key.group) + " twice");
  }
  rs.joined = true;
  rs.cookie = cookie;
  ++in.joined;
  // Aggregation needs every rank to start at one instant on idle egress ports.
  if (in.tentative && (in.joined_at != queue_.now() ||
                       (closed_form_ != nullptr && closed_form_->egress_free((*members)[pos]) > queue_.now()))) {
    drop_tentative(in);
  }
  if (in.stand_in) {
    // Timed once every simulated member is in (every copy joins with its
    // original): no member of the full run could end before then.
    if (in.joined == in.running()) start_stand_in(idx);
    return;
  }
  rs.op_count = in.program->op_count(pos);
  ready_scratch_.clear();
  in.program->start(pos, rs.cursor, ready_scratch_);
  // Pushed in reverse so the work stack issues them in the program's order.
  for (auto r = ready_scratch_.rbegin(); r != ready_scratch_.rend(); ++r) work_.push_back(make_work(idx, pos, *r, false));
  if (rs.op_count == 0) {
    rs.done = true;
    ++in.ranks_done;
    done_.emplace_back((*in.members)[pos], cookie);
    if (in.mirrored && in.ranks_done == in.period) release(idx);
  }
  // The last rank is in: decide once this instant's other events (the rest
  // of each rank's issuing) have run.
  if (in.tentative && in.joined == in.running()) queue_.schedule(queue_.now(), this, kResolve, idx);
  run_work();
}

void CollectiveEngine::run_work() {
  if (running_) return;  // the outer call drains the list
  running_ = true;
  while (!work_.empty()) {
    const std::uint64_t packed = work_.back().packed;
    const OpRef ref = work_.back().ref;
    work_.pop_back();
    const auto inst = static_cast<std::uint32_t>(packed >> 33);
    const auto pos = static_cast<std::uint32_t>(packed >> 1);
    if (packed & 1) {
      finished(inst, pos, ref);
    } else {
      issue(inst, pos, ref);
    }
  }
  running_ = false;
  notify_done();
}

void CollectiveEngine::notify_done() {
  // Reported after the engine's own bookkeeping, so the listener may re-enter join().
  while (!done_.empty()) {
    auto batch = std::move(done_);
    done_.clear();
    for (const auto& [rank, cookie] : batch) listener_.on_collective_done(rank, cookie);
  }
}

void CollectiveEngine::issue(std::uint32_t inst, std::uint32_t pos, OpRef ref) {
  try {
    issue_op(inst, pos, ref);
  } catch (const TimeLimitError& e) {  // name the collective and the rank whose step passed the limit
    const Instance& in = instances_[inst];
    e.rethrow_with("collective '" + in.program->name() + "' #" + std::to_string(in.key.seq) + " of communicator " +
                   std::to_string(in.key.group) + ", rank " + std::to_string((*in.members)[pos]), false);
  }
}

void CollectiveEngine::issue_op(std::uint32_t inst, std::uint32_t pos, OpRef ref) {
  Instance& in = instances_[inst];
  const CollectiveOp op = in.program->op(pos, ref);
  if (in.mirrored && (op.kind == OpKind::kSwitchReduce || op.kind == OpKind::kMulticast)) {
    throw FoldingRefused("collective '" + in.program->name() + "' uses switch operations, which "
                     "folded replicas do not mirror (run with --no-aggregation)");
  }
  switch (op.kind) {
    case OpKind::kSend: {
      if (op.rate > 0 || op.proxy_ns > 0) {
        issue_switch_op(inst, pos, ref, op);  // paced or proxied: the same path as uploads
        break;
      }
      InFlight sent{inst, pos, op.peer, op.tag, op.bytes, ref};
      sent.channel = op.channel;
      const std::uint32_t m = in_flight_.alloc(sent);
      if (in.mirrored) ++mirrored_messages_;
      // (flow: a zero-byte message may or may not wait in its pair's queue, which resolve() cannot count)
      if (in.tentative && solo_flows_ != nullptr && op.bytes == 0) drop_tentative(in);
      if (in.tentative) in.tentative_sends.push_back(m);
      if (config_.endpoint_delay > 0) {
        queue_.schedule_in(config_.endpoint_delay, this, kInject, m);
      } else {
        in_flight_[m].injected = true;
        network_.send_on(connection(op.channel, (*in.members)[pos], communicator_of(in.key)), (*in.members)[pos], (*in.members)[op.peer], op.bytes,
                         Delivery{this, kDelivered, m});
      }
      break;
    }
    case OpKind::kSwitchReduce:
    case OpKind::kMulticast:
      issue_switch_op(inst, pos, ref, op);
      break;
    case OpKind::kRecv: {
      std::uint64_t sent = 0;
      // Mirrored: the message is the copy of this rank's own send matched_send(ref);
      // with a period, the peer's message as the member standing for it sends it (same tag).
      const MatchKey key = in.mirrored && in.period == 1 ? MatchKey{inst, kMirrorPeer, pos, in.program->matched_send(ref)}
                                                         : MatchKey{inst, op.peer, pos, op.tag};
      if (match_.post(key, PostedRecv{ref, op.bytes}, sent)) {
        check_sizes(in, op.peer, pos, op.tag, sent, op.bytes);
        --in.unreceived;
        work_.push_back(make_work(inst, pos, ref, true));
      } else if (in.tentative) {
        in.tentative_recvs.push_back(static_cast<std::uint64_t>(key.src) << 32 | pos);
        in.tentative_tags.push_back(key.tag);
      }
      break;
    }
    case OpKind::kCompute: {
      // A paced copy ends when its channel's pacer is through with it.
      const Time t = op.rate > 0          ? pace(inst, pos, op) - queue_.now()
                     : op.duration >= 0 ? op.duration
                                        : config_.reduction_time(op.bytes);
      if (t == 0) {
        work_.push_back(make_work(inst, pos, ref, true));
      } else {
        const std::uint32_t p = pending_.alloc(Pending{inst, pos, ref});
        if (in.tentative) in.tentative_computes.push_back(p);  // e.g. NCCL's base latency, before any message
        queue_.schedule_in(t, this, kComputeDone, p);
      }
      break;
    }
  }
}

void CollectiveEngine::size_mismatch(const Instance& in, std::uint32_t src, std::uint32_t dst, std::uint64_t tag,
                                     std::uint64_t sent, std::uint64_t expected) const {
  throw InputError("collective '" + in.program->name() + "' #" + std::to_string(in.key.seq) + ": rank " +
                   std::to_string((*in.members)[src]) + " sent " + std::to_string(sent) + " B with tag " +
                   std::to_string(tag) + " but rank " + std::to_string((*in.members)[dst]) + " expected " +
                   std::to_string(expected) + " B");
}

void CollectiveEngine::finished(std::uint32_t inst, std::uint32_t pos, OpRef ref) {
  Instance& in = instances_[inst];
  RankState& rs = in.ranks[pos];
  if (in.tentative) drop_tentative(in);  // it made progress op by op: no longer all at one start
  ++rs.ops_done;
  ready_scratch_.clear();
  in.program->finish(pos, ref, rs.cursor, ready_scratch_);
  // Push in reverse so the work stack issues them in the program's order.
  for (auto it = ready_scratch_.rbegin(); it != ready_scratch_.rend(); ++it) {
    work_.push_back(make_work(inst, pos, *it, false));
  }
  if (rs.ops_done == rs.op_count) {
    rs.done = true;
    done_.emplace_back((*in.members)[pos], rs.cookie);
    if (++in.ranks_done == in.running()) {
      if (in.unreceived > 0) report_unreceived(inst);
      release(inst);
    }
  }
}

void CollectiveEngine::release(std::uint32_t inst) {
  Instance& in = instances_[inst];
  by_key_.erase(in.key);
  in.live = false;
  in.program.reset();
  in.members.reset();
  in.ranks.clear();
  in.ranks.shrink_to_fit();
  in.under.clear();
  free_instances_.push_back(inst);
  --live_instances_;
}

void CollectiveEngine::delivered(std::uint32_t m) {
  if (in_flight_[m].not_before > queue_.now()) {  // its channel is still sending it
    queue_.schedule(in_flight_[m].not_before, this, kDelivered, m);
    return;
  }
  // Mirrored: what arrives is the copy of this message sent to this rank.
  // With a period P, the message to member z stands for the one to member
  // z mod P, sent by the member as many positions before the sender.
  const Instance& in = instances_[in_flight_[m].instance];
  std::uint32_t to = in_flight_[m].dst;
  MatchKey key{in_flight_[m].instance, in_flight_[m].src, in_flight_[m].dst, in_flight_[m].tag};
  if (in.mirrored && in.period == 1) {
    to = in_flight_[m].src;
    key = MatchKey{in_flight_[m].instance, kMirrorPeer, in_flight_[m].src, in_flight_[m].send_ref};
  } else if (in.mirrored) {
    const auto n = static_cast<std::uint32_t>(in.members->size());
    const std::uint32_t shift = in_flight_[m].dst - in_flight_[m].dst % in.period;
    to = in_flight_[m].dst - shift;
    key = MatchKey{in_flight_[m].instance, (in_flight_[m].src + n - shift) % n, to, in_flight_[m].tag};
  }
  if (in_flight_[m].proxy_ns > 0 && !in_flight_[m].cancelled) {  // the receiver's proxy completes it first
    const Time done = proxy_through((*in.members)[to], queue_.now(), Time{in_flight_[m].proxy_ns} * kNanosecond);
    in_flight_[m].proxy_ns = 0;
    in_flight_[m].not_before = done;
    queue_.schedule(done, this, kDelivered, m);
    return;
  }
  const InFlight msg = in_flight_[m];
  in_flight_.free(m);
  if (msg.cancelled) return;  // taken back: its collective was aggregated
  work_.push_back(make_work(msg.instance, msg.src, msg.send_ref, true));  // eager send: done on delivery
  PostedRecv recv;
  if (match_.arrive(key, msg.bytes, recv)) {
    check_sizes(instances_[msg.instance], msg.src, to, msg.tag, msg.bytes, recv.bytes);
    work_.push_back(make_work(msg.instance, to, recv.ref, true));
  } else {
    ++instances_[msg.instance].unreceived;
  }
  run_work();
}

void CollectiveEngine::on_event(const Event& event) {
  if (event.kind == kDelivered) {
    delivered(static_cast<std::uint32_t>(event.payload));
    return;
  }
  if (event.kind == kResolve) {
    resolve(static_cast<std::uint32_t>(event.payload));
    return;
  }
  if (event.kind == kFusedDone) {
    fused_done(static_cast<std::uint32_t>(event.payload));
    return;
  }
  if (event.kind == kStandInDone) {
    stand_ins_due(event.payload);
    return;
  }
  if (event.kind == kStandInCarried) {
    port_stand_ins_due(event.payload);
    return;
  }
  if (event.kind == kUploaded) {
    uploaded(static_cast<std::uint32_t>(event.payload));
    return;
  }
  if (event.kind == kCameDown) {
    came_down(static_cast<std::uint32_t>(event.payload));
    return;
  }
  if (event.kind == kProxyPost) {
    const auto m = static_cast<std::uint32_t>(event.payload);
    if (in_flight_[m].cancelled) {
      in_flight_.free(m);
      return;
    }
    const Instance& in = instances_[in_flight_[m].instance];
    const Time at = proxy_through((*in.members)[in_flight_[m].src], queue_.now(),
                                  Time{in_flight_[m].proxy_ns} * kNanosecond);
    queue_.schedule(at, this, kInject, m);
    return;
  }
  if (event.kind == kInject) {
    InFlight& msg = in_flight_[static_cast<std::uint32_t>(event.payload)];
    if (msg.cancelled) {
      in_flight_.free(static_cast<std::uint32_t>(event.payload));
      return;
    }
    msg.injected = true;
    const Instance& in = instances_[msg.instance];
    const std::uint32_t src = msg.src;  // inject() may grow in_flight_
    try {
      inject(static_cast<std::uint32_t>(event.payload));
      run_work();
    } catch (const TimeLimitError& e) {
      e.rethrow_with("collective '" + in.program->name() + "' #" + std::to_string(in.key.seq) + " of communicator " +
                     std::to_string(in.key.group) + ", rank " + std::to_string((*in.members)[src]), false);
    }
    return;
  }
  const Pending p = pending_[static_cast<std::uint32_t>(event.payload)];
  pending_.free(static_cast<std::uint32_t>(event.payload));
  if (p.cancelled) return;
  work_.push_back(make_work(p.instance, p.pos, p.ref, true));
  run_work();
}

void CollectiveEngine::report_unreceived(std::uint32_t inst) const {
  const Instance& in = instances_[inst];
  std::string msg = "collective '" + in.program->name() + "' #" + std::to_string(in.key.seq) + " of communicator " +
                    std::to_string(in.key.group) + " finished on every rank but " + std::to_string(in.unreceived) +
                    " message(s) were never received:";
  std::size_t shown = 0;
  match_.for_each_message([&](const MatchKey& k, std::uint64_t bytes) {
    if (k.instance != inst || shown >= 8) return;
    ++shown;
    msg += "\n  " + (k.src == kSwitchPeer ? std::string("switch") : "rank " + std::to_string((*in.members)[k.src])) +
           " -> rank " + std::to_string((*in.members)[k.dst]) +
           ", tag " + std::to_string(k.tag) + ", " + std::to_string(bytes) + " B";
  });
  throw IncompleteError(msg);
}

// --- channels and switch operations -----------------------------------------

Time CollectiveEngine::pace(std::uint32_t inst, std::uint32_t pos, const CollectiveOp& op) {
  if (op.rate == 0) return 0;
  std::vector<Time>& pacer = instances_[inst].ranks[pos].pacer;
  if (pacer.size() <= op.channel) pacer.resize(std::size_t{op.channel} + 1, 0);
  const Time start = std::max(queue_.now(), pacer[op.channel]);
  pacer[op.channel] = add_time(start, transfer_time(op.bytes, op.rate), "a channel's pacing");
  return pacer[op.channel];
}

Time CollectiveEngine::proxy_through(NodeId npu, Time at, Time cost) {
  if (proxy_free_.size() <= npu) proxy_free_.resize(std::size_t{npu} + 1, 0);
  const Time start = std::max(at, proxy_free_[npu]);
  proxy_free_[npu] = add_time(start, cost, "a proxy thread's work");
  return proxy_free_[npu];
}

bool CollectiveEngine::switch_ops(NodeId sw) const {
  return network_.carries_switch_ops() && network_.topology().reduces(sw);
}

void CollectiveEngine::issue_switch_op(std::uint32_t inst, std::uint32_t pos, OpRef ref, const CollectiveOp& op) {
  InFlight msg{inst, pos, op.peer, op.tag, op.bytes, ref};
  msg.carry = op.kind == OpKind::kSwitchReduce ? Carry::kUpReduce
              : op.kind == OpKind::kMulticast  ? Carry::kUpMulticast
                                               : Carry::kSend;
  msg.node = op.node;
  msg.channel = op.channel;
  msg.not_before = pace(inst, pos, op);
  const std::uint32_t m = in_flight_.alloc(msg);
  if (msg.carry == Carry::kSend) {  // a paced send: counted and logged as the unpaced ones are
    Instance& in = instances_[inst];
    if (in.mirrored) ++mirrored_messages_;
    if (in.tentative) in.tentative_sends.push_back(m);
  }
  // The message leaves when its pacer starts it (not before the endpoint
  // delay), and through a proxy once the sender's proxy has posted it.
  const Time paced_start = op.rate > 0 ? msg.not_before - transfer_time(op.bytes, op.rate) : queue_.now();
  Time at = std::max(add_time(queue_.now(), config_.endpoint_delay, "a send's endpoint delay"), paced_start);
  if (op.proxy_ns > 0) {
    in_flight_[m].proxy_ns = op.proxy_ns;
    if (at > queue_.now()) {
      // The proxy thread takes messages as they become ready, not as the
      // simulation issues them: one that is ready later must not hold up
      // one issued after it but ready sooner (another channel's step).
      queue_.schedule(at, this, kProxyPost, m);
      return;
    }
    at = proxy_through((*instances_[inst].members)[pos], at, Time{op.proxy_ns} * kNanosecond);
  }
  if (at > queue_.now()) {
    queue_.schedule(at, this, kInject, m);
  } else {
    in_flight_[m].injected = true;
    inject(m);
  }
}

void CollectiveEngine::inject(std::uint32_t m) {
  const InFlight msg = in_flight_[m];
  const Instance& in = instances_[msg.instance];
  const NodeId from = (*in.members)[msg.src];
  switch (msg.carry) {
    case Carry::kSend:
      network_.send_on(connection(msg.channel, from, communicator_of(in.key)), from, (*in.members)[msg.dst], msg.bytes, Delivery{this, kDelivered, m});
      return;
    case Carry::kUpReduce:
      if (switch_ops(msg.node)) {
        network_.send_on_link(link_between(from, msg.node), msg.bytes, Delivery{this, kUploaded, m});
      } else if (switch_sentinel(msg.dst)) {  // a sum for every member: only a reducing switch makes one
        throw InputError("collective '" + in.program->name() + "' reduces at switch " + std::to_string(msg.node) +
                         " for every member under it (CollNet / SHARP), which needs the switch marked "
                         "in_network_reduction and a backend that carries switch operations (analytical, flow, ns3 with "
                         "transport roce or ib)");
      } else {  // no reduction in the network: the contribution goes to its owner
        network_.send_on(connection(msg.channel, from, communicator_of(in.key)), from, (*in.members)[msg.dst], msg.bytes, Delivery{this, kUploaded, m});
      }
      return;
    case Carry::kUpMulticast:
      if (switch_ops(msg.node)) {
        network_.send_on_link(link_between(from, msg.node), msg.bytes, Delivery{this, kUploaded, m});
        return;
      }
      if (msg.dst == kSwitchGather) {
        throw InputError("collective '" + in.program->name() + "' gathers at switch " + std::to_string(msg.node) +
                         " (SHARP), which needs the switch marked in_network_reduction and a backend that carries "
                         "switch operations (analytical, flow, ns3 with transport roce or ib)");
      }
      {  // no multicast in the network: one copy to every member under the switch
        const std::vector<std::uint32_t> to = under(msg.instance, msg.node);
        in_flight_[m].carry = Carry::kCopies;
        in_flight_[m].count = static_cast<std::uint32_t>(to.size());
        if (to.empty()) work_.push_back(make_work(msg.instance, msg.src, msg.send_ref, true));
        for (const std::uint32_t p : to) {
          InFlight copy{msg.instance, kSwitchPeer, p, msg.tag, msg.bytes, 0};
          copy.carry = Carry::kCopy;
          copy.count = m;
          copy.not_before = msg.not_before;
          const std::uint32_t c = in_flight_.alloc(copy);
          network_.send_on(connection(msg.channel, from, communicator_of(in.key)), from, (*in.members)[p], msg.bytes, Delivery{this, kCameDown, c});
        }
      }
      return;
    default:
      return;
  }
}

void CollectiveEngine::uploaded(std::uint32_t m) {
  if (in_flight_[m].not_before > queue_.now()) {
    queue_.schedule(in_flight_[m].not_before, this, kUploaded, m);
    return;
  }
  const InFlight msg = in_flight_[m];
  in_flight_.free(m);
  work_.push_back(make_work(msg.instance, msg.src, msg.send_ref, true));  // eager: done on arrival
  const bool native = switch_ops(msg.node);
  if (msg.carry == Carry::kUpReduce || msg.dst == kSwitchGather) {
    const SwitchKey key{msg.instance, msg.node, msg.tag};
    Uploads& arrived = uploads_[key];
    ++arrived.count;
    arrived.bytes += msg.bytes;
    const std::vector<std::uint32_t>& members = under(msg.instance, msg.node);
    if (arrived.count == members.size()) {
      const std::uint64_t gathered = arrived.bytes;
      uploads_.erase(key);
      if (msg.dst == kSwitchPeer || msg.dst == kSwitchGather) {  // the sum (or every part) down to every member
        const std::uint64_t bytes = msg.dst == kSwitchGather ? gathered : msg.bytes;
        for (const std::uint32_t p : members) send_down(msg.instance, p, msg.node, msg.tag, bytes);
      } else if (msg.dst == kSwitchScatter) {  // part q of the sum to the q-th member
        for (std::size_t q = 0; q < members.size(); ++q) {
          send_down(msg.instance, members[q], msg.node, msg.tag, part_bytes(msg.bytes, members.size(), q));
        }
      } else if (native) {
        send_down(msg.instance, msg.dst, msg.node, msg.tag, msg.bytes);
      } else {
        arrive_from_switch(msg.instance, msg.dst, msg.tag, msg.bytes);
      }
    }
  } else {  // a multicast upload: one copy down to every member under the switch
    for (const std::uint32_t p : under(msg.instance, msg.node)) send_down(msg.instance, p, msg.node, msg.tag, msg.bytes);
  }
  run_work();
}

void CollectiveEngine::send_down(std::uint32_t inst, std::uint32_t p, NodeId sw, std::uint64_t tag,
                                 std::uint64_t bytes) {
  InFlight down{inst, kSwitchPeer, p, tag, bytes, 0};
  down.carry = Carry::kDown;
  const std::uint32_t d = in_flight_.alloc(down);
  network_.send_on_link(link_between(sw, (*instances_[inst].members)[p]), bytes, Delivery{this, kCameDown, d});
}

void CollectiveEngine::came_down(std::uint32_t m) {
  if (in_flight_[m].not_before > queue_.now()) {
    queue_.schedule(in_flight_[m].not_before, this, kCameDown, m);
    return;
  }
  const InFlight msg = in_flight_[m];
  in_flight_.free(m);
  if (msg.carry == Carry::kCopy) {  // a multicast split into sends: its op is done with the last copy
    InFlight& all = in_flight_[msg.count];
    if (--all.count == 0) {
      work_.push_back(make_work(all.instance, all.src, all.send_ref, true));
      in_flight_.free(msg.count);
    }
  }
  arrive_from_switch(msg.instance, msg.dst, msg.tag, msg.bytes);
  run_work();
}

void CollectiveEngine::arrive_from_switch(std::uint32_t inst, std::uint32_t dst, std::uint64_t tag, std::uint64_t bytes) {
  PostedRecv recv;
  if (match_.arrive(MatchKey{inst, kSwitchPeer, dst, tag}, bytes, recv)) {
    if (bytes != recv.bytes) {
      const Instance& in = instances_[inst];
      throw InputError("collective '" + in.program->name() + "' #" + std::to_string(in.key.seq) + ": a switch sent " +
                       std::to_string(bytes) + " B with tag " + std::to_string(tag) + " but rank " +
                       std::to_string((*in.members)[dst]) + " expected " + std::to_string(recv.bytes) + " B");
    }
    work_.push_back(make_work(inst, dst, recv.ref, true));
  } else {
    ++instances_[inst].unreceived;
  }
}

const std::vector<std::uint32_t>& CollectiveEngine::under(std::uint32_t inst, NodeId sw) {
  Instance& in = instances_[inst];
  auto [it, fresh] = in.under.try_emplace(sw);
  if (fresh) {
    index_links();
    for (std::uint32_t p = 0; p < in.members->size(); ++p) {
      if (link_index_.count(std::uint64_t{(*in.members)[p]} << 32 | sw)) it->second.push_back(p);
    }
  }
  return it->second;
}

void CollectiveEngine::index_links() {
  if (!link_index_.empty()) return;
  const Topology& topo = network_.topology();
  const auto& links = topo.links();  // every link that touches a switch, once
  for (LinkId l = 0; l < links.size(); ++l) {
    if (links[l].from >= topo.npu_count() || links[l].to >= topo.npu_count()) {
      link_index_.try_emplace(std::uint64_t{links[l].from} << 32 | links[l].to, l);
    }
  }
}

LinkId CollectiveEngine::link_between(NodeId from, NodeId to) {
  index_links();
  const auto it = link_index_.find(std::uint64_t{from} << 32 | to);
  if (it == link_index_.end()) {
    throw InputError("a switch operation needs a link from node " + std::to_string(from) + " to node " +
                     std::to_string(to) + " and the topology has none (the NPU must hang off the switch)");
  }
  return it->second;
}

}  // namespace sim

namespace sim {

// --- folded replicas ---------------------------------------------------------
//
// A mirrored instance's messages leave the running rank's egress ports and are
// delivered to it as the copies its peers send it, so every member must see
// the routes the program's origin sees, as exact step aggregation requires:
// per peer of the origin, each member's route to its corresponding peer has
// the same latency and bandwidth and leaves by the same port (its position
// among the NPU's links). Checked over every member once per program and
// member list; a program that is not rank-symmetric cannot be mirrored.

void CollectiveEngine::check_mirror(std::shared_ptr<const CollectiveProgram> program,
                                    std::shared_ptr<const std::vector<std::uint32_t>> members, std::uint32_t period,
                                    std::uint32_t pos) {
  Instance in;
  in.program = std::move(program);
  in.members = std::move(members);
  in.mirrored = true;
  in.period = period;
  in.mirrored_pos = pos;
  if (stand_ins_) {
    mirrors_exactly(in);  // what does not mirror is timed alone when reached
  } else {
    check_mirrored(in);
  }
}

void CollectiveEngine::check_mirrored(const Instance& in) {
  const CollectiveProgram& program = *in.program;
  const std::vector<std::uint32_t>& members = *in.members;
  const std::function<void(const std::string&, FoldingRefused::Reason)> fail =
      [&](const std::string& why, FoldingRefused::Reason reason) {
    // With P > 1 the group is P simulated ranks followed by their copies (context parallelism's data x context group).
    const std::string over =
        in.period == 1 ? "on the " + std::to_string(members.size()) + " copies of rank " +
                             std::to_string(members[in.mirrored_pos])
                       : "over rank " + std::to_string(members[in.mirrored_pos]) + "'s group of " +
                             std::to_string(in.period) + " simulated ranks and their copies (" +
                             std::to_string(members.size()) + " members)";
    throw FoldingRefused(reason, "collective '" + program.name() + "' " + over + " cannot be folded: " + why +
                     " (run with --no-aggregation)");
  };
  // Once per program (its bytes decide whether its parts are equal, hence
  // whether it is symmetric) and member list.
  if (!mirror_checked_.insert({in.program.get(), in.members.get()}).second) return;
  auto* analytical = network_.closed_form_routes();
  if (!analytical) fail("only the analytical backend can fold replicas", FoldingRefused::kOther);
  if (port_.empty()) {
    const auto& links = network_.topology().links();
    std::vector<std::uint32_t> seen(network_.topology().node_count(), 0);
    port_.resize(links.size());
    for (std::size_t l = 0; l < links.size(); ++l) port_[l] = seen[links[l].from]++;
  }
  if (in.period > 1) return check_period(in, fail);
  // (a program the same every few members may still fold a period of replicas at a time)
  if (!program.rank_symmetric()) {
    fail("the algorithm is not rank-symmetric", repeats_at_a_longer_period(program, 1) ? FoldingRefused::kRoutes
                                                                                         : FoldingRefused::kNoPeriod);
  }
  // The origin's peers: the members its sends and receives name, found by
  // walking its ops (each finished as soon as it is ready: only the set
  // matters). Checking every member instead was O(members^2) route look-ups:
  // 0.35 s for one ring over 1,024 ranks.
  const std::uint32_t origin = program.symmetric_origin();
  std::vector<bool> talks(members.size(), false);
  for_each_op(program, origin, [&](OpRef, const CollectiveOp& op) {
    if ((op.kind == OpKind::kSend || op.kind == OpKind::kRecv) && op.peer < members.size()) talks[op.peer] = true;
    return true;
  });
  for (std::uint32_t peer = 0; peer < members.size(); ++peer) {
    if (peer == origin || !talks[peer]) continue;
    const ClosedFormRoutes::PathCost mine = analytical->path_cost(members[origin], members[peer]);
    for (std::uint32_t p = 0; p < members.size(); ++p) {
      const std::uint32_t q = program.symmetric_peer(p, peer);
      if (q >= members.size() || q == p) fail("the algorithm's symmetry maps a member onto itself", FoldingRefused::kOther);
      const ClosedFormRoutes::PathCost theirs = analytical->path_cost_once(members[p], members[q]);
      if (theirs.latency_sum != mine.latency_sum || theirs.min_bandwidth != mine.min_bandwidth ||
          port_[theirs.first_link] != port_[mine.first_link] || theirs.bottleneck_link != theirs.first_link) {
        fail("NPU " + std::to_string(members[p]) + " -> " + std::to_string(members[q]) + " is not priced as NPU " +
             std::to_string(members[origin]) + " -> " + std::to_string(members[peer]),
             FoldingRefused::kRoutes);
      }
    }
  }
}

bool CollectiveEngine::mirrors_exactly(const Instance& in) {
  // (an iterator, not a structured binding: clang 14, the fuzz build's, cannot capture those in lambdas)
  const auto emplaced = mirror_verdict_.try_emplace({in.program.get(), in.members.get()}, true);
  const auto it = emplaced.first;
  if (!emplaced.second) return it->second;
  if (!network_.closed_form_routes()) {
    it->second = false;  // links shared inside the fabric: no collective over copies mirrors exactly
    return false;
  }
  // Not rank-symmetric over copies: a verdict without check_mirrored's search
  // for a longer period, which walks every member's ops (NCCL's tree over 128
  // copies: millions of ops, a third of the 16,384-GPU Llama 3 run's memory).
  if (in.period == 1 && !in.program->rank_symmetric()) {
    it->second = false;
    return false;
  }
  try {
    check_mirrored(in);
  } catch (const FoldingRefused& refused) {
    it->second = false;
    return false;
  }
  // Switch operations are not mirrored message by message (issue_op refuses them).
  for (std::uint32_t x = 0; x < in.period && it->second; ++x) {
    for_each_op(*in.program, in.period == 1 ? in.mirrored_pos : x, [&](OpRef, const CollectiveOp& op) {
      if (op.kind == OpKind::kSwitchReduce || op.kind == OpKind::kMulticast) it->second = false;
      return it->second;
    });
  }
  return it->second;
}

CollectiveEngine::StandInEnds CollectiveEngine::stand_in_timing(const Instance& in) {
  auto by_program = stand_in_by_program_.find(in.program.get());
  if (by_program != stand_in_by_program_.end()) return by_program->second.second;
  const auto [a, b] = program_fingerprint(*in.program);
  // Equal shapes map the members one to one, so each member's end carries over.
  auto key = std::make_tuple(a, b, placement_shape(network_.topology().dimensions(), *in.members));
  auto by_shape = stand_in_by_shape_.find(key);
  StandInEnds timing;
  if (by_shape != stand_in_by_shape_.end()) {
    timing = by_shape->second;
  } else {
    StandInTiming t = time_alone(in.program, in.members, network_.topology(), config_);
    ++stand_in_stats_.timings;
    stand_in_stats_.events += t.events;
    stand_in_stats_.spread = std::max(stand_in_stats_.spread, t.slowest - t.fastest);
    timing = StandInEnds{std::move(t.ends), t.load};
    stand_in_by_shape_.emplace(std::move(key), timing);
  }
  stand_in_by_program_.emplace(in.program.get(), std::make_pair(in.program, timing));
  return timing;
}

// Simulated member x (x < P) stands for members x, x + P, x + 2P, ...: it
// ends when the slowest of them would, so what it does next waits, as in the
// full run, for the copy that took longest. With P = 1 that is the
// collective's slowest member. Each simulated member's stand-in shares its
// NPU's links with the NPU's other stand-ins running then (stand_in.h:
// collectives timed alone would otherwise overlap for free). On a backend
// that shares links (PortLoads: flow) it shares them with the rank's own
// messages too: its load goes on the NPU's port towards the group's next
// member, as one flow at most its share of the port, and it ends when that
// load is through (its alone-time, or later where the rank's messages take
// the port).
void CollectiveEngine::start_stand_in(std::uint32_t inst) {
  ++stand_in_stats_.collectives;
  const StandInEnds timing = stand_in_timing(instances_[inst]);
  const Instance& in = instances_[inst];
  const std::uint32_t first = in.period == 1 ? in.mirrored_pos : 0;
  const auto size = static_cast<std::uint32_t>(in.members->size());
  PortLoads* const ports = size > 1 && timing.load > 0 ? network_.port_loads() : nullptr;
  for (std::uint32_t x = 0; x < in.period; ++x) {
    Time end = 0;
    for (std::size_t y = x; y < timing.ends.size(); y += in.period) end = std::max(end, timing.ends[y]);
    const std::uint32_t npu = (*in.members)[first + x];
    if (ports) {
      // The member after it in the group: a ring's next, the connection its messages take.
      const NodeId peer = (*in.members)[(first + x + 1) % size];
      std::uint32_t index;
      if (ports->ordered_pairs()) {  // the group's collectives one at a time: one load for all
        const auto [it, fresh] = port_stand_in_of_.try_emplace(std::uint64_t{npu} << 32 | peer, kNoPortStandIn);
        if (fresh) it->second = new_port_stand_in();
        index = it->second;
      } else {
        index = new_port_stand_in();
      }
      PortStandIns& p = port_stand_ins_[index];
      p.npu = npu;
      p.peer = peer;
      if (p.live) {  // what the load carried so far, the work of every stand-in on it
        p.share.consume(ports->cancel_port_load(p.load) * p.target);
        p.live = false;
      }
      p.share.add(inst, end, timing.load);
      launch_port_load(index);
      ++stand_in_stats_.port_loads;
      continue;
    }
    StandInShare& share = stand_in_shares_[npu];
    share.advance(queue_.now());
    share.add(inst, end, timing.load);
    schedule_stand_ins(npu);
  }
}

void CollectiveEngine::launch_port_load(std::uint32_t index) {
  PortStandIns& p = port_stand_ins_[index];
  if (p.share.empty()) return;
  const double sum = p.share.load();
  const double rate = sum > 1 ? 1 / sum : 1;  // the common rate at a full share of the port
  p.target = p.share.least();
  const auto work = static_cast<Time>(std::ceil(p.target / rate));
  ++p.seq;
  p.load = network_.port_loads()->add_port_load(p.npu, p.peer, work, std::min(1.0, sum),
                                                Delivery{this, kStandInCarried, std::uint64_t{index} << 32 | p.seq});
  p.live = true;
}

std::uint32_t CollectiveEngine::new_port_stand_in() {
  if (free_port_stand_in_ != kNoPortStandIn) {
    const std::uint32_t index = free_port_stand_in_;
    free_port_stand_in_ = port_stand_ins_[index].next_free;
    port_stand_ins_[index].next_free = kNoPortStandIn;
    return index;
  }
  port_stand_ins_.emplace_back();
  return static_cast<std::uint32_t>(port_stand_ins_.size() - 1);
}

void CollectiveEngine::port_stand_ins_due(std::uint64_t payload) {
  const auto index = static_cast<std::uint32_t>(payload >> 32);
  PortStandIns& p = port_stand_ins_[index];
  if (!p.live || p.seq != static_cast<std::uint32_t>(payload)) return;  // taken back since
  p.live = false;
  p.share.consume(p.target);
  const std::uint32_t npu = p.npu;
  const std::vector<std::uint32_t> done = p.share.take_done();
  launch_port_load(index);
  // A stand-in's own load (pairs unordered) is not kept once it is through.
  if (!network_.port_loads()->ordered_pairs() && p.share.empty()) {
    p.next_free = free_port_stand_in_;
    free_port_stand_in_ = index;
  }
  for (const std::uint32_t inst : done) end_stand_in(inst, npu);
  notify_done();  // last: the listener may join the next collective
}

void CollectiveEngine::schedule_stand_ins(std::uint32_t npu) {
  const StandInShare& share = stand_in_shares_[npu];
  const Time end = share.next_end(queue_.now());
  if (end >= 0) {
    queue_.schedule(end, this, kStandInDone, std::uint64_t{npu} << 32 | (share.version & 0xffffffffu));
  }
}

void CollectiveEngine::stand_ins_due(std::uint64_t payload) {
  const auto npu = static_cast<std::uint32_t>(payload >> 32);
  StandInShare& share = stand_in_shares_[npu];
  if ((share.version & 0xffffffffu) != (payload & 0xffffffffu)) return;  // the rate changed since
  share.advance(queue_.now());
  for (const std::uint32_t inst : share.take_done()) end_stand_in(inst, npu);
  schedule_stand_ins(npu);
  notify_done();  // last: the listener may join the next collective
}

void CollectiveEngine::end_stand_in(std::uint32_t inst, std::uint32_t npu) {
  Instance& in = instances_[inst];
  // The simulated member on this NPU (P of them, on P NPUs).
  std::uint32_t pos = in.mirrored_pos;
  if (in.period > 1) {
    pos = 0;
    while (pos + 1 < in.period && (*in.members)[pos] != npu) ++pos;
  }
  RankState& rs = in.ranks[pos];
  rs.done = true;
  ++in.ranks_done;
  done_.emplace_back((*in.members)[pos], rs.cookie);
  if (in.ranks_done == in.running()) release(inst);
}

// A period of P replicas: member y + P must run member y's program shifted by
// P positions (the same ops in the same order, each peer moved by P, the same
// tags, so a message matches by tag whichever copy sends it), and every route
// of a simulated member x < P must be priced as its copies' x + kP are. Then
// the full run is the same after a shift of P replicas, and the P simulated
// members stand for everyone. The program need not be rank-symmetric: NCCL's
// ring over two GPUs of each node is the same node after node, not GPU after GPU.
// With context parallelism P is cp x the replicas simulated (replica_folding.h):
// a program that does not repeat every cp members (a ring per network
// dimension over a group spanning two leaves) may still repeat every leaf, so
// that refusal, like a route's, lets the run try a period of replicas.
std::vector<std::vector<std::pair<OpRef, CollectiveOp>>> CollectiveEngine::walk_ops(const CollectiveProgram& program,
                                                                                    std::uint32_t members) {
  std::vector<std::vector<std::pair<OpRef, CollectiveOp>>> walk(members);
  for (std::uint32_t x = 0; x < members; ++x) {
    for_each_op(program, x, [&](OpRef ref, const CollectiveOp& op) {
      walk[x].emplace_back(ref, op);
      return true;
    });
  }
  return walk;
}

// The first member y >= P that does not run member y mod P's ops (`walk`,
// P = walk.size()) with every peer moved by y - y mod P, the same tags and no
// switch operations; n when every member does.
std::uint32_t CollectiveEngine::first_not_repeating(const CollectiveProgram& program,
                                                    const std::vector<std::vector<std::pair<OpRef, CollectiveOp>>>& walk,
                                                    std::uint32_t n) {
  const auto period = static_cast<std::uint32_t>(walk.size());
  for (std::uint32_t y = period; y < n; ++y) {
    const std::uint32_t x = y % period;
    std::size_t i = 0;
    bool same = true;
    for_each_op(program, y, [&](OpRef ref, const CollectiveOp& op) {
      same = i < walk[x].size();
      if (same) {
        const auto& [r0, a] = walk[x][i++];
        const bool talks = op.kind == OpKind::kSend || op.kind == OpKind::kRecv;
        same = ref == r0 && op.kind == a.kind && op.bytes == a.bytes && op.tag == a.tag && op.duration == a.duration &&
               op.channel == a.channel && op.rate == a.rate && op.kind != OpKind::kSwitchReduce &&
               op.kind != OpKind::kMulticast && (!talks || (a.peer < n && op.peer == (a.peer + y - x) % n));
      }
      return same;
    });
    if (!same || i != walk[x].size()) return y;
  }
  return n;
}

// Whether the program's ops repeat every k P members for some k > 1 with
// k P dividing the group and short of it: whether a longer period of
// replicas could fold it (its routes are checked when that is tried).
bool CollectiveEngine::repeats_at_a_longer_period(const CollectiveProgram& program, std::uint32_t period) {
  const std::uint32_t n = program.group_size();
  for (std::uint64_t p = 2ull * period; p < n; p += period) {
    if (n % p == 0 && first_not_repeating(program, walk_ops(program, static_cast<std::uint32_t>(p)), n) == n) {
      return true;
    }
  }
  return false;
}

void CollectiveEngine::check_period(const Instance& in,
                                    const std::function<void(const std::string&, FoldingRefused::Reason)>& fail) {
  const CollectiveProgram& program = *in.program;
  const std::vector<std::uint32_t>& members = *in.members;
  const auto n = static_cast<std::uint32_t>(members.size());
  const std::uint32_t period = in.period;
  if (n % period != 0) fail("its " + std::to_string(n) + " members are not a whole number of periods", FoldingRefused::kOther);
  ClosedFormRoutes* analytical = network_.closed_form_routes();
  // Each simulated member's ops in walking order, and the members it talks to.
  std::vector<std::vector<std::pair<OpRef, CollectiveOp>>> walk = walk_ops(program, period);
  const std::uint32_t differs = first_not_repeating(program, walk, n);
  if (differs < n) {
    // A longer period (more replicas at a time) may repeat; else none will.
    fail("the algorithm does not repeat every " + std::to_string(period) + " members (member " +
             std::to_string(differs) + " does not run member " + std::to_string(differs % period) + "'s ops moved by " +
             std::to_string(differs - differs % period) + ")",
         repeats_at_a_longer_period(program, period) ? FoldingRefused::kRoutes : FoldingRefused::kNoPeriod);
  }
  for (std::uint32_t x = 0; x < period; ++x) {
    std::vector<std::uint32_t> peers;
    for (const auto& [ref, op] : walk[x]) {
      if ((op.kind == OpKind::kSend || op.kind == OpKind::kRecv) && op.peer != x) peers.push_back(op.peer);
    }
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    for (const std::uint32_t q : peers) {
      const ClosedFormRoutes::PathCost mine = analytical->path_cost(members[x], members[q]);
      for (std::uint32_t y = x; y < n; y += period) {
        const std::uint32_t z = (q + y - x) % n;
        const ClosedFormRoutes::PathCost theirs = analytical->path_cost_once(members[y], members[z]);
        bool same = theirs.latency_sum == mine.latency_sum && theirs.min_bandwidth == mine.min_bandwidth &&
                    port_[theirs.first_link] == port_[mine.first_link];
        if (mine.bottleneck_link == mine.first_link) {
          same = same && theirs.bottleneck_link == theirs.first_link;
        } else {
          // A bottleneck past the port (NCCL's PXN: through a neighbour's NIC)
          // is a queue: exact when it is a simulated NPU's link, so all its
          // traffic is simulated, and the copy queues at that NPU's copy.
          const auto& links = network_.topology().links();
          const auto owner = [&](LinkId l) {
            return links[l].from < network_.topology().npu_count() ? links[l].from : links[l].to;
          };
          const NodeId o = owner(mine.bottleneck_link);
          same = same && o < simulated_npu_.size() && simulated_npu_[o] &&
                 owner(theirs.bottleneck_link) == o + (members[y] - members[x]) &&
                 port_[theirs.bottleneck_link] == port_[mine.bottleneck_link];
          if (same) ++queued_past_port_;
        }
        if (!same) {
          const bool shared = mine.bottleneck_link != mine.first_link && simulated_npu_.empty();
          fail("NPU " + std::to_string(members[y]) + " -> " + std::to_string(members[z]) +
                   (shared ? " queues past its port, on a link other senders share"
                           : " is not priced as NPU " + std::to_string(members[x]) + " -> " + std::to_string(members[q])),
               FoldingRefused::kRoutes);
        }
      }
    }
  }
}

// --- exact step aggregation --------------------------------------------------
//
// An instance is tentative from its first join while every rank joins at that
// same instant on idle egress ports and nothing of it has finished: its ranks
// issue their first ops as usual (so nothing changes if it is not
// aggregated) and the engine logs them. When the last rank has joined, an
// event at the same instant (after that instant's other issuing) decides: if
// every rank runs nothing but this collective (so nothing else can use their
// egress ports until it ends; on the analytical backend nobody else's traffic
// shares them) and the program's representative run is exact
// (symmetric_run.h), the logged ops are taken back and the collective is
// priced for all ranks at once: the bytes per NPU pair, the egress ports'
// free times and the message count become what sending each message would
// have left, and one event ends it on every rank at the representative's end.

void CollectiveEngine::drop_tentative(Instance& in) {
  in.tentative = false;
  in.tentative_sends.clear();
  in.tentative_recvs.clear();
  in.tentative_tags.clear();
  in.tentative_computes.clear();
}

const CollectiveEngine::Plan* CollectiveEngine::plan_for(const Instance& in) {
  constexpr std::uint32_t kNoPeer = 0xffffffffu;
  auto [it, fresh] = plans_.try_emplace({in.program.get(), in.members.get(), communicator_of(in.key)});
  if (!fresh) return it->second->exact ? it->second.get() : nullptr;
  it->second = std::make_unique<Plan>();
  Plan& plan = *it->second;
  const CollectiveProgram& program = *in.program;
  const std::vector<std::uint32_t>& members = *in.members;
  const std::uint32_t origin = program.symmetric_origin();
  if (solo_flows_ != nullptr) {  // the proof that every flow is alone: aggregation/flow_carrier.h
    FlowPlan flow = plan_on_flow(program, members, communicator_of(in.key), config_, *solo_flows_);
    aggregated_events_ += flow.outcome.events;
    if (!flow.exact) return nullptr;
    plan.outcome = std::move(flow.outcome);
    plan.busy = std::move(flow.busy);
    plan.exact = true;
    return &plan;
  }
  const auto cost = [&](std::uint32_t peer) {
    const ClosedFormRoutes::PathCost c = closed_form_->path_cost(members[origin], members[peer]);
    return SymmetricPeerCost{c.latency_sum, c.min_bandwidth, c.first_link};
  };
  plan.outcome = run_symmetric(program, config_, closed_form_->serializes_egress(), cost);
  aggregated_events_ += plan.outcome.events;  // the work done once per (program, group)
  if (!plan.outcome.exact) return nullptr;
  // Every rank must see the routes the origin sees: the same cost towards
  // each of its peers, and the same egress port shared by the same peers.
  // Ports are compared as partitions of the peers: per peer, the first peer
  // (in order of first use) that leaves by the same port, found through a
  // per-link table, so a rank with thousands of peers (direct) costs a pass.
  const auto& peers = plan.outcome.peers;
  std::vector<ClosedFormRoutes::PathCost> mine(peers.size());
  std::vector<std::uint32_t> my_port_peer(peers.size());
  std::vector<std::uint32_t> first_on(closed_form_->topology().links().size(), kNoPeer);
  std::vector<LinkId> touched;
  const auto port_peer = [&](LinkId link, std::uint32_t i) {
    if (first_on[link] == kNoPeer) {
      first_on[link] = i;
      touched.push_back(link);
    }
    return first_on[link];
  };
  const auto clear_ports = [&] {
    for (const LinkId link : touched) first_on[link] = kNoPeer;
    touched.clear();
  };
  for (std::size_t i = 0; i < peers.size(); ++i) {
    mine[i] = closed_form_->path_cost(members[origin], members[peers[i].peer]);
    // A bottleneck past the sender's port is a queue other ranks' messages
    // share, which one rank's run cannot see.
    if (mine[i].bottleneck_link != mine[i].first_link) return nullptr;
    my_port_peer[i] = port_peer(mine[i].first_link, static_cast<std::uint32_t>(i));
  }
  closed_form_->reserve_pairs(members.size() * peers.size());
  for (std::uint32_t p = 0; p < members.size(); ++p) {
    clear_ports();
    for (std::size_t i = 0; i < peers.size(); ++i) {
      const std::uint32_t q = program.symmetric_peer(p, peers[i].peer);
      if (q >= members.size() || members[q] == members[p]) return nullptr;
      const ClosedFormRoutes::PathCost theirs = closed_form_->path_cost(members[p], members[q]);
      if (theirs.latency_sum != mine[i].latency_sum || theirs.min_bandwidth != mine[i].min_bandwidth ||
          theirs.bottleneck_link != theirs.first_link ||
          port_peer(theirs.first_link, static_cast<std::uint32_t>(i)) != my_port_peer[i]) {
        return nullptr;
      }
    }
  }
  plan.exact = true;
  return &plan;
}

void CollectiveEngine::resolve(std::uint32_t inst) {
  Instance& in = instances_[inst];
  if (!in.live || !in.tentative || in.joined != in.running() || in.joined_at != queue_.now()) {
    return;
  }
  for (const RankState& rs : in.ranks) {
    if (rs.joined && !listener_.runs_only_collective(rs.cookie)) return drop_tentative(in);
  }
  const Plan* plan = plan_for(in);
  if (plan == nullptr) return drop_tentative(in);
  Time end;
  try {
    end = add_time(queue_.now(), plan->outcome.duration, "an aggregated collective's end");
  } catch (const TimeLimitError&) {  // the per-message run names the op that passes the limit
    return drop_tentative(in);
  }
  const std::vector<std::uint32_t>& members = *in.members;
  if (solo_flows_ != nullptr) return resolve_on_flow(inst, *plan, end);
  // Take back what the ranks issued when they joined.
  for (const std::uint32_t m : in.tentative_sends) {
    InFlight& f = in_flight_[m];
    f.cancelled = true;
    if (f.injected) closed_form_->unsend(members[f.src], members[f.dst], f.bytes);
  }
  for (const std::uint32_t p : in.tentative_computes) pending_[p].cancelled = true;
  for (std::size_t i = 0; i < in.tentative_recvs.size(); ++i) {
    const auto src = static_cast<std::uint32_t>(in.tentative_recvs[i] >> 32);
    const auto dst = static_cast<std::uint32_t>(in.tentative_recvs[i]);
    PostedRecv taken;
    match_.take_receive(MatchKey{inst, src, dst, in.tentative_tags[i]}, taken);
  }
  if (in.mirrored) {  // the origin's messages: those it issued are taken back, its whole run's counted
    mirrored_messages_ -= in.tentative_sends.size();
    for (const SymmetricOutcome::Peer& peer : plan->outcome.peers) mirrored_messages_ += peer.messages;
  }
  // Every rank's messages, priced as the origin's.
  const Time start = queue_.now();
  for (std::uint32_t p = 0; p < members.size(); ++p) {
    for (const SymmetricOutcome::Peer& peer : plan->outcome.peers) {
      const std::uint32_t q = in.program->symmetric_peer(p, peer.peer);
      closed_form_->record_batch(members[p], members[q], peer.messages, peer.bytes, start + peer.egress_free);
    }
  }
  drop_tentative(in);
  in.fused = true;
  ++aggregated_;
  queue_.schedule(end, this, kFusedDone, inst);
}

// The flow backend: the network must hold nothing but this collective's first
// messages, and nothing else may come until it ends (every member runs only
// it, every rank elsewhere has finished); they are taken back, last first (each pair's queue from its
// tail), and every rank's messages recorded as the origin's, alone on their links.
void CollectiveEngine::resolve_on_flow(std::uint32_t inst, const Plan& plan, Time end) {
  Instance& in = instances_[inst];
  const std::vector<std::uint32_t>& members = *in.members;
  if (members.size() != network_.topology().npu_count() && !listener_.finished_outside(members)) {
    return drop_tentative(in);  // a rank elsewhere could still put a flow on the collective's links
  }
  std::size_t injected = 0;
  for (const std::uint32_t m : in.tentative_sends) injected += in_flight_[m].injected ? 1 : 0;
  if (solo_flows_->messages_in_network() != injected) return drop_tentative(in);
  for (auto it = in.tentative_sends.rbegin(); it != in.tentative_sends.rend(); ++it) {
    InFlight& f = in_flight_[*it];
    f.cancelled = true;
    if (f.injected) solo_flows_->take_back(members[f.src], members[f.dst], communicator_of(in.key), f.bytes);
  }
  for (std::size_t i = 0; i < in.tentative_recvs.size(); ++i) {
    const auto src = static_cast<std::uint32_t>(in.tentative_recvs[i] >> 32);
    const auto dst = static_cast<std::uint32_t>(in.tentative_recvs[i]);
    PostedRecv taken;
    match_.take_receive(MatchKey{inst, src, dst, in.tentative_tags[i]}, taken);
  }
  for (std::uint32_t p = 0; p < members.size(); ++p) {
    for (std::size_t i = 0; i < plan.outcome.peers.size(); ++i) {
      const SymmetricOutcome::Peer& peer = plan.outcome.peers[i];
      const std::uint32_t q = in.program->symmetric_peer(p, peer.peer);
      solo_flows_->record_batch(members[p], members[q], communicator_of(in.key), peer.messages, peer.bytes,
                                plan.busy[i]);
    }
  }
  drop_tentative(in);
  in.fused = true;
  ++aggregated_;
  queue_.schedule(end, this, kFusedDone, inst);
}

void CollectiveEngine::fused_done(std::uint32_t inst) {
  Instance& in = instances_[inst];
  for (std::uint32_t pos = 0; pos < in.ranks.size(); ++pos) {
    RankState& rs = in.ranks[pos];
    if (!rs.joined) continue;  // a mirrored instance's copies: nothing runs them
    rs.done = true;
    done_.emplace_back((*in.members)[pos], rs.cookie);
  }
  release(inst);
  run_work();
}

}  // namespace sim
