// The reports of a run without what aggregation and folding may change (the
// event counts), for tests that compare runs with and without them.
#pragma once

#include <sstream>
#include <vector>
#include <string>

#include "report/report.h"

namespace sim::testing {

struct StableReports {
  std::string json, csv, links;
};

inline StableReports stable_reports(SimulationResult r, const RunInfo& info) {
  r.events = 0;  // what aggregation and folding save
  r.aggregated_collectives = 0;
  r.aggregated_events = 0;
  r.identical_ranks = 0;
  // The flow backend's most flows in flight at once counts the flows it
  // carried one by one: an aggregated collective's are priced without being
  // put on the network (like its events), so that work counter drops.
  std::erase_if(r.network_counters, [](const auto& c) { return c.first == "peak flows in flight"; });
  std::ostringstream j, v, l;
  write_json_report(j, r, info);
  write_csv_report(v, r);
  write_link_stats(l, r);
  return {j.str(), v.str(), l.str()};
}

}  // namespace sim::testing
