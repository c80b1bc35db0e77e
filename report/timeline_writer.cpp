#include "report/timeline_writer.h"

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
  encoder_->slice(s, tracks_.place(s));
}

void TimelineWriter::finish() {
  encoder_->finish();
  file_.commit();
}

}  // namespace sim
