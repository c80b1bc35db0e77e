// `--workload pytorch:DIR`: a folder of PyTorch host execution traces (and
// Kineto device traces) run directly, imported in memory rank by rank.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "workload/rank_graph.h"

namespace sim::pytorch {

inline constexpr std::string_view kWorkloadScheme = "pytorch:";


// Imports the folder (or prefix) after "pytorch:": its host traces, and its
// Kineto traces when it holds any. Warnings go to the log (spdlog). Throws
// InputError as import_pytorch does.
std::vector<RankGraph> load_pytorch_graphs(const std::string& spec, const GraphOptions& options);

}  // namespace sim::pytorch
