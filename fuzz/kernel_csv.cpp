// A kernel table CSV (compute/kernel_table.h) as `sim compute time` and the
// kernel model read it: every sample read must be a positive finite time of a
// shape with positive sizes.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "compute/kernel_table.h"
#include "fuzz/harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  fuzz::expect_clean("kernel_csv", [&] {
    const KernelCsv csv = parse_kernel_csv(fuzz::text_of(data, size), "fuzz/kernels.csv");
    for (const KernelCsvRow& row : csv.rows) {
      for (const KernelSample& s : row.samples) {
        if (!std::isfinite(s.seconds) || !(s.seconds > 0) || s.shape.describe().empty()) {
          std::fprintf(stderr, "kernel_csv: line %zu: a sample breaks the reader's promises\n", row.line);
          std::abort();
        }
      }
    }
  });
  return 0;
}
