// A backend's own section of `network:` (`ns3: {transport: roce}`): its
// options are checked whichever backend runs and applied only when it does,
// so a preset can state its fabric's transport and still run on every
// backend. Checked by the time an option changes (analytical's egress) and
// by the errors a section can raise.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "system/config/system_config.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;

// A direct all-to-all: three messages leave each NPU at once; serialized they
// end one after another, overlapped together.
Time makespan(const std::string& network_section) {
  const Topology topo = parse_topology("shape: Switch\nnpus: 4\nbandwidth: 1GB/s\nlatency: 0ns\n", "sw");
  SystemConfig c = parse_system_config("network:\n" + network_section + "collective:\n  algorithms: {all_to_all: direct}\n",
                                       "s.yml");
  return simulate_collective(topo, CollectiveType::kAllToAll, 3 * 1000, c).makespan;
}

std::string network_section_error(const std::string& network_section) {
  try {
    makespan(network_section);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(BackendSections, OnlyTheRunningBackendsSectionApplies) {
  const Time serialize = makespan("  egress: serialize\n");
  const Time overlap = makespan("  egress: overlap\n");
  ASSERT_LT(overlap, serialize);
  EXPECT_EQ(makespan("  analytical:\n    egress: overlap\n"), overlap);
  // Another backend's section: checked, not applied.
  EXPECT_EQ(makespan("  ns3:\n    transport: roce\n"), serialize);
  EXPECT_EQ(makespan("  flow:\n    nic_bandwidth: 1GB/s\n  analytical:\n    egress: overlap\n"), overlap);
}

TEST(BackendSections, ErrorsNameTheKeyAndTheBackend) {
  const std::string typo = network_section_error("  ns3:\n    trasport: roce\n");
  EXPECT_EQ(typo.substr(0, typo.find("(its options: ")),
            "s.yml:3: network.ns3.trasport: backend 'ns3' has no option 'trasport' ");
  EXPECT_NE(typo.find("transport"), std::string::npos) << typo;
  EXPECT_EQ(network_section_error("  flow:\n    egress: overlap\n").substr(0, 70),
            "s.yml:3: network.flow.egress: backend 'flow' has no option 'egress' (i");
  EXPECT_EQ(network_section_error("  colour:\n    x: 1\n"),
            "s.yml:2: 'network.colour' holds a section, but only a backend's name does (analytical, flow, ns3): its "
            "options apply when that backend runs");
  EXPECT_EQ(network_section_error("  egress: overlap\n  analytical:\n    egress: serialize\n"),
            "s.yml:2: network.egress: set twice for backend 'analytical' (also s.yml:4: network.analytical.egress)");
}

}  // namespace
}  // namespace sim
