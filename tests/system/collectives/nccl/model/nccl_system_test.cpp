// NCCL's system description read off the topology's hosts and roles: the
// GPUs of a host, their NVLink, and the NICs they reach the network through
// (one per GPU, shared by a pair, several per GPU, under a PCIe switch).
#include "system/collectives/nccl/model/nccl_system.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/system/test_util.h"
#include "system/collectives/algorithm_context.h"

namespace sim {
namespace {

using namespace sim::testing;

// How a host's GPUs reach the network in the graphs below.
enum class Nics { kOnePerGpu, kSharedByPair, kFourPerGpu, kUnderPcieSwitch };

// `hosts` hosts of 8 GPUs on an NVSwitch (450 GB/s per GPU, 0 ns), NICs as
// `nics` says (`nic_gbs` GB/s each, toward one leaf switch, 1350 ns), the
// GPU -> NIC (or PCIe switch) links 64 GB/s and 0 ns.
std::string dgx_graph(int hosts, Nics nics, int nic_gbs) {
  const int gpus = 8 * hosts;
  const int per_host_nics = nics == Nics::kOnePerGpu ? 8 : nics == Nics::kFourPerGpu ? 32 : 4;
  const int pcie = nics == Nics::kUnderPcieSwitch ? 4 : 0;  // per host
  // Switches: NVSwitches, then NICs, then PCIe switches, then the leaf.
  const int nvsw0 = 0, nic0 = hosts, pcie0 = nic0 + hosts * per_host_nics, leaf = pcie0 + hosts * pcie;
  std::string y = "npus: " + std::to_string(gpus) + "\nswitches: " + std::to_string(leaf + 1) + "\nlinks:\n";
  auto link = [&](const std::string& a, const std::string& b, const std::string& bw, const std::string& lat) {
    y += "  - {src: " + a + ", dst: " + b + ", bandwidth: " + bw + ", latency: " + lat + "}\n";
  };
  auto npu = [](int i) { return "npu" + std::to_string(i); };
  auto sw = [](int i) { return "sw" + std::to_string(i); };
  std::string hosts_list = "hosts: [", nic_list, pcie_list, nvsw_list;
  for (int h = 0; h < hosts; ++h) {
    hosts_list += std::string(h ? ", " : "") + "[";
    nvsw_list += std::string(h ? ", " : "") + sw(nvsw0 + h);
    for (int g = 0; g < 8; ++g) {
      const int gpu = 8 * h + g;
      hosts_list += std::string(g ? ", " : "") + npu(gpu);
      link(npu(gpu), sw(nvsw0 + h), "450GB/s", "0ns");
      switch (nics) {
        case Nics::kOnePerGpu: link(npu(gpu), sw(nic0 + 8 * h + g), "64GB/s", "0ns"); break;
        case Nics::kSharedByPair: link(npu(gpu), sw(nic0 + 4 * h + g / 2), "64GB/s", "0ns"); break;
        case Nics::kFourPerGpu:
          for (int k = 0; k < 4; ++k) link(npu(gpu), sw(nic0 + 32 * h + 4 * g + k), "64GB/s", "0ns");
          break;
        case Nics::kUnderPcieSwitch: link(npu(gpu), sw(pcie0 + 4 * h + g / 2), "64GB/s", "0ns"); break;
      }
    }
    hosts_list += "]";
    for (int k = 0; k < per_host_nics; ++k) {
      const int nic = nic0 + per_host_nics * h + k;
      nic_list += std::string(nic_list.empty() ? "" : ", ") + sw(nic);
      link(sw(nic), sw(leaf), std::to_string(nic_gbs) + "GB/s", "1350ns");
      if (pcie) link(sw(pcie0 + 4 * h + k), sw(nic), "64GB/s", "0ns");
    }
    for (int k = 0; k < pcie; ++k) pcie_list += std::string(pcie_list.empty() ? "" : ", ") + sw(pcie0 + 4 * h + k);
  }
  y += hosts_list + "]\nroles: {nvswitch: [" + nvsw_list + "], nic: [" + nic_list + "], leaf: [" + sw(leaf) + "]" +
       (pcie ? ", pcie-switch: [" + pcie_list + "]" : std::string()) + "}\n";
  return y;
}

nccl::NcclSystem describe(const Topology& topo) {
  auto members = std::make_shared<std::vector<std::uint32_t>>();
  for (std::uint32_t i = 0; i < topo.npu_count(); ++i) members->push_back(i);
  return nccl::describe_system(*make_algorithm_context(members, &topo), nccl::Arch::kHopper);
}

void expect_same(const nccl::NcclSystem& a, const nccl::NcclSystem& b) {
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.per_node, b.per_node);
  EXPECT_DOUBLE_EQ(a.gpu_bw, b.gpu_bw);
  EXPECT_DOUBLE_EQ(a.nic_bw, b.nic_bw);
  EXPECT_EQ(a.nics, b.nics);
  for (int g = 0; g < nccl::kAlgos; ++g) {
    EXPECT_EQ(a.graphs[g].channels, b.graphs[g].channels) << "graph " << g;
    EXPECT_DOUBLE_EQ(a.graphs[g].bw_intra, b.graphs[g].bw_intra) << "graph " << g;
    EXPECT_DOUBLE_EQ(a.graphs[g].bw_inter, b.graphs[g].bw_inter) << "graph " << g;
  }
}

const std::string kStack = "topology: [Switch, Switch]\nnpus_count: [8, 2]\nbandwidth: [450, 50]\nlatency: [0, 1350]\n";

TEST(NcclSystem, AGraphWithHostsAndNicsDescribesTheSameSystemAsTheStack) {
  const Topology stack = parse_topology(kStack, "stack.yml");
  const Topology declared = parse_topology(kStack + "roles: [nvswitch, leaf]\n", "stack.yml");
  const Topology graph = parse_topology(dgx_graph(2, Nics::kOnePerGpu, 50), "graph.yml");
  const nccl::NcclSystem s = describe(stack);
  EXPECT_EQ(s.nodes, 2);
  EXPECT_DOUBLE_EQ(s.gpu_bw, 450 * 20.6 / 25);
  EXPECT_DOUBLE_EQ(s.nic_bw, 50);
  EXPECT_EQ(s.nics, 8);
  expect_same(describe(declared), s);
  expect_same(describe(graph), s);

  auto members = std::make_shared<std::vector<std::uint32_t>>();
  for (std::uint32_t i = 0; i < 16; ++i) members->push_back(i);
  const auto ctx = make_algorithm_context(members, &graph);
  EXPECT_EQ(ctx->domains, 2u);
  EXPECT_EQ(ctx->domain_of[9], 1u);
  EXPECT_EQ(ctx->rail_of[9], 1u);
  EXPECT_EQ(ctx->domain_switch[1], graph.npu_count() + 1);  // host 1's NVSwitch, sw1
  EXPECT_EQ(ctx->ranks_per_domain(), 8u);

  // A group with 8 GPUs on one node and 1 on the other: NCCL's model of it is refused, by name.
  auto uneven = std::make_shared<std::vector<std::uint32_t>>();
  for (std::uint32_t i = 0; i < 9; ++i) uneven->push_back(i);
  const auto lopsided = make_algorithm_context(uneven, &graph);
  EXPECT_EQ(lopsided->ranks_per_domain(), 0u);
  try {
    nccl::describe_system(*lopsided, nccl::Arch::kHopper);
    ADD_FAILURE() << "an uneven group was described";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("8 ranks on one node and 1 on another"), std::string::npos) << e.what();
  }

  // Simulated: NCCL's ring all-reduce, the same plan on both, within 1%. The
  // routes differ where a ring crosses nodes between different GPU positions:
  // the stack's cross the NVSwitch to the peer's rail first (as NCCL's PXN
  // does) and share that rail's link with its own GPU's traffic, the graph's
  // leave through the sender's own NIC to the one leaf.
  const std::uint64_t bytes = 64ULL << 20;
  SystemConfig c;
  c.algorithms[CollectiveType::kAllReduce] = "nccl:algo=ring,proto=simple";
  const Time on_stack = simulate_collective(stack, CollectiveType::kAllReduce, bytes, c).makespan;
  const Time on_graph = simulate_collective(graph, CollectiveType::kAllReduce, bytes, c).makespan;
  EXPECT_GT(on_stack, 0);
  EXPECT_NEAR(static_cast<double>(on_graph) / static_cast<double>(on_stack), 1.0, 0.01);
}

// NVLink SHARP reduces what the GPUs under one switch copy into it: a host
// whose GPUs hang off two stacked switch levels has no such switch, so NCCL's
// system has no NVLS there (before, the NVLS program was planned and failed
// mid-run for want of a link), and a forced NVLS says why.
TEST(NcclSystem, AHostAcrossTwoSwitchLevelsHasNoNvls) {
  const std::string yaml = "topology: [Switch, Switch]\nnpus_count: [8, 2]\nbandwidth: [450GB/s, 450GB/s]\n"
                           "latency: [300ns, 300ns]\nroles: [nvswitch, nvswitch]\nin_network_reduction: [true, false]\n";
  const Topology two_levels = parse_topology(yaml, "two_levels.yml");
  auto members = std::make_shared<std::vector<std::uint32_t>>();
  for (std::uint32_t i = 0; i < 16; ++i) members->push_back(i);
  const auto ctx = make_algorithm_context(members, &two_levels);
  EXPECT_EQ(ctx->domains, 1u);  // one host of 16 GPUs
  EXPECT_FALSE(ctx->domain_reduces);
  EXPECT_FALSE(describe(two_levels).nvls);
  SystemConfig c;
  c.algorithms[CollectiveType::kAllReduce] = "nccl";
  EXPECT_GT(simulate_collective(two_levels, CollectiveType::kAllReduce, 4ULL << 20, c).makespan, 0);
  c.algorithms[CollectiveType::kAllReduce] = "nccl:algo=nvls";
  try {
    simulate_collective(two_levels, CollectiveType::kAllReduce, 4ULL << 20, c);
    FAIL() << "a forced NVLS ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nccl:algo=nvls cannot run here: NPU 8 is not under its host's switch 16"),
              std::string::npos)
        << e.what();
  }
}

TEST(NcclSystem, NicsSharedByPairsHalveTheNetworkDevices) {
  const Topology graph = parse_topology(dgx_graph(2, Nics::kSharedByPair, 50), "graph.yml");
  const nccl::NcclSystem s = describe(graph);
  EXPECT_EQ(s.nics, 4);
  EXPECT_DOUBLE_EQ(s.nic_bw, 50);
  // NCCL's search with 4 devices of 50 GB/s: a channel of 48 GB/s per device,
  // 4 channels (192 GB/s), split in two at half speed (4 channels are few
  // enough for Hopper to split); with a device per GPU, 8 channels of 45 GB/s
  // (360 GB/s), which Hopper keeps. Both run on 16 CTAs.
  const auto ring = s.graphs[static_cast<int>(nccl::Algo::kRing)];
  EXPECT_EQ(ring.channels, 8);
  EXPECT_DOUBLE_EQ(ring.bw_inter, 24);
  EXPECT_EQ(s.run_channels, 16);
  const auto own = nccl::search_graphs(nccl::Arch::kHopper, 16, 2, s.gpu_bw, 50, false, false, 8);
  EXPECT_EQ(own[static_cast<int>(nccl::Algo::kRing)].channels, 8);
  EXPECT_DOUBLE_EQ(own[static_cast<int>(nccl::Algo::kRing)].bw_inter, 45);
  EXPECT_EQ(nccl::run_channels(own, nccl::Arch::kHopper, 16, 2), 16);

  // The same pairs under a PCIe switch each, a NIC below it.
  expect_same(describe(parse_topology(dgx_graph(2, Nics::kUnderPcieSwitch, 50), "pcie.yml")), s);
}

TEST(NcclSystem, SeveralNicsOfOneGpuAreOneDeviceOfTheirSummedSpeed) {
  // p5: four 100 Gb/s EFA NICs per GPU, which aws-ofi-nccl drives as one device.
  const nccl::NcclSystem four = describe(parse_topology(dgx_graph(2, Nics::kFourPerGpu, 12), "p5.yml"));
  EXPECT_EQ(four.nics, 8);
  EXPECT_DOUBLE_EQ(four.nic_bw, 48);
  expect_same(four, describe(parse_topology(dgx_graph(2, Nics::kOnePerGpu, 48), "one.yml")));
}

TEST(NcclSystem, NetworkDevicesOfAHost) {
  const Topology stack = parse_topology(kStack, "stack.yml");
  const std::vector<std::uint32_t> host0 = {0, 1, 2, 3, 4, 5, 6, 7};
  // Without NIC nodes, each GPU's first link out of its host is its NIC.
  const nccl::NetworkDevices d = nccl::network_devices(stack, host0);
  EXPECT_EQ(d.devices, 8);
  EXPECT_DOUBLE_EQ(d.speed, 50);
  EXPECT_DOUBLE_EQ(nccl::host_bandwidth(stack, host0), 450);
  // A communicator of one GPU per node (a data-parallel group beside tensor
  // parallelism): NCCL sees that GPU alone, on its own NIC.
  EXPECT_EQ(nccl::network_devices(stack, {3}).devices, 1);
  auto one_per_node = std::make_shared<std::vector<std::uint32_t>>(std::vector<std::uint32_t>{3, 11});
  const nccl::NcclSystem dp = nccl::describe_system(*make_algorithm_context(one_per_node, &stack), nccl::Arch::kHopper);
  EXPECT_EQ(dp.per_node, 1);
  EXPECT_EQ(dp.nics, 1);
  // A host of one GPU (dimension 0 a leaf): no NVLink, its leaf link the NIC.
  const Topology flat = parse_topology(kStack + "roles: [leaf, spine]\n", "flat.yml");
  EXPECT_DOUBLE_EQ(nccl::host_bandwidth(flat, {0}), 0);
  const nccl::NetworkDevices f = nccl::network_devices(flat, {0});
  EXPECT_EQ(f.devices, 1);
  EXPECT_DOUBLE_EQ(f.speed, 450);
}

}  // namespace
}  // namespace sim
