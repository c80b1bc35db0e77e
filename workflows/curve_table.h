// A curve to compare: points keyed by collective, size and labels (the
// columns that say which series a point belongs to), each with a simulated or
// measured time and bus bandwidth. Every reference format reads into it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sim::workflows {

struct CurvePoint {
  std::string collective;  // Chakra name, ALL_REDUCE
  std::uint64_t bytes = 0; // per-rank buffer as the simulator counts it (comm_size)
  std::map<std::string, std::string> labels;
  std::optional<double> time_ns, busbw_gbps;
  std::string where;  // "file:line", for messages
  std::string id;     // "point 7" in a sim results CSV, else empty
};

struct Curve {
  std::string source;
  std::string format;  // "sim", "astra-sim", "reference-curve", "nccl-tests"
  std::vector<CurvePoint> points;
};

// Splits CSV text into rows of fields (RFC 4180 quoting); throws InputError
// naming `source` and the line for an unterminated quote.
struct CsvRow {
  std::size_t line = 0;  // where the row starts, from 1
  std::vector<std::string> fields;
};
std::vector<CsvRow> parse_csv(const std::string& text, const std::string& source);

// "ALL_REDUCE" from any spelling (all_reduce, allreduce); empty if unknown.
std::string canonical_collective(const std::string& name);

}  // namespace sim::workflows
