// Hosts and roles: which NPUs share a machine, and what each switch is. The
// dimension-0 default, a dimension stack's `roles`, an explicit graph's
// `hosts` and `roles`, and the errors each names.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "network/topology.h"

namespace sim {
namespace {

const std::string kStack = "topology: [Switch, Switch]\nnpus_count: [8, 4]\nbandwidth: [450, 50]\nlatency: [300, 1350]\n";

TEST(TopologyHosts, DimensionZeroIsTheHostUnlessTheFileSays) {
  const Topology t = parse_topology(kStack, "t.yml");
  EXPECT_FALSE(t.hardware_declared());
  EXPECT_EQ(t.host_count(), 4u);
  for (NodeId n = 0; n < 32; ++n) {
    EXPECT_EQ(t.role(n), NodeRole::kGpu);
    EXPECT_EQ(t.host(n), n / 8);
    EXPECT_EQ(t.host_slot(n), n % 8);
  }
  // Switches 32..35 are dimension 0's (one per node), 36..43 dimension 1's (one per rail).
  for (NodeId s = 32; s < 36; ++s) EXPECT_EQ(t.role(s), NodeRole::kNvSwitch) << s;
  for (NodeId s = 36; s < 44; ++s) EXPECT_EQ(t.role(s), NodeRole::kLeaf) << s;
  EXPECT_TRUE(t.dimensions()[0].in_host);
  EXPECT_FALSE(t.dimensions()[1].in_host);
}

TEST(TopologyHosts, AStackSaysWhatEachDimensionIs) {
  // One GPU per host: dimension 0 is a leaf, dimension 1 a spine.
  const Topology flat = parse_topology(kStack + "roles: [leaf, spine]\n", "t.yml");
  EXPECT_TRUE(flat.hardware_declared());
  EXPECT_EQ(flat.host_count(), 32u);
  EXPECT_EQ(flat.host(9), 9u);
  EXPECT_EQ(flat.host_slot(9), 0u);
  EXPECT_EQ(flat.role(32), NodeRole::kLeaf);
  EXPECT_EQ(flat.role(36), NodeRole::kSpine);

  // Two dimensions inside a host: a pair of GPUs on NVLink, four pairs on a PCIe switch.
  const Topology deep = parse_topology(
      "topology: [Ring, Switch, Switch]\nnpus_count: [2, 4, 2]\nbandwidth: [100, 32, 50]\nlatency: [1, 1, 1]\n"
      "roles: [nvlink, pcie-switch, core]\n",
      "t.yml");
  EXPECT_EQ(deep.host_count(), 2u);
  EXPECT_EQ(deep.host(7), 0u);
  EXPECT_EQ(deep.host(8), 1u);
  EXPECT_EQ(deep.host_slot(13), 5u);
  EXPECT_EQ(deep.role(16), NodeRole::kPcieSwitch);
  EXPECT_EQ(deep.role(20), NodeRole::kCore);
}

void expect_host_error(const std::string& yaml, const std::string& what) {
  try {
    parse_topology(yaml, "bad.yml");
    FAIL() << "accepted: " << yaml;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.yml:"), std::string::npos) << e.what();
  }
}

TEST(TopologyHosts, AStacksRolesAreChecked) {
  expect_host_error(kStack + "roles: [nvswitch]\n", "'roles' has 1 entries but 'topology' has 2");
  expect_host_error(kStack + "roles: [leaf, nvswitch]\n", "the dimensions inside a host come first");
  expect_host_error(kStack + "roles: [nvlink, leaf]\n", "a Switch dimension's role is nvswitch, pcie-switch");
  expect_host_error(kStack + "roles: [nvswitch, nic]\n", "got 'nic'");
  expect_host_error(
      "topology: [Ring, Switch]\nnpus_count: [4, 2]\nbandwidth: [1, 1]\nlatency: [1, 1]\nroles: [leaf, spine]\n",
      "nvlink (inside a host) or network (between hosts), got 'leaf'");
}

// Two hosts of two GPUs, an NVSwitch each, a NIC per GPU, one leaf.
const std::string kTwoHostGraph =
    "npus: 4\nswitches: 7\nbandwidth: 50GB/s\nlatency: 500ns\n"
    "links:\n"
    "  - {src: npu0, dst: sw0}\n  - {src: npu1, dst: sw0}\n  - {src: npu2, dst: sw1}\n  - {src: npu3, dst: sw1}\n"
    "  - {src: npu0, dst: sw2}\n  - {src: npu1, dst: sw3}\n  - {src: npu2, dst: sw4}\n  - {src: npu3, dst: sw5}\n"
    "  - {src: sw2, dst: sw6}\n  - {src: sw3, dst: sw6}\n  - {src: sw4, dst: sw6}\n  - {src: sw5, dst: sw6}\n";

TEST(TopologyHosts, AGraphNamesItsHostsAndRoles) {
  const Topology t = parse_topology(kTwoHostGraph +
                                        "hosts: [[npu0, npu1], [npu3, npu2]]\n"
                                        "roles: {nvswitch: [sw0, sw1], nic: [sw2, sw3, sw4, sw5], leaf: [sw6]}\n",
                                    "g.yml");
  EXPECT_TRUE(t.hardware_declared());
  EXPECT_EQ(t.host_count(), 2u);
  EXPECT_EQ(t.host(1), 0u);
  EXPECT_EQ(t.host(2), 1u);
  EXPECT_EQ(t.host_slot(2), 0u);  // in id order, not the list's
  EXPECT_EQ(t.host_slot(3), 1u);
  EXPECT_EQ(t.role(4), NodeRole::kNvSwitch);
  EXPECT_EQ(t.role(6), NodeRole::kNic);
  EXPECT_EQ(t.role(10), NodeRole::kLeaf);

  // Without `hosts`, an explicit graph is one host; switches without a role are "switch".
  const Topology plain = parse_topology(kTwoHostGraph, "g.yml");
  EXPECT_FALSE(plain.hardware_declared());
  EXPECT_EQ(plain.host_count(), 1u);
  EXPECT_EQ(plain.host(3), 0u);
  EXPECT_EQ(plain.role(10), NodeRole::kSwitch);
}

TEST(TopologyHosts, AGraphsHostsAndRolesAreChecked) {
  expect_host_error(kTwoHostGraph + "hosts: [[npu0, npu1], [npu2]]\n", "'hosts': NPU 3 is in no host");
  expect_host_error(kTwoHostGraph + "hosts: [[npu0, npu1], [npu2, npu1]]\n", "NPU 1 is already in host 0");
  expect_host_error(kTwoHostGraph + "hosts: [[npu0, npu1, sw0], [npu2, npu3]]\n", "switch 0 is not an NPU");
  expect_host_error(kTwoHostGraph + "hosts: [[npu0, npu1], []]\n", "'hosts[1]' must be a list of NPUs");
  expect_host_error(kTwoHostGraph + "roles: {router: [sw0]}\n", "unknown switch role 'router'");
  expect_host_error(kTwoHostGraph + "roles: {nic: [npu0]}\n", "NPU 0 is a GPU, not a nic");
  expect_host_error(kTwoHostGraph + "roles: {nic: [sw2], leaf: [sw2]}\n", "switch 2 is given a role twice");
  expect_host_error(kTwoHostGraph + "roles: {gpu: [sw2]}\n", "unknown switch role 'gpu'");
  // A role named twice in the map, or a key that is not a name.
  expect_host_error(kTwoHostGraph + "roles: {nic: [sw2, sw3], leaf: [sw6], nic: [sw4, sw5]}\n",
                    "bad.yml:18: duplicate key 'roles.nic'");
  expect_host_error(kTwoHostGraph + "roles: {[nic]: [sw2]}\n",
                    "bad.yml:18: 'roles': a key must be a role name, e.g. nic");
}

TEST(TopologyHosts, ANicIsLinkedFromTheGpusThatUseIt) {
  // The leaf, linked only from NICs, cannot be one.
  expect_host_error(
      kTwoHostGraph + "roles: {nvswitch: [sw0, sw1], nic: [sw2, sw3, sw4, sw5, sw6]}\n",
      "bad.yml:18: 'roles.nic[4]': switch 6 is linked from no GPU (a NIC is a host's port to the network");
  // Under a PCIe switch a GPU links to, it is one.
  const Topology pcie = parse_topology(
      kTwoHostGraph + "roles: {pcie-switch: [sw0, sw1], nic: [sw2, sw3, sw4, sw5], leaf: [sw6]}\n", "g.yml");
  EXPECT_EQ(pcie.role(6), NodeRole::kNic);
  const std::string under_pcie =
      "npus: 2\nswitches: 3\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n"
      "  - {src: npu0, dst: sw0}\n  - {src: npu1, dst: sw0}\n  - {src: sw0, dst: sw1}\n  - {src: sw1, dst: sw2}\n";
  EXPECT_EQ(parse_topology(under_pcie + "roles: {pcie-switch: [sw0], nic: [sw1]}\n", "g.yml").role(3), NodeRole::kNic);
  // Under a switch that is no PCIe switch of a GPU, it is not.
  expect_host_error(under_pcie + "roles: {nvswitch: [sw0], nic: [sw1]}\n",
                    "'roles.nic[0]': switch 1 is linked from no GPU");
}

// A NIC is one host's port: GPUs of two hosts reaching it (directly or
// under a PCIe switch they share) are refused, naming the NIC.
TEST(TopologyHosts, ANicBelongsToOneHost) {
  const std::string roles = "hosts: [[npu0, npu1], [npu2, npu3]]\n"
                            "roles: {nvswitch: [sw0, sw1], nic: [sw2, sw3, sw4, sw5], leaf: [sw6]}\n";
  std::string crossed = kTwoHostGraph;
  crossed.insert(crossed.find("  - {src: sw2, dst: sw6}"), "  - {src: npu2, dst: sw2}\n");
  expect_host_error(crossed + roles,
                    "bad.yml:20: 'roles.nic[0]': switch 2 is linked from GPUs of hosts 0 and 1: a NIC is one host's "
                    "port to the network (give each host its own NICs)");
  const std::string shared_pcie =
      "npus: 2\nswitches: 3\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n"
      "  - {src: npu0, dst: sw0}\n  - {src: npu1, dst: sw0}\n  - {src: sw0, dst: sw1}\n  - {src: sw1, dst: sw2}\n";
  expect_host_error(shared_pcie + "hosts: [[npu0], [npu1]]\nroles: {pcie-switch: [sw0], nic: [sw1]}\n",
                    "'roles.nic[0]': switch 1 is linked from GPUs of several hosts (through a pcie-switch shared by them)");
  EXPECT_EQ(parse_topology(kTwoHostGraph + roles, "g.yml").role(6), NodeRole::kNic);
}

TEST(TopologyHosts, RoutingByRailsIsChecked) {
  expect_host_error(kTwoHostGraph + "hosts: [[npu0, npu1], [npu2, npu3]]\nrouting: ecmp\n",
                    "'routing' must be shortest or pxn, got 'ecmp'");
  const std::string no_hosts =
      "npus: 2\nswitches: 1\nbandwidth: 1GB/s\nlatency: 1ns\nlinks:\n  - {src: npu0, dst: sw0}\n"
      "  - {src: npu1, dst: sw0}\nrouting: pxn\n";
  expect_host_error(no_hosts, "'routing: pxn' needs 'hosts'");
  // Host 0's GPUs share no NVLink: npu1 cannot reach npu0's NIC inside its host.
  const std::string apart =
      "npus: 4\nswitches: 5\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n"
      "  - {src: npu0, dst: sw0}\n  - {src: npu1, dst: sw1}\n  - {src: npu2, dst: sw2}\n  - {src: npu3, dst: sw3}\n"
      "  - {src: sw0, dst: sw4}\n  - {src: sw1, dst: sw4}\n  - {src: sw2, dst: sw4}\n  - {src: sw3, dst: sw4}\n"
      "hosts: [[npu0, npu1], [npu2, npu3]]\nroles: {nic: [sw0, sw1, sw2, sw3], leaf: [sw4]}\nrouting: pxn\n";
  expect_host_error(apart, "'routing: pxn': npu1 cannot reach sw0, a way out of its host 0, inside the host");
  // Unasked, such a graph takes the fewest hops (as NCCL uses PXN only where NVLink reaches the rail's GPU).
  const std::string unasked = apart.substr(0, apart.find("routing: pxn\n"));
  const Topology fewest = parse_topology(unasked, "g.yml");
  EXPECT_NE(fewest.description().find("routing shortest"), std::string::npos) << fewest.description();
  std::vector<LinkId> unasked_route, fewest_route;
  fewest.route(1, 0, unasked_route);
  parse_topology(unasked + "routing: shortest\n", "g.yml").route(1, 0, fewest_route);
  EXPECT_EQ(unasked_route, fewest_route);
  EXPECT_EQ(unasked_route.size(), 4u);  // npu1 sw1 sw4 sw0 npu0: out by its NIC and back in
  // Without roles no switch is known to sit inside a host: kTwoHostGraph's NVSwitches
  // are plain switches, so npu1 cannot reach npu0 (its host's way out on rail 0).
  expect_host_error(
      kTwoHostGraph + "hosts: [[npu0, npu1], [npu2, npu3]]\nrouting: pxn\n",
      "'routing: pxn': npu1 cannot reach npu0, a way out of its host 0, inside the host (through its GPUs, "
      "and the switches 'roles' names nvswitch or pcie-switch)");
  // One spelling per node.
  expect_host_error(kTwoHostGraph + "hosts: [[npu00, npu1], [npu2, npu3]]\n",
                    "'hosts[0][0]' must be a node id, npuN or swN, got 'npu00'");
}

}  // namespace
}  // namespace sim
