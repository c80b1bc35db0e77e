// Exact step aggregation on the flow backend (network/flow/flow_network.h).
//
// The flow backend shares links max-min fairly, so a message's time depends on
// every other flow on its links. One case is closed form: a message alone on
// every link of its route for as long as it sends leaves at its route's
// bottleneck rate, ceil(bytes x 1e12 / bottleneck) ps (FlowNetwork::
// drain_time, the backend's own arithmetic), and is delivered its route's
// latency later; messages of one NPU pair leave one after another (the
// backend's pair FIFO). The representative run (symmetric_run.h) prices the
// origin's messages so (FlowCarrier), recording when each one sends; the plan
// (plan_on_flow) then proves every message of every rank was alone:
//
// - under rank symmetry rank p sends what the origin sends at the same
//   picosecond, to the origin's peer moved by the program's permutation; so
//   at any instant the flows sending are the images, on every rank, of the
//   origin's flows sending then;
// - for every origin peer, each rank's route to its image of that peer costs
//   what the origin's does (latency and bottleneck), and the images of one
//   peer's route over all ranks share no link (they send at the same time);
// - two origin peers whose messages ever send at the same time (a half-open
//   interval [start, finish), as the backend frees a link at its flow's
//   finish) have images that share no link;
// - nothing else is on the network: each member runs nothing but this
//   collective, every rank on an NPU outside the members has finished (or
//   there is none), and at its start the network holds only the collective's
//   own first messages (the engine checks these, as they depend on the moment).
//
// Anything else (two concurrent flows on one link, a pair's next message
// started at a delivery with zero latency, `pair_order: shared`, a rank
// outside the members still running) refuses, and every message is simulated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "network/capabilities.h"
#include "system/program/collective_program.h"
#include "system/runner/aggregation/symmetric_run.h"

namespace sim {

// The flow backend's rule for messages alone on their links, with its pair FIFO.
class FlowCarrier final : public MessageCarrier, public EventHandler {
 public:
  void bind(CarrierHost& host) override { host_ = &host; }
  void send(std::uint32_t message, std::uint32_t peer, const SymmetricPeerCost& cost, std::uint64_t bytes) override;
  void delivered(std::uint32_t message) override;
  void on_event(const Event& event) override;  // a pair's sending message is through: the next one starts

  // After the run, per origin peer (numbered in order of first use): the time
  // its messages spent sending, and whether messages to peers i and j (i == j:
  // two to one peer) were ever sending at the same time.
  Time busy(std::uint32_t peer) const { return peer < pairs_.size() ? pairs_[peer].busy : 0; }
  std::vector<std::vector<bool>> overlaps() const;

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  struct Flow {
    std::uint32_t pair = 0, message = 0;
    Time start = 0, finish = 0;
    bool freed = false, watched = false;
    Time watched_at = 0;  // when its pair-next event was scheduled
  };
  struct Queued {
    std::uint32_t message;
    std::uint64_t bytes;
  };
  struct Pair {
    Time latency = 0;
    BytesPerSecond bottleneck = 0;
    std::uint32_t active = kNone;  // the flow sending (FlowNetwork's route.active)
    std::vector<Queued> queue;     // messages waiting for it (front at queue_head)
    std::size_t queue_head = 0;
    Time busy = 0;
  };
  bool pair_busy(Pair& pair, Time now);
  void watch(std::uint32_t flow);
  void start(std::uint32_t pair, std::uint32_t message, std::uint64_t bytes);
  // Starts queued messages until one is sending; whether any started.
  bool advance(std::uint32_t pair);

  CarrierHost* host_ = nullptr;
  std::vector<Pair> pairs_;
  std::vector<Flow> flows_;               // every flow of the run, never reused
  std::vector<std::uint32_t> flow_of_;    // per message index in flight: its flow, or kNone
};

struct FlowPlan {
  bool exact = false;
  std::string why;
  SymmetricOutcome outcome;
  std::vector<Time> busy;  // per outcome.peers: the time its messages spent sending
};

// The representative run of `program` over `members` on `net`, its messages
// on `communicator`'s routes (Connection::communicator), and the proof above;
// `exact` only when both hold.
FlowPlan plan_on_flow(const CollectiveProgram& program, const std::vector<std::uint32_t>& members,
                      std::uint32_t communicator, const SystemConfig& config, SoloFlows& net);

}  // namespace sim
