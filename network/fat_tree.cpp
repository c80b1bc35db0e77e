#include "network/fat_tree.h"

#include <memory>

#include "core/error.h"
#include "core/flat_map.h"  // mix64
#include "network/router.h"
#include "network/topology_forms.h"

namespace sim {

namespace {

// Where the links live. Each cable is two links, up (towards the cores) at an
// even id and down at the next odd id, in three tiers:
//   NPU n <-> its leaf:              2n
//   leaf l <-> spine j of its pod:   leaf_base + 2 (l * spines + j)
//   spine g <-> core c of plane j:   core_base + 2 (g * cores + c)
// Leaves and spines are numbered across pods (leaf l is in pod l / leaves,
// spine g = pod * spines + j), so NPU n sits under leaf n / npus_per_leaf.
struct Layout {
  std::uint32_t npus_per_leaf;
  std::uint32_t leaves;  // per pod
  std::uint32_t spines;  // per pod
  std::uint32_t cores;   // per plane, 0 with one pod
  LinkId leaf_base;
  LinkId core_base;

  static LinkId npu_up(NodeId npu) { return 2 * npu; }
  static LinkId npu_down(NodeId npu) { return 2 * npu + 1; }
  LinkId leaf_up(std::uint32_t leaf, std::uint32_t j) const { return leaf_base + 2 * (leaf * spines + j); }
  LinkId leaf_down(std::uint32_t leaf, std::uint32_t j) const { return leaf_up(leaf, j) + 1; }
  LinkId spine_up(std::uint32_t spine, std::uint32_t c) const { return core_base + 2 * (spine * cores + c); }
  LinkId spine_down(std::uint32_t spine, std::uint32_t c) const { return spine_up(spine, c) + 1; }
};

// splitmix64 (Steele, Lea, Flood 2014), its increment scaled by an odd
// multiple per seed: a fixed, well-mixed 64-bit hash, so consecutive keys land
// on unrelated paths and every build routes alike; seed 0 is splitmix64 itself.
std::uint64_t seeded_splitmix64(std::uint64_t x, std::uint64_t seed) {
  return mix64(x + (2 * seed + 1) * 0x9e3779b97f4a7c15ULL);
}

class FatTreeRouter final : public Router {
 public:
  FatTreeRouter(Layout layout, std::uint32_t npus, EcmpRule ecmp) : d_(layout), npus_(npus), ecmp_(ecmp) {}

  void route(NodeId src, NodeId dst, std::vector<LinkId>& out) const override {
    route_path(src, dst, ecmp_path(src, dst, 0, 0, 0), out);
  }

  bool multipath() const override { return d_.spines > 1 || d_.cores > 1; }

  std::uint64_t path_count(NodeId src, NodeId dst) const override {
    const std::uint32_t leaf_src = src / d_.npus_per_leaf, leaf_dst = dst / d_.npus_per_leaf;
    if (leaf_src == leaf_dst) return 1;
    if (leaf_src / d_.leaves == leaf_dst / d_.leaves) return d_.spines;
    return std::uint64_t{d_.spines} * d_.cores;
  }

  // Path k: spine j = k mod spines, and across pods core c = k / spines.
  void route_path(NodeId src, NodeId dst, std::uint64_t k, std::vector<LinkId>& out) const override {
    const std::uint32_t leaf_src = src / d_.npus_per_leaf, leaf_dst = dst / d_.npus_per_leaf;
    out.push_back(Layout::npu_up(src));
    if (leaf_src != leaf_dst) {
      const auto j = static_cast<std::uint32_t>(k % d_.spines);
      out.push_back(d_.leaf_up(leaf_src, j));
      const std::uint32_t pod_src = leaf_src / d_.leaves, pod_dst = leaf_dst / d_.leaves;
      if (pod_src != pod_dst) {
        const auto c = static_cast<std::uint32_t>(k / d_.spines % d_.cores);
        out.push_back(d_.spine_up(pod_src * d_.spines + j, c));
        out.push_back(d_.spine_down(pod_dst * d_.spines + j, c));
      }
      out.push_back(d_.leaf_down(leaf_dst, j));
    }
    out.push_back(Layout::npu_down(dst));
  }

  // One key v picks both levels: v mod path_count, whose low "digit" is the
  // spine and the next the core. hash: v = seeded_splitmix64(((qp * npus +
  // src) * npus + dst) ^ mix64(communicator), seed), in 64-bit arithmetic:
  // another communicator's queue pairs are other QP numbers on the NIC, so
  // they hash apart, while the pair's own (communicator 0, point-to-point)
  // keep the plain key (mix64(0) = 0). dmodk: v = dst whatever the QP.
  std::uint64_t ecmp_path(NodeId src, NodeId dst, std::uint64_t qp, std::uint64_t seed,
                          std::uint32_t communicator) const override {
    const std::uint64_t v = ecmp_ == EcmpRule::kHash
                                ? seeded_splitmix64(((qp * npus_ + src) * npus_ + dst) ^ mix64(communicator), seed)
                                : std::uint64_t{dst};
    return v % path_count(src, dst);
  }

 private:
  Layout d_;
  std::uint64_t npus_;
  EcmpRule ecmp_;
};

}  // namespace

Topology build_fat_tree(const std::string& source, const std::string& label, const FatTree& tree) {
  // Sizes are checked in 128 bits before anything is allocated: each count
  // alone may be up to 2^30.
  const std::uint32_t cores = tree.pods > 1 ? tree.cores_per_spine : 0;
  const uint128 leaves = uint128{tree.pods} * tree.leaves;
  const uint128 npus = leaves * tree.npus_per_leaf;
  if (npus > (1ULL << 30)) throw InputError(source + ": topology too large (more than 2^30 NPUs)");
  const uint128 spines = uint128{tree.pods} * tree.spines;
  const uint128 links = 2 * npus + 2 * leaves * tree.spines + 2 * spines * cores;
  check_link_count(source, links > UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(links));
  const auto npu_count = static_cast<std::uint32_t>(npus);
  const auto leaf_count = static_cast<std::uint32_t>(leaves);
  const auto spine_count = static_cast<std::uint32_t>(spines);
  const std::uint32_t core_count = tree.spines * cores;  // <= links, so fits

  Layout d{};
  d.npus_per_leaf = tree.npus_per_leaf;
  d.leaves = tree.leaves;
  d.spines = tree.spines;
  d.cores = cores;
  d.leaf_base = 2 * npu_count;
  d.core_base = d.leaf_base + 2 * leaf_count * tree.spines;

  const NodeId leaf_node = npu_count, spine_node = leaf_node + leaf_count, core_node = spine_node + spine_count;
  std::vector<Link> all;
  all.reserve(static_cast<std::size_t>(links));
  // Pushed in id order: the Layout formulas above.
  auto cable = [&](NodeId lower, NodeId upper, BytesPerSecond bw, Time lat) {
    all.push_back(Link{lower, upper, bw, lat});
    all.push_back(Link{upper, lower, bw, lat});
  };
  for (NodeId n = 0; n < npu_count; ++n) {
    cable(n, leaf_node + n / tree.npus_per_leaf, tree.bandwidth, tree.latency);
  }
  for (std::uint32_t l = 0; l < leaf_count; ++l) {
    const std::uint32_t pod = l / tree.leaves;
    for (std::uint32_t j = 0; j < tree.spines; ++j) {
      cable(leaf_node + l, spine_node + pod * tree.spines + j, tree.uplink_bandwidth, tree.uplink_latency);
    }
  }
  for (std::uint32_t g = 0; g < spine_count && cores > 0; ++g) {
    const std::uint32_t plane = g % tree.spines;
    for (std::uint32_t c = 0; c < cores; ++c) {
      cable(spine_node + g, core_node + plane * cores + c, tree.uplink_bandwidth, tree.uplink_latency);
    }
  }

  // Logical dimensions, fastest first: position under the leaf, leaf within
  // the pod, pod. A size of 1 says nothing and is left out.
  // NPUs under one leaf meet in its switch; leaves and pods through the uplinks.
  std::vector<TopologyDimension> dims;
  if (tree.npus_per_leaf > 1) {
    dims.push_back(TopologyDimension{DimensionKind::kSwitch, tree.npus_per_leaf, tree.bandwidth, tree.latency});
  }
  for (std::uint32_t size : {tree.leaves, tree.pods}) {
    if (size > 1) dims.push_back(TopologyDimension{DimensionKind::kOther, size, tree.uplink_bandwidth, tree.uplink_latency});
  }
  const std::uint32_t switch_count = leaf_count + spine_count + core_count;
  std::string description = describe_topology(label, npu_count, switch_count, all);
  return Topology(std::move(description), npu_count, switch_count, std::move(all), std::move(dims),
                  std::make_unique<FatTreeRouter>(d, npu_count, tree.ecmp));
}

}  // namespace sim
