// Topology YAML (all three forms), then one route, as a run would ask.
#include "fuzz/harness.h"
#include "network/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  fuzz::expect_clean("topology_yaml", [&] {
    const Topology t = parse_topology(fuzz::text_of(data, size), "fuzz.yml");
    if (t.npu_count() >= 2) {
      std::vector<LinkId> route;
      t.route(0, t.npu_count() - 1, route);
    }
  });
  return 0;
}
