#include "network/dimension_stack.h"

#include <algorithm>
#include <memory>

#include "core/error.h"
#include "network/router.h"
#include "network/topology_forms.h"

namespace sim {

namespace {

// Where one dimension's links and switches live. Group g of the dimension holds
// the NPUs (g % stride) + i * stride + (g / stride) * stride * size, i < size.
struct Layout {
  DimensionKind kind;
  std::uint32_t size;
  std::uint32_t stride;  // product of the sizes of faster dimensions
  LinkId link_base;
  std::uint32_t links_per_group;
  NodeId switch_base;  // node id of group 0's switch (kSwitch only)

  std::uint32_t coordinate(NodeId npu) const { return npu / stride % size; }
  std::uint32_t group(NodeId npu) const { return npu % stride + npu / stride / size * stride; }
  NodeId member(std::uint32_t group, std::uint32_t i) const {
    return group % stride + i * stride + group / stride * stride * size;
  }
  LinkId group_link(std::uint32_t group, std::uint32_t local) const {
    return link_base + group * links_per_group + local;
  }
  // Ring and line: pair p joins positions p and (p + 1) % size; link 2p runs
  // forward (p -> p+1), link 2p+1 backward.
  LinkId forward(std::uint32_t group, std::uint32_t from) const { return group_link(group, 2 * from); }
  LinkId backward(std::uint32_t group, std::uint32_t from) const {
    return group_link(group, 2 * ((from + size - 1) % size) + 1);
  }
  // All pairs: `size - 1` outgoing links per position, skipping itself.
  LinkId direct(std::uint32_t group, std::uint32_t from, std::uint32_t to) const {
    return group_link(group, from * (size - 1) + (to < from ? to : to - 1));
  }
  // Switch: link 2i goes up from position i, link 2i+1 comes down to it.
  LinkId up(std::uint32_t group, std::uint32_t from) const { return group_link(group, 2 * from); }
  LinkId down(std::uint32_t group, std::uint32_t to) const { return group_link(group, 2 * to + 1); }
};

// In 64 bits: a fully connected block of 2^16 or more NPUs has 2^32 or more
// links (in 32 bits, 355,684,854 NPUs once passed the size check and
// reserved gigabytes).
std::uint64_t links_per_group(DimensionKind kind, std::uint64_t size) {
  switch (kind) {
    case DimensionKind::kRing: return 2 * size;
    case DimensionKind::kLine: return 2 * (size - 1);
    case DimensionKind::kFullyConnected: return size * (size - 1);
    case DimensionKind::kSwitch: return 2 * size;
    case DimensionKind::kOther: break;
  }
  return 0;
}

class DimensionOrderRouter final : public Router {
 public:
  explicit DimensionOrderRouter(std::vector<Layout> layouts) : layouts_(std::move(layouts)) {}

  void route(NodeId src, NodeId dst, std::vector<LinkId>& out) const override {
    NodeId at = src;
    for (const Layout& d : layouts_) {
      const std::uint32_t a = d.coordinate(at), b = d.coordinate(dst);
      if (a == b) continue;
      const std::uint32_t g = d.group(at);
      switch (d.kind) {
        case DimensionKind::kRing: {
          const std::uint32_t ahead = (b + d.size - a) % d.size;
          if (2 * ahead <= d.size) {  // a tie at exactly half goes forward
            for (std::uint32_t i = a; i != b; i = (i + 1) % d.size) out.push_back(d.forward(g, i));
          } else {
            for (std::uint32_t i = a; i != b; i = (i + d.size - 1) % d.size) out.push_back(d.backward(g, i));
          }
          break;
        }
        case DimensionKind::kLine:
          for (std::uint32_t i = a; i < b; ++i) out.push_back(d.forward(g, i));
          for (std::uint32_t i = a; i > b; --i) out.push_back(d.backward(g, i));
          break;
        case DimensionKind::kFullyConnected: out.push_back(d.direct(g, a, b)); break;
        case DimensionKind::kSwitch:
          out.push_back(d.up(g, a));
          out.push_back(d.down(g, b));
          break;
        case DimensionKind::kOther:
          break;
      }
      at = at - a * d.stride + b * d.stride;
    }
  }

 private:
  std::vector<Layout> layouts_;
};

}  // namespace

Topology build_dimension_stack(const std::string& source, const std::string& label,
                               const std::vector<Dimension>& declared_dims) {
  std::vector<Dimension> dims = declared_dims;
  const bool declared = std::any_of(dims.begin(), dims.end(), [](const Dimension& d) { return d.declared; });
  if (!declared) {
    // The dimension-0 convention: dimension 0 is the host; the levels above, the fabric's.
    for (std::size_t i = 0; i < dims.size(); ++i) {
      dims[i].in_host = i == 0;
      dims[i].role = i == 0 ? NodeRole::kNvSwitch : i == 1 ? NodeRole::kLeaf : i == 2 ? NodeRole::kSpine : NodeRole::kCore;
    }
  }
  // Sizes are checked in 64 bits before anything is allocated.
  std::uint64_t npus = 1, links = 0, switches = 0;
  for (const Dimension& d : dims) {
    if (d.kind == DimensionKind::kOther) throw InputError(source + ": a dimension stack has no 'other' dimensions");
    npus *= d.size;
    if (npus > (1ULL << 30)) {
      throw InputError(source + ": topology too large (more than 2^30 NPUs)");
    }
  }
  for (const Dimension& d : dims) {
    const DimensionKind kind = d.kind == DimensionKind::kRing && d.size == 2 ? DimensionKind::kLine : d.kind;
    links += npus / d.size * links_per_group(kind, d.size);
    if (d.kind == DimensionKind::kSwitch) switches += npus / d.size;
  }
  check_link_count(source, links);  // so each group's count below fits 32 bits

  std::vector<Layout> layouts;
  std::vector<Link> all;
  all.reserve(links);
  std::uint32_t stride = 1;
  NodeId next_switch = static_cast<NodeId>(npus);
  for (const Dimension& dim : dims) {
    Layout d{};
    // A ring of two is one pair of links, not two parallel pairs.
    d.kind = dim.kind == DimensionKind::kRing && dim.size == 2 ? DimensionKind::kLine : dim.kind;
    d.size = dim.size;
    d.stride = stride;
    d.link_base = static_cast<LinkId>(all.size());
    d.links_per_group = static_cast<std::uint32_t>(links_per_group(d.kind, d.size));
    d.switch_base = next_switch;
    const auto groups = static_cast<std::uint32_t>(npus / d.size);
    for (std::uint32_t g = 0; g < groups; ++g) {
      auto add = [&](NodeId from, NodeId to) { all.push_back(Link{from, to, dim.bandwidth, dim.latency}); };
      switch (d.kind) {
        case DimensionKind::kRing:
        case DimensionKind::kLine: {
          const std::uint32_t pairs = d.kind == DimensionKind::kRing ? d.size : d.size - 1;
          for (std::uint32_t p = 0; p < pairs; ++p) {
            const NodeId lo = d.member(g, p), hi = d.member(g, (p + 1) % d.size);
            add(lo, hi);
            add(hi, lo);
          }
          break;
        }
        case DimensionKind::kFullyConnected:
          for (std::uint32_t i = 0; i < d.size; ++i) {
            for (std::uint32_t j = 0; j < d.size; ++j) {
              if (i != j) add(d.member(g, i), d.member(g, j));
            }
          }
          break;
        case DimensionKind::kSwitch: {
          const NodeId sw = d.switch_base + g;
          for (std::uint32_t i = 0; i < d.size; ++i) {
            add(d.member(g, i), sw);
            add(sw, d.member(g, i));
          }
          break;
        }
        case DimensionKind::kOther:
          break;
      }
    }
    if (d.kind == DimensionKind::kSwitch) next_switch += groups;
    stride *= d.size;
    layouts.push_back(d);
  }

  std::vector<TopologyDimension> sizes;
  for (const Dimension& d : dims) {
    sizes.push_back(TopologyDimension{d.kind, d.size, d.bandwidth, d.latency, d.in_network_reduction, d.in_host,
                                      d.kind == DimensionKind::kSwitch ? d.role : NodeRole::kSwitch});
  }
  const auto npu_count = static_cast<std::uint32_t>(npus);
  const auto switch_count = static_cast<std::uint32_t>(switches);
  std::string description = describe_topology(label, npu_count, switch_count, all);
  std::vector<std::pair<NodeId, std::uint32_t>> reducing;  // first switch and count of each reducing dimension
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].in_network_reduction && layouts[i].kind == DimensionKind::kSwitch) {
      reducing.emplace_back(layouts[i].switch_base, npu_count / dims[i].size);
    }
  }
  // Hosts: the NPUs that differ only in the dimensions inside a host (a prefix of the stack).
  std::uint64_t host_size = 1;
  for (std::size_t i = 0; i < dims.size() && dims[i].in_host; ++i) host_size *= dims[i].size;
  std::vector<NodeRole> roles(switch_count, NodeRole::kSwitch);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (layouts[i].kind != DimensionKind::kSwitch) continue;
    const std::uint32_t groups = npu_count / dims[i].size;
    std::fill_n(roles.begin() + (layouts[i].switch_base - npu_count), groups, dims[i].role);
  }
  Topology topology(std::move(description), npu_count, switch_count, std::move(all), std::move(sizes),
                    std::make_unique<DimensionOrderRouter>(std::move(layouts)));
  for (const auto& [first, count] : reducing) {
    for (std::uint32_t g = 0; g < count; ++g) topology.mark_reducing(first + g);
  }
  topology.set_hardware(std::move(roles), static_cast<std::uint32_t>(host_size), {}, declared);
  return topology;
}

}  // namespace sim
