#include "core/time.h"

#include <gtest/gtest.h>

namespace sim {
namespace {

TEST(TransferTime, ExactForPowerOfTwoSizes) {
  EXPECT_EQ(transfer_time(1'048'576, 50'000'000'000), 20'971'520);
  EXPECT_EQ(transfer_time(1, 1'000'000'000'000), 1);
  EXPECT_EQ(transfer_time(0, 50'000'000'000), 0);
}

TEST(TransferTime, RoundsUpToNextPicosecond) {
  EXPECT_EQ(transfer_time(1, 3'000'000'000'000), 1);    // 0.33 ps
  EXPECT_EQ(transfer_time(2, 3'000'000'000'000), 1);    // 0.67 ps
  EXPECT_EQ(transfer_time(4, 3'000'000'000'000), 2);    // 1.33 ps
  EXPECT_EQ(transfer_time(1, 50'000'000'000), 20);      // exactly 20 ps
  EXPECT_EQ(transfer_time(3, 7'000'000'000), 429);      // 428.57 ps
}

TEST(TransferTime, LargeSizesDoNotOverflow) {
  EXPECT_EQ(transfer_time(1ull << 30, 50'000'000'000), 21'474'836'480);
  EXPECT_EQ(transfer_time(1ull << 40, 50'000'000'000), 21'990'232'555'520);
}

TEST(TransferTime, ZeroBandwidthThrows) { EXPECT_THROW(transfer_time(1, 0), std::invalid_argument); }

TEST(FormatNs, ExactDecimalNanoseconds) {
  EXPECT_EQ(format_ns(21'471'520), "21471.52");
  EXPECT_EQ(format_ns(500'000), "500");
  EXPECT_EQ(format_ns(1), "0.001");
  EXPECT_EQ(format_ns(0), "0");
  EXPECT_EQ(format_ns(-1'500), "-1.5");
}

}  // namespace
}  // namespace sim
