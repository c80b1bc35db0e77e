// The attention tile schedule (compute/attention_schedule.h) against hand
// counts of its blocks.
#include <gtest/gtest.h>

#include "compute/attention_schedule.h"
#include "compute_test_util.h"

namespace sim {
namespace {

using namespace sim::testing;

// FLOP-equivalents of one 128 x 128 block at head_dim d.
double block(double d) { return 128.0 * 128.0 * (4 * d + 256); }

TEST(AttentionSchedule, OneHeadRunsItsLongestBlockLast) {
  // s = 512: row blocks of 1, 2, 3, 4 key blocks, one per SM: the busiest
  // SM runs the 4-block CTA.
  EXPECT_DOUBLE_EQ(attention_tile_work(attention(1, 1, 512, 128, true, false), 132), 4 * block(128) * 132);
  // Not causal: every CTA walks all 4 key blocks; d = 64 costs less per block.
  EXPECT_DOUBLE_EQ(attention_tile_work(attention(1, 1, 512, 64, false, false), 132), 4 * block(64) * 132);
  // A partial block counts whole: s = 300 is 3 blocks.
  EXPECT_DOUBLE_EQ(attention_tile_work(attention(1, 1, 300, 128, true, false), 132), 3 * block(128) * 132);
}

TEST(AttentionSchedule, GreedyOnFewSMs) {
  // 2 SMs, 2 heads of 3 row blocks (1, 2, 3 key blocks): launch order
  // 1,2,3,1,2,3 -> SM loads: a=1, b=2, a=1+3=4, b=2+1=3, b=3+2=5, a=4+3=7.
  EXPECT_DOUBLE_EQ(attention_tile_work(attention(2, 1, 384, 128, true, false), 2), 7 * block(128) * 2);
  // Batch and heads multiply: the same as 1 x 2.
  EXPECT_DOUBLE_EQ(attention_tile_work(attention(1, 2, 384, 128, true, false), 2), 7 * block(128) * 2);
}

TEST(AttentionSchedule, ManyWavesApproachTheAverage) {
  // 132 SMs, 1,320 heads of one block each: exactly 10 waves.
  EXPECT_DOUBLE_EQ(attention_tile_work(attention(1, 1320, 128, 128, true, false), 132), 10 * block(128) * 132);
  // Past the simulated 2^18 CTAs each head adds its average share: within a
  // longest CTA of the total work spread evenly.
  const KernelShape big = attention(16, 128, 32768, 128, true, false);  // 256 blocks, 2048 heads: 2^19 CTAs
  const double even = 2048.0 * 256 * 257 / 2 * block(128);
  EXPECT_GE(attention_tile_work(big, 132), even);
  EXPECT_LE(attention_tile_work(big, 132), even + 256 * block(128) * 132);
}

}  // namespace
}  // namespace sim
