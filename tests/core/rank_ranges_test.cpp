#include "core/rank_ranges.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace sim {
namespace {

TEST(RankRanges, RunsBecomeRangesAndLongListsAreCut) {
  std::vector<std::int64_t> ranks;
  for (std::int64_t r = 0; r < 2048; r += 8) {
    for (std::int64_t k = 0; k < 4; ++k) ranks.push_back(r + k);
  }
  const std::string s = rank_ranges(ranks);
  EXPECT_EQ(s.rfind("0-3, 8-11, 16-19, ", 0), 0u) << s;
  EXPECT_NE(s.find(", ... (1024 ranks)"), std::string::npos) << s;
  EXPECT_LE(s.size(), 100u) << s;
  EXPECT_EQ(rank_ranges({7, 2, 3, 4, 9, 10, 3}), "2-4, 7, 9, 10");
}

// A group's members in their order (its i-th member is its rank i), cut after 8 when over 10.
TEST(RankRanges, SequencesKeepTheirOrder) {
  EXPECT_EQ(rank_sequence(std::vector<std::int64_t>{4, 0, 5}), "[4, 0, 5]");
  EXPECT_EQ(rank_sequence(std::vector<std::uint32_t>{}), "[]");
  std::vector<std::uint32_t> ranks;
  for (std::uint32_t i = 0; i < 10; ++i) ranks.push_back(i);
  EXPECT_EQ(rank_sequence(ranks), "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]");
  ranks.push_back(10);
  EXPECT_EQ(rank_sequence(ranks), "[0, 1, 2, 3, 4, 5, 6, 7, ... (11 ranks)]");
}

}  // namespace
}  // namespace sim
