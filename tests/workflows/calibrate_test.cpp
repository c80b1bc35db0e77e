// `sim calibrate`: recovers known parameters from a curve the simulator made
// (so the search is checked against a truth), is deterministic, rejects bad
// input, and, on the measured one-node H100 curve, predicts the rows it was
// not fitted on.
#include "workflows/calibrate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/run_sim.h"
#include "common/temp_folder.h"
#include "core/error.h"
#include "core/units.h"
#include "presets/preset.h"
#include "workflows/yaml_override.h"

namespace sim::workflows {
namespace {

using sim::testing::run_sim;
using sim::testing::TempFolderTest;

class Calibrate : public TempFolderTest {
 protected:
  // A dgx-h100 folder of one node.
  std::string preset(const std::string& name = "dgx-h100", std::uint32_t nodes = 1) {
    const std::string dir = path(name);
    presets::write_preset_folder(presets::generate_preset(presets::find_preset(name), nodes), dir);
    return dir;
  }
  // The same with native rings instead of NCCL's algorithms and the NVLink's
  // bandwidth, latency and per-message overhead free, for the tests of the
  // search itself: a ring's time moves smoothly with the bandwidth (NCCL's
  // channel search rounds it to its speed list) and its programs aggregate,
  // so a whole calibration takes seconds.
  std::string ring_preset() {
    const std::string dir = preset();
    const std::string sys = with(TempFolderTest::read(dir + "/system.yml"), {{"collective.algorithms.all_reduce", "ring"},
                                                                              {"collective.algorithms.all_gather", "ring"},
                                                                              {"collective.algorithms.reduce_scatter", "ring"}});
    std::ofstream(dir + "/system.yml") << sys;
    std::ofstream(dir + "/calibration.yml")
        << "free:\n"
           "  - {name: nvlink_bandwidth, file: network, key: bandwidth.0, min: 180GB/s, max: 450GB/s}\n"
           "  - {name: nvlink_latency, file: network, key: latency.0, min: 50ns, max: 20us}\n"
           "  - {name: message_overhead, file: system, key: collective.endpoint_delay, min: 10ns, max: 50us}\n";
    return dir;
  }

  static std::string with(const std::string& text, const std::vector<std::pair<std::string, std::string>>& sets) {
    std::vector<PointSettings::Override> o;
    for (const auto& [key, value] : sets) {
      PointSettings::Override x;
      std::string part;
      for (char c : key + ".") {
        if (c == '.') {
          x.path.push_back(part);
          part.clear();
        } else {
          part += c;
        }
      }
      x.value = YAML::Node(value);
      x.axis = key;
      o.push_back(x);
    }
    return apply_overrides(text, "file", o, "test");
  }

  // A reference curve CSV (the measured-table format) made by simulating the
  // folder's files with `net_sets` and `sys_sets` applied.
  std::string synthetic_reference(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& net_sets,
                                  const std::vector<std::pair<std::string, std::string>>& sys_sets) {
    const std::string net = with(TempFolderTest::read(dir + "/network.yml"), net_sets);
    const std::string sys = with(TempFolderTest::read(dir + "/system.yml"), sys_sets);
    std::ofstream out(path("reference.csv"));
    out << "system,ranks,collective,size_bytes,time_us,algbw_GBps,busbw_GBps,source\n";
    for (const char* coll : {"ALL_REDUCE", "REDUCE_SCATTER"}) {
      for (std::uint64_t s = 1 << 20; s <= (std::uint64_t{1} << 30); s *= 4) {
        double busbw = 0;
        const std::uint64_t ps = simulate_collective(net, "n", sys, "s", coll, s, &busbw);
        out << "synthetic,8," << (coll[0] == 'A' ? "all_reduce" : "reduce_scatter") << "," << s << ","
            << ps / 1e6 << ",0," << busbw << ",test\n";
      }
    }
    return path("reference.csv");
  }
};

TEST_F(Calibrate, RecoversTheParametersACurveWasMadeWith) {
  const std::string dir = ring_preset();
  const std::string ref = synthetic_reference(dir, {{"bandwidth.0", "300GB/s"}, {"latency.0", "2000ns"}}, {});
  CalibrateOptions o;
  o.reference = ref;
  o.system_dir = dir;
  o.fit = {"nvlink_bandwidth", "nvlink_latency"};
  o.filters = {{"collective", "allreduce"}};
  o.output = path("out");
  const CalibrationResult r = calibrate(o);
  ASSERT_EQ(r.values.size(), 2u);
  EXPECT_NEAR(static_cast<double>(parse_bandwidth(r.values[0])), 300e9, 300e9 * 0.005) << r.values[0];
  EXPECT_NEAR(static_cast<double>(parse_time(r.values[1])), 2000e3, 2000e3 * 0.02) << r.values[1];
  // Held out: reduce-scatter, made with the same parameters.
  for (const CalibratedRow& row : r.rows) {
    if (!row.fitted) {
      EXPECT_LT(std::abs(row.error()), 0.01) << row.point.collective << " " << row.point.bytes;
    }
  }
  write_calibration(r, o);
  for (const char* f : {"network.yml", "system.yml", "calibration.yml", "errors.csv"}) {
    EXPECT_TRUE(std::filesystem::exists(o.output + "/" + f)) << f;
  }
  // The written files load and give the fitted times.
  const auto run = run_sim("workload gen collectives --npus 8 --coll allreduce --size 1GiB -o " + path("wl") +
                           " && " + std::string(SIM_BINARY) + " --workload " + path("wl") + " --network " + o.output +
                           "/network.yml --system " + o.output + "/system.yml");
  EXPECT_EQ(run.code, 0) << run.output;
}

TEST_F(Calibrate, SameInputsGiveTheSameParameters) {
  const std::string dir = ring_preset();
  const std::string ref = synthetic_reference(dir, {{"bandwidth.0", "350GB/s"}}, {{"collective.endpoint_delay", "1us"}});
  CalibrateOptions o;
  o.reference = ref;
  o.system_dir = dir;
  o.sizes = std::make_pair(std::uint64_t{1} << 24, std::uint64_t{1} << 28);
  o.output = path("out");
  const CalibrationResult a = calibrate(o), b = calibrate(o);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.network_text, b.network_text);
  EXPECT_EQ(a.system_text, b.system_text);
}

TEST_F(Calibrate, BadInputIsAnErrorNamingIt) {
  const std::string dir = ring_preset();
  const std::string ref = synthetic_reference(dir, {}, {});
  CalibrateOptions o;
  o.reference = ref;
  o.system_dir = dir;
  o.output = path("out");
  o.fit = {"nvlink_speed"};
  EXPECT_THROW(
      {
        try {
          calibrate(o);
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find("nvlink_bandwidth"), std::string::npos) << e.what();
          throw;
        }
      },
      InputError);
  o.fit.clear();
  o.filters = {{"colour", "red"}};
  EXPECT_THROW(calibrate(o), InputError);
  o.filters = {{"collective", "alltoall"}};
  EXPECT_THROW(calibrate(o), InputError);  // no row to fit on
  std::ofstream(dir + "/calibration.yml") << "free:\n  - {name: x, file: network, key: bandwidth.0, min: 1GB/s, max: 1us}\n";
  o.filters.clear();
  EXPECT_THROW(calibrate(o), InputError);
  EXPECT_FALSE(std::filesystem::exists(o.output));
}

// Held-out check: calibrate dgx-h100 (NCCL's algorithms; the preset frees
// NVLS's efficiency and NCCL's per-call overhead) on the measured all-reduce
// at 16 MiB to 256 MiB only; the calibrated files must then predict
// all-reduce at 1-2 GiB and all-gather and reduce-scatter at every size >= 16
// MiB within 10%: all 18 rows. Reduce-scatter at 256 MiB to 1 GiB met it only
// once the ring's reductions cost their read of the local addend from HBM
// (3.35 TB/s, spec sheet) for buffers larger than the L2 (50 MB, spec sheet);
// before, they were 10-12% fast. docs/calibrate.md lists every row.
TEST_F(Calibrate, DgxH100FittedOnAllReducePredictsTheOtherMeasuredRows) {
#if defined(__SANITIZE_ADDRESS__)
  // About 40 s in Release, past ctest's 300 s in the unoptimised sanitizer
  // build; the Release suite runs it, and the calibration code runs under the
  // sanitizers in the tests above (synthetic curves).
  GTEST_SKIP() << "too slow for the sanitizer build; the Release suite runs it";
#endif
  const std::string ref = std::string(SIM_SOURCE_DIR) + "/../shared/testdata/reference-curves/h100_sxm_x8_xla.csv";
  if (!std::filesystem::exists(ref)) GTEST_SKIP() << ref << " is absent";
  CalibrateOptions o;
  o.reference = ref;
  o.system_dir = preset();
  o.filters = {{"collective", "allreduce"}};
  o.sizes = std::make_pair(std::uint64_t{16} << 20, std::uint64_t{256} << 20);
  o.output = path("out");
  const CalibrationResult r = calibrate(o);
  ASSERT_EQ(r.values.size(), 2u);
  // NVLS's efficiency lands near NCCL 2.2x's own Hopper figure (0.85); the
  // per-call overhead is written into every NCCL collective's string.
  EXPECT_NEAR(std::stod(r.values[0]), 0.85, 0.03) << r.values[0];
  EXPECT_NE(r.system_text.find("all_gather: nccl:overhead=" + r.values[1]), std::string::npos) << r.system_text;
  EXPECT_NE(r.system_text.find("all_reduce: nccl:overhead=" + r.values[1] + ",nvls_efficiency=" + r.values[0]),
            std::string::npos)
      << r.system_text;
  std::size_t judged = 0;
  for (const CalibratedRow& row : r.rows) {
    if (row.fitted) continue;
    const bool large_ar = row.point.collective == "ALL_REDUCE" && row.point.bytes >= (std::uint64_t{1} << 30);
    // All-gather rows carry the gathered total in the table; the simulator the input.
    const std::uint64_t table_bytes = row.point.collective == "ALL_GATHER" ? row.point.bytes * 8 : row.point.bytes;
    const bool other = row.point.collective != "ALL_REDUCE" && table_bytes >= (std::uint64_t{16} << 20);
    if (!large_ar && !other) continue;
    ++judged;
    EXPECT_LT(std::abs(row.error()), 0.10) << row.point.collective << " " << table_bytes << " B: measured "
                                            << row.measured_ns / 1e3 << " us, simulated " << row.simulated_ns / 1e3;
  }
  EXPECT_EQ(judged, 2u + 8u + 8u);
  std::cout << describe_calibration(r);
}

}  // namespace
}  // namespace sim::workflows
