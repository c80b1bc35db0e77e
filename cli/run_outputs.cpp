#include "run_outputs.h"

#include <filesystem>
#include <utility>

#include "core/error.h"

namespace sim {

namespace {

namespace fs = std::filesystem;

// The file an output path will be written to, for paths that do not exist
// yet: absolute (weakly_canonical keeps a relative path whose first part is
// absent as it is, so "x.json" and "./x.json" differed), symlinks followed as
// OutputFile follows them (a dangling link's target is the file it creates).
fs::path written_path(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) return fs::path(path).lexically_normal();
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  const fs::path canonical = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : canonical;
}

// Whether two output paths end in one file. A character device (/dev/null)
// takes any number of writers; anything else written twice loses one output.
bool same_file(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return a == b;
  std::error_code ec;
  if (fs::is_character_file(a, ec)) return false;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return a == b || written_path(a) == written_path(b);
}

// Two outputs on one file: the later rename replaced the earlier's file, its
// content lost with exit 0; two on standard output interleaved.
void check_distinct(const OutputPaths& p) {
  const std::pair<const char*, const std::string*> outs[] = {
      {"--report", &p.report}, {"--csv", &p.csv}, {"--link-stats", &p.link_stats}, {"--timeline", &p.timeline}};
  for (std::size_t i = 0; i < std::size(outs); ++i) {
    for (std::size_t j = i + 1; j < std::size(outs); ++j) {
      const std::string &a = *outs[i].second, &b = *outs[j].second;
      if (a.empty() || b.empty() || !same_file(a, b)) continue;
      const std::string both = std::string(outs[i].first) + " and " + outs[j].first;
      if (a == "-") {
        throw InputError(both + " both write to standard output ('-'), where they would interleave: give one of them a file");
      }
      throw InputError(both + " both name '" + b + "': one would replace the other; give each output a file of its own");
    }
  }
}

}  // namespace

RunOutputs::RunOutputs(const OutputPaths& p) {
  check_distinct(p);
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
