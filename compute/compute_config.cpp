#include "compute/compute_config.h"

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <yaml-cpp/yaml.h>

#include "compute/kernel_model.h"
#include "compute/kernel_table.h"
#include "core/error.h"
#include "core/units.h"
#include "core/config_reader.h"

namespace sim {

namespace {

double tflops(const ConfigReader& r, const YAML::Node& node, const std::string& key) {
  const double tf = r.real(node, key);
  if (!(tf > 0)) r.fail(node, "'" + key + "' must be > 0");
  return tf * 1e12;
}

std::string resolve(const std::string& base, const std::string& path) {
  if (base.empty() || is_builtin_kernel_table(path) || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base) / path).string();
}

}  // namespace

ComputeConfig read_compute_section(const ConfigReader& r, const YAML::Node& c, const std::string& base) {
  ComputeConfig cfg;
  r.require_map(c, "compute");
  r.check_keys(c, "compute.", {"peak_tflops", "memory_bandwidth", "kernels", "efficiency", "kernel_sms", "kernel_l2_cache",
                                   "kernel_curve_loss", "kernel_sustained_load"});
  if (const YAML::Node e = c["efficiency"]) {
    cfg.efficiency = r.real(e, "compute.efficiency");
    if (!(cfg.efficiency > 0 && cfg.efficiency <= 1)) r.fail(e, "'compute.efficiency' must be in (0, 1]");
    if (!c["peak_tflops"]) r.fail(e, "'compute.efficiency' scales a model: give peak_tflops and memory_bandwidth");
  }
  if (const YAML::Node p = c["peak_tflops"]) {
    if (p.IsMap()) {
      std::set<std::string> seen;
      for (const auto& kv : p) {
        if (!kv.first.IsScalar()) r.fail(kv.first, "keys of 'compute.peak_tflops' must be dtype names");
        const std::string dtype = kv.first.Scalar();
        const std::string key = "compute.peak_tflops." + dtype;
        if (!seen.insert(dtype).second) r.fail(kv.first, "duplicate key '" + key + "'");
        if (dtype != "default" && dtype_bytes(dtype) == 0) {
          r.fail(kv.first, "'" + key + "': unknown dtype (expected bf16, fp16, fp8, fp32, tf32 or default)");
        }
        const double peak = tflops(r, kv.second, key);
        if (dtype == "default") cfg.params.default_peak_flops = peak;
        else cfg.params.peak_flops_by_dtype.emplace(dtype, peak);
      }
      if (seen.empty()) r.fail(p, "'compute.peak_tflops' must not be an empty map");
      if (!seen.count("bf16") && !seen.count("default")) {
        r.fail(p, "'compute.peak_tflops' must list bf16 or default (nodes without a dtype are bf16)");
      }
    } else {
      cfg.params.default_peak_flops = tflops(r, p, "compute.peak_tflops");
    }
  }
  if (const YAML::Node m = c["memory_bandwidth"]) {
    cfg.params.memory_bandwidth = static_cast<double>(r.bandwidth(m, "compute.memory_bandwidth"));
  }
  const bool has_peak = c["peak_tflops"].IsDefined();
  if (has_peak != (cfg.params.memory_bandwidth > 0)) {
    r.fail(c, "'compute': roofline needs both peak_tflops and memory_bandwidth");
  }
  cfg.roofline = has_peak;
  if (const YAML::Node k = c["kernels"]) {
    if (!cfg.roofline) {
      r.fail(k, "'compute.kernels' needs peak_tflops and memory_bandwidth too (the roofline is its fallback)");
    }
    std::vector<std::pair<YAML::Node, std::string>> sources;  // (where, path)
    if (k.IsSequence()) {
      if (k.size() == 0) r.fail(k, "'compute.kernels' must not be an empty list");
      for (std::size_t i = 0; i < k.size(); ++i) {
        sources.emplace_back(k[i], resolve(base, r.text(k[i], "compute.kernels[" + std::to_string(i) + "]")));
      }
    } else {
      sources.emplace_back(k, resolve(base, r.text(k, "compute.kernels")));
    }
    for (const auto& [node, path] : sources) {
      try {
        for (const std::string& f : kernel_table_files(path)) cfg.kernel_files.push_back(f);
      } catch (const InputError& e) {
        r.fail(node, std::string("'compute.kernels': ") + e.what());
      }
    }
  }
  // The measuring GPU's SM count and L2 size, which the kernel model's
  // attention and memory-bound laws use (compute/kernel_model.h).
  if (const YAML::Node n = c["kernel_sms"]) {
    if (!c["kernels"]) r.fail(n, "'compute.kernel_sms' describes the GPU of 'compute.kernels': give kernels");
    const std::uint64_t sms = r.count(n, "compute.kernel_sms");
    if (sms < 1 || sms > 100000) r.fail(n, "'compute.kernel_sms' must be in [1, 100000]");
    cfg.kernel_options.sm_count = static_cast<int>(sms);
  }
  if (const YAML::Node n = c["kernel_l2_cache"]) {
    if (!c["kernels"]) r.fail(n, "'compute.kernel_l2_cache' describes the GPU of 'compute.kernels': give kernels");
    try {
      cfg.kernel_options.l2_bytes = static_cast<double>(parse_size(r.text(n, "compute.kernel_l2_cache")));
    } catch (const std::invalid_argument& e) {
      r.fail(n, std::string("'compute.kernel_l2_cache': ") + e.what());
    }
  }
  // How the kernel model fits its curves: research knobs docs/compute.md
  // compares (the defaults are what the presets were calibrated with).
  if (const YAML::Node n = c["kernel_curve_loss"]) {
    if (!c["kernels"]) r.fail(n, "'compute.kernel_curve_loss' describes the fit of 'compute.kernels': give kernels");
    const std::string loss = r.text(n, "compute.kernel_curve_loss");
    if (loss == "huber") {
      cfg.kernel_options.curve_loss = KernelModelOptions::CurveLoss::kHuber;
    } else if (loss == "squared") {
      cfg.kernel_options.curve_loss = KernelModelOptions::CurveLoss::kSquared;
    } else {
      r.fail(n, "'compute.kernel_curve_loss' is huber or squared, not '" + loss + "'");
    }
  }
  if (const YAML::Node n = c["kernel_sustained_load"]) {
    if (!c["kernels"]) r.fail(n, "'compute.kernel_sustained_load' describes the fit of 'compute.kernels': give kernels");
    cfg.kernel_options.gemm_sustained_load = r.flag(n, "compute.kernel_sustained_load");
  }
  if (!cfg.roofline) return cfg;
  std::shared_ptr<const RooflineModel> roofline;
  try {
    roofline = std::make_shared<const RooflineModel>(cfg.params);
  } catch (const InputError& e) {
    r.fail(c, std::string("'compute': ") + e.what());
  }
  if (cfg.kernel_files.empty()) {
    cfg.model = roofline;
    return cfg;
  }
  // Fitting the model to a table takes tens of ms; `sim calibrate` and sweeps
  // read one system many times. So fitted models are kept per (tables as they
  // are now, roofline): a file is known by its path, size and modification
  // time, a built-in table by its name.
  std::string key;
  for (const std::string& f : cfg.kernel_files) {
    key += f;
    if (!is_builtin_kernel_table(f)) {
      std::error_code ec;
      key += " " + std::to_string(std::filesystem::file_size(f, ec)) + " " +
             std::to_string(std::filesystem::last_write_time(f, ec).time_since_epoch().count());
    }
    key += "\n";
  }
  for (const auto& [dtype, flops] : cfg.params.peak_flops_by_dtype) key += dtype + "=" + std::to_string(flops) + " ";
  key += std::to_string(cfg.params.default_peak_flops) + " " + std::to_string(cfg.params.memory_bandwidth);
  key += " sms=" + std::to_string(cfg.kernel_options.sm_count) + " l2=" + std::to_string(cfg.kernel_options.l2_bytes);
  key += " loss=" + std::to_string(static_cast<int>(cfg.kernel_options.curve_loss)) +
         " load=" + std::to_string(cfg.kernel_options.gemm_sustained_load);
  static std::mutex fitted_mutex;
  static std::map<std::string, std::shared_ptr<const ComputeModel>> fitted;
  {
    const std::lock_guard<std::mutex> lock(fitted_mutex);
    if (const auto it = fitted.find(key); it != fitted.end()) {
      cfg.model = it->second;
      cfg.warnings = static_cast<const KernelModel&>(*cfg.model).warnings();
      return cfg;
    }
  }
  // Table errors name the table's file, line and column themselves.
  const std::vector<KernelSample> samples = read_kernel_samples(cfg.kernel_files);
  try {
    const auto model = std::make_shared<const KernelModel>(samples, roofline, cfg.kernel_options);
    cfg.warnings = model->warnings();
    cfg.model = model;
  } catch (const InputError& e) {
    r.fail(c["kernels"], std::string("'compute.kernels': ") + e.what());
  }
  const std::lock_guard<std::mutex> lock(fitted_mutex);
  if (fitted.size() < 64) fitted.emplace(key, cfg.model);  // bounded: a sweep over many tables refits
  return cfg;
}

}  // namespace sim
