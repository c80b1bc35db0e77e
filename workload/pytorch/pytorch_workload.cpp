#include "workload/pytorch/pytorch_workload.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "core/error.h"
#include "workload/pytorch/json_element_stream.h"
#include "workload/pytorch/pytorch_import.h"

namespace sim::pytorch {

std::vector<RankGraph> load_pytorch_graphs(const std::string& spec, const GraphOptions& options) {
  const std::string where = spec.substr(kWorkloadScheme.size());
  if (where.empty()) throw InputError("--workload pytorch: needs a folder, e.g. pytorch:traces/ddp4");
  // The same folder holds both kinds; device traces are optional.
  std::vector<std::string> kineto;
  std::error_code ec;
  if (std::filesystem::is_directory(where, ec)) {
    for (const auto& e : std::filesystem::directory_iterator(where, ec)) {
      if (!e.is_regular_file()) continue;
      const std::string head = peek_json_text(e.path().string(), 4096);
      if (head.find("\"traceEvents\"") != std::string::npos || head.find("\"schemaVersion\"") != std::string::npos) {
        kineto.push_back(where);
        break;
      }
    }
  }
  const std::vector<RankFiles> files = resolve_pytorch_files({where}, kineto);
  std::vector<RankGraph> graphs;
  graphs.reserve(files.size());
  ImportSummary summary;
  import_pytorch(
      files, [&](int rank, EtTrace&& et) { graphs.emplace_back(et, rank, options); }, summary);
  for (const std::string& w : summary.warnings) spdlog::warn("{}: {}", spec, w);
  return graphs;
}

}  // namespace sim::pytorch
