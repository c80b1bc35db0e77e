// How long a COMP node runs on its device: the interface the runner times
// compute through, and the models behind it (one file each):
//
//   compute/roofline.h      peak FLOP/s (per dtype) and memory bandwidth
//   compute/kernel_model.h  measured kernels (compute/kernel_table.h),
//                           interpolated in log space, the roofline outside
//
// The system config's `compute:` section chooses and parameterizes them
// (compute/compute_config.h); docs/compute.md describes the models.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/time.h"
#include "workload/kernel_shape.h"

namespace sim {

// What a model may read of a COMP node.
struct ComputeNode {
  const KernelShape* kernel = nullptr;  // the node's kernel attributes, if any
  bool has_roofline = false;            // num_ops and tensor_size both present
  std::int64_t num_ops = 0;             // FLOP
  std::uint64_t tensor_size = 0;        // bytes
};

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  // Seconds the node takes, or nothing when the model has no basis for a
  // time (the node then replays its recorded duration). Throws InputError
  // for a node the model cannot time although it should (e.g. a dtype
  // without a peak), with a message that names the kernel.
  virtual std::optional<double> seconds(const ComputeNode& node) const = 0;
  // One line: what the model is ("roofline: 989 TFLOP/s bf16, 3350 GB/s").
  virtual std::string describe() const = 0;
};

// seconds -> simulated time, rounded up to whole picoseconds; TimeLimitError
// (naming `what`) past the largest representable time.
Time compute_seconds_to_time(double seconds, const std::string& what);

}  // namespace sim
