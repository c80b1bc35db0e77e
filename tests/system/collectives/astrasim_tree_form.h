// The closed form of astrasimTree (ASTRA-sim's doubleBinaryTree) when no two
// messages share a link at once (ASTRA-sim's congestion-unaware backend);
// docs/collectives.md and tests/system/collectives/astrasim_tree_test.cpp.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "core/time.h"
#include "system/collectives/astrasim_tree.h"

namespace sim::testing {

// One tree (RootMin or RootMax) of m bytes over the ranks `line` (tree
// position i is rank line[i]), rank r starting at times[r]: times[r] becomes
// the time r leaves the tree (the header of astrasim_tree_test.cpp); `a(p, q)`
// is the path latency from rank p to rank q.
inline void astrasim_tree_phase(const std::vector<std::uint32_t>& line, bool root_min, std::uint64_t m, Time E,
                                BytesPerSecond R, BytesPerSecond B,
                                const std::function<Time(std::uint32_t, std::uint32_t)>& a, std::vector<Time>& times) {
  const auto n = static_cast<std::uint32_t>(line.size());
  const Time t = transfer_time(m, B);
  const Time red = static_cast<Time>(3 * (m * 1'000'000'000ull / R)) * kNanosecond;
  const auto nd = [&](std::uint32_t i) { return AstraSimTreeProgram::tree_node(n, i, root_min); };
  const std::vector<Time> start = times;
  std::vector<Time>& leave = times;
  std::function<Time(std::uint32_t)> up = [&](std::uint32_t i) -> Time {
    const AstraSimTreeProgram::Node x = nd(i);
    if (x.child[0] < 0 && x.child[1] < 0) return start[line[i]] + E;
    Time in = start[line[i]];
    for (std::int64_t k : x.child) {
      if (k >= 0) in = std::max(in, up(static_cast<std::uint32_t>(k)) + a(line[k], line[i]) + t);
    }
    return in + red + E;
  };
  std::function<void(std::uint32_t, Time)> down = [&](std::uint32_t i, Time sent) {
    const AstraSimTreeProgram::Node x = nd(i);
    for (std::int64_t k : x.child) {
      if (k < 0) continue;
      const auto kk = static_cast<std::uint32_t>(k);
      const Time d = sent + a(line[i], line[kk]) + t;
      const AstraSimTreeProgram::Node y = nd(kk);
      const bool leaf = y.child[0] < 0 && y.child[1] < 0;
      leave[line[kk]] = d + (leaf ? 0 : red) + E;
      if (!leaf) down(kk, leave[line[kk]]);
    }
  };
  const std::uint32_t root = root_min ? 0 : n - 1;
  leave[line[root]] = up(root);
  down(root, leave[line[root]]);
}

// The closed form on one dimension of n ranks: chunk c on RootMax (even c) or
// RootMin (odd c), each rank starting chunk c + 1 when it leaves chunk c.
inline Time astrasim_tree_form(std::uint32_t n, const std::vector<std::uint64_t>& chunks, Time E, BytesPerSecond R,
                 BytesPerSecond B, const std::function<Time(std::uint32_t, std::uint32_t)>& a) {
  std::vector<std::uint32_t> line(n);
  for (std::uint32_t r = 0; r < n; ++r) line[r] = r;
  std::vector<Time> times(n, 0);
  for (std::uint32_t c = 0; c < chunks.size(); ++c) astrasim_tree_phase(line, c % 2 == 1, chunks[c], E, R, B, a, times);
  return *std::max_element(times.begin(), times.end());
}

// ASTRA-sim's doubleBinaryTree all-reduce on an n0 x n1 grid (NPU = x + n0 y),
// localBWAware: each chunk runs three whole-chunk tree all-reduces, on
// dimension 0 (its "reduce-scatter"), dimension 1, dimension 0 again (its
// "all-gather"; ASTRA-sim's tree phase ignores the phase's type). Each
// dimension hands out RootMax and RootMin in turn as phases are created
// (chunk by chunk, phase by phase): dimension 0 gives RootMax to every
// chunk's first phase and RootMin to its third, dimension 1 alternates per
// chunk. Each dimension runs one phase at a time per rank, in arrival order:
// dimension 0 all first phases (queued at the start) then the third ones.
// A rank starts a phase when it has left the chunk's previous phase and the
// dimension's previous one. Returns the last leave. `root_min(phase, chunk)`
// overrides the tree rule (to show that another rule misses ASTRA-sim's numbers);
// `phases` 2 drops the third phase.
inline Time astrasim_tree_2d_form(std::uint32_t n0, std::uint32_t n1, const std::vector<std::uint64_t>& chunks, Time E,
                                  BytesPerSecond R, BytesPerSecond B,
                                  const std::function<Time(std::uint32_t, std::uint32_t)>& a,
                                  std::function<bool(std::uint32_t, std::uint32_t)> root_min = nullptr,
                                  std::uint32_t phases = 3) {
  if (!root_min) root_min = [](std::uint32_t p, std::uint32_t c) { return p == 2 || (p == 1 && c % 2 == 1); };
  const std::uint32_t N = n0 * n1;
  const auto k = static_cast<std::uint32_t>(chunks.size());
  // done[p][c][r]: rank r leaves chunk c's phase p.
  std::vector<std::vector<std::vector<Time>>> done(3, std::vector<std::vector<Time>>(k, std::vector<Time>(N, 0)));
  std::vector<Time> free0(N, 0), free1(N, 0);  // each dimension's previous phase left, per rank
  const auto run = [&](std::uint32_t p, std::uint32_t c, std::vector<Time>& free, bool root_min) {
    std::vector<Time> times(N);
    for (std::uint32_t r = 0; r < N; ++r) times[r] = std::max(free[r], p == 0 ? Time{0} : done[p - 1][c][r]);
    const bool dim0 = p != 1;
    for (std::uint32_t l = 0; l < (dim0 ? n1 : n0); ++l) {
      std::vector<std::uint32_t> line;
      for (std::uint32_t i = 0; i < (dim0 ? n0 : n1); ++i) line.push_back(dim0 ? i + n0 * l : l + n0 * i);
      astrasim_tree_phase(line, root_min, chunks[c], E, R, B, a, times);
    }
    done[p][c] = times;
    free = times;
  };
  for (std::uint32_t c = 0; c < k; ++c) run(0, c, free0, root_min(0, c));
  for (std::uint32_t c = 0; c < k; ++c) run(1, c, free1, root_min(1, c));
  if (phases == 2) return *std::max_element(done[1][k - 1].begin(), done[1][k - 1].end());
  for (std::uint32_t c = 0; c < k; ++c) run(2, c, free0, root_min(2, c));
  return *std::max_element(done[2][k - 1].begin(), done[2][k - 1].end());
}

}  // namespace sim::testing
