// `nccl` named for a dimension of a hierarchical list (`nccl,ring`) runs in
// the context of its line: the line's NPUs, the topology, and the switches
// only that line hangs off. It used to see none of that (one node of one
// 25 GB/s NVLink without a switch): a dgx-h100 x2 all-reduce of 1 GiB with
// `nccl,ring` ran at 20.8 GB/s busbw. Checked here: the hierarchical run
// equals its phases run alone (exact: the phases do not overlap with one
// chunk, and lines do not share links); a group that spans one dimension runs
// exactly NCCL's own program; every switch operation goes to a switch of the
// rank's own line; a switch other lines share is refused with a clear error.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "tests/system/test_util.h"
#include "core/error.h"
#include "nccl_test_cluster.h"
#include "system/registry/algorithm_registry.h"

namespace sim {
namespace {

using namespace sim::testing;
using T = CollectiveType;

// dgx-h100's numbers (configs/presets/dgx-h100): NVSwitch 450 GB/s and 300 ns per link, one 400 Gb/s rail per GPU.
Topology dgx_pair(bool rails_reduce) {
  return nccl_cluster(8, 2, "450GB/s", "400Gbps", "300ns", "1350ns", true, rails_reduce);
}

Topology one_switch(std::uint32_t n, const std::string& bw, const std::string& lat, bool reduces) {
  return parse_topology("shape: Switch\nnpus: " + std::to_string(n) + "\nbandwidth: " + bw + "\nlatency: " + lat +
                            (reduces ? "\nin_network_reduction: true\n" : "\n"),
                        "test-switch");
}

std::shared_ptr<const CollectiveProgram> program(const Topology& topo, const SystemConfig& config, T type,
                                                 std::uint64_t bytes, std::vector<std::uint32_t> members) {
  AlgorithmRegistry registry(config, topo.dims(), nullptr, true);
  registry.set_topology(&topo);
  CollectiveRequest req;
  req.type = type;
  req.bytes = bytes;
  req.members = std::make_shared<const std::vector<std::uint32_t>>(std::move(members));
  return registry.program_for(req);
}

std::vector<std::uint32_t> iota(std::uint32_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::uint32_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

TEST(NcclInHierarchy, AllReduceEqualsItsPhasesRunAlone) {
  const std::uint64_t bytes = 256ull << 20;
  const SimulationResult whole = simulate_collective(dgx_pair(false), T::kAllReduce, bytes, choose(T::kAllReduce, "nccl,ring"));
  ASSERT_EQ(whole.collectives.size(), 16u);
  EXPECT_EQ(whole.collectives[0].algorithm, "hierarchical(nccl,ring;localBWAware)");
  // localBWAware: NCCL reduce-scatters inside each node (its NVSwitch), a
  // ring all-reduces each GPU's eighth across the two nodes (its rail), NCCL
  // all-gathers it back inside the node; each as it runs alone.
  const Topology node = one_switch(8, "450GB/s", "300ns", true);
  const Topology rail = one_switch(2, "400Gbps", "1350ns", false);
  const SimulationResult rs = simulate_collective(node, T::kReduceScatter, bytes, choose(T::kReduceScatter, "nccl"));
  const SimulationResult ar = simulate_collective(rail, T::kAllReduce, bytes / 8, choose(T::kAllReduce, "ring"));
  const SimulationResult ag = simulate_collective(node, T::kAllGather, bytes / 8, choose(T::kAllGather, "nccl"));
  EXPECT_EQ(rs.collectives[0].algorithm, "nccl:ring/simple");  // NCCL's ring at 8 x NCCL's NVLink rate, not one link
  EXPECT_EQ(whole.makespan, rs.makespan + ar.makespan + ag.makespan);

  // Folded replicas or not, the same time (switch operations keep their line's switch either way).
  SystemConfig unfolded = choose(T::kAllReduce, "nccl,ring");
  unfolded.aggregation = false;
  EXPECT_EQ(simulate_collective(dgx_pair(false), T::kAllReduce, bytes, unfolded).makespan, whole.makespan);
}

TEST(NcclInHierarchy, GroupInsideOneDimensionRunsNcclsOwnProgram) {
  // Node 1's GPUs: the group's other dimension is one NPU wide, so the
  // hierarchical choice is NCCL alone on dimension 0, in the node's context
  // (NVLS: the node's switch reduces), op for op what `nccl` builds there.
  const Topology topo = dgx_pair(false);
  std::vector<std::uint32_t> members;
  for (std::uint32_t i = 8; i < 16; ++i) members.push_back(i);
  const std::uint64_t bytes = 64ull << 20;
  const auto nested = program(topo, choose(T::kAllReduce, "nccl,ring"), T::kAllReduce, bytes, members);
  const auto flat = program(topo, choose(T::kAllReduce, "nccl"), T::kAllReduce, bytes, members);
  EXPECT_EQ(flat->name(), "nccl:nvls/simple");
  ASSERT_EQ(nested->group_size(), flat->group_size());
  for (std::uint32_t p = 0; p < flat->group_size(); ++p) {
    ASSERT_EQ(nested->op_count(p), flat->op_count(p));
    std::multiset<std::tuple<int, std::uint32_t, std::uint64_t, std::uint32_t, std::uint64_t, std::uint32_t>> a, b;
    const auto collect = [](const CollectiveProgram& pr, std::uint32_t pos, auto& into) {
      for_each_op(pr, pos, [&](OpRef, const CollectiveOp& o) {
        into.emplace(static_cast<int>(o.kind), o.peer, o.bytes, o.channel, o.rate, o.node);
        return true;
      });
    };
    collect(*nested, p, a);
    collect(*flat, p, b);
    EXPECT_EQ(a, b) << "rank " << members[p];
  }
}

TEST(NcclInHierarchy, SwitchOperationsStayInTheirLine) {
  // NVLS on dimension 0 (each node's NVSwitch; baseline: an all-reduce per
  // dimension, as NVLS is modelled for all-reduce), CollNet on dimension 1 (each
  // rail's reducing switch): every rank addresses a switch it hangs off, and
  // the ranks addressing a switch are exactly the group members under it.
  const Topology topo = dgx_pair(true);
  const std::vector<std::vector<NodeId>> switches_of = switches_of_npus(topo);
  for (const std::string text : {"hierarchical:optimization=baseline,nccl:algo=nvls,ring", "ring,nccl:algo=collnet"}) {
    const auto prog = program(topo, choose(T::kAllReduce, text), T::kAllReduce, 16ull << 20, iota(16));
    std::map<NodeId, std::set<std::uint32_t>> users;
    for (std::uint32_t p = 0; p < 16; ++p) {
      for_each_op(*prog, p, [&](OpRef, const CollectiveOp& o) {
        if (o.kind != OpKind::kSwitchReduce && o.kind != OpKind::kMulticast) return true;
        users[o.node].insert(p);
        return true;
      });
    }
    ASSERT_EQ(users.size(), text[0] == 'h' ? 2u : 8u) << text;  // two NVSwitches; eight rails
    for (const auto& [sw, who] : users) {
      std::set<std::uint32_t> under;
      for (std::uint32_t p = 0; p < 16; ++p) {
        for (const NodeId s : switches_of[p]) {
          if (s == sw) under.insert(p);
        }
      }
      EXPECT_EQ(who, under) << text << ": switch " << sw;
    }
  }
}

TEST(NcclInHierarchy, SharedSwitchIsAClearError) {
  // Across nodes each line is one GPU per node; its node switch also joins the
  // other lines' GPUs, which run their own phase at the same time: NVLS there
  // cannot be expressed, and forcing it says so.
  const Topology topo = dgx_pair(false);
  try {
    program(topo, choose(T::kAllReduce, "ring,nccl:algo=nvlstree"), T::kAllReduce, 16ull << 20, iota(16));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("other lines of the hierarchical collective"), std::string::npos) << e.what();
  }
  // Left to NCCL's choice, it picks what the line can run (no NVLS).
  const auto prog = program(topo, choose(T::kAllReduce, "ring,nccl"), T::kAllReduce, 16ull << 20, iota(16));
  for (std::uint32_t p = 0; p < 16; ++p) {
    for_each_op(*prog, p, [&](OpRef, const CollectiveOp& o) {
      EXPECT_TRUE(o.kind != OpKind::kSwitchReduce && o.kind != OpKind::kMulticast);
      return o.kind != OpKind::kSwitchReduce && o.kind != OpKind::kMulticast;
    });
  }
}

}  // namespace
}  // namespace sim
