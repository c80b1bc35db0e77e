#include "report/timeline_writer.h"

#include <algorithm>

#include "core/error.h"

namespace sim {

TimelineFormat parse_timeline_format(const std::string& text) {
  if (text == "auto") return TimelineFormat::kAuto;
  if (text == "perfetto") return TimelineFormat::kPerfetto;
  if (text == "json") return TimelineFormat::kChromeJson;
  throw InputError("--timeline-format '" + text + "': expected auto, perfetto or json");
}

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

TimelineWriter::TimelineWriter(const std::string& path, TimelineFormat format, TimelineFilter filter)
    : file_(path), filter_(std::move(filter)) {
  if (format == TimelineFormat::kAuto) {
    format = ends_with(path, ".json") ? TimelineFormat::kChromeJson : TimelineFormat::kPerfetto;
  }
  encoder_ = format == TimelineFormat::kChromeJson ? make_chrome_json_encoder(file_.stream())
                                                   : make_perfetto_encoder(file_.stream());
}

void TimelineWriter::slice(const TimelineSlice& s) {
  if (!filter_.keeps(s)) return;
  ++slices_;
  if (!held_.empty() && held_.front().slice.end != s.end) flush_held();
  held_.push_back(Held{s, std::string(s.name)});
}

void TimelineWriter::flush_held() {
  std::sort(held_.begin(), held_.end(), [](const Held& a, const Held& b) {
    if (a.slice.rank != b.slice.rank) return a.slice.rank < b.slice.rank;
    if (a.slice.start != b.slice.start) return a.slice.start < b.slice.start;
    return a.slice.node_id < b.slice.node_id;
  });
  for (Held& h : held_) {
    h.slice.name = h.name;
    encoder_->slice(h.slice, tracks_.place(h.slice));
  }
  held_.clear();
}

void TimelineWriter::finish() {
  flush_held();
  encoder_->finish();
  file_.commit();
}

}  // namespace sim
