// The `compute:` section: its keys, per-dtype peaks, kernel tables resolved
// against the config's folder, and errors that name file, line and key.
#include <gtest/gtest.h>

#include <fstream>
#include <yaml-cpp/yaml.h>

#include "../common/temp_folder.h"
#include "compute/compute_config.h"
#include "compute/kernel_model.h"
#include "compute_test_util.h"
#include "core/error.h"
#include "core/config_reader.h"

namespace sim {
namespace {

using namespace sim::testing;

ComputeConfig read_section(const std::string& yaml, const std::string& source = "cfg/s.yml", const std::string& base = "") {
  const ConfigReader r(source);
  const YAML::Node root = r.load(yaml);
  return read_compute_section(r, root["compute"], base);
}

std::string section_error(const std::string& yaml, const std::string& base = "") {
  try {
    read_section(yaml, "cfg/s.yml", base);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ComputeConfig, ScalarPeakIsTheRooflineOfEveryDtype) {
  const ComputeConfig c = read_section("compute: {peak_tflops: 312, memory_bandwidth: 2039GB/s}\n");
  EXPECT_TRUE(c.roofline);
  EXPECT_DOUBLE_EQ(c.params.default_peak_flops, 312e12);
  EXPECT_DOUBLE_EQ(c.params.memory_bandwidth, 2039e9);
  ASSERT_TRUE(c.model);
  const auto* roof = dynamic_cast<const RooflineModel*>(c.model.get());
  ASSERT_NE(roof, nullptr);
  EXPECT_DOUBLE_EQ(roof->peak_flops("fp8"), 312e12);
}

TEST(ComputeConfig, PeakPerDtype) {
  const ComputeConfig c = read_section("compute:\n  peak_tflops: {bf16: 989, fp8: 1979}\n  memory_bandwidth: 3.35TB/s\n");
  const auto* roof = dynamic_cast<const RooflineModel*>(c.model.get());
  ASSERT_NE(roof, nullptr);
  EXPECT_DOUBLE_EQ(roof->peak_flops("bf16"), 989e12);
  EXPECT_DOUBLE_EQ(roof->peak_flops("fp8"), 1979e12);
  EXPECT_THROW(roof->peak_flops("fp16"), InputError);
  EXPECT_DOUBLE_EQ(c.params.memory_bandwidth, 3.35e12);
}

TEST(ComputeConfig, NoSectionKeysNoModel) {
  EXPECT_FALSE(read_section("compute: {}\n").model);
}

TEST(ComputeConfig, ErrorsNameFileLineAndKey) {
  EXPECT_NE(section_error("compute: {peak_tflops: 10, memory_bandwidth: 1GB/s, kernel: x}\n")
                .find("cfg/s.yml:1: unknown key 'compute.kernel'"),
            std::string::npos);
  EXPECT_NE(section_error("compute: {peak_tflops: 10}\n").find("needs both"), std::string::npos);
  EXPECT_NE(section_error("compute:\n  peak_tflops: {bf16: 989, fp9: 1}\n  memory_bandwidth: 1GB/s\n")
                .find("cfg/s.yml:2: 'compute.peak_tflops.fp9': unknown dtype"),
            std::string::npos);
  EXPECT_NE(section_error("compute:\n  peak_tflops: {fp8: 1979}\n  memory_bandwidth: 1GB/s\n")
                .find("must list bf16 or default"),
            std::string::npos);
  EXPECT_NE(section_error("compute:\n  peak_tflops: {bf16: -1}\n  memory_bandwidth: 1GB/s\n")
                .find("'compute.peak_tflops.bf16' must be > 0"),
            std::string::npos);
  EXPECT_NE(section_error("compute:\n  kernels: x\n").find("cfg/s.yml:2: 'compute.kernels' needs peak_tflops"),
            std::string::npos);
  EXPECT_NE(section_error("compute:\n  peak_tflops: 1\n  memory_bandwidth: 1GB/s\n  kernels: []\n").find("empty list"),
            std::string::npos);
}

class ComputeConfigFiles : public TempFolderTest {};

TEST_F(ComputeConfigFiles, KernelPathsResolveAgainstTheConfigFolder) {
  std::filesystem::create_directories(path("k"));
  std::ofstream(path("k/gemm.csv")) << "op,dtype,m,n,k,time_us\n"
                                    << "gemm,bf16,512,512,512,15\ngemm,bf16,4096,4096,4096,190\n";
  std::ofstream(path("k/membound.csv")) << "op,dtype,elements,time_us\ncopy,bf16,1048576,9\n";
  const std::string yaml = "compute:\n  peak_tflops: 989\n  memory_bandwidth: 3.35TB/s\n  kernels: k\n";
  const ComputeConfig folder = read_section(yaml, path("s.yml"), dir_.string());
  EXPECT_EQ(folder.kernel_files, (std::vector<std::string>{path("k/gemm.csv"), path("k/membound.csv")}));
  const auto* model = dynamic_cast<const KernelModel*>(folder.model.get());
  ASSERT_NE(model, nullptr);
  EXPECT_NEAR(model->predict(gemm(4096, 4096, 4096)).seconds, 190e-6, 1e-12);
  const ComputeConfig list = read_section("compute:\n  peak_tflops: 989\n  memory_bandwidth: 3.35TB/s\n  kernels: [k/membound.csv]\n",
                                  path("s.yml"), dir_.string());
  EXPECT_EQ(list.kernel_files, std::vector<std::string>{path("k/membound.csv")});
}

TEST_F(ComputeConfigFiles, TableErrorsNameTheTable) {
  std::ofstream(path("bad.csv")) << "op,dtype,m,n,k,time_us\ngemm,bf16,512,512,512,15\ngemm,bf16,512,x,512,15\n";
  try {
    read_section("compute:\n  peak_tflops: 989\n  memory_bandwidth: 3.35TB/s\n  kernels: bad.csv\n", path("s.yml"), dir_.string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path("bad.csv") + ":3: column 4 (n): expected a positive integer, got 'x'");
  }
  try {
    read_section("compute:\n  peak_tflops: 989\n  memory_bandwidth: 3.35TB/s\n  kernels: [absent]\n", path("s.yml"), dir_.string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path("s.yml") + ":4: 'compute.kernels': "), std::string::npos) << e.what();
  }
  // A table dtype the peaks do not cover.
  std::ofstream(path("fp16.csv")) << "op,dtype,m,n,k,time_us\ngemm,fp16,512,512,512,15\n";
  try {
    read_section("compute:\n  peak_tflops: {bf16: 989}\n  memory_bandwidth: 3.35TB/s\n  kernels: fp16.csv\n", path("s.yml"),
         dir_.string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path("fp16.csv") + ":2: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'fp16'"), std::string::npos) << e.what();
  }
}

TEST_F(ComputeConfigFiles, TheTablesGpuReachesTheKernelModel) {
  std::ofstream(path("m.csv")) << "op,dtype,elements,time_us\ncopy,bf16,1048576,9\ncopy,bf16,268435456,360\n";
  const std::string head = "compute:\n  peak_tflops: 989\n  memory_bandwidth: 3.35TB/s\n  kernels: m.csv\n";
  const ComputeConfig defaults = read_section(head, path("s.yml"), dir_.string());
  const auto* model = dynamic_cast<const KernelModel*>(defaults.model.get());
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->options().sm_count, 132);
  EXPECT_DOUBLE_EQ(model->options().l2_bytes, 50e6);
  const ComputeConfig a100 =
      read_section(head + "  kernel_sms: 108\n  kernel_l2_cache: 40MB\n", path("s.yml"), dir_.string());
  model = dynamic_cast<const KernelModel*>(a100.model.get());
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->options().sm_count, 108);
  EXPECT_DOUBLE_EQ(model->options().l2_bytes, 40e6);
  EXPECT_NE(
      section_error(head + "  kernel_sms: 0\n", dir_.string()).find(":5: 'compute.kernel_sms' must be in [1, 100000]"),
      std::string::npos);
  EXPECT_NE(section_error(head + "  kernel_l2_cache: lots\n", dir_.string()).find(":5: 'compute.kernel_l2_cache': "),
            std::string::npos);
  EXPECT_NE(section_error("compute:\n  peak_tflops: 1\n  memory_bandwidth: 1GB/s\n  kernel_sms: 132\n")
                .find("cfg/s.yml:4: 'compute.kernel_sms' describes the GPU of 'compute.kernels'"),
            std::string::npos);
}

// The curves' loss and the sustained-load term are fit options a system
// config sets; models fitted with other options are not shared by the cache.
TEST_F(ComputeConfigFiles, TheFitsOptionsReachTheKernelModel) {
  std::ofstream(path("g.csv")) << "op,dtype,m,n,k,time_us\n"
                                  "gemm,bf16,512,512,512,15\ngemm,bf16,1024,1024,1024,18\n"
                                  "gemm,bf16,2048,2048,2048,40\ngemm,bf16,4096,4096,4096,180\n"
                                  "gemm,bf16,8192,8192,8192,1500\ngemm,bf16,512,4096,512,60\n";
  const std::string head = "compute:\n  peak_tflops: 989\n  memory_bandwidth: 3.35TB/s\n  kernels: g.csv\n";
  const auto options = [&](const std::string& extra) {
    const ComputeConfig c = read_section(head + extra, path("s.yml"), dir_.string());
    const auto* model = dynamic_cast<const KernelModel*>(c.model.get());
    EXPECT_NE(model, nullptr);
    return model ? model->options() : KernelModelOptions{};
  };
  using Loss = KernelModelOptions::CurveLoss;
  EXPECT_EQ(options("").curve_loss, Loss::kHuber);
  EXPECT_FALSE(options("").gemm_sustained_load);
  EXPECT_EQ(options("  kernel_curve_loss: squared\n").curve_loss, Loss::kSquared);
  EXPECT_EQ(options("  kernel_curve_loss: huber\n").curve_loss, Loss::kHuber);
  EXPECT_TRUE(options("  kernel_sustained_load: true\n").gemm_sustained_load);
  // The slow shape (512 x 4096 x 512 at 4x its neighbours) pulls a squared fit
  // further than Huber's: the curves alone differ at a shape between the rows.
  const auto smooth_us = [&](const std::string& extra) {
    const ComputeConfig c = read_section(head + extra, path("s.yml"), dir_.string());
    const auto* model = dynamic_cast<const KernelModel*>(c.model.get());
    KernelModelOptions o = model->options();
    o.residual_octaves = 0;
    KernelShape shape;
    shape.kind = KernelKind::kGemm;
    shape.m = shape.n = shape.k = 3000;
    ComputeNode n;
    n.kernel = &shape;
    return model->with_options(o)->seconds(n).value_or(0) * 1e6;
  };
  const double huber = smooth_us(""), squared = smooth_us("  kernel_curve_loss: squared\n");
  EXPECT_GT(huber, 0);
  EXPECT_GT(squared, 0);
  EXPECT_GT(std::abs(squared / huber - 1), 1e-3) << huber << " us vs " << squared << " us";
  EXPECT_NE(section_error(head + "  kernel_curve_loss: l1\n", dir_.string())
                .find(":5: 'compute.kernel_curve_loss' is huber or squared, not 'l1'"),
            std::string::npos);
  EXPECT_NE(section_error(head + "  kernel_sustained_load: maybe\n", dir_.string()).find(":5:"), std::string::npos);
  EXPECT_NE(section_error("compute:\n  peak_tflops: 1\n  memory_bandwidth: 1GB/s\n  kernel_curve_loss: squared\n")
                .find("cfg/s.yml:4: 'compute.kernel_curve_loss' describes the fit of 'compute.kernels'"),
            std::string::npos);
}

TEST(ComputeConfig, ShippedH100TableReproducesItsRows) {
  // configs/kernels/h100/ is derived by scripts/kernels/derive_kernel_table.py
  // (docs/compute.md): the model fitted on it must reproduce it.
  const std::string dir = source_dir() + "/configs/kernels/h100";
  const std::vector<KernelSample> rows = read_kernel_samples(kernel_table_files(dir));
  ASSERT_GT(rows.size(), 100u);
  const KernelModel model(rows, std::make_shared<const RooflineModel>(h100_roofline()));
  std::vector<double> e;
  for (const KernelSample& s : rows) e.push_back(model.predict(s.shape).seconds / s.seconds - 1);
  EXPECT_LT(stats(e).max, 0.05);
}

}  // namespace
}  // namespace sim
