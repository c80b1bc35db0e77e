// Pieces NCCL's programs share (nccl_programs.cpp, nccl_ring_program.cpp):
// how many loops a channel runs, the rings' order of a node's GPUs, message
// tags, what a GPU-side reduction's read costs, the proxy's time per message.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/time.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/programs/nccl_programs.h"

namespace sim::nccl {

// Loops (chunks) per channel: the protocol's step size, but at most kMaxLoops
// (bigger steps beyond): the pacing sets the bandwidth whatever the step, and
// a forced LL at gigabytes would otherwise be millions of ops.
constexpr std::uint64_t kMaxLoops = 64;

inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b, std::uint64_t most = kMaxLoops) {
  return a == 0 ? 1 : std::min<std::uint64_t>((a + b - 1) / b, most);
}

// Each domain's positions ordered by rail, rotated by `shift`.
inline std::vector<std::vector<std::uint32_t>> chains(const AlgorithmContext& ctx, std::uint32_t shift) {
  std::vector<std::vector<std::uint32_t>> by = ctx.positions_by_domain();
  for (auto& d : by) {
    std::stable_sort(d.begin(), d.end(), [&](std::uint32_t a, std::uint32_t b) { return ctx.rail_of[a] < ctx.rail_of[b]; });
    if (!d.empty()) std::rotate(d.begin(), d.begin() + shift % d.size(), d.end());
  }
  return by;
}

inline std::uint64_t tag_of(std::uint32_t channel, std::uint64_t chunk, std::uint64_t low) {
  return static_cast<std::uint64_t>(channel) << 48 | chunk << 24 | low;
}

// StepModel::proxy in whole nanoseconds (CollectiveOp::proxy_ns).
inline std::uint32_t proxy_nanoseconds(Time t) {
  const Time ns = (t + kNanosecond / 2) / kNanosecond;
  if (ns > 0xffffffff) {
    throw InputError("nccl: proxy=" + format_time(t) + " is beyond 4.295 s, the most one send's proxy time can be "
                     "(proxy is the time per network message, e.g. 2us; docs/nccl.md)");
  }
  return static_cast<std::uint32_t>(ns);
}

// The proxy time of a send that stands for `messages` of NCCL's network
// messages (programs cap their loops, so one send may carry many steps):
// refused, not cut short, beyond what CollectiveOp::proxy_ns holds.
inline std::uint32_t proxy_time_ns(std::uint64_t messages, std::uint32_t per_message_ns) {
  if (per_message_ns > 0 && messages > 0xffffffffull / per_message_ns) {
    throw InputError("nccl: proxy=" + format_time(static_cast<Time>(per_message_ns) * kNanosecond) + " on a send of " +
                     std::to_string(messages) + " network messages is beyond 4.295 s, the most one send's proxy time "
                     "can be (proxy is the time per network message, e.g. 2us; docs/nccl.md)");
  }
  return static_cast<std::uint32_t>(messages * per_message_ns);
}

// The proxy's time for a send of `wire` bytes where NCCL's network message
// (a step) is `step_wire` bytes on the wire: one message up to a step; beyond
// it (a program that caps its loops merges a channel's steps into fewer
// sends), the steps it carries in proportion, so that a channel's sends
// together stand for NCCL's count, not one more per send.
inline std::uint32_t merged_proxy_ns(std::uint64_t wire, std::uint64_t step_wire, std::uint32_t per_message_ns) {
  if (wire <= step_wire || step_wire == 0) return proxy_time_ns(1, per_message_ns);
  proxy_time_ns((wire + step_wire - 1) / step_wire, per_message_ns);  // refuses what does not fit
  return static_cast<std::uint32_t>(std::llround(static_cast<double>(wire) / static_cast<double>(step_wire) *
                                                 static_cast<double>(per_message_ns)));
}

// The network device's extra bytes (NetWrites) for the same send: each of
// the NCCL messages it carries writes its own stripes.
inline std::uint64_t merged_write_extra(const NetWrites& writes, std::uint64_t wire, std::uint64_t step_wire) {
  if (wire <= step_wire || step_wire == 0) return writes.extra(wire, 1);
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(wire) / static_cast<double>(step_wire) *
                                                 static_cast<double>(writes.extra(step_wire, 1))));
}

// How long a send holds its slot of the connection. A connection has
// NCCL_STEPS slots, and a sender writes a chunk only into a slot the receiver
// has freed and told it of: across nodes the receiver's proxy posts the
// slot's next receive once the GPU has taken the chunk, and the sender learns
// of it a network hop later (src/transport/net.cc: a network isend goes only
// to a posted receive); inside a node the receiver's GPU writes the sender's
// head pointer over NVLink. So a slot takes its next chunk two of the
// connection's hops after the send ended: the chunk's hop to the receiver
// (the latency it waits there) and the freed slot's hop back. A send that
// merges q of NCCL's steps (a program's loop cap) holds its slot q such
// cycles, so a window of merged sends keeps NCCL's pace of a window of steps.
inline Time slot_cycle(Time hop, std::uint64_t wire, std::uint64_t step_wire) {
  if (hop <= 0) return 0;
  if (wire <= step_wire || step_wire == 0) return 2 * hop;
  return static_cast<Time>(std::llround(2.0 * static_cast<double>(hop) * static_cast<double>(wire) /
                                        static_cast<double>(step_wire)));
}

// A GPU-side reduction's read of the rank's own addend (NCCL's
// recvReduceSend, recvReduceCopySend: two loads and one store per element
// where a copy's recvCopySend has one load). The operand received from a peer
// sits in NCCL's staging slots, recycled every few steps (in the L2, like a
// copy's); the addend is the rank's buffer, read from HBM at the channel's
// share of StepModel::memory_bandwidth (0 when the buffer fits the L2, or no
// bandwidth is known: free). Every algorithm charges its reductions here.
class AddendReads {
 public:
  explicit AddendReads(const StepModel& m)
      : read_rate_(m.memory_bandwidth > 0 ? static_cast<double>(m.memory_bandwidth) / m.channels : 0) {}
  bool charged() const { return read_rate_ > 0; }
  // The pacing rate of a send that carries a sum the sender made: its wire
  // bytes at `rate` (0: unpaced, the network alone sets its pace), then the
  // same threads' read of the payload's addend.
  BytesPerSecond summing_rate(BytesPerSecond rate, std::uint64_t wire, std::uint64_t payload) const {
    if (!charged() || wire == 0) return rate;
    const double wire_s = rate > 0 ? static_cast<double>(wire) / static_cast<double>(rate) : 0.0;
    const double seconds = wire_s + static_cast<double>(payload) / read_rate_;
    return static_cast<BytesPerSecond>(std::llround(static_cast<double>(wire) / seconds));
  }
  // The read alone: a reduction with no send of its own to pace it.
  Time read_time(std::uint64_t payload) const {
    return charged() ? transfer_time(payload, static_cast<BytesPerSecond>(std::llround(read_rate_))) : 0;
  }

 private:
  double read_rate_;
};

}  // namespace sim::nccl
