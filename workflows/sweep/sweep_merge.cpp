#include "workflows/sweep/sweep_merge.h"

#include <filesystem>
#include <map>

#include "core/error.h"
#include "workflows/sweep/results_writer.h"

namespace sim::workflows {

int merge_sweeps(const std::vector<std::string>& dirs, const std::string& out_dir, std::ostream& out) {
  if (dirs.empty()) throw InputError("sim sweep merge: give the shards' output folders");
  if (out_dir.empty()) throw InputError("sim sweep merge: -o OUTDIR is required");
  // The merged folder is written over: a shard's folder as the output would
  // lose that shard's own results, which a failed merge cannot give back.
  for (const std::string& d : dirs) {
    std::error_code ec;
    if (d == out_dir || std::filesystem::equivalent(d, out_dir, ec)) {
      throw InputError("sim sweep merge: -o " + out_dir + " is one of the shards' folders (" + d +
                       "): merge into a folder of its own");
    }
  }
  SweepOutput merged;
  std::map<std::size_t, SweepRow> rows;
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    SweepOutput part = read_results(dirs[d]);
    if (d == 0) {
      merged.spec_path = part.spec_path;
      merged.spec_digest = part.spec_digest;
      merged.axes = part.axes;
      merged.total_points = part.total_points;
      merged.training = part.training;
    } else if (part.spec_digest != merged.spec_digest || part.axes != merged.axes ||
               part.total_points != merged.total_points) {
      throw InputError(dirs[d] + ": results of another sweep spec than " + dirs[0] + " (" + part.spec_path + " vs " +
                       merged.spec_path + ")");
    }
    merged.interrupted = merged.interrupted || part.interrupted;
    for (SweepRow& row : part.points) {
      const std::size_t index = row.result.index;
      // A point past the sweep's count (a results.json edited or from another
      // run) was merged as one more row, exit 0.
      if (index >= merged.total_points) {
        throw InputError(dirs[d] + "/results.json: point " + std::to_string(index) + " is past the sweep's " +
                         std::to_string(merged.total_points) + " points (numbered from 0): not a share of this sweep");
      }
      auto [it, fresh] = rows.emplace(index, row);
      if (!fresh && it->second.result.key != row.result.key) {
        throw InputError(dirs[d] + ": point " + std::to_string(index) + " differs from the same point in another folder");
      }
    }
  }
  std::vector<std::size_t> missing;
  for (std::size_t i = 0; i < merged.total_points; ++i) {
    if (!rows.count(i)) missing.push_back(i);
  }
  if (!missing.empty()) {
    std::string list;
    for (std::size_t k = 0; k < missing.size() && k < 10; ++k) list += (k ? ", " : "") + std::to_string(missing[k]);
    throw InputError("sim sweep merge: " + std::to_string(missing.size()) + " of " + std::to_string(merged.total_points) +
                     " points are in none of the folders (points " + list + (missing.size() > 10 ? ", ..." : "") +
                     "); run the missing shards (or rerun them to finish interrupted ones)");
  }
  std::size_t failed = 0;
  for (auto& [index, row] : rows) {
    if (!row.result.ok()) ++failed;
    merged.points.push_back(std::move(row));
  }
  write_results(out_dir, merged);
  out << "sweep merge: " << merged.points.size() << " points from " << dirs.size() << " folders (" << failed
      << " failed); wrote " << out_dir << "/results.csv and results.json\n";
  return failed ? 4 : 0;
}

}  // namespace sim::workflows
