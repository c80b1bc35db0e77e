// The text nccl-tests prints (all_reduce_perf, all_gather_perf, ...):
//
//   # nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) ...
//   #
//   # Using devices
//   #  Rank  0 Group  0 Pid  1234 on host device  0 [0x07] NVIDIA H100 80GB HBM3
//   ...
//   #                                   out-of-place                       in-place
//   #       size         count      type   redop    root     time   algbw   busbw #wrong     time ...
//   #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us) ...
//          1024           256     float     sum      -1    25.31    0.04    0.07      0    24.90 ...
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 45.6
//
// The column header (with or without `root`, `#wrong` or `error`) says which
// fields a row has. The out-of-place time (us) and busbw are read. The output
// does not name its collective: it is given, or taken from the file name
// (all_gather_perf.txt). nccl-tests prints all-gather sizes as the gathered
// total; the simulator's all-gather size is the per-rank input, so those are
// divided by the rank count (the `Rank` lines), and must be a multiple of it.
//
// Every value is checked: the size a byte count above 0, the time a finite
// number of us above 0, algbw and busbw finite, 0 or more and within 2% of
// what the size and time give (curve_table.h's check_given_bandwidth); the
// `Rank` lines list each rank from 0 up once. A row whose check found wrong
// values (its out-of-place `#wrong` above 0) or a log that says
// `Out of bounds values : N FAILED` is a failed run, not a measurement.
// Errors name the file, line and column.
//
// Output printed through a launcher carries a prefix on every line:
// `[1,0]<stdout>:` (mpirun --tag-output) or `0: ` (srun --label). When every
// non-blank line has one, of one form, they are stripped, and only the lines
// of the rank that printed the column header are read (the others' are
// NCCL's log lines); line numbers stay those of the file.
#pragma once

#include <string>

#include "workflows/compare/curve_table.h"

namespace sim::workflows {

struct NcclTestsOutput {
  std::uint32_t ranks = 0;   // `Rank` lines (0: not printed)
  std::uint32_t hosts = 0;   // the distinct hosts the `Rank` lines name ("on <host>"; 0: none named)
  std::uint32_t most_on_a_host = 0;  // the most `Rank` lines naming one host
  double avg_busbw_gbps = -1;  // the `Avg bus bandwidth` summary (-1: absent)
  Curve curve;
};

// `text` without the launcher prefixes described above (unchanged when not
// every non-blank line carries one of the same form).
std::string without_launcher_prefixes(const std::string& text);

// Whether `text` looks like nccl-tests output (its column header).
bool looks_like_nccl_tests(const std::string& text);

// `collective` may be empty (then from `source`'s file name). Throws
// InputError naming the file and line for a malformed row or an unknown collective.
NcclTestsOutput parse_nccl_tests(const std::string& text, const std::string& source, const std::string& collective);

}  // namespace sim::workflows
