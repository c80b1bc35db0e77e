// The timeline in Perfetto's protobuf trace format (proto/perfetto_trace.proto),
// encoded by hand: a generated message per packet would cost an allocation
// per field, and the format is a handful of varints and strings.
//
// Size per node: a begin packet (timestamp, track, interned name and
// category, node id) and an end packet (timestamp, track), about 60 bytes.
// Names are interned (sent once, then referred to by number) up to
// kMaxInternedNames distinct ones; beyond that they are written inline, so
// memory stays bounded on traces whose every node has its own name.
#include <string>
#include <string_view>
#include <unordered_map>

#include "report/timeline_writer.h"

namespace sim {

namespace {

// Field numbers (Perfetto's public schema; see proto/perfetto_trace.proto).
enum Field : std::uint32_t {
  kTracePacket = 1,
  kPacketTimestamp = 8,
  kPacketSequenceId = 10,
  kPacketTrackEvent = 11,
  kPacketInternedData = 12,
  kPacketSequenceFlags = 13,
  kPacketTrackDescriptor = 60,
  kEventCategoryIids = 3,
  kEventDebugAnnotations = 4,
  kEventType = 9,
  kEventNameIid = 10,
  kEventTrackUuid = 11,
  kEventName = 23,
  kAnnotationNameIid = 1,
  kAnnotationUint = 3,
  kInternedCategories = 1,
  kInternedEventNames = 2,
  kInternedAnnotationNames = 3,
  kInternedIid = 1,
  kInternedName = 2,
  kTrackUuid = 1,
  kTrackName = 2,
  kTrackProcess = 3,
  kTrackParentUuid = 5,
  kProcessPid = 1,
  kProcessName = 6,
};
enum : std::uint64_t { kSliceBegin = 1, kSliceEnd = 2, kInstant = 3 };
enum : std::uint64_t { kStateCleared = 1, kNeedsState = 2 };
constexpr std::uint64_t kSequence = 1;
constexpr std::uint64_t kNodeIdAnnotation = 1;  // interned annotation name "node_id"
constexpr std::size_t kMaxInternedNames = 1 << 16;
constexpr std::uint32_t kInstantLane = 4;

// Protobuf wire encoding into a reusable string.
class Wire {
 public:
  void clear() { b_.clear(); }
  const std::string& bytes() const { return b_; }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      b_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    b_.push_back(static_cast<char>(v));
  }
  void uint(std::uint32_t field, std::uint64_t v) {
    varint(std::uint64_t{field} << 3);
    varint(v);
  }
  void bytes(std::uint32_t field, std::string_view s) {
    varint((std::uint64_t{field} << 3) | 2);
    varint(s.size());
    b_.append(s);
  }
  void message(std::uint32_t field, const Wire& inner) { bytes(field, inner.b_); }

 private:
  std::string b_;
};

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

class PerfettoEncoder final : public TimelineEncoder {
 public:
  explicit PerfettoEncoder(std::ostream& out) : out_(out) {
    // The sequence's first packet clears its interning state and names the annotation.
    packet_.clear();
    packet_.uint(kPacketSequenceId, kSequence);
    packet_.uint(kPacketSequenceFlags, kStateCleared);
    interned(kInternedAnnotationNames, kNodeIdAnnotation, "node_id");
    packet_.message(kPacketInternedData, interned_);
    emit();
  }

  void slice(const TimelineSlice& s, const TimelineTracks::Placement& where) override {
    if (where.new_rank) describe_rank(s.rank);
    if (where.new_track) describe_track(s.rank, where.key);
    const std::uint64_t track = track_uuid(s.rank, where.key);
    event_packet(s, track, s.lane == kInstantLane ? kInstant : kSliceBegin);
    if (s.lane == kInstantLane) return;
    packet_.clear();
    packet_.uint(kPacketTimestamp, ns(s.end));
    packet_.uint(kPacketSequenceId, kSequence);
    packet_.uint(kPacketSequenceFlags, kNeedsState);
    event_.clear();
    event_.uint(kEventType, kSliceEnd);
    event_.uint(kEventTrackUuid, track);
    packet_.message(kPacketTrackEvent, event_);
    emit();
  }

  void finish() override {}

 private:
  static std::uint64_t ns(Time t) { return static_cast<std::uint64_t>(t / kNanosecond); }
  static std::uint64_t process_uuid(std::uint32_t rank) { return (std::uint64_t{rank} + 1) << 20; }
  static std::uint64_t track_uuid(std::uint32_t rank, std::uint32_t key) { return process_uuid(rank) | (key + 1); }

  // Frames packet_ as one Trace.packet field and writes it.
  void emit() {
    header_.clear();
    header_.varint((std::uint64_t{kTracePacket} << 3) | 2);
    header_.varint(packet_.bytes().size());
    out_.write(header_.bytes().data(), static_cast<std::streamsize>(header_.bytes().size()));
    out_.write(packet_.bytes().data(), static_cast<std::streamsize>(packet_.bytes().size()));
  }

  // Appends one interned entry to interned_ (which the caller clears).
  void interned(std::uint32_t field, std::uint64_t iid, std::string_view name) {
    entry_.clear();
    entry_.uint(kInternedIid, iid);
    entry_.bytes(kInternedName, name);
    interned_.message(field, entry_);
  }

  void describe_rank(std::uint32_t rank) {
    Wire process;
    process.uint(kProcessPid, std::uint64_t{rank} + 1);  // pid 0 means the idle process to viewers
    process.bytes(kProcessName, "rank " + std::to_string(rank));
    Wire track;
    track.uint(kTrackUuid, process_uuid(rank));
    track.message(kTrackProcess, process);
    descriptor_packet(track);
  }

  void describe_track(std::uint32_t rank, std::uint32_t key) {
    Wire track;
    track.uint(kTrackUuid, track_uuid(rank, key));
    track.bytes(kTrackName, TimelineTracks::track_name(key));
    track.uint(kTrackParentUuid, process_uuid(rank));
    descriptor_packet(track);
  }

  void descriptor_packet(const Wire& track) {
    packet_.clear();
    packet_.uint(kPacketSequenceId, kSequence);
    packet_.message(kPacketTrackDescriptor, track);
    emit();
  }

  void event_packet(const TimelineSlice& s, std::uint64_t track, std::uint64_t type) {
    const std::string_view name = s.name.empty() ? std::string_view(node_kind_name(s.kind)) : s.name;
    interned_.clear();
    const std::uint64_t category = static_cast<std::uint64_t>(s.kind) + 1;
    if (category < 64 && !(categories_sent_ & (std::uint64_t{1} << category))) {
      categories_sent_ |= std::uint64_t{1} << category;
      interned(kInternedCategories, category, node_kind_name(s.kind));
    }
    std::uint64_t name_iid = 0;
    if (const auto it = names_.find(name); it != names_.end()) {
      name_iid = it->second;
    } else if (names_.size() < kMaxInternedNames) {
      name_iid = names_.size() + 1;
      names_.emplace(std::string(name), name_iid);
      interned(kInternedEventNames, name_iid, name);
    }
    event_.clear();
    if (category < 64) event_.uint(kEventCategoryIids, category);
    annotation_.clear();
    annotation_.uint(kAnnotationNameIid, kNodeIdAnnotation);
    annotation_.uint(kAnnotationUint, s.node_id);
    event_.message(kEventDebugAnnotations, annotation_);
    event_.uint(kEventType, type);
    if (name_iid != 0) event_.uint(kEventNameIid, name_iid); else event_.bytes(kEventName, name);
    event_.uint(kEventTrackUuid, track);
    packet_.clear();
    packet_.uint(kPacketTimestamp, ns(s.start));
    packet_.uint(kPacketSequenceId, kSequence);
    if (!interned_.bytes().empty()) packet_.message(kPacketInternedData, interned_);
    packet_.uint(kPacketSequenceFlags, kNeedsState);
    packet_.message(kPacketTrackEvent, event_);
    emit();
  }

  std::ostream& out_;
  Wire packet_, event_, annotation_, interned_, entry_, header_;
  std::unordered_map<std::string, std::uint64_t, StringHash, std::equal_to<>> names_;
  std::uint64_t categories_sent_ = 0;
};

}  // namespace

std::unique_ptr<TimelineEncoder> make_perfetto_encoder(std::ostream& out) {
  return std::make_unique<PerfettoEncoder>(out);
}

}  // namespace sim
