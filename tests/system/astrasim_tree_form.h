// The closed form of astrasimTree (ASTRA-sim's doubleBinaryTree) when no two
// messages share a link at once (ASTRA-sim's congestion-unaware backend);
// docs/collectives.md and tests/system/astrasim_tree_test.cpp.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "core/time.h"
#include "system/collectives/astrasim_tree.h"

namespace sim::testing {

// The closed form (header of astrasim_tree_test.cpp); `a(p, q)` is the path latency from p to q.
inline Time astrasim_tree_form(std::uint32_t n, const std::vector<std::uint64_t>& chunks, Time E, BytesPerSecond R,
                 BytesPerSecond B, const std::function<Time(std::uint32_t, std::uint32_t)>& a) {
  std::vector<Time> start(n, 0), leave(n, 0);
  for (std::uint32_t c = 0; c < chunks.size(); ++c) {
    const std::uint64_t m = chunks[c];
    const Time t = transfer_time(m, B);
    const Time red = static_cast<Time>(3 * (m * 1'000'000'000ull / R)) * kNanosecond;
    const bool min = c % 2 == 1;
    const auto nd = [&](std::uint32_t r) { return AstraSimTreeProgram::tree_node(n, r, min); };
    std::function<Time(std::uint32_t)> up = [&](std::uint32_t r) -> Time {
      const AstraSimTreeProgram::Node x = nd(r);
      if (x.child[0] < 0 && x.child[1] < 0) return start[r] + E;
      Time in = start[r];
      for (std::int64_t k : x.child) {
        if (k >= 0) in = std::max(in, up(static_cast<std::uint32_t>(k)) + a(static_cast<std::uint32_t>(k), r) + t);
      }
      return in + red + E;
    };
    std::function<void(std::uint32_t, Time)> down = [&](std::uint32_t r, Time sent) {
      const AstraSimTreeProgram::Node x = nd(r);
      for (std::int64_t k : x.child) {
        if (k < 0) continue;
        const auto kk = static_cast<std::uint32_t>(k);
        const Time d = sent + a(r, kk) + t;
        const AstraSimTreeProgram::Node y = nd(kk);
        const bool leaf = y.child[0] < 0 && y.child[1] < 0;
        leave[kk] = d + (leaf ? 0 : red) + E;
        if (!leaf) down(kk, leave[kk]);
      }
    };
    const std::uint32_t root = min ? 0 : n - 1;
    leave[root] = up(root);
    down(root, leave[root]);
    start = leave;
  }
  return *std::max_element(leave.begin(), leave.end());
}

}  // namespace sim::testing
