#include "network/shortest_path_router.h"

#include <algorithm>

namespace sim {

namespace {
constexpr std::uint32_t kUnreached = ~std::uint32_t{0};
}

ShortestPathRouter::ShortestPathRouter(std::uint32_t node_count, std::uint32_t npu_count,
                                       const std::vector<Link>& links)
    : node_count_(node_count),
      npu_count_(npu_count),
      out_start_(node_count + 1, 0),
      in_start_(node_count + 1, 0),
      out_(links.size()),
      in_(links.size()),
      next_hop_(npu_count),
      built_(std::make_unique<std::once_flag[]>(npu_count)) {
  for (const Link& l : links) {
    from_.push_back(l.from);
    to_.push_back(l.to);
    ++out_start_[l.from + 1];
    ++in_start_[l.to + 1];
  }
  for (std::uint32_t v = 0; v < node_count; ++v) {
    out_start_[v + 1] += out_start_[v];
    in_start_[v + 1] += in_start_[v];
  }
  std::vector<std::uint32_t> out_fill(out_start_.begin(), out_start_.end() - 1);
  std::vector<std::uint32_t> in_fill(in_start_.begin(), in_start_.end() - 1);
  for (LinkId id = 0; id < links.size(); ++id) {
    out_[out_fill[links[id].from]++] = id;
    in_[in_fill[links[id].to]++] = id;
  }
}

std::vector<std::uint32_t> ShortestPathRouter::distances(NodeId start, bool backward) const {
  std::vector<std::uint32_t> dist(node_count_, kUnreached);
  std::vector<NodeId> frontier{start};
  dist[start] = 0;
  for (std::size_t head = 0; head < frontier.size(); ++head) {
    const NodeId v = frontier[head];
    const auto& start_of = backward ? in_start_ : out_start_;
    const auto& adjacent = backward ? in_ : out_;
    for (std::uint32_t k = start_of[v]; k < start_of[v + 1]; ++k) {
      const LinkId l = adjacent[k];
      const NodeId u = backward ? from_[l] : to_[l];
      if (dist[u] == kUnreached) {
        dist[u] = dist[v] + 1;
        frontier.push_back(u);
      }
    }
  }
  return dist;
}

const std::vector<LinkId>& ShortestPathRouter::next_hops_to(NodeId dst) const {
  std::call_once(built_[dst], [&] { build_next_hops(dst); });
  return next_hop_[dst];
}

void ShortestPathRouter::build_next_hops(NodeId dst) const {
  std::vector<LinkId>& table = next_hop_[dst];
  const std::vector<std::uint32_t> dist = distances(dst, /*backward=*/true);
  table.assign(node_count_, kNone);
  for (NodeId v = 0; v < node_count_; ++v) {
    if (dist[v] == kUnreached || v == dst) continue;
    for (std::uint32_t k = out_start_[v]; k < out_start_[v + 1]; ++k) {
      const LinkId l = out_[k];  // ascending link id within a node
      if (dist[to_[l]] == kUnreached || dist[to_[l]] + 1 != dist[v]) continue;
      if (table[v] == kNone || to_[l] < to_[table[v]]) table[v] = l;
    }
  }
}

void ShortestPathRouter::route(NodeId src, NodeId dst, std::vector<LinkId>& out) const {
  const std::vector<LinkId>& next = next_hops_to(dst);
  for (NodeId at = src; at != dst; at = to_[next[at]]) {
    if (next[at] == kNone) return;  // unreachable; rejected when the topology was loaded
    out.push_back(next[at]);
  }
}

std::optional<std::pair<NodeId, NodeId>> ShortestPathRouter::unreachable_pair() const {
  if (npu_count_ == 0) return std::nullopt;
  const std::vector<std::uint32_t> reached = distances(0, /*backward=*/false);
  const std::vector<std::uint32_t> reaching = distances(0, /*backward=*/true);
  for (NodeId v = 1; v < npu_count_; ++v) {
    if (reaching[v] == kUnreached) return std::pair{v, NodeId{0}};
    if (reached[v] == kUnreached) return std::pair{NodeId{0}, v};
  }
  return std::nullopt;
}

}  // namespace sim
