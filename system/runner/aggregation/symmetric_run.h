// Exact step aggregation: one rank's run of a rank-symmetric collective
// stands for every rank's.
//
// When every rank of a collective starts it at the same instant on idle
// egress ports, runs a rank-symmetric program (collective_program.h:
// rank_symmetric()) and sees the same route costs towards its peers, then on
// the analytical backend every rank does the same thing at the same time:
// rank p sends what the origin sends, to the origin's peer moved by the
// program's symmetry, at the same picosecond, and receives its messages when
// the origin's own matching sends are delivered. So the whole collective is
// the origin's run, simulated alone here on a private event queue, with the
// network's closed form per message:
//
//   start = max(now, egress free time of the first link), sent = start + beta,
//   delivery = sent + route latency          (network/analytical/analytical_network.h)
//
// Equal-time ties. In the per-message run, two events of one rank at the same
// picosecond leave in the order they were scheduled; when both were scheduled
// at the same picosecond by *different* ranks (the origin and a peer, or two
// peers), that order depends on how the ranks' events interleave, which the
// origin's run alone cannot know, and ranks may then even act differently. So
// the run is certified exact only if no two events of the origin at one time
// that do something (issue an op or inject a message) were scheduled at one
// time by different ranks; otherwise it reports `exact = false` and the
// caller simulates every message as usual. Events scheduled at different
// times, or by the same rank, leave in the same order in both runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/time.h"
#include "system/runner/aggregation/message_carrier.h"
#include "system/config/system_config.h"
#include "system/program/collective_program.h"

namespace sim {

// The route from the origin to one of its peers, as the analytical backend prices it.
struct SymmetricPeerCost {
  Time latency = 0;               // route latency plus the per-message latency
  BytesPerSecond bandwidth = 0;   // the route's bottleneck
  std::uint32_t first_link = 0;   // the origin's egress port for it
};

struct SymmetricOutcome {
  bool exact = false;
  std::string why;  // when not exact: the reason (for tests and diagnostics)
  Time duration = 0;           // from the common start to the origin's last op
  std::uint64_t events = 0;    // events of the origin's run
  std::uint64_t messages = 0;  // messages the origin sent
  struct Peer {
    std::uint32_t peer = 0;  // group position the origin sent to
    std::uint64_t bytes = 0, messages = 0;
    Time egress_free = 0;    // its first link's egress free time at the end (relative)
  };
  std::vector<Peer> peers;  // in order of first use
};

// Runs the origin (program.symmetric_origin()) of `program` alone from time
// 0. `cost(peer)` prices the origin's route to `peer`; `serialize_egress` is
// the analytical backend's egress rule.
SymmetricOutcome run_symmetric(const CollectiveProgram& program, const SystemConfig& config, bool serialize_egress,
                               const std::function<SymmetricPeerCost(std::uint32_t peer)>& cost);
// The same with another backend's rule per message (message_carrier.h); the
// outcome's egress free times are then 0.
SymmetricOutcome run_symmetric(const CollectiveProgram& program, const SystemConfig& config, MessageCarrier& carrier,
                               const std::function<SymmetricPeerCost(std::uint32_t peer)>& cost);

}  // namespace sim
