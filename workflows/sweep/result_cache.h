// Finished points on disk: OUTDIR/cache/<key>.json, one file per point key,
// each written atomically the moment its point finishes, so a sweep stopped
// by Ctrl-C or a kill keeps every finished point and no half-written file.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "workflows/sweep/point_result.h"

namespace sim::workflows {

class ResultCache {
 public:
  // Creates OUTDIR/cache when missing (throws InputError if it cannot).
  explicit ResultCache(const std::string& out_dir);

  // The point stored under `key`, or nothing (absent or unreadable: recomputed).
  std::optional<PointResult> find(const std::string& key) const;
  void store(const PointResult& result) const;

 private:
  std::string path_of(const std::string& key) const;
  std::string folder_;
  // Keys present when the sweep started: one directory listing instead of
  // one failed open per new point (file opens dominate a sweep of small points).
  std::set<std::string> present_;
};

}  // namespace sim::workflows
