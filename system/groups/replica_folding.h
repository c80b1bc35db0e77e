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
// own matching send does (system/runner/engine/collective_engine.h, "mirrored"
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
//
// Copies may also come in cycles (`ring`): a dense model's context-parallel
// ranks are copies of each other too (ring attention runs the same ops at
// every position of the ring), so copy k = c + ring x d is context rank c of
// replica d, and the workload is the same under c -> c + 1 (mod ring) and
// d -> d + 1. A rank then sends to its own copies (the K/V exchanges to the
// next context rank): by the shift that takes that copy to the rank itself,
// the message is the one the rank receives from copy mirror(k) at the same
// picosecond, so it is delivered back to the rank, matched by its tag
// (system/runner/simulation.cpp checks, before the run, that every such
// exchange pairs so and every copy's route is priced as the rank's).
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
  // Copies in cycles of `ring` (above; 1: none). Period 1 only.
  std::uint32_t ring = 1;
  // A mixture of experts' copies, whose all-to-alls cross nodes from every
  // GPU: a mirrored route's bottleneck past its port (a neighbour's rail on a
  // rail-optimised network) is a queue that several simulated senders may
  // reach at the same picosecond, served in the order their events run,
  // which the run of every rank need not repeat (ties broken otherwise: the
  // fold is then approximate, off by up to about a percent). Refused when
  // `queues_at_ports_only`; else allowed with `queues_approximate` (stand-ins
  // allowed) and the result says so.
  bool queues_at_ports_only = false;
  bool queues_approximate = false;
  bool active() const { return world != 0; }
  // The copy whose message to a rank mirrors the rank's own message to its
  // copy k: each of k's digits (c, d) negated, c modulo ring and d modulo
  // replicas / ring.
  std::uint32_t mirror(std::uint32_t k) const {
    const std::uint32_t c = k % ring, d = k / ring, cycles = replicas / ring;
    return (ring - c) % ring + ring * ((cycles - d) % cycles);
  }
  // Copy j moved by copy k, digit by digit (the copy j's message to its
  // counterpart reaches, as the rank's reaches copy k).
  std::uint32_t shifted(std::uint32_t j, std::uint32_t k) const {
    const std::uint32_t cycles = replicas / ring;
    return (j % ring + k % ring) % ring + ring * ((j / ring + k / ring) % cycles);
  }
  bool simulated(std::uint32_t rank) const { return real_rank[graph_of[rank]] == rank; }
};

}  // namespace sim
