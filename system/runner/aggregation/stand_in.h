// Stand-ins: a collective over a rank's folded copies timed alone.
//
// Folded replicas (system/groups/replica_folding.h) are exact when every copy
// of a rank does what the rank does at the same picosecond. NCCL's programs
// across a multi-level fabric break that on purpose: its tree gives a root,
// inner nodes and leaves different work, and its ring over the data-parallel
// ranks of a rail-optimised fat-tree crosses the spine once per leaf, so the
// copies finish a data-parallel collective at slightly different times. Their
// exact answer is every rank simulated (or a period of replicas, a leaf's
// worth at a time: 4,096 of 16,384 ranks on the Llama 3 run).
//
// A stand-in keeps one replica simulated and times such a collective by
// running it alone, every member from one instant, on a private copy of the
// network (an engine of its own: every message, every channel, the switch
// operations), and ends it on the simulated rank when its slowest member
// ends: each replica is taken to be as late as the latest, which is what the
// next collective over the copies waits for anyway. What it leaves out, and
// so the approximation it is:
//
// - traffic beside it: the collective's messages do not share links with the
//   simulated ranks' other messages (pipeline sends through the same NIC),
//   nor do they appear in link statistics; on a backend that shares links
//   (PortLoads: flow) a load on each simulated rank's port stands for them
//   there (CollectiveEngine::start_stand_in);
// - copies that start it at different times: every copy starts when the
//   simulated rank does (the folding premise);
// - the spread between members (slowest minus fastest finish), which a real
//   replica may gain or lose once: reported per run.
//
// It is exact when the collective is alone on the network and its members
// start together (a workload of that collective alone: tested).
//
// With context parallelism the group is replica 0's cp ranks followed by
// their copies (system/groups/group_table.cpp, add_mirrored): each of the cp
// simulated ranks ends when the slowest of its own copies would, once all of
// them have joined (CollectiveEngine, start_stand_in).
//
// The private run itself is the engine's (system/runner/engine/time_alone.h, which
// fills a StandInTiming); this file holds what the engine shares out and
// caches, so it includes nothing of the engine.
//
// Timings are cached on the program and on the members' placement up to the
// network's symmetry: on a stack of Switch dimensions (the only networks
// folding accepts) a renaming of the coordinate values of each dimension maps
// the network onto itself, so two member lists that split alike along every
// dimension, running the same program, take the same time.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/time.h"
#include "network/topology.h"
#include "system/program/collective_program.h"

namespace sim {

struct StandInTiming {
  Time slowest = 0;  // from the common start to the last member's end
  Time fastest = 0;  // ... to the first member's end
  std::vector<Time> ends;  // ... to each member's end, in member order
  // The busiest NPU egress port's share of `slowest` (its bytes at its
  // bandwidth over `slowest`, at most 1): how much of the ports that
  // serialize messages on the analytical backend the collective holds while
  // it runs, which concurrent stand-ins of one rank share (StandInShare). On
  // a backend that shares links (flow): the busiest link's busy share.
  double load = 0;
  std::uint64_t events = 0;  // events the private run processed
};

// Stand-ins of one simulated rank that overlap (gradient buckets issued back
// to back; collectives of a rank run concurrently, docs/system.md) share its
// links as their messages would: each progresses through its alone-time at
// the common rate min(1, 1 / sum of loads), so collectives that each hold a
// fraction of the busiest link run side by side, and ones that fill it take
// turns' worth of time. A lone stand-in takes exactly its alone-time.
class StandInShare {
 public:
  // Brings every active stand-in's remaining work up to `now`.
  void advance(Time now);
  // Adds one (call advance first); `work` is its alone-time.
  void add(std::uint32_t id, Time work, double load);
  // When the next active stand-in ends at the current rate (-1: none).
  Time next_end(Time now) const;
  // Removes and returns those whose work is done at `now` (call advance first).
  std::vector<std::uint32_t> take_done();
  std::uint64_t version = 0;  // bumped on every change: stale end events are ignored

  // For a share paced from outside (the flow backend's port loads: the
  // engine's port_stand_ins), which moves the work on itself:
  bool empty() const { return active_.empty(); }
  // The least alone-time left among the active ones.
  double least() const;
  // The sum of the active ones' loads.
  double load() const;
  // Every active one has done `work` more of its alone-time.
  void consume(double work);

 private:
  struct Active {
    std::uint32_t id;
    double remaining;  // picoseconds of alone-time left
    double load;
  };
  double rate() const;
  std::vector<Active> active_;
  Time updated_ = 0;
};

// The members' placement up to renaming each dimension's coordinate values:
// per member and dimension, the rank in the group of its coordinate's first
// appearance. Equal vectors <=> a symmetry of a Switch stack maps one member
// list onto the other, member by member.
std::vector<std::uint32_t> placement_shape(const std::vector<TopologyDimension>& dims,
                                           const std::vector<std::uint32_t>& members);

// A fingerprint of what `program` does, for the timing cache: two 64-bit
// hashes of its name, size, every member's op count and the ops of four
// members (first, second, middle, last) in walking order. Programs are
// functions of their request and the members' topology view, so two programs
// that agree here over equally shaped members are taken to be the same.
std::pair<std::uint64_t, std::uint64_t> program_fingerprint(const CollectiveProgram& program);

}  // namespace sim
