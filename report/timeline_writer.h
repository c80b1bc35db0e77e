// --timeline: every node's run written as the simulation goes, to a file
// a trace viewer (https://ui.perfetto.dev, chrome://tracing) opens.
//
// Two encodings, picked by the file name unless given:
//   Perfetto protobuf (TracePacket / TrackEvent, proto/perfetto_trace.proto;
//     about 60 bytes per node) for any name but *.json;
//   Chrome trace-event JSON (about 170 bytes per node) for *.json.
// One process per rank, one track per resource lane (communication spread
// over several, see report/timeline_tracks.h), one slice per node with its
// name, kind (category) and node id. Nothing is kept per node in memory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/output_file.h"
#include "system/runner/simulation.h"
#include "report/timeline_filter.h"
#include "report/timeline_tracks.h"

namespace sim {

enum class TimelineFormat { kAuto, kPerfetto, kChromeJson };

// "auto", "perfetto" or "json"; throws InputError otherwise.
TimelineFormat parse_timeline_format(const std::string& text);

// Turns slices into bytes on a stream; one per encoding.
class TimelineEncoder {
 public:
  virtual ~TimelineEncoder() = default;
  virtual void slice(const TimelineSlice& s, const TimelineTracks::Placement& where) = 0;
  virtual void finish() = 0;  // closing brackets, if the encoding has any
};

std::unique_ptr<TimelineEncoder> make_perfetto_encoder(std::ostream& out);
std::unique_ptr<TimelineEncoder> make_chrome_json_encoder(std::ostream& out);

class TimelineWriter final : public TimelineSink {
 public:
  // Opens `path` at once (core/output_file.h), so a bad path fails before the run.
  TimelineWriter(const std::string& path, TimelineFormat format, TimelineFilter filter = {});
  bool wants(std::uint32_t rank, Time start, Time end) const override { return filter_.keeps(rank, start, end); }
  void slice(const TimelineSlice& s) override;
  void ranks(std::uint32_t count) override { filter_.check_ranks(count); }
  // Ends the encoding and puts the file in place; throws InputError on I/O failure.
  void finish();
  // Node runs the timeline holds (0: a filter kept none of the run).
  std::uint64_t slices() const { return slices_; }

 private:
  OutputFile file_;
  TimelineFilter filter_;
  TimelineTracks tracks_;
  std::unique_ptr<TimelineEncoder> encoder_;
  // Slices that end at one picosecond are written in (rank, start, node id)
  // order, not in the order the simulation completed them: which of several
  // nodes ending at one instant completes first is an accident of event
  // order (exact step aggregation ends a collective on all its ranks in one
  // event), not part of the result. Held here until a later end comes.
  struct Held {
    TimelineSlice slice;
    std::string name;
  };
  std::vector<Held> held_;
  std::uint64_t slices_ = 0;
  void flush_held();
};

}  // namespace sim
