// Sweep specs: the shipped ones load and every point's inputs read; the
// product and zip orders.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <utility>

#include "workflows/sweep_fixture.h"
#include "workflows/sweep/point_inputs.h"
#include "workflows/sweep/sweep_spec.h"

namespace sim::workflows {
namespace {

TEST(SweepSpec, EveryShippedSpecLoadsAndItsPointsReadTheirInputs) {
  const std::string folder = std::string(SIM_SOURCE_DIR) + "/configs/sweeps";
  std::size_t specs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".yml") continue;
    ++specs;
    const SweepSpec spec = load_sweep_spec(entry.path().string());
    const std::vector<SweepPoint> points = expand_points(spec);
    std::size_t product = 1;
    for (const Axis& a : spec.axes) product *= a.values.size();
    for (const auto& zip : spec.zips) {  // zipped axes advance together: one dimension
      for (std::size_t k = 1; k < zip.size(); ++k) product /= spec.axes[zip[k]].values.size();
    }
    EXPECT_EQ(points.size(), product) << entry.path();
    InputReader reader(spec);
    std::set<std::string> keys;
    for (const SweepPoint& p : points) {
      const PointInputs in = reader.read(p.settings);
      EXPECT_EQ(in.failure, "") << entry.path() << " point " << p.index;
      keys.insert(in.key);
    }
    EXPECT_EQ(keys.size(), points.size()) << entry.path() << ": two points with one key";
  }
  EXPECT_GE(specs, 3u);
}

TEST(SweepSpec, FirstAxisVariesSlowestAndOverridesReachTheFile) {
  const std::string ring = std::string(SIM_SOURCE_DIR) + "/configs/ring8.yml";
  const SweepSpec spec = parse_sweep_spec("base:\n  microbenchmark: {npus: 8}\n  network: " + ring +
                                              "\naxes:\n  network.bandwidth: [10, 20]\n  size: [1KiB, 2KiB, 4KiB]\n",
                                          "/tmp/spec.yml");
  const auto points = expand_points(spec);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[1].choice, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(points[3].choice, (std::vector<std::size_t>{1, 0}));
  InputReader reader(spec);
  const PointInputs in = reader.read(points[4].settings);
  EXPECT_NE(in.network_text.find("bandwidth: 20"), std::string::npos) << in.network_text;
  EXPECT_NE(in.network_text.find("latency: 500ns"), std::string::npos) << in.network_text;  // the rest kept
  EXPECT_EQ(in.microbenchmark->bytes, 2048u);
  EXPECT_NE(reader.read(points[0].settings).key, reader.read(points[3].settings).key);
  EXPECT_EQ(reader.read(points[0].settings).key, reader.read(points[0].settings).key);  // stable
}

// The ns3 backend's code is in libsim_ns3.so, outside the executable that
// sim_version digests: the module file keys the points that use it, only those.
TEST(SweepSpec, PointsOfAModuleBackendAreKeyedByTheModuleFile) {
  const testing::TempDir dir("module_key");
  const std::string ring = std::string(SIM_SOURCE_DIR) + "/configs/ring8.yml";
  const SweepSpec spec = parse_sweep_spec("base:\n  microbenchmark: {npus: 8}\n  network: " + ring +
                                              "\naxes:\n  backend: [analytical, ns3]\n",
                                          "/tmp/spec.yml");
  const auto points = expand_points(spec);
  ASSERT_EQ(points.size(), 2u);
  const auto keys = [&spec, &points] {
    InputReader reader(spec);
    return std::pair{reader.read(points[0].settings).key, reader.read(points[1].settings).key};
  };
  ::setenv("SIM_MODULE_DIR", dir.path().c_str(), 1);  // searched first: only keyed here, never loaded
  std::ofstream(dir / "libsim_ns3.so") << "one build of the module";
  const auto one = keys();
  std::ofstream(dir / "libsim_ns3.so") << "another build of the module";
  const auto another = keys();
  ::unsetenv("SIM_MODULE_DIR");
  EXPECT_EQ(one.first, another.first);    // analytical
  EXPECT_NE(one.second, another.second);  // ns3
}

}  // namespace
}  // namespace sim::workflows
