// Helpers shared by the compute tests.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "compute/kernel_table.h"
#include "compute/roofline.h"

namespace sim::testing {

inline std::string source_dir() { return SIM_SOURCE_DIR; }
inline std::string testdata(const std::string& rel) { return source_dir() + "/../shared/testdata/" + rel; }

// H100 SXM peaks (NVIDIA H100 datasheet, dense): bf16/fp16 989.4 TFLOP/s,
// fp8 1978.9, tf32 494.7, fp32 66.9; HBM3 3.35 TB/s.
inline RooflineParams h100_roofline() {
  RooflineParams p;
  p.peak_flops_by_dtype = {{"bf16", 989.4e12}, {"fp16", 989.4e12}, {"fp8", 1978.9e12}, {"tf32", 494.7e12},
                           {"fp32", 66.9e12}};
  p.memory_bandwidth = 3.35e12;
  return p;
}

// The H100's roofline as the model the kernel model falls back to.
inline std::shared_ptr<const RooflineModel> h100() { return std::make_shared<const RooflineModel>(h100_roofline()); }

inline KernelShape gemm(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& dtype = "bf16") {
  KernelShape s;
  s.kind = KernelKind::kGemm;
  s.dtype = dtype;
  s.m = m;
  s.n = n;
  s.k = k;
  return s;
}

inline KernelShape membound(const std::string& op, std::int64_t elements, const std::string& dtype = "bf16") {
  KernelShape s;
  s.kind = KernelKind::kMembound;
  s.op = op;
  s.elements = elements;
  s.dtype = dtype;
  return s;
}

inline KernelShape attention(std::int64_t batch, std::int64_t heads, std::int64_t seq, std::int64_t head_dim,
                             bool causal, bool backward) {
  KernelShape s;
  s.kind = KernelKind::kAttention;
  s.batch = batch;
  s.heads = heads;
  s.seq = seq;
  s.head_dim = head_dim;
  s.causal = causal;
  s.backward = backward;
  return s;
}

struct ErrorStats {
  std::size_t n = 0, within_10 = 0;
  double median = 0, max = 0;
};

// Statistics of |e| over relative errors e.
inline ErrorStats stats(std::vector<double> errors) {
  ErrorStats s;
  for (double& e : errors) e = e < 0 ? -e : e;
  std::sort(errors.begin(), errors.end());
  s.n = errors.size();
  if (s.n == 0) return s;
  s.median = s.n % 2 ? errors[s.n / 2] : 0.5 * (errors[s.n / 2 - 1] + errors[s.n / 2]);
  s.max = errors.back();
  for (double e : errors) s.within_10 += e <= 0.1;
  return s;
}

}  // namespace sim::testing
