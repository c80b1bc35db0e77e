#include "workflows/sweep/result_cache.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "report/report.h"

namespace sim::workflows {

ResultCache::ResultCache(const std::string& out_dir) : folder_(out_dir + "/cache") {
  std::error_code ec;
  std::filesystem::create_directories(folder_, ec);
  if (ec) throw InputError(folder_ + ": cannot create the result cache folder: " + ec.message());
  for (const auto& entry : std::filesystem::directory_iterator(folder_, ec)) {
    if (entry.path().extension() == ".json") present_.insert(entry.path().stem().string());
  }
}

std::string ResultCache::path_of(const std::string& key) const { return folder_ + "/" + key + ".json"; }

std::optional<PointResult> ResultCache::find(const std::string& key) const {
  if (!present_.count(key)) return std::nullopt;
  std::ifstream in(path_of(key));
  if (!in) return std::nullopt;
  try {
    PointResult r = point_result_from_json(nlohmann::json::parse(in));
    if (r.key != key) return std::nullopt;
    r.from_cache = true;
    return r;
  } catch (const std::exception&) {
    return std::nullopt;  // not one of ours, or damaged: compute it again
  }
}

void ResultCache::store(const PointResult& result) const {
  write_file_atomically(path_of(result.key), to_json(result).dump() + "\n");
}

}  // namespace sim::workflows
