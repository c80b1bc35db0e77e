// NCCL's tree across nodes is a balanced tree (NCCL_TOPO_PATTERN_BALANCED_TREE,
// src/init.cc; src/graph/connect.cc, connectTrees): in each channel a node's
// chain head links to its parent node and to one child node, the chain's
// second GPU to the other child, so no GPU links to more than two other nodes.
// Checked on the program built for 8 nodes of 8 GPUs: the network peers of
// every rank in every channel, and the sends a GPU paces per chunk.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "system/collectives/nccl/programs/nccl_dag.h"
#include "system/collectives/nccl/programs/nccl_programs.h"

namespace sim {
namespace {

TEST(NcclTreeShape, BalancedTreeSpreadsTheNetworkOverTwoGpusANode) {
  constexpr std::uint32_t kNodes = 8, kLocal = 8, kRanks = kNodes * kLocal;
  AlgorithmContext ctx;
  auto members = std::make_shared<std::vector<std::uint32_t>>();
  for (std::uint32_t p = 0; p < kRanks; ++p) {
    members->push_back(p);
    ctx.domain_of.push_back(p / kLocal);
    ctx.rail_of.push_back(p % kLocal);
  }
  ctx.members = members;
  ctx.domains = kNodes;
  for (NodeId d = 0; d < kNodes; ++d) ctx.domain_switch.push_back(1000 + d);
  nccl::StepModel m;
  m.proto = nccl::Proto::kSimple;
  m.channels = 4;
  m.channel_rate = 10'000'000'000;
  const auto program = nccl::make_tree_program("tree", 4u << 20, ctx, m);
  const auto& dag = dynamic_cast<const nccl::NcclDagProgram&>(*program);
  // Per channel and rank: the nodes it exchanges with, and the peers it sends to.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::set<std::uint32_t>> net_peers, send_peers;
  for (std::uint32_t p = 0; p < kRanks; ++p) {
    for (OpRef ref = 0; ref < dag.op_count(p); ++ref) {
      const CollectiveOp o = dag.op(p, ref);
      if (o.kind != OpKind::kSend && o.kind != OpKind::kRecv) continue;
      const auto key = std::make_pair(static_cast<std::uint32_t>(o.tag >> 48), p);
      if (o.kind == OpKind::kSend) send_peers[key].insert(o.peer);
      if (ctx.domain_of[o.peer] != ctx.domain_of[p]) net_peers[key].insert(o.peer);
    }
  }
  for (std::uint32_t c = 0; c < m.channels; ++c) {
    // Every node but the root has a parent, and the root has two children:
    // 2 x 7 network links per tree, each seen from both ends.
    std::size_t ends = 0;
    std::set<std::uint32_t> gpus_on_net_per_node[kNodes];
    for (std::uint32_t p = 0; p < kRanks; ++p) {
      const auto it = net_peers.find({c, p});
      if (it == net_peers.end()) continue;
      EXPECT_LE(it->second.size(), 2u) << "channel " << c << " rank " << p;
      ends += it->second.size();
      gpus_on_net_per_node[p / kLocal].insert(p);
    }
    EXPECT_EQ(ends, 2u * (kNodes - 1)) << "channel " << c;
    // A node with two children links through two GPUs: its chain's first two.
    std::size_t two_gpu_nodes = 0;
    for (const auto& g : gpus_on_net_per_node) two_gpu_nodes += g.size() == 2;
    EXPECT_GE(two_gpu_nodes, 3u) << "channel " << c;
    // No GPU sends to more than three peers (up, down its chain, one child node).
    for (std::uint32_t p = 0; p < kRanks; ++p) {
      const auto it = send_peers.find({c, p});
      if (it != send_peers.end()) {
        EXPECT_LE(it->second.size(), 3u) << "channel " << c << " rank " << p;
      }
    }
  }
}

}  // namespace
}  // namespace sim
