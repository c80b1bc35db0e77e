// The system config's `compute:` section, read here so the compute layer
// declares its own keys (system/config/system_config.cpp calls this):
//
//   compute:
//     peak_tflops: 989                 # TFLOP/s (1e12 FLOP/s) for every dtype, or per dtype:
//     peak_tflops: {bf16: 989, fp16: 989, fp8: 1979, tf32: 495, default: 989}
//     memory_bandwidth: 3.35TB/s       # bare numbers are GB/s (1e9 B/s)
//     kernels: kernels/h100            # a folder (its gemm.csv, attention.csv,
//     kernels: [a/gemm.csv, b/attention.csv]  # membound.csv) or CSV files
//     kernel_sms: 132                  # the tables' GPU: SMs and L2 size, for the kernel
//     kernel_l2_cache: 50MB            # model's attention and memory-bound laws (H100 SXM defaults)
//
// peak_tflops and memory_bandwidth go together (the roofline); kernels need
// both (the roofline is their fallback). In the map form a dtype not listed
// takes `default`; a node without a dtype is bf16, so the map must list bf16
// or default. Relative kernel paths resolve against the config file's folder.
// The tables are read (and the model fitted) when the config is read, so a
// bad table is reported then. Unknown keys, wrong types, non-positive rates
// are errors naming the file, line and key.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compute/compute_model.h"
#include "compute/kernel_model.h"
#include "compute/roofline.h"
#include "core/config_reader.h"

namespace sim {

struct ComputeConfig {
  bool roofline = false;  // peak_tflops and memory_bandwidth given
  RooflineParams params;
  std::vector<std::string> kernel_files;  // resolved paths of the tables read
  // The model the section asks for: the kernel model when kernels are
  // given, else the roofline; null when the section gives neither.
  std::shared_ptr<const ComputeModel> model;
  // `efficiency`: the fraction of the model's speed a long run sustains
  // (COMP nodes the model times take time / efficiency); 1 when absent.
  double efficiency = 1;
  // `kernel_sms`, `kernel_l2_cache` (the KernelModelOptions defaults when absent).
  KernelModelOptions kernel_options;
  // About the kernel tables (KernelModel::warnings: rows faster than their roofline).
  std::vector<std::string> warnings;
};

// Reads the `compute` map `node`; `base` is the config file's folder.
ComputeConfig read_compute_section(const ConfigReader& r, const YAML::Node& node, const std::string& base);

}  // namespace sim
