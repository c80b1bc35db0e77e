// Rank lists for people: runs of consecutive ranks as ranges, cut short so
// that a message naming thousands of ranks stays one readable line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sim {

// "0-3, 8-11, 16" for {0,1,2,3,8,9,10,11,16} (any order, duplicates ignored);
// past `max_chars` the list ends in ", ... (512 ranks)" with the total count.
std::string rank_ranges(std::vector<std::int64_t> ranks, std::size_t max_chars = 80);

}  // namespace sim
