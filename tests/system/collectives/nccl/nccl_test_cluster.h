// What NCCL's tests share: a two-level cluster (GPUs on a node switch, nodes
// on a rail switch, either of which may reduce), one-switch nodes, dgx-h100
// nodes and clusters, configs choosing an algorithm, and NCCL's plan over
// every GPU.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/system/collectives/nccl/nccl_indices.h"
#include "tests/system/test_util.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/config/system_config.h"

namespace sim::testing {

inline Topology nccl_cluster(std::uint32_t per_node, std::uint32_t nodes, const std::string& bw0,
                             const std::string& bw1, const std::string& lat0, const std::string& lat1,
                             bool node_reduces, bool rail_reduces) {
  return parse_topology("topology: [Switch, Switch]\nnpus_count: [" + std::to_string(per_node) + ", " +
                            std::to_string(nodes) + "]\nbandwidth: [" + bw0 + ", " + bw1 + "]\nlatency: [" + lat0 +
                            ", " + lat1 + "]\nin_network_reduction: [" + (node_reduces ? "true" : "false") + ", " +
                            (rail_reduces ? "true" : "false") + "]\n",
                        "test-cluster");
}

inline SystemConfig choose_all_reduce(const std::string& text, const std::string& backend = "analytical") {
  SystemConfig c;
  c.network.backend = backend;
  c.algorithms[CollectiveType::kAllReduce] = text;
  return c;
}

inline nccl::Plan all_reduce_plan(const Topology& topo, std::uint64_t bytes, const nccl::Params& params) {
  auto members = std::make_shared<std::vector<std::uint32_t>>();
  for (std::uint32_t i = 0; i < topo.npu_count(); ++i) members->push_back(i);
  return nccl::plan(CollectiveType::kAllReduce, bytes, params, *make_algorithm_context(members, &topo));
}

// NCCL's plan of a collective of `type` over every GPU.
inline nccl::Plan plan_for(const Topology& topo, CollectiveType type, std::uint64_t bytes, const nccl::Params& params) {
  auto members = std::make_shared<std::vector<std::uint32_t>>();
  for (std::uint32_t i = 0; i < topo.npu_count(); ++i) members->push_back(i);
  return nccl::plan(type, bytes, params, *make_algorithm_context(members, &topo));
}

// The algorithm context of `members` (a group) on `topo`.
inline std::shared_ptr<const AlgorithmContext> context(const Topology& topo, std::vector<std::uint32_t> members) {
  return make_algorithm_context(std::make_shared<std::vector<std::uint32_t>>(std::move(members)), &topo);
}

// A config choosing `text` for collectives of `type`.
inline SystemConfig choose(CollectiveType type, const std::string& text, const std::string& backend = "analytical") {
  SystemConfig c;
  c.network.backend = backend;
  c.algorithms[type] = text;
  return c;
}

// One switch of `n` GPUs, which may reduce.
inline Topology node(std::uint32_t n, const std::string& bw, const std::string& lat, bool reduces = false) {
  return parse_topology("shape: Switch\nnpus: " + std::to_string(n) + "\nbandwidth: " + bw + "\nlatency: " + lat +
                            (reduces ? "\nin_network_reduction: true\n" : "\n"),
                        "test-node");
}

// A dgx-h100 node: 8 GPUs, NVSwitch with reduction, 18 links x 25 GB/s = 450 GB/s per direction.
inline Topology dgx_h100_node() { return node(8, "450GB/s", "500ns", true); }

// dgx-h100 nodes: 8 GPUs at 450 GB/s on NVSwitch (reducing, or not), one 400 Gb/s (50 GB/s) NIC per GPU,
// rail switches (reducing, or not).
inline Topology dgx_h100(std::uint32_t nodes, bool node_reduces = true, bool rail_reduces = false) {
  return nccl_cluster(8, nodes, "450", "50", "500", "1000", node_reduces, rail_reduces);
}

// Links so fast (1e9 GB/s) that a message crosses one in a few ps.
inline constexpr const char* kFast = "1000000000GB/s";

}  // namespace sim::testing
