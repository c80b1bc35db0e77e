// The timeline as written: the Perfetto protobuf form decoded with our own
// schema (proto/perfetto_trace.proto) gives back every slice, on the right
// track, with its name, kind and node id; the Chrome JSON form parses; the
// rank and window filters keep what they say.
#include "report/timeline_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "tests/common/temp_folder.h"
#include "perfetto_trace.pb.h"

namespace sim {
namespace {

namespace fs = std::filesystem;

struct Decoded {
  std::uint32_t rank;
  std::string track;
  std::string name, category;
  std::uint64_t node_id;
  std::uint64_t start_ns, end_ns;
  bool operator<(const Decoded& o) const { return std::tie(rank, start_ns, node_id) < std::tie(o.rank, o.start_ns, o.node_id); }
};

// Rebuilds slices from a Perfetto trace the way a viewer does: tracks from
// their descriptors, names from the interning tables, begin/end matched per track.
std::vector<Decoded> decode(const std::string& bytes) {
  perfetto::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes));
  std::map<std::uint64_t, std::string> track_names, categories, names;
  std::map<std::uint64_t, std::uint32_t> rank_of_process, rank_of_track;
  std::map<std::uint64_t, std::vector<Decoded>> open;  // per track
  std::vector<Decoded> out;
  EXPECT_GT(trace.packet_size(), 0);
  EXPECT_EQ(trace.packet(0).sequence_flags(), 1u) << "the first packet must clear incremental state";
  for (const auto& p : trace.packet()) {
    EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
    for (const auto& c : p.interned_data().event_categories()) categories[c.iid()] = c.name();
    for (const auto& n : p.interned_data().event_names()) names[n.iid()] = n.name();
    if (p.has_track_descriptor()) {
      const auto& t = p.track_descriptor();
      if (t.has_process()) {
        rank_of_process[t.uuid()] = static_cast<std::uint32_t>(t.process().pid() - 1);
        EXPECT_EQ(t.process().process_name(), "rank " + std::to_string(t.process().pid() - 1));
      } else {
        EXPECT_TRUE(rank_of_process.count(t.parent_uuid())) << "track before its process";
        rank_of_track[t.uuid()] = rank_of_process[t.parent_uuid()];
        track_names[t.uuid()] = t.name();
      }
    }
    if (!p.has_track_event()) continue;
    const auto& e = p.track_event();
    EXPECT_TRUE(track_names.count(e.track_uuid())) << "event on an undescribed track";
    if (e.type() == perfetto::TrackEvent::TYPE_SLICE_END) {
      auto& stack = open[e.track_uuid()];
      EXPECT_FALSE(stack.empty());
      if (stack.empty()) continue;
      Decoded d = stack.back();
      stack.pop_back();
      d.end_ns = p.timestamp();
      out.push_back(d);
      continue;
    }
    Decoded d{rank_of_track[e.track_uuid()], track_names[e.track_uuid()],
              e.has_name() ? e.name() : names.at(e.name_iid()), categories.at(e.category_iids(0)),
              e.debug_annotations(0).uint_value(), p.timestamp(), p.timestamp()};
    EXPECT_EQ(e.debug_annotations(0).name_iid(), 1u);
    if (e.type() == perfetto::TrackEvent::TYPE_INSTANT) {
      out.push_back(d);
    } else {
      EXPECT_EQ(e.type(), perfetto::TrackEvent::TYPE_SLICE_BEGIN);
      open[e.track_uuid()].push_back(d);
    }
  }
  for (const auto& [track, stack] : open) EXPECT_TRUE(stack.empty()) << "unterminated slice on track " << track;
  std::sort(out.begin(), out.end());
  return out;
}

class TimelineWriterTest : public testing::TempFolderTest {
 protected:

  // Two ranks; rank 0's two communication slices overlap without nesting
  // properly in completion order, so they need two tracks. Given in
  // completion order (ends never decrease), as the simulation does.
  static void feed(TimelineSink& sink) {
    const auto slice = [&](std::uint32_t rank, std::uint8_t lane, Time start, Time end, std::uint64_t id,
                           std::string_view name, NodeKind kind) {
      sink.slice(TimelineSlice{rank, lane, start, end, id, name, kind});
    };
    slice(0, 0, 0, 3 * kMicrosecond, 1, "fwd", NodeKind::kComp);
    slice(1, 4, 0, 0, 9, "", NodeKind::kMetadata);
    slice(0, 3, 4 * kMicrosecond, 6 * kMicrosecond, 3, "send", NodeKind::kCommSend);
    slice(0, 3, 3 * kMicrosecond, 7 * kMicrosecond, 2, "allreduce", NodeKind::kCommColl);
    slice(1, 0, 1 * kMicrosecond, 8'500'500, 7, "fwd", NodeKind::kComp);  // 8.5005 us: ns truncate
  }

};

TEST_F(TimelineWriterTest, PerfettoTraceDecodesToEverySlice) {
  TimelineWriter w(path("t.pftrace"), TimelineFormat::kAuto);
  feed(w);
  w.finish();
  const std::vector<Decoded> got = decode(read(path("t.pftrace")));
  ASSERT_EQ(got.size(), 5u);
  const auto expect = [&](std::size_t i, std::uint32_t rank, const std::string& track, const std::string& name,
                          const std::string& cat, std::uint64_t id, std::uint64_t start, std::uint64_t end) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].rank, rank);
    EXPECT_EQ(got[i].track, track);
    EXPECT_EQ(got[i].name, name);
    EXPECT_EQ(got[i].category, cat);
    EXPECT_EQ(got[i].node_id, id);
    EXPECT_EQ(got[i].start_ns, start);
    EXPECT_EQ(got[i].end_ns, end);
  };
  expect(0, 0, "GPU compute", "fwd", "COMP", 1, 0, 3000);
  // The send finished first and took the first communication track; the
  // all-reduce overlaps it (3-7 us against 4-6 us) and gets a second one.
  expect(1, 0, "communication 2", "allreduce", "COMM_COLL", 2, 3000, 7000);
  expect(2, 0, "communication", "send", "COMM_SEND", 3, 4000, 6000);
  expect(3, 1, "instant", "METADATA", "METADATA", 9, 0, 0);
  expect(4, 1, "GPU compute", "fwd", "COMP", 7, 1000, 8500);
}

TEST_F(TimelineWriterTest, NamesAreInternedOnce) {
  TimelineWriter w(path("t.pftrace"), TimelineFormat::kPerfetto);
  for (std::uint64_t i = 0; i < 100; ++i) {
    w.slice(TimelineSlice{0, 0, static_cast<Time>(i) * kMicrosecond, static_cast<Time>(i + 1) * kMicrosecond, i,
                          "the same long kernel name", NodeKind::kComp});
  }
  w.finish();
  const std::string bytes = read(path("t.pftrace"));
  EXPECT_EQ(decode(bytes).size(), 100u);
  // One copy of the name, and under 50 bytes per slice (begin + end packets).
  EXPECT_EQ(bytes.find("the same long kernel name"), bytes.rfind("the same long kernel name"));
  EXPECT_LT(bytes.size(), 100u * 50 + 200) << bytes.size();
}

TEST_F(TimelineWriterTest, ChromeJsonKeepsTheTraceEventForm) {
  TimelineWriter w(path("t.json"), TimelineFormat::kAuto);
  feed(w);
  w.finish();
  const auto j = nlohmann::json::parse(read(path("t.json")));
  std::vector<nlohmann::json> slices;
  std::map<std::pair<int, int>, std::string> threads;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") slices.push_back(e);
    if (e["ph"] == "M" && e["name"] == "thread_name") threads[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  ASSERT_EQ(slices.size(), 5u);
  EXPECT_EQ(slices[3]["name"], "allreduce");
  EXPECT_EQ(slices[3]["tid"], 5);
  EXPECT_EQ((threads[{0, 5}]), "communication 2");
  EXPECT_DOUBLE_EQ(slices[3]["ts"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(slices[3]["dur"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(slices[4]["args"]["end_ns"].get<double>(), 8500.5);
}

TEST_F(TimelineWriterTest, RankAndWindowFiltersKeepOnlyWhatTheySay) {
  TimelineFilter ranks;
  ranks.set_ranks("1-3,7");
  TimelineWriter a(path("a.pftrace"), TimelineFormat::kAuto, ranks);
  feed(a);
  a.finish();
  const auto only_rank1 = decode(read(path("a.pftrace")));
  ASSERT_EQ(only_rank1.size(), 2u);
  EXPECT_EQ(only_rank1[0].rank, 1u);
  EXPECT_EQ(only_rank1[1].rank, 1u);

  TimelineFilter window;
  window.set_window("6500ns:7us");  // overlaps the all-reduce (3-7 us) and rank 1's fwd (1-8.5 us)
  TimelineWriter b(path("b.pftrace"), TimelineFormat::kAuto, window);
  feed(b);
  b.finish();
  const auto windowed = decode(read(path("b.pftrace")));
  ASSERT_EQ(windowed.size(), 2u);
  EXPECT_EQ(windowed[0].name, "allreduce");
  EXPECT_EQ(windowed[1].node_id, 7u);
}

TEST_F(TimelineWriterTest, BadFilterTextIsInputErrorNamingTheOption) {
  TimelineFilter f;
  const auto message = [&](auto&& call) {
    try {
      call();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { f.set_ranks("0-x"); }).find("--timeline-ranks '0-x': 'x' is not a rank"), std::string::npos);
  EXPECT_NE(message([&] { f.set_ranks("5-2"); }).find("runs backwards"), std::string::npos);
  EXPECT_NE(message([&] { f.set_window("1ms"); }).find("--timeline-window '1ms': expected"), std::string::npos);
  EXPECT_NE(message([&] { f.set_window("2ms:1ms"); }).find("ends before it starts"), std::string::npos);
  EXPECT_NE(message([&] { f.set_window("1parsec:"); }).find("--timeline-window '1parsec:'"), std::string::npos);
  EXPECT_THROW(parse_timeline_format("svg"), InputError);
}

TEST_F(TimelineWriterTest, UnfinishedTimelineLeavesNoFile) {
  {
    TimelineWriter w(path("t.pftrace"), TimelineFormat::kAuto);
    feed(w);
  }  // the run failed: no finish()
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace
}  // namespace sim
