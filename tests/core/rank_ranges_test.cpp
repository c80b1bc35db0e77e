#include "core/rank_ranges.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sim
