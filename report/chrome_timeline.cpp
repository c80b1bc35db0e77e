// Chrome trace-event JSON: {"displayTimeUnit": "ns", "traceEvents": [...]},
// one "X" (complete) event per node, "M" events naming processes and threads.
// Trace-event times are microseconds; the exact ns go in args.
#include <charconv>

#include "report/json_stream.h"
#include "report/timeline_writer.h"

namespace sim {

namespace {

class ChromeJsonEncoder final : public TimelineEncoder {
 public:
  explicit ChromeJsonEncoder(std::ostream& out) : out_(out) { out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"; }

  void slice(const TimelineSlice& s, const TimelineTracks::Placement& where) override {
    if (where.new_rank) name_event("process_name", s.rank, nullptr, "rank " + std::to_string(s.rank));
    if (where.new_track) name_event("thread_name", s.rank, &where.key, TimelineTracks::track_name(where.key));
    separator();
    out_ << "{\"ph\":\"X\",\"name\":";
    write_json_string(out_, s.name.empty() ? std::string_view(node_kind_name(s.kind)) : s.name);
    out_ << ",\"cat\":\"" << node_kind_name(s.kind) << "\",\"pid\":" << s.rank << ",\"tid\":" << where.key
         << ",\"ts\":";
    number(to_us(s.start));
    out_ << ",\"dur\":";
    number(to_us(s.end - s.start));
    out_ << ",\"args\":{\"node_id\":" << s.node_id << ",\"start_ns\":";
    number(to_ns(s.start));
    out_ << ",\"end_ns\":";
    number(to_ns(s.end));
    out_ << "}}";
  }

  void finish() override { out_ << "\n]}\n"; }

 private:
  void separator() {
    if (!first_) out_ << ",\n";
    first_ = false;
  }
  void name_event(const char* what, std::uint32_t pid, const std::uint32_t* tid, const std::string& name) {
    separator();
    out_ << "{\"ph\":\"M\",\"name\":\"" << what << "\",\"pid\":" << pid;
    if (tid) out_ << ",\"tid\":" << *tid;
    out_ << ",\"args\":{\"name\":";
    write_json_string(out_, name);
    out_ << "}}";
  }
  void number(double v) {
    char buf[40];
    const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
    out_.write(buf, end - buf);
  }

  std::ostream& out_;
  bool first_ = true;
};

}  // namespace

std::unique_ptr<TimelineEncoder> make_chrome_json_encoder(std::ostream& out) {
  return std::make_unique<ChromeJsonEncoder>(out);
}

}  // namespace sim
