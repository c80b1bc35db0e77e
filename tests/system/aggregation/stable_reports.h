// The reports of a run without what aggregation and folding may change (the
// event counts), for tests that compare runs with and without them.
#pragma once

#include <sstream>
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
  std::ostringstream j, v, l;
  write_json_report(j, r, info);
  write_csv_report(v, r);
  write_link_stats(l, r);
  return {j.str(), v.str(), l.str()};
}

}  // namespace sim::testing
