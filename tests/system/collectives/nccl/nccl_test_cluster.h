// What NCCL's multi-node tests share: a two-level cluster (GPUs on a node
// switch, nodes on a rail switch, either of which may reduce), a config
// choosing one all-reduce algorithm, and NCCL's plan over every GPU.
#pragma once

#include <memory>
#include <string>
#include <vector>

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

}  // namespace sim::testing
