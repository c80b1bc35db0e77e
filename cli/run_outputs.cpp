#include "run_outputs.h"

namespace sim {

RunOutputs::RunOutputs(const OutputPaths& p) {
  report_ = open(p.report);
  csv_ = open(p.csv);
  link_stats_ = open(p.link_stats);
  if (p.timeline.empty()) return;
  TimelineFilter filter;
  filter.set_ranks(p.timeline_ranks);
  if (!p.timeline_window.empty()) filter.set_window(p.timeline_window);
  timeline_ = std::make_unique<TimelineWriter>(p.timeline, parse_timeline_format(p.timeline_format), filter);
  stdout_used_ |= p.timeline == "-";
}

std::unique_ptr<OutputFile> RunOutputs::open(const std::string& path) {
  if (path.empty()) return nullptr;
  stdout_used_ |= path == "-";
  return std::make_unique<OutputFile>(path);
}

void RunOutputs::write(const SimulationResult& result, const RunInfo& info) {
  if (timeline_) timeline_->finish();
  if (report_) {
    write_json_report(report_->stream(), result, info);
    report_->commit();
  }
  if (csv_) {
    write_csv_report(csv_->stream(), result);
    csv_->commit();
  }
  if (link_stats_) {
    write_link_stats(link_stats_->stream(), result);
    link_stats_->commit();
  }
}

}  // namespace sim
