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

// "[4, 0, 5]": the ranks in their order (a group's i-th member is its rank
// i), the first 8 and the count when there are more than 10.
std::string rank_sequence(const std::vector<std::int64_t>& ranks);
std::string rank_sequence(const std::vector<std::uint32_t>& ranks);

}  // namespace sim
