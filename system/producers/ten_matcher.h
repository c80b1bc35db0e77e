// Greedy link-chunk matching on a time-expanded network (TACOS's idea): the
// schedule of an all-gather on a set of channels.
//
// A channel is a way for one NPU to hand a chunk to another without any other
// NPU on the way (a direct link, or a path through switches only). A transfer
// on it occupies every physical link of the path (its resources) for `cost`
// (path latency + chunk bytes / bottleneck bandwidth), as TACOS occupies a
// link for latency + chunk time; the chunk is at the destination at the end.
//
// Event-driven: at t = 0 and whenever transfers end, the chunks they carried
// land, then every idle channel whose resources are all free is offered
// (destinations in a random order, each one's channels from a random one on)
// the chunk its source holds and its destination neither holds
// nor expects that the fewest NPUs hold or expect yet (rarest first: a chunk
// few NPUs have is the one that can spread least otherwise; ties: random).
// A destination never expects a chunk twice, so no transfer is wasted. The
// schedule ends when every NPU holds every chunk. docs/synthesizer.md.
#pragma once

#include <cstdint>
#include <vector>

#include "core/time.h"
#include "network/topology.h"

namespace sim {

struct TenChannel {
  NodeId src = 0, dst = 0;    // NPUs
  std::vector<LinkId> links;  // physical links the transfer occupies
  Time cost = 0;              // occupancy of those links, and arrival delay, of one chunk (> 0)
};

struct TenTransfer {
  std::uint32_t channel = 0;
  std::uint32_t chunk = 0;
  Time start = 0, end = 0;
};

struct TenSchedule {
  std::vector<TenTransfer> transfers;  // in start-time order
  Time finish = 0;                     // when the last chunk lands
};

// All-gather of `chunks_per_npu` chunks per NPU: NPU j starts with chunks
// [j*k, (j+1)*k) of npus*k and every NPU must end with all of them. `links`:
// how many physical links the channels' ids index. Deterministic for a given
// `seed`. Throws InputError naming an NPU and a chunk it can never receive
// (the channels do not connect it).
TenSchedule match_all_gather(std::uint32_t npus, std::uint32_t chunks_per_npu, const std::vector<TenChannel>& channels,
                             std::uint32_t links, std::uint64_t seed);

}  // namespace sim
