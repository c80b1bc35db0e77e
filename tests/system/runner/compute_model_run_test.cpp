// COMP nodes timed by the system config's compute model (compute/): measured
// kernels for nodes with kernel attributes, the roofline otherwise, and the
// old behaviour untouched without a compute.kernels table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iomanip>

#include "tests/common/temp_folder.h"
#include "compute/kernel_model.h"
#include "core/error.h"
#include "system/scenario/system_files.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;

et::Node gemm_comp(std::uint64_t id, std::int64_t m, std::int64_t n, std::int64_t k, std::vector<std::uint64_t> deps = {}) {
  et::Node node = comp_node(id, 777, std::move(deps));  // the duration must not be what is timed
  set_attr_string(node, "kernel", "gemm");
  set_attr_int(node, "gemm_m", m);
  set_attr_int(node, "gemm_n", n);
  set_attr_int(node, "gemm_k", k);
  return node;
}

class ComputeModelRun : public TempFolderTest {
 protected:
  // A table whose fitted model the test can query directly.
  std::string write_table() {
    std::ofstream f(path("gemm.csv"));
    f << std::setprecision(17) << "op,dtype,m,n,k,time_us\n";
    for (int m : {512, 1024, 4096}) {
      for (int n : {512, 4096}) {
        for (int k : {512, 4096}) f << "gemm,bf16," << m << "," << n << "," << k << "," << 10 + m * 1e-3 * n * 1e-3 * k * 1e-3 << "\n";
      }
    }
    std::ofstream(path("system.yml")) << "compute:\n  peak_tflops: {bf16: 989}\n  memory_bandwidth: 3.35TB/s\n  kernels: gemm.csv\n";
    return path("system.yml");
  }
};

TEST_F(ComputeModelRun, KernelNodesTakeTheModelsTime) {
  const SystemConfig cfg = load_system_config(write_table());
  const auto* model = dynamic_cast<const KernelModel*>(cfg.compute_model.get());
  ASSERT_NE(model, nullptr);
  const auto traces = make_traces(2, [](int r) {
    // Rank 0: two GEMMs in a chain (one measured shape, one between rows); rank 1: the same GEMM twice.
    if (r == 0) return std::vector<et::Node>{gemm_comp(1, 1024, 4096, 512), gemm_comp(2, 2048, 1024, 2048, {1})};
    return std::vector<et::Node>{gemm_comp(1, 1024, 4096, 512), gemm_comp(2, 1024, 4096, 512, {1})};
  });
  const auto res = simulate(traces, shape("Ring", 2), cfg);
  KernelShape a;
  a.kind = KernelKind::kGemm;
  a.m = 1024, a.n = 4096, a.k = 512;
  KernelShape b = a;
  b.m = 2048, b.n = 1024, b.k = 2048;
  const Time ta = compute_seconds_to_time(model->predict(a).seconds, "a");
  const Time tb = compute_seconds_to_time(model->predict(b).seconds, "b");
  EXPECT_NEAR(static_cast<double>(ta), (10 + 1.024 * 4.096 * 0.512) * 1e6, 1);  // the measured row, in ps
  EXPECT_EQ(res.ranks[0].finish, ta + tb);
  EXPECT_EQ(res.ranks[1].finish, 2 * ta);
}

TEST_F(ComputeModelRun, WithoutKernelsTheRooflineTimesShapesAndChakraAttributesAsBefore) {
  const SystemConfig cfg = parse_system_config("compute: {peak_tflops: 100, memory_bandwidth: 1000GB/s}\n", "s.yml");
  const auto traces = make_traces(1, [](int) {
    et::Node flops = comp_node(1, 999);  // 1e9 FLOP at 100 TFLOP/s = 10 us, as before
    set_attr_int(flops, "num_ops", 1'000'000'000);
    set_attr_int(flops, "tensor_size", 1'000'000);
    // A GEMM shape without num_ops: 2 * 1000^3 FLOP at 100 TFLOP/s = 20 us
    // (bytes 3 * 1000^2 * 2 = 6 MB: 6 us).
    return std::vector<et::Node>{flops, gemm_comp(2, 1000, 1000, 1000, {1}), comp_node(3, 5, {2})};
  });
  EXPECT_EQ(simulate(traces, shape("Ring", 2), cfg).makespan, 10 * kMicrosecond + 20 * kMicrosecond + 5 * kMicrosecond);
  // No compute section: every node replays its duration, kernel attributes or not.
  EXPECT_EQ(simulate(traces, shape("Ring", 2)).makespan, (999 + 777 + 5) * kMicrosecond);
}

TEST_F(ComputeModelRun, BadKernelAttributesStopTheLoadNamingTheNode) {
  const auto traces = make_traces(1, [](int) {
    et::Node g = gemm_comp(4, 64, 64, 64);
    set_attr_int(g, "gemm_k", 0);
    return std::vector<et::Node>{g};
  });
  try {
    simulate(traces, shape("Ring", 2));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("node 4 'comp': attribute 'gemm_k' is 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sim
