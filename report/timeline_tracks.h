// Which track of its rank each timeline slice goes on.
//
// GPU compute, CPU and memory run one node at a time, so each is one track.
// Communication slices of a rank overlap freely and a trace viewer wants the
// slices of one track nested or disjoint, so they are spread over as many
// communication tracks as overlap: a slice takes the first track free since
// its start. Slices arrive in completion order (ends never decrease), so a
// track's last end is its latest and "free since the start" means disjoint.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "system/runner/simulation.h"

namespace sim {

class TimelineTracks {
 public:
  // Track keys: the lane (0 GPU compute, 1 CPU, 2 memory, 3 communication,
  // 4 instant) for a lane's first track; 5, 6, ... for further communication tracks.
  struct Placement {
    std::uint32_t key = 0;
    bool new_rank = false;   // the rank's first slice
    bool new_track = false;  // the track's first slice
  };
  Placement place(const TimelineSlice& s);
  static std::string track_name(std::uint32_t key);

 private:
  struct RankTracks {
    bool seen = false;
    std::uint32_t lanes_seen = 0;  // bit per lane
    std::vector<Time> comm_free_at;
  };
  std::vector<RankTracks> ranks_;  // grows to the largest rank seen
};

}  // namespace sim
