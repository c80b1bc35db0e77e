#include "compute/roofline.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"

namespace sim {

RooflineModel::RooflineModel(RooflineParams params) : params_(std::move(params)) {
  if (!(params_.memory_bandwidth > 0)) throw InputError("the roofline needs a memory bandwidth > 0");
  if (!(params_.default_peak_flops > 0) && params_.peak_flops_by_dtype.empty()) {
    throw InputError("the roofline needs a peak FLOP/s");
  }
}

double RooflineModel::peak_flops(std::string_view dtype) const {
  if (const auto it = params_.peak_flops_by_dtype.find(dtype); it != params_.peak_flops_by_dtype.end()) {
    return it->second;
  }
  if (params_.default_peak_flops > 0) return params_.default_peak_flops;
  std::string listed;
  for (const auto& [name, _] : params_.peak_flops_by_dtype) listed += (listed.empty() ? "" : ", ") + name;
  throw InputError("compute.peak_tflops gives no peak for dtype '" + std::string(dtype) + "' (it lists " + listed +
                   "; add it or a 'default')");
}

double RooflineModel::kernel_seconds(const KernelShape& shape) const {
  return std::max(shape.flops() / peak_flops(shape.dtype), shape.bytes() / params_.memory_bandwidth);
}

std::optional<double> RooflineModel::seconds(const ComputeNode& node) const {
  if (node.has_roofline) {
    // A node without kernel attributes is bf16 (the default of KernelShape).
    const double peak = peak_flops(node.kernel ? std::string_view(node.kernel->dtype) : std::string_view("bf16"));
    return std::max(static_cast<double>(node.num_ops) / peak,
                    static_cast<double>(node.tensor_size) / params_.memory_bandwidth);
  }
  if (node.kernel) return kernel_seconds(*node.kernel);
  return std::nullopt;
}

std::string RooflineModel::describe() const {
  char buf[64];
  std::string s = "roofline:";
  if (params_.default_peak_flops > 0) {
    std::snprintf(buf, sizeof buf, " %g TFLOP/s", params_.default_peak_flops / 1e12);
    s += buf;
  }
  for (const auto& [dtype, peak] : params_.peak_flops_by_dtype) {
    std::snprintf(buf, sizeof buf, " %s %g TFLOP/s", dtype.c_str(), peak / 1e12);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, ", memory %g GB/s", params_.memory_bandwidth / 1e9);
  return s + buf;
}

}  // namespace sim
