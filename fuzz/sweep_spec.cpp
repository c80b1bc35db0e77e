// A sweep spec (`sim sweep SPEC.yml`) as the sweep reads it: parse_sweep_spec,
// expand_points, then for the first and the last point each key-path override
// applied to a network and a system file (apply_overrides) and the results
// parsed as a point would parse them (parse_topology, parse_system_config). Sweeps of
// 512 to 1,000,000 points are read but not expanded (too slow per input:
// expansion is a product loop that small sweeps cover as well).
#include <algorithm>
#include <string>

#include <yaml-cpp/yaml.h>

#include "fuzz/harness.h"
#include "network/topology.h"
#include "system/config/system_config.h"
#include "workflows/sweep/sweep_spec.h"
#include "workflows/sweep/yaml_override.h"

namespace {

// What the overrides edit (a spec's own network and system files are not
// read: they are paths, and opening what a fuzzer names is not the point).
constexpr const char* kNetwork = "shape: Torus\ndims: [4, 4]\nbandwidth: 50GB/s\nlatency: 500ns\n";
constexpr const char* kSystem =
    "compute:\n  peak_tflops: 989\n  memory_bandwidth: 3350GB/s\nmemory:\n  latency: 500ns\n  bandwidth: 100GB/s\n"
    "collective:\n  chunks: 4\n  reduction_bandwidth: 1000GB/s\n  algorithms:\n    all_reduce: ring\n";

// Whether the network text's `dims` (or `npus`) stay at most `limit` NPUs;
// anything it cannot tell is left to parse_topology.
bool npus_at_most(const std::string& text, std::uint64_t limit) {
  try {
    const YAML::Node n = YAML::Load(text);
    std::uint64_t product = 1;
    if (n.IsMap() && n["dims"] && n["dims"].IsSequence()) {
      for (const YAML::Node& d : n["dims"]) {
        const double v = std::max(d.IsScalar() ? d.as<double>() : 1.0, 1.0);
        if (v > static_cast<double>(limit)) return false;
        product = std::min<std::uint64_t>(product * static_cast<std::uint64_t>(v), limit + 1);
      }
    }
    if (n.IsMap() && n["npus"] && n["npus"].IsScalar() && n["npus"].as<double>() > static_cast<double>(limit)) return false;
    return product <= limit;
  } catch (const std::exception&) {
    return true;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  fuzz::expect_clean("sweep_spec", [&] {
    const workflows::SweepSpec spec = workflows::parse_sweep_spec(fuzz::text_of(data, size), "fuzz/spec.yml");
    // Expanding 10^5 legitimate points takes seconds under the sanitizers,
    // and even 10^4 cut the campaign's rate tenfold: expand small sweeps, and
    // those past the limit (refused before allocating).
    std::size_t product = 1;
    for (const workflows::Axis& a : spec.axes) product = std::min<std::size_t>(product * a.values.size(), 1u << 30);
    if (product > 512 && product <= 1'000'000) return;
    const std::vector<workflows::SweepPoint> points = workflows::expand_points(spec);
    // The first and the last point: between them every axis's first and last
    // value (each point costs two YAML parses and two edits).
    for (std::size_t i = 0; i < points.size(); i += std::max<std::size_t>(points.size() - 1, 1)) {
      const workflows::PointSettings& s = points[i].settings;
      // Each point on its own: one point's bad override does not hide the next.
      fuzz::expect_clean("sweep_spec", [&] {
        const std::string net = workflows::apply_overrides(kNetwork, "fuzz/net.yml", s.network_overrides, spec.path);
        // Legitimate networks of millions of NPUs take seconds to build under
        // the sanitizers: the override and its YAML are the point, not the build.
        if (npus_at_most(net, 1 << 16)) parse_topology(net, "fuzz/net.yml");
      });
      fuzz::expect_clean("sweep_spec", [&] {
        parse_system_config(workflows::apply_overrides(kSystem, "fuzz/sys.yml", s.system_overrides, spec.path), "fuzz/sys.yml");
      });
    }
  });
  return 0;
}
