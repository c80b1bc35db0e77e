// `routing: pxn` on an explicit graph (network/pxn_router.h): a message to
// another host leaves by the NIC on the destination's rail, reached inside the
// host; everything else takes the fewest hops. The routes themselves, link by
// link (its errors: topology_hosts_test.cpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "network/topology.h"

namespace sim {
namespace {

// Two hosts of four GPUs. NICs first (sw0..sw7, GPU i's is sw i), then each
// host's NVSwitch (sw8, sw9), the four rail leaves (sw10..sw13, rail r holds
// both hosts' NICs of slot r) and one spine over the leaves. Numbered so that
// the fewest-hops rule, whose ties go to the lowest next node, leaves by the
// sender's own NIC.
std::string rail_graph(const std::string& extra) {
  std::string links;
  for (int g = 0; g < 8; ++g) {
    links += "  - {src: npu" + std::to_string(g) + ", dst: sw" + std::to_string(g) + ", bandwidth: 50GB/s}\n";
    links += "  - {src: npu" + std::to_string(g) + ", dst: sw" + std::to_string(8 + g / 4) + "}\n";
    links += "  - {src: sw" + std::to_string(g) + ", dst: sw" + std::to_string(10 + g % 4) + ", bandwidth: 50GB/s}\n";
  }
  for (int r = 0; r < 4; ++r) links += "  - {src: sw" + std::to_string(10 + r) + ", dst: sw14, bandwidth: 10GB/s}\n";
  return "npus: 8\nswitches: 15\nbandwidth: 450GB/s\nlatency: 500ns\nlinks:\n" + links +
         "hosts: [[npu0, npu1, npu2, npu3], [npu4, npu5, npu6, npu7]]\n"
         "roles: {nic: [sw0, sw1, sw2, sw3, sw4, sw5, sw6, sw7], nvswitch: [sw8, sw9], leaf: [sw10, sw11, sw12, sw13], "
         "spine: [sw14]}\n" +
         extra;
}

// The nodes a route passes, from its source: "npu3 sw8 npu0 sw0 sw10 sw4 npu4".
std::string path(const Topology& t, NodeId src, NodeId dst) {
  std::vector<LinkId> links;
  t.route(src, dst, links);
  const auto name = [&](NodeId v) {
    return v < t.npu_count() ? "npu" + std::to_string(v) : "sw" + std::to_string(v - t.npu_count());
  };
  std::string out = name(src);
  NodeId at = src;
  for (const LinkId l : links) {
    EXPECT_EQ(t.links()[l].from, at) << "links do not chain";
    at = t.links()[l].to;
    out += " " + name(at);
  }
  EXPECT_EQ(at, dst);
  return out;
}

TEST(PxnRouting, AMessageToAnotherHostLeavesByTheDestinationsRail) {
  const Topology pxn = parse_topology(rail_graph("routing: pxn\n"), "rails.yml");
  // npu3 to npu4 (slot 0 of host 1): NVLink to npu0, out by its NIC, rail 0.
  EXPECT_EQ(path(pxn, 3, 4), "npu3 sw8 npu0 sw0 sw10 sw4 npu4");
  EXPECT_EQ(path(pxn, 6, 1), "npu6 sw9 npu5 sw5 sw11 sw1 npu1");
  // The same rail: its own NIC.
  EXPECT_EQ(path(pxn, 2, 6), "npu2 sw2 sw12 sw6 npu6");
  // Inside a host: the fewest hops, as without the key.
  EXPECT_EQ(path(pxn, 1, 2), "npu1 sw8 npu2");

  // The fewest hops: the sender's own NIC and its rail, then NVLink in the
  // other host (as short; the tie goes to the lowest next node).
  const Topology shortest = parse_topology(rail_graph("routing: shortest\n"), "rails.yml");
  EXPECT_EQ(path(shortest, 3, 4), "npu3 sw3 sw13 sw7 npu7 sw9 npu4");
  EXPECT_EQ(path(shortest, 2, 6), path(pxn, 2, 6));
}

TEST(PxnRouting, AGraphThatNamesItsHostsAndRolesRoutesByRailsUnlessToldOtherwise) {
  const Topology pxn = parse_topology(rail_graph("routing: pxn\n"), "rails.yml");
  const Topology plain = parse_topology(rail_graph(""), "rails.yml");
  for (NodeId s = 0; s < 8; ++s) {
    for (NodeId d = 0; d < 8; ++d) {
      if (s == d) continue;
      EXPECT_EQ(path(plain, s, d), path(pxn, s, d)) << s << " -> " << d;
    }
  }
  EXPECT_NE(plain.description().find("routing pxn"), std::string::npos) << plain.description();
}

TEST(PxnRouting, EveryMessageToAnotherHostLeavesByTheNicOfItsRail) {
  const Topology pxn = parse_topology(rail_graph("routing: pxn\n"), "rails.yml");
  for (NodeId s = 0; s < 8; ++s) {
    for (NodeId d = 0; d < 8; ++d) {
      if (s / 4 == d / 4) continue;
      const std::string nic = "sw" + std::to_string(s / 4 * 4 + d % 4);
      const std::string rail = "sw" + std::to_string(10 + d % 4);
      const std::string in = "sw" + std::to_string(d) + " npu" + std::to_string(d);
      const std::string via = s % 4 == d % 4 ? "" : " sw" + std::to_string(8 + s / 4) + " npu" + std::to_string(s / 4 * 4 + d % 4);
      EXPECT_EQ(path(pxn, s, d), "npu" + std::to_string(s) + via + " " + nic + " " + rail + " " + in);
    }
  }
}

TEST(PxnRouting, NicsUnderAPcieSwitchAreReachedThroughIt) {
  // Two hosts of four GPUs; a PCIe switch per GPU pair holds two NICs (sw0..sw3
  // the PCIe switches, sw4..sw11 the NICs, host 0's sw4..sw7), an NVSwitch per
  // host (sw12, sw13), and a leaf per rail (sw14..sw17: the hosts' NICs of one
  // place). GPU 2k and 2k+1 share NICs sw(4+2k') and sw(5+2k'); a GPU's own NIC
  // is the lower one, so GPUs 0, 1 are on rail 0 and GPUs 2, 3 on rail 2.
  std::string links;
  for (int g = 0; g < 8; ++g) {
    links += "  - {src: npu" + std::to_string(g) + ", dst: sw" + std::to_string(g / 2) + "}\n";
    links += "  - {src: npu" + std::to_string(g) + ", dst: sw" + std::to_string(12 + g / 4) + ", bandwidth: 450GB/s}\n";
  }
  for (int p = 0; p < 4; ++p) {
    for (int i = 0; i < 2; ++i) {
      const int nic = 4 + 2 * p + i;
      links += "  - {src: sw" + std::to_string(p) + ", dst: sw" + std::to_string(nic) + "}\n";
      links += "  - {src: sw" + std::to_string(nic) + ", dst: sw" + std::to_string(14 + (nic - 4) % 4) + "}\n";
    }
  }
  const std::string g = "npus: 8\nswitches: 18\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n" + links +
                        "hosts: [[npu0, npu1, npu2, npu3], [npu4, npu5, npu6, npu7]]\n"
                        "roles: {pcie-switch: [sw0, sw1, sw2, sw3], nic: [sw4, sw5, sw6, sw7, sw8, sw9, sw10, sw11], "
                        "nvswitch: [sw12, sw13], leaf: [sw14, sw15, sw16, sw17]}\nrouting: pxn\n";
  const Topology t = parse_topology(g, "pcie.yml");
  // npu1 to npu6 (rail 2): NVLink to npu2, its PCIe switch, NIC sw6, rail 2's leaf.
  EXPECT_EQ(path(t, 1, 6), "npu1 sw12 npu2 sw1 sw6 sw16 sw10 sw3 npu6");
  // npu0 to npu5 (rail 0, its own): through its PCIe switch.
  EXPECT_EQ(path(t, 0, 5), "npu0 sw0 sw4 sw14 sw8 sw2 npu5");
  // npu1 shares npu0's PCIe switch: the same way out, no NVLink.
  EXPECT_EQ(path(t, 1, 4), "npu1 sw0 sw4 sw14 sw8 sw2 npu4");
}

TEST(PxnRouting, WithoutNicNodesTheGpuInTheDestinationsPlaceIsTheWayOut) {
  // Each GPU's link to its rail's leaf is its NIC (sw0, sw1: NVSwitches;
  // sw2, sw3: rails; sw4: a spine the fewest hops would cross).
  const std::string g =
      "npus: 4\nswitches: 5\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n"
      "  - {src: npu0, dst: sw0}\n  - {src: npu1, dst: sw0}\n  - {src: npu2, dst: sw1}\n  - {src: npu3, dst: sw1}\n"
      "  - {src: npu0, dst: sw2}\n  - {src: npu2, dst: sw2}\n  - {src: npu1, dst: sw3}\n  - {src: npu3, dst: sw3}\n"
      "  - {src: sw2, dst: sw4}\n  - {src: sw3, dst: sw4}\n"
      "hosts: [[npu0, npu1], [npu2, npu3]]\nroles: {nvswitch: [sw0, sw1], leaf: [sw2, sw3], spine: [sw4]}\n";
  EXPECT_EQ(path(parse_topology(g + "routing: pxn\n", "g.yml"), 1, 2), "npu1 sw0 npu0 sw2 npu2");
  EXPECT_EQ(path(parse_topology(g, "g.yml"), 1, 2), "npu1 sw0 npu0 sw2 npu2");  // a tie the lowest node wins
  EXPECT_EQ(path(parse_topology(g + "routing: pxn\n", "g.yml"), 0, 3), "npu0 sw0 npu1 sw3 npu3");
  EXPECT_EQ(path(parse_topology(g, "g.yml"), 0, 3), "npu0 sw0 npu1 sw3 npu3");
}

TEST(PxnRouting, AGpuWithoutANicAndARailTheSenderLacksTakeTheFewestHops) {
  // Host 0 has GPUs npu0, npu1 and one NIC (npu0's, sw2); host 1 has npu2 and
  // npu3 with a NIC each (sw3, sw4). Rail 1 (npu3's) is missing in host 0, and
  // npu1 has no NIC: both take the fewest hops.
  const std::string g =
      "npus: 4\nswitches: 6\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n"
      "  - {src: npu0, dst: sw0}\n  - {src: npu1, dst: sw0}\n  - {src: npu2, dst: sw1}\n  - {src: npu3, dst: sw1}\n"
      "  - {src: npu0, dst: sw2}\n  - {src: npu2, dst: sw3}\n  - {src: npu3, dst: sw4}\n"
      "  - {src: sw2, dst: sw5}\n  - {src: sw3, dst: sw5}\n  - {src: sw4, dst: sw5}\n"
      "hosts: [[npu0, npu1], [npu2, npu3]]\nroles: {nvswitch: [sw0, sw1], nic: [sw2, sw3, sw4], leaf: [sw5]}\n"
      "routing: pxn\n";
  const Topology t = parse_topology(g, "g.yml");
  const Topology shortest = parse_topology(g.substr(0, g.size() - std::string("routing: pxn\n").size()), "g.yml");
  EXPECT_EQ(path(t, 1, 3), path(shortest, 1, 3));
  EXPECT_EQ(path(t, 1, 3), "npu1 sw0 npu0 sw2 sw5 sw4 npu3");
  EXPECT_EQ(path(t, 2, 1), path(shortest, 2, 1));  // npu1 has no NIC: no rail
  EXPECT_EQ(path(t, 3, 0), "npu3 sw1 npu2 sw3 sw5 sw2 npu0");  // rail 0 through npu2's NIC
}

}  // namespace
}  // namespace sim
