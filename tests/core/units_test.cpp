#include "core/units.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace sim {
namespace {

TEST(ParseBandwidth, BareNumberIsGigabytesPerSecond) {
  EXPECT_EQ(parse_bandwidth("50"), 50'000'000'000u);
  EXPECT_EQ(parse_bandwidth("12.5"), 12'500'000'000u);
}

TEST(ParseBandwidth, ByteUnits) {
  EXPECT_EQ(parse_bandwidth("50GB/s"), 50'000'000'000u);
  EXPECT_EQ(parse_bandwidth("50GBps"), 50'000'000'000u);
  EXPECT_EQ(parse_bandwidth("12.5GB/s"), 12'500'000'000u);
  EXPECT_EQ(parse_bandwidth("50 GB/s"), 50'000'000'000u);
  EXPECT_EQ(parse_bandwidth("50GiB/s"), 50ull << 30);
  EXPECT_EQ(parse_bandwidth("1.5TB/s"), 1'500'000'000'000u);
  EXPECT_EQ(parse_bandwidth("100MB/s"), 100'000'000u);
  EXPECT_EQ(parse_bandwidth("3MiB/s"), 3u << 20);
  EXPECT_EQ(parse_bandwidth("2KB/s"), 2'000u);
  EXPECT_EQ(parse_bandwidth("2KiB/s"), 2'048u);
  EXPECT_EQ(parse_bandwidth("7B/s"), 7u);
}

TEST(ParseBandwidth, BitUnitsDivideByEight) {
  EXPECT_EQ(parse_bandwidth("400Gbps"), 50'000'000'000u);
  EXPECT_EQ(parse_bandwidth("400Gb/s"), 50'000'000'000u);
  EXPECT_EQ(parse_bandwidth("1.6Tbps"), 200'000'000'000u);
  EXPECT_EQ(parse_bandwidth("100Mbps"), 12'500'000u);
  EXPECT_THROW(parse_bandwidth("1bps"), std::invalid_argument);  // 1/8 B/s
}

TEST(ParseBandwidth, BareUnitForAstraSim) {
  EXPECT_EQ(parse_bandwidth("50", 1 << 30), 53'687'091'200u);
  EXPECT_EQ(parse_bandwidth("0.5", 1 << 30), 1u << 29);
  // A written unit wins over the bare unit.
  EXPECT_EQ(parse_bandwidth("50GB/s", 1 << 30), 50'000'000'000u);
}

TEST(ParseBandwidth, ExponentIsExact) {
  EXPECT_EQ(parse_bandwidth("5e10B/s"), 50'000'000'000u);
  EXPECT_EQ(parse_bandwidth("1.25e-1GB/s"), 125'000'000u);
}

TEST(ParseTime, Units) {
  EXPECT_EQ(parse_time("500"), 500 * kNanosecond);
  EXPECT_EQ(parse_time("500ns"), 500'000);
  EXPECT_EQ(parse_time("1.5us"), 1'500'000);
  EXPECT_EQ(parse_time("0.5ms"), 500'000'000);
  EXPECT_EQ(parse_time("2s"), 2'000'000'000'000);
  EXPECT_EQ(parse_time("2ps"), 2);
  EXPECT_EQ(parse_time("0.001ns"), 1);
  EXPECT_EQ(parse_time("0"), 0);
}

TEST(ParseSize, Units) {
  EXPECT_EQ(parse_size("1048576"), 1'048'576u);
  EXPECT_EQ(parse_size("1MiB"), 1'048'576u);
  EXPECT_EQ(parse_size("64KB"), 64'000u);
  EXPECT_EQ(parse_size("64KiB"), 65'536u);
  EXPECT_EQ(parse_size("1.5GiB"), 1'610'612'736u);
  EXPECT_EQ(parse_size("2GB"), 2'000'000'000u);
  EXPECT_EQ(parse_size("3B"), 3u);
}

// The message must quote the offending text so users can find it.
void expect_rejected(const std::string& text, const std::string& reason, std::uint64_t (*parse)(std::string_view)) {
  try {
    parse(text);
    ADD_FAILURE() << "accepted '" << text << "'";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'" + text + "'"), std::string::npos) << what;
    EXPECT_NE(what.find(reason), std::string::npos) << what;
  }
}

std::uint64_t bandwidth(std::string_view t) { return parse_bandwidth(t); }
std::uint64_t time(std::string_view t) { return static_cast<std::uint64_t>(parse_time(t)); }
std::uint64_t size(std::string_view t) { return parse_size(t); }

TEST(ParseQuantity, RejectsBadText) {
  expect_rejected("", "empty", bandwidth);
  expect_rejected("-5", "negative", bandwidth);
  expect_rejected("-1ns", "negative", time);
  expect_rejected("fast", "not a number", bandwidth);
  expect_rejected("50GBs", "unknown unit 'GBs'", bandwidth);
  expect_rejected("50 gb/s", "unknown unit", bandwidth);
  expect_rejected("5 min", "unknown unit", time);
  expect_rejected("1.2.3", "unknown unit", size);
  expect_rejected("0.5ps", "whole number", time);
  expect_rejected("0.5B", "whole number", size);
  expect_rejected("1.5", "whole number", size);
  expect_rejected("99999999999TB", "out of range", size);
  expect_rejected("10000000000s", "out of range", time);
}

TEST(FormatBandwidth, ExactDecimal) {
  EXPECT_EQ(format_bandwidth(50'000'000'000u), "50 GB/s");
  EXPECT_EQ(format_bandwidth(12'500'000'000u), "12.5 GB/s");
  EXPECT_EQ(format_bandwidth(53'687'091'200u), "53.6870912 GB/s");
  EXPECT_EQ(format_bandwidth(1'600'000'000'000u), "1.6 TB/s");
  EXPECT_EQ(format_bandwidth(12'500'000u), "12.5 MB/s");
  EXPECT_EQ(format_bandwidth(999u), "999 B/s");
  EXPECT_EQ(format_bandwidth(0u), "0 B/s");
}

TEST(FormatBandwidth, RoundTrips) {
  for (const BytesPerSecond bw : {1ull, 1'234ull, 50'000'000'000ull, 53'687'091'200ull, 1'600'000'000'000ull}) {
    EXPECT_EQ(parse_bandwidth(format_bandwidth(bw)), bw);
  }
}

TEST(FormatBytes, BinaryUnitsWithExactBytes) {
  EXPECT_EQ(format_bytes(1'048'576u), "1 MiB (1048576 B)");
  EXPECT_EQ(format_bytes(1'572'864u), "1.50 MiB (1572864 B)");
  EXPECT_EQ(format_bytes(1'048'577u), "1.00 MiB (1048577 B)");
  EXPECT_EQ(format_bytes(2048u), "2 KiB (2048 B)");
  EXPECT_EQ(format_bytes(1u << 30), "1 GiB (1073741824 B)");
  EXPECT_EQ(format_bytes(512u), "512 B");
  EXPECT_EQ(format_bytes(0u), "0 B");
}

}  // namespace
}  // namespace sim
