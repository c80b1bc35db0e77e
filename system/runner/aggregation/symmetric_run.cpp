#include "system/runner/aggregation/symmetric_run.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/event_queue.h"
#include "core/index_pool.h"

namespace sim {

namespace {

constexpr std::uint32_t kDelivered = 0;
constexpr std::uint32_t kComputeDone = 1;
constexpr std::uint32_t kInject = 2;

// The origin's run. Mirrors CollectiveEngine's handling of one rank (issue
// order, the work stack, eager sends, receives matched when both the message
// and the receive are there), with the peers' messages to the origin standing
// in for by the origin's own matching sends (program.matched_send()).
class SymmetricRun final : public EventHandler, private CarrierHost {
 public:
  SymmetricRun(const CollectiveProgram& program, const SystemConfig& config, bool serialize,
               const std::function<SymmetricPeerCost(std::uint32_t)>& cost, MessageCarrier* carrier = nullptr)
      : p_(program), config_(config), serialize_(serialize), cost_(cost), origin_(program.symmetric_origin()),
        carrier_(carrier) {}

  SymmetricOutcome run() {
    SymmetricOutcome out;
    try {
      if (carrier_ != nullptr) carrier_->bind(*this);
      op_count_ = p_.op_count(origin_);
      ready_.clear();
      p_.start(origin_, cursor_, ready_);
      push_ready(false);
      run_work();
      while (!fail_ && queue_.step()) {
      }
    } catch (const TimeLimitError&) {  // the per-message run reports it properly
      fail("a time limit");
    }
    if (!fail_ && ops_done_ != op_count_) fail("the origin did not finish");
    if (!fail_ && (!arrived_.empty() || !posted_.empty())) fail("unmatched messages");
    out.events = queue_.processed();
    if (fail_) {
      out.why = why_;
      return out;
    }
    out.exact = true;
    out.duration = end_;
    out.messages = messages_;
    for (const PeerState& ps : peers_) {
      SymmetricOutcome::Peer peer;
      peer.peer = ps.peer;
      peer.bytes = ps.bytes;
      peer.messages = ps.messages;
      peer.egress_free = egress_[ps.egress];
      out.peers.push_back(peer);
    }
    return out;
  }

  void on_event(const Event& event) override {
    if (fail_) return;
    const auto index = static_cast<std::uint32_t>(event.payload);
    if (event.kind == kInject) {
      const Message m = messages_in_flight_[index];
      activity(m.issued, origin_);
      network_send(index);
      return;
    }
    if (event.kind == kComputeDone) {
      const Compute c = computes_[index];
      computes_.free(index);
      const std::uint64_t before = issued_;
      work_.push_back({c.ref, true});
      run_work();
      if (issued_ != before) activity(c.issued, origin_);
      return;
    }
    // Delivered: in the per-message run these are two events of the origin's
    // timeline: its own send is done (scheduled by the origin), and the peer's
    // matching message reaches it (scheduled by that peer at the same time).
    // Their order is such a tie. Taken here receive first: if the send,
    // finished second, then makes nothing ready, it would not have either
    // had it come first (an op is ready when its last parent finishes), so
    // the order does not matter; if it does, the action belongs to whichever
    // came last, and conflicts with any other at this time.
    if (messages_in_flight_[index].not_before > queue_.now()) {
      // Its channel is still sending it: the engine delivers it again then
      // (an event the same rank schedules now). (The flow carrier never
      // carries paced messages: its plans refuse them.)
      messages_in_flight_[index].sent = queue_.now();
      queue_.schedule(messages_in_flight_[index].not_before, this, kDelivered, index);
      return;
    }
    if (carrier_ != nullptr) carrier_->delivered(index);
    const Message m = messages_in_flight_[index];
    messages_in_flight_.free(index);
    std::uint64_t before = issued_;
    bool received = false, recv_active = false;
    std::uint32_t sender = origin_;
    if (const auto it = posted_.find(m.send); it != posted_.end()) {
      const OpRef recv = it->second;
      posted_.erase(it);
      received = true;
      sender = p_.op(origin_, recv).peer;
      work_.push_back({recv, true});
      run_work();
      recv_active = issued_ != before;
    } else {
      arrived_.insert(m.send);  // waits for the receive: nothing happens now
    }
    before = issued_;
    work_.push_back({m.send, true});
    run_work();
    const bool send_active = issued_ != before;
    if (send_active && received) {
      activity(m.sent, kAnyRank);
    } else {
      if (recv_active) activity(m.sent, sender);
      if (send_active) activity(m.sent, origin_);
    }
  }

 private:
  static constexpr std::uint32_t kAnyRank = 0xffffffffu;  // either of two ranks: ties with anything
  struct Message {
    OpRef send;
    std::uint32_t peer_state;
    std::uint64_t bytes;
    Time issued;  // when the op was issued (an injection's scheduling time)
    Time sent;    // when it entered the network (the delivery's scheduling time)
    Time not_before;  // paced: when its channel is through with it
  };
  struct Compute {
    OpRef ref;
    Time issued;
  };
  struct PeerState {
    std::uint32_t peer;
    SymmetricPeerCost cost;
    std::uint32_t egress;  // index into egress_
    std::uint64_t bytes = 0, messages = 0;
  };

  void fail(const char* why) {
    if (!fail_) why_ = why;
    fail_ = true;
  }

  // An event part of the origin at time now that did something, scheduled at
  // `scheduled` by rank `by`: see the header on equal-time ties.
  void activity(Time scheduled, std::uint32_t by) {
    const Time now = queue_.now();
    if (now != slot_) {
      slot_ = now;
      active_.clear();
    }
    for (const auto& [s, b] : active_) {
      if (s == scheduled && (b != by || by == kAnyRank)) fail("two ranks' events tie at one picosecond");
    }
    active_.emplace_back(scheduled, by);
  }

  void push_ready(bool) {
    for (auto r = ready_.rbegin(); r != ready_.rend(); ++r) work_.push_back({*r, false});
  }

  void run_work() {
    while (!work_.empty() && !fail_) {
      const auto [ref, finished] = work_.back();
      work_.pop_back();
      if (finished) {
        finish(ref);
      } else {
        issue(ref);
      }
    }
  }

  std::uint32_t peer_state(std::uint32_t peer) {
    const auto it = peer_index_.find(peer);
    if (it != peer_index_.end()) return it->second;
    PeerState ps;
    ps.peer = peer;
    ps.cost = cost_(peer);
    const auto e = egress_index_.try_emplace(ps.cost.first_link, static_cast<std::uint32_t>(egress_.size()));
    if (e.second) egress_.push_back(0);
    ps.egress = e.first->second;
    const auto i = static_cast<std::uint32_t>(peers_.size());
    peers_.push_back(ps);
    peer_index_.emplace(peer, i);
    return i;
  }

  void issue(OpRef ref) {
    ++issued_;
    const CollectiveOp op = p_.op(origin_, ref);
    switch (op.kind) {
      case OpKind::kSwitchReduce:
      case OpKind::kMulticast:
        return fail("a switch operation");
      case OpKind::kSend: {
        if (op.peer == origin_) return fail("a message to itself");
        // A rank's proxy thread serves its sends and its receives in one queue, in
        // an order the representative run does not reproduce.
        if (op.proxy_ns > 0) return fail("messages through NCCL's proxy thread");
        const std::uint32_t m =
            messages_in_flight_.alloc(Message{ref, peer_state(op.peer), op.bytes, queue_.now(), queue_.now(), 0});
        if (op.rate > 0) {  // CollectiveEngine::issue_switch_op
          messages_in_flight_[m].not_before = pace(op);
          const Time start = messages_in_flight_[m].not_before - transfer_time(op.bytes, op.rate);
          const Time at = std::max(add_time(queue_.now(), config_.endpoint_delay, "a send's endpoint delay"), start);
          if (at > queue_.now()) {
            queue_.schedule(at, this, kInject, m);
          } else {
            network_send(m);
          }
        } else if (config_.endpoint_delay > 0) {
          queue_.schedule_in(config_.endpoint_delay, this, kInject, m);
        } else {
          network_send(m);
        }
        return;
      }
      case OpKind::kRecv: {
        const OpRef send = p_.matched_send(ref);
        if (p_.op(origin_, send).bytes != op.bytes) return fail("a size mismatch");
        if (arrived_.erase(send) > 0) {
          work_.push_back({ref, true});
        } else if (!posted_.emplace(send, ref).second) {
          fail("two receives of one message");
        }
        return;
      }
      case OpKind::kCompute: {
        // Paced copies come with switch operations (NVLS), which this run does not model either.
        if (op.rate > 0) return fail("a paced copy");
        const Time t = op.duration >= 0 ? op.duration : config_.reduction_time(op.bytes);
        if (t == 0) {
          work_.push_back({ref, true});
        } else {
          queue_.schedule_in(t, this, kComputeDone, computes_.alloc(Compute{ref, queue_.now()}));
        }
        return;
      }
      default:  // an op kind added later (e.g. in-network reduction): not modelled here
        return fail("an op kind the representative run does not model");
    }
  }

  // The analytical backend's send (network/analytical/analytical_network.cpp), on the origin's egress ports.
  void network_send(std::uint32_t m) {
    Message& msg = messages_in_flight_[m];
    PeerState& ps = peers_[msg.peer_state];
    if (carrier_ != nullptr) {  // another backend's rule: it calls deliver_at()
      ps.bytes = add_bytes(ps.bytes, msg.bytes, "the bytes an NPU pair sent");
      ++ps.messages;
      ++messages_;
      carrier_->send(m, msg.peer_state, ps.cost, msg.bytes);
      return;
    }
    const Time beta = transfer_time(msg.bytes, ps.cost.bandwidth);
    Time start = queue_.now();
    Time& free_at = egress_[ps.egress];
    if (serialize_) start = std::max(start, free_at);
    const Time sent = add_time(start, beta, "the end of a message's injection");
    const Time delivery = add_time(sent, ps.cost.latency, "a message's delivery");
    if (serialize_) free_at = sent;
    ps.bytes = add_bytes(ps.bytes, msg.bytes, "the bytes an NPU pair sent");
    ++ps.messages;
    ++messages_;
    msg.sent = queue_.now();
    queue_.schedule(delivery, this, kDelivered, m);
  }

  // CarrierHost.
  EventQueue& carrier_queue() override { return queue_; }
  void deliver_at(std::uint32_t m, Time at) override {
    messages_in_flight_[m].sent = queue_.now();
    queue_.schedule(at, this, kDelivered, m);
  }
  void carrier_activity(Time scheduled) override { activity(scheduled, origin_); }
  void carrier_refuse(const char* why) override { fail(why); }

  void finish(OpRef ref) {
    ++ops_done_;
    ready_.clear();
    p_.finish(origin_, ref, cursor_, ready_);
    push_ready(true);
    if (ops_done_ == op_count_) end_ = queue_.now();
  }

  const CollectiveProgram& p_;
  const SystemConfig& config_;
  bool serialize_;
  const std::function<SymmetricPeerCost(std::uint32_t)>& cost_;
  std::uint32_t origin_;
  MessageCarrier* carrier_;  // nullptr: the analytical closed form, network_send()

  // When the op's channel pacer is through with it (CollectiveEngine::pace).
  Time pace(const CollectiveOp& op) {
    if (pacer_.size() <= op.channel) pacer_.resize(std::size_t{op.channel} + 1, 0);
    const Time start = std::max(queue_.now(), pacer_[op.channel]);
    pacer_[op.channel] = add_time(start, transfer_time(op.bytes, op.rate), "a channel's pacing");
    return pacer_[op.channel];
  }

  EventQueue queue_;
  RankCursor cursor_;
  std::uint64_t op_count_ = 0, ops_done_ = 0, issued_ = 0, messages_ = 0;
  Time end_ = 0;
  std::vector<OpRef> ready_;
  struct Work {
    OpRef ref;
    bool finished;
  };
  std::vector<Work> work_;
  IndexPool<Message> messages_in_flight_;
  IndexPool<Compute> computes_;
  std::unordered_set<OpRef> arrived_;          // sends delivered whose receive is not posted yet
  std::unordered_map<OpRef, OpRef> posted_;    // send -> the receive waiting for its message
  std::vector<PeerState> peers_;
  std::unordered_map<std::uint32_t, std::uint32_t> peer_index_;
  std::vector<Time> egress_;                   // per distinct first link of the origin
  std::vector<Time> pacer_;                    // per channel: when it is through with what it was given
  std::unordered_map<std::uint32_t, std::uint32_t> egress_index_;

  Time slot_ = -1;
  std::vector<std::pair<Time, std::uint32_t>> active_;
  bool fail_ = false;
  std::string why_;
};

}  // namespace

SymmetricOutcome run_symmetric(const CollectiveProgram& program, const SystemConfig& config, bool serialize_egress,
                               const std::function<SymmetricPeerCost(std::uint32_t peer)>& cost) {
  if (!program.rank_symmetric()) {
    SymmetricOutcome out;
    out.why = "the program is not rank-symmetric";
    return out;
  }
  SymmetricRun run(program, config, serialize_egress, cost);
  return run.run();
}

SymmetricOutcome run_symmetric(const CollectiveProgram& program, const SystemConfig& config, MessageCarrier& carrier,
                               const std::function<SymmetricPeerCost(std::uint32_t peer)>& cost) {
  if (!program.rank_symmetric()) {
    SymmetricOutcome out;
    out.why = "the program is not rank-symmetric";
    return out;
  }
  SymmetricRun run(program, config, false, cost, &carrier);
  return run.run();
}

}  // namespace sim
