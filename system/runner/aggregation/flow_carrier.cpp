#include "system/runner/aggregation/flow_carrier.h"

#include <unordered_map>

#include "core/error.h"

namespace sim {

// --- FlowCarrier: FlowNetwork's send_route / start_message / pair_advance /
// kPairNext / kSoloDelivered, for flows that are alone on their links ---------

void FlowCarrier::send(std::uint32_t message, std::uint32_t peer, const SymmetricPeerCost& cost,
                       std::uint64_t bytes) {
  if (peer >= pairs_.size()) pairs_.resize(std::size_t{peer} + 1);
  Pair& pair = pairs_[peer];
  pair.latency = cost.latency;
  pair.bottleneck = cost.bandwidth;
  if (pair_busy(pair, host_->carrier_queue().now())) {  // behind the pair's previous message
    pair.queue.push_back(Queued{message, bytes});
    if (pair.active != kNone) watch(pair.active);
    return;
  }
  start(peer, message, bytes);
}

bool FlowCarrier::pair_busy(Pair& pair, Time now) {
  if (pair.queue_head < pair.queue.size()) return true;
  if (pair.active == kNone) return false;
  if (flows_[pair.active].finish <= now) {  // sent everything; only its latency is left
    pair.active = kNone;
    return false;
  }
  return true;
}

void FlowCarrier::watch(std::uint32_t f) {
  Flow& flow = flows_[f];
  if (flow.watched) return;
  flow.watched = true;
  EventQueue& queue = host_->carrier_queue();
  flow.watched_at = queue.now();
  queue.schedule(flow.finish, this, 0, f);
}

void FlowCarrier::start(std::uint32_t p, std::uint32_t message, std::uint64_t bytes) {
  const Time now = host_->carrier_queue().now();
  if (flow_of_.size() <= message) flow_of_.resize(std::size_t{message} + 1, kNone);
  Pair& pair = pairs_[p];
  if (bytes == 0) {  // nothing to share: only the latency
    flow_of_[message] = kNone;
    host_->deliver_at(message, add_time(now, pair.latency, "a message's delivery"));
    return;
  }
  const Time drain = SoloFlows::drain_time(bytes, pair.bottleneck);
  if (drain < 0) return host_->carrier_refuse("a time limit");  // the per-message run reports it
  const Time finish = add_time(now, drain, "a message's finish on the flow network");
  const Time delivery = add_time(finish, pair.latency, "a message's delivery");
  const auto f = static_cast<std::uint32_t>(flows_.size());
  Flow flow;
  flow.pair = p;
  flow.message = message;
  flow.start = now;
  flow.finish = finish;
  flows_.push_back(flow);
  flow_of_[message] = f;
  pair.active = f;
  pair.busy = add_time(pair.busy, drain, "a link's busy time");
  host_->deliver_at(message, delivery);
  if (pair.queue_head < pair.queue.size()) watch(f);
}

bool FlowCarrier::advance(std::uint32_t p) {
  pairs_[p].active = kNone;
  bool started = false;
  while (pairs_[p].queue_head < pairs_[p].queue.size() && pairs_[p].active == kNone) {
    const Queued next = pairs_[p].queue[pairs_[p].queue_head++];
    if (pairs_[p].queue_head == pairs_[p].queue.size()) {
      pairs_[p].queue.clear();
      pairs_[p].queue_head = 0;
    }
    start(p, next.message, next.bytes);  // a zero-byte message leaves at once; the loop goes on
    started = true;
  }
  return started;
}

void FlowCarrier::on_event(const Event& event) {
  const auto f = static_cast<std::uint32_t>(event.payload);
  const Flow flow = flows_[f];
  if (flow.freed || flow.finish != event.time) return;  // delivered since (zero latency): stale
  if (advance(flow.pair)) host_->carrier_activity(flow.watched_at);
}

void FlowCarrier::delivered(std::uint32_t message) {
  if (message >= flow_of_.size() || flow_of_[message] == kNone) return;  // a zero-byte message
  const std::uint32_t f = flow_of_[message];
  flow_of_[message] = kNone;
  flows_[f].freed = true;
  Pair& pair = pairs_[flows_[f].pair];
  if (pair.active == f) pair.active = kNone;
  // With zero latency the delivery comes before the pair-next event, and the
  // backend starts the next message inside the delivery event, before the
  // collective sees it: an order the representative run does not model.
  if (pair.active == kNone && pair.queue_head < pair.queue.size()) {
    advance(flows_[f].pair);
    host_->carrier_refuse("a pair's next message started by a delivery (zero latency)");
  }
}

std::vector<std::vector<bool>> FlowCarrier::overlaps() const {
  std::vector<std::vector<bool>> out(pairs_.size(), std::vector<bool>(pairs_.size(), false));
  // flows_ is in order of start: sweep, keeping the flows still sending.
  std::vector<std::uint32_t> sending;
  for (std::uint32_t f = 0; f < flows_.size(); ++f) {
    const Flow& flow = flows_[f];
    std::size_t kept = 0;
    for (const std::uint32_t s : sending) {
      if (flows_[s].finish <= flow.start) continue;  // its links are free again
      sending[kept++] = s;
      out[flows_[s].pair][flow.pair] = out[flow.pair][flows_[s].pair] = true;
    }
    sending.resize(kept);
    sending.push_back(f);
  }
  return out;
}

// --- the plan ----------------------------------------------------------------

FlowPlan plan_on_flow(const CollectiveProgram& program, const std::vector<std::uint32_t>& members,
                      std::uint32_t communicator, const SystemConfig& config, SoloFlows& net) {
  FlowPlan plan;
  auto refuse = [&](const std::string& why) {
    plan.exact = false;
    plan.why = why;
    return plan;
  };
  if (!net.pair_fifo()) return refuse("pair_order: shared (messages of one pair share links)");
  if (!net.routes_by_pair()) return refuse("routing spreads a pair's messages over several paths");
  // (That nothing outside the members can send is the engine's to check:
  // it depends on the moment, CollectiveListener::finished_outside.)
  const std::uint32_t npus = net.topology().npu_count();
  std::vector<bool> seen(npus, false);
  for (const std::uint32_t m : members) {
    if (m >= npus || seen[m]) return refuse("an NPU is a member twice");
    seen[m] = true;
  }
  const std::uint32_t origin = program.symmetric_origin();
  // Plain sends only: a paced channel (op.rate) or a proxy is a rule the carrier does not model,
  // nor a connection other than the pair's first where it may take another path.
  const bool multipath = net.multipath();
  bool plain = true;
  for_each_op(program, origin, [&](OpRef, const CollectiveOp& op) {
    plain = !(op.rate > 0 || op.proxy_ns > 0 || op.kind == OpKind::kSwitchReduce || op.kind == OpKind::kMulticast ||
              (multipath && op.kind == OpKind::kSend && op.channel != 0));
    return plain;
  });
  if (!plain) return refuse("paced channels, proxies, switch operations or other connections on a multi-path fabric");
  std::unordered_map<std::uint32_t, SoloFlows::SoloRoute> mine;  // the origin's route per peer
  const auto cost = [&](std::uint32_t peer) {
    const SoloFlows::SoloRoute& r =
        mine.try_emplace(peer, net.solo_route(members[origin], members[peer], communicator)).first->second;
    return SymmetricPeerCost{r.latency, r.bottleneck, 0};
  };
  FlowCarrier carrier;
  plan.outcome = run_symmetric(program, config, carrier, cost);
  if (!plan.outcome.exact) return refuse(plan.outcome.why);
  const std::vector<SymmetricOutcome::Peer>& peers = plan.outcome.peers;
  const std::vector<std::vector<bool>> overlap = carrier.overlaps();
  plan.busy.resize(peers.size());
  for (std::uint32_t i = 0; i < peers.size(); ++i) {
    plan.busy[i] = carrier.busy(i);
    if (i < overlap.size() && overlap[i][i]) return refuse("two messages to one peer send at once");
  }
  // Every rank's image of every peer: priced as the origin's, and alone on its links.
  std::unordered_map<LinkId, std::vector<std::uint32_t>> users;  // link -> origin peers whose images cross it
  for (std::uint32_t p = 0; p < members.size(); ++p) {
    for (std::uint32_t i = 0; i < peers.size(); ++i) {
      const std::uint32_t q = program.symmetric_peer(p, peers[i].peer);
      if (q >= members.size() || q == p) return refuse("the program's symmetry maps a member onto itself");
      const SoloFlows::SoloRoute theirs = net.solo_route(members[p], members[q], communicator);
      const SoloFlows::SoloRoute& ours = mine.at(peers[i].peer);
      if (theirs.latency != ours.latency || theirs.bottleneck != ours.bottleneck) {
        return refuse("NPU " + std::to_string(members[p]) + " -> " + std::to_string(members[q]) +
                      " is not priced as the origin's route");
      }
      if (plan.busy[i] == 0) continue;  // zero-byte messages only: no flow
      for (const LinkId l : theirs.links) {
        std::vector<std::uint32_t>& u = users[l];
        for (const std::uint32_t j : u) {
          if (j == i || overlap[i][j]) return refuse("two ranks' flows would share link " + std::to_string(l));
        }
        u.push_back(i);
      }
    }
  }
  plan.exact = true;
  return plan;
}

}  // namespace sim
