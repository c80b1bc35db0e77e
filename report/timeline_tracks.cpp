#include "report/timeline_tracks.h"

namespace sim {

namespace {
constexpr std::uint32_t kCommLane = 3;
constexpr std::uint32_t kLanes = 5;
}  // namespace

TimelineTracks::Placement TimelineTracks::place(const TimelineSlice& s) {
  if (s.rank >= ranks_.size()) ranks_.resize(s.rank + 1);
  RankTracks& r = ranks_[s.rank];
  Placement p;
  p.new_rank = !r.seen;
  r.seen = true;
  if (s.lane != kCommLane) {
    p.key = s.lane;
    p.new_track = !(r.lanes_seen & (1u << s.lane));
    r.lanes_seen |= 1u << s.lane;
    return p;
  }
  std::size_t k = 0;
  while (k < r.comm_free_at.size() && r.comm_free_at[k] > s.start) ++k;
  if (k == r.comm_free_at.size()) {
    r.comm_free_at.push_back(s.end);
    p.new_track = true;
  } else {
    r.comm_free_at[k] = s.end;
  }
  p.key = k == 0 ? kCommLane : kLanes + static_cast<std::uint32_t>(k) - 1;
  return p;
}

std::string TimelineTracks::track_name(std::uint32_t key) {
  static const char* const kNames[] = {"GPU compute", "CPU", "memory", "communication", "instant"};
  if (key < kLanes) return kNames[key];
  return "communication " + std::to_string(key - kLanes + 2);
}

}  // namespace sim
