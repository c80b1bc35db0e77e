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

#include <string>

#include "workflows/curve_table.h"

namespace sim::workflows {

// Throws InputError naming the file (and line) when it is none of these.
Curve read_curve(const std::string& path, const std::string& nccl_collective = "");

}  // namespace sim::workflows
