// The output files of one run (--report, --csv, --link-stats, --timeline):
// opened before the workload is loaded, so a bad path fails at once rather
// than after a long run; the timeline is written as the run goes, the rest
// from the result at the end.
#pragma once

#include <memory>
#include <string>

#include "core/output_file.h"
#include "report/report.h"
#include "report/timeline_writer.h"

namespace sim {

struct OutputPaths {
  std::string report, csv, link_stats, timeline;  // empty: not written
  std::string timeline_ranks, timeline_window, timeline_format = "auto";
};

class RunOutputs {
 public:
  explicit RunOutputs(const OutputPaths& paths);
  // For SimulationOptions::timeline (null without --timeline).
  TimelineSink* timeline() const { return timeline_.get(); }
  // Node runs the timeline holds (after write(); 0 without --timeline).
  std::uint64_t timeline_slices() const { return timeline_ ? timeline_->slices() : 0; }
  // Whether some output is stdout ("-"), where the summary must not go.
  bool uses_stdout() const { return stdout_used_; }
  // Writes what is left and puts every file in place.
  void write(const SimulationResult& result, const RunInfo& info);

 private:
  std::unique_ptr<OutputFile> open(const std::string& path);

  std::unique_ptr<OutputFile> report_, csv_, link_stats_;
  std::unique_ptr<TimelineWriter> timeline_;
  bool stdout_used_ = false;
};

}  // namespace sim
