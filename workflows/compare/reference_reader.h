// Reads a curve from any supported file, told apart by its content:
//   - a `sim sweep` results.csv (header starting `point,`): labels are the
//     axis columns, `algorithm` and `npus`; failed points are skipped;
//   - ASTRA-sim's results CSV (backend,topology,npus,collective,algorithm,
//     size_bytes,sim_time_ns): its backends congestion_unaware / congestion_aware
//     are labelled as ours, analytical / flow;
//   - a measured reference curve CSV (system,ranks,collective,size_bytes,
//     time_us,algbw_GBps,busbw_GBps,...), as in ../shared/testdata/reference-curves;
//   - nccl-tests text output (workflows/nccl_tests_parser.h).
#pragma once

#include <cstdint>
#include <string>

#include "workflows/compare/curve_table.h"

namespace sim::workflows {

// Every value is checked where it is read, and an error names the file, line
// and column: sizes are byte counts above 0; times finite, at most 10^16 ns,
// and above 0 in a measured curve (reference CSV, nccl-tests) or 0 or more in
// a simulated one; bandwidths finite and 0 or more (nccl-tests prints 0.00
// for small sizes), and in a measured curve within 2% of what its size and
// time give (algbw_GBps and busbw_GBps, curve_table.h's
// check_given_bandwidth). A header naming a column twice is an error.

// Throws InputError naming the file (and line) when it is none of these.
Curve read_curve(const std::string& path, const std::string& nccl_collective = "");
// The same for text already read; `path` names it in messages.
Curve parse_curve(const std::string& text, const std::string& path, const std::string& nccl_collective = "");

// Curve files are at most this large (a 256-rank NCCL_DEBUG=INFO log is far below).
inline constexpr std::uint64_t kMaxCurveFileBytes = std::uint64_t{256} << 20;

}  // namespace sim::workflows
