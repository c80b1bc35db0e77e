// The summary's collective lines: one per kind of collective (type, size,
// ranks, algorithm, the kind of group and its dimensions), the slowest rank's
// call shown with every call of the kind counted. A generated workload's
// groups of one role ('tp:0', 'tp:1', ...) are one kind, 'tp:*', with their
// count; any other label stays a kind of its own.
#include <gtest/gtest.h>

#include <sstream>

#include "report/report.h"

namespace sim {
namespace {

CollectiveRecord call(std::uint32_t group, Time duration) {
  CollectiveRecord c;
  c.type = CollectiveType::kAllReduce;
  c.bytes = 1 << 20;
  c.group_size = 4;
  c.group = group;
  c.algorithm = "ring";
  c.duration = duration;
  return c;
}

TEST(SummaryKinds, GroupsOfOneRoleAreOneLineWithTheirCountAndTheSlowestCall) {
  SimulationResult r;
  r.ranks.resize(1);
  r.groups = {GroupRecord{"pg_name 'tp:0'", {0}, 1}, GroupRecord{"pg_name 'tp:1'", {0}, 1},
              GroupRecord{"pg_name 'tp:12'", {0}, 1}, GroupRecord{"pg_name 'dp:0'", {0, 1}, 2},
              GroupRecord{"pg_name 'tp:x'", {0}, 1},  GroupRecord{"pg_name '7'", {0}, 1},
              GroupRecord{"pg_name '8'", {0}, 1}};
  for (std::uint32_t g = 0; g < r.groups.size(); ++g) {
    for (int k = 0; k < 2; ++k) r.collectives.push_back(call(g, 1'000'000 * (g + 1)));
  }
  r.collectives[5].duration = 9'000'000;  // tp:12's second call: the slowest of 'tp:*'
  std::ostringstream out;
  print_summary(out, r, RunInfo{});
  const std::string s = out.str();
  const std::string head = "  ALL_REDUCE 1 MiB (1048576 B) on 4 ranks ";
  EXPECT_NE(s.find(head + "(pg_name 'tp:*', 3 groups, dims [0]) [ring] x6: 9 us,"), std::string::npos) << s;
  // One group of its role keeps its own label.
  EXPECT_NE(s.find(head + "(pg_name 'dp:0', dims [0, 1]) [ring] x2: 4 us,"), std::string::npos) << s;
  // Labels that are no role and index: each its own line.
  EXPECT_NE(s.find(head + "(pg_name 'tp:x', dims [0]) [ring] x2: 5 us,"), std::string::npos) << s;
  EXPECT_NE(s.find(head + "(pg_name '7', dims [0]) [ring] x2: 6 us,"), std::string::npos) << s;
  EXPECT_NE(s.find(head + "(pg_name '8', dims [0]) [ring] x2: 7 us,"), std::string::npos) << s;
  EXPECT_EQ(s.find("'tp:0'"), std::string::npos) << s;
}

}  // namespace
}  // namespace sim
