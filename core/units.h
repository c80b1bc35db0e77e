// Parsing of quantities written in configs: bandwidths, times, sizes.
//
// A bare bandwidth number is GB/s (1e9 B/s); a bare time is nanoseconds; a bare
// size is bytes. Written units are accepted, case-sensitive where SI demands it
// (b = bit, B = byte): "400Gbps", "400Gb/s", "50GB/s", "50GiB/s", "1.5TB/s",
// "500ns", "1us", "0.5ms", "2ps", "1MiB", "64KB".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/time.h"

namespace sim {

// Each throws std::invalid_argument with a message that quotes the text.
BytesPerSecond parse_bandwidth(std::string_view text);
Time parse_time(std::string_view text);
std::uint64_t parse_size(std::string_view text);

// Multiplier for bare bandwidth numbers: 1e9 (GB/s, ours) or 2^30 (GiB/s, ASTRA-sim).
BytesPerSecond parse_bandwidth(std::string_view text, double bare_unit);

std::string format_bandwidth(BytesPerSecond bw);  // "50 GB/s"
std::string format_bytes(std::uint64_t bytes);    // "1 MiB (1048576 B)"

}  // namespace sim
