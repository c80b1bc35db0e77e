// Which node runs a timeline keeps: --timeline-ranks 0-3,7 and
// --timeline-window 1ms:2ms, so a huge run can be traced in part.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "system/runner/simulation.h"

namespace sim {

class TimelineFilter {
 public:
  // "0-3,7": ranks 0 to 3 and 7. Empty text keeps every rank. Throws
  // InputError naming the option and the item at fault.
  void set_ranks(const std::string& text);
  // "1ms:2ms", "1ms:" or ":2ms" (units as in configs; a bare number is ns).
  // A slice is kept when it overlaps the window, ends included.
  void set_window(const std::string& text);

  bool keeps(std::uint32_t rank, Time start, Time end) const {
    return end >= from_ && start <= to_ && (ranks_.empty() || keeps_rank(rank));
  }
  bool keeps(const TimelineSlice& s) const { return keeps(s.rank, s.start, s.end); }
  bool keeps_rank(std::uint32_t rank) const;
  // InputError when the ranks named reach past a run of `count` ranks: the
  // timeline would lack them silently (empty for a list of absent ranks alone).
  void check_ranks(std::uint32_t count) const;

 private:
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranks_;  // inclusive ranges
  std::string ranks_text_;                                        // as given, for messages
  Time from_ = std::numeric_limits<Time>::min();
  Time to_ = std::numeric_limits<Time>::max();
};

}  // namespace sim
