// Data-parallel replicas folded into one (exact workload symmetry).
//
// When the ranks of a job split into replicas that are the same up to a
// renaming of ranks (the data-parallel replicas of a generated training
// iteration), sit on network positions the renaming maps onto each other, and
// meet only in collectives whose members are one rank's copies (the
// data-parallel groups), every copy does what its replica-0 original does at
// the same picosecond. So only replica 0's ranks are simulated: their graphs
// are the run's graphs, and a collective over a rank's copies runs that
// rank's part alone, each message it receives arriving when the copy of its
// own matching send does (system/runner/collective_engine.h, "mirrored"
// instances). The rest of the world is mirrors: NPUs that appear as
// collective members, never as graphs.
//
// With a period P > 1, replicas 0..P-1 are simulated and replica k is a copy
// of replica k mod P: exact when shifting every rank by P replicas maps the
// network onto itself (a fat-tree whose leaf holds two replicas: the ring
// over the replicas crosses the spine at every other hop, so replica 1 does
// not do what replica 0 does, but replica 2 does). A collective over a rank's
// copies then runs its P simulated members' parts; a message a member sends
// to a copy is delivered to the simulated member that copy stands for, as the
// message from the sender's own copy shifted the same way.
#pragma once

#include <cstdint>
#include <vector>

namespace sim {

struct ReplicaFolding {
  std::uint32_t world = 0;               // ranks of the job (0: nothing folded)
  std::uint32_t replicas = 1;            // copies of each simulated rank, itself included
  std::uint32_t stride = 0;              // copy k of rank r is rank r + k x stride
  std::uint32_t period = 1;              // replicas simulated (0 .. period - 1); divides `replicas`
  std::vector<std::uint32_t> real_rank;  // per graph: the rank it is (its NPU too)
  std::vector<std::uint32_t> graph_of;   // per rank of the world: the graph it is or mirrors
  // Every rank a copy of one (identical traces, system/scenario/identical_ranks.h):
  // the run's result lists every rank, each the copy of rank 0's, and every
  // link the copy of its NPU's counterpart, as the full run gives them.
  bool expand_copies = false;
  // Collectives over copies that do not mirror exactly are timed alone
  // (system/runner/aggregation/stand_in.h: an approximation) instead of
  // refusing the fold. Period 1 only.
  bool stand_ins = false;
  bool active() const { return world != 0; }
  bool simulated(std::uint32_t rank) const { return real_rank[graph_of[rank]] == rank; }
};

}  // namespace sim
