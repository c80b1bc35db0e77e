// The roofline: a kernel takes as long as its FLOPs at the peak rate of its
// dtype or its bytes at the memory bandwidth, whichever is longer:
//
//   t = max(flops / peak(dtype), bytes / memory_bandwidth)
//
// FLOPs and bytes are the node's num_ops and tensor_size when it carries
// both (Chakra's roofline attributes), else those of its kernel shape
// (workload/kernel_shape.h). A node with neither is not timed here (it
// replays its duration). No efficiency, no launch overhead: an upper bound on
// speed, exact for what it states.
#pragma once

#include <map>
#include <string>

#include "compute/compute_model.h"

namespace sim {

struct RooflineParams {
  // FLOP/s per dtype (`compute.peak_tflops: {bf16: 989, fp8: 1979}`).
  std::map<std::string, double, std::less<>> peak_flops_by_dtype;
  // FLOP/s for a dtype not listed (the scalar form, or the map's `default`);
  // 0: none. A node without a dtype is bf16.
  double default_peak_flops = 0;
  double memory_bandwidth = 0;  // B/s
};

class RooflineModel final : public ComputeModel {
 public:
  // Throws InputError unless memory_bandwidth > 0 and some peak is given.
  explicit RooflineModel(RooflineParams params);

  std::optional<double> seconds(const ComputeNode& node) const override;
  std::string describe() const override;

  // FLOP/s for a dtype; InputError when neither listed nor a default exists.
  double peak_flops(std::string_view dtype) const;
  double memory_bandwidth() const { return params_.memory_bandwidth; }
  // The roofline time of a kernel shape, from its FLOPs and bytes.
  double kernel_seconds(const KernelShape& shape) const;
  const RooflineParams& params() const { return params_; }

 private:
  RooflineParams params_;
};

}  // namespace sim
