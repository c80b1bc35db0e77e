// `sim compare RESULTS REFERENCE [--tolerance 5%] [--metric time|busbw] [--plot FIG.png]`
//
// Matches every point of RESULTS with the REFERENCE point of the same
// collective, size and every label both files have (a sweep's axis columns,
// algorithm, npus, backend...), prints each deviation (ours - reference) /
// reference, and returns 0 when all are within the tolerance, 1 when any is
// outside (naming it), 2 for bad input (nothing matches, a point matches two
// reference rows, a file in no known format). Reference rows may be narrowed
// with --filter key=value (e.g. backend=analytical).
//
// `sim compare REFERENCE --preset NAME` makes the results instead: every
// reference row (after --filter) simulated on the preset generated at the
// row's node count (workflows/compare/preset_sizes.h), matched on `nodes` too.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace sim::workflows {

struct CompareOptions {
  std::string results, reference;
  double tolerance = 0.05;         // relative
  std::string metric = "time";     // time | busbw
  std::string plot;                // PNG overlay, empty: none
  std::string reference_collective;  // nccl-tests output that its file name does not tell
  std::vector<std::string> filters;  // key=value on reference labels
  std::string preset;                // simulate the reference on it instead of reading `results`
  unsigned jobs = 0;                 // --preset: threads simulating rows (0: one per core)
};

int compare_curves(const CompareOptions& options, std::ostream& out);

// "5%" -> 0.05, "0.05" -> 0.05; throws InputError, also for a number without
// '%' above 1 (5 is 500%, not 5%).
double parse_tolerance(const std::string& text);

}  // namespace sim::workflows
