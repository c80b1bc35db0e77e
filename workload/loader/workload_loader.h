// Loads a workload: every rank's ET read and compacted into its graph.
#pragma once

#include <string>
#include <vector>

#include "workload/rank_graph.h"

namespace sim {

// Reads files[r] as rank r and builds its graph, on up to `threads` threads
// (0: one per core). Ranks are independent, so the result does not depend on
// the thread count; when several ranks fail, the lowest rank's error is thrown.
// Each decoded trace is dropped once its graph is built. First, a workload
// whose graphs clearly do not fit in the memory available is refused with an
// InputError naming its folder (workload/loader/memory_budget.h).
//
// A file holding the same bytes as the one its thread loaded last is not
// decoded again: its rank shares that graph's nodes and edges (the graph
// decoding would build, named by its own rank and path; RankGraph::storage()
// tells). A workload of identical per-rank files (ASTRA-sim's microbenchmarks:
// 4,096 of them in docs/benchmarks.md's case (b)) is decoded, and held, once per
// thread.
struct LoadStats {
  std::size_t decoded = 0;  // graphs decoded; the others share one of these
};
std::vector<RankGraph> load_rank_graphs(const std::vector<std::string>& files, const GraphOptions& options,
                                        unsigned threads = 0, LoadStats* stats = nullptr);

}  // namespace sim
