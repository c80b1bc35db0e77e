#include "report/model_range.h"

#include <gtest/gtest.h>

#include "system/collectives/nccl/programs/nccl_p2p.h"

namespace sim {
namespace {

// Rank 0's record of a collective of `bytes` on `ranks` ranks, group `group`.
CollectiveRecord record(CollectiveType type, std::uint64_t bytes, std::uint32_t ranks, std::uint32_t group,
                        const std::string& algorithm) {
  CollectiveRecord c;
  c.type = type;
  c.bytes = bytes;
  c.group_size = ranks;
  c.group = group;
  c.algorithm = algorithm;
  c.duration = 1'000'000'000;
  return c;
}

TEST(ModelRange, AnAllToAllAcrossNodesBelowTheMeasuredPartsIsALowerBound) {
  const std::uint64_t MiB = 1 << 20;
  SimulationResult r;
  r.groups = {GroupRecord{"pg_name '0'", {0, 1}, 2}, GroupRecord{"pg_name '1'", {0}, 1}};
  const std::string p2p = nccl::kAllToAllProgramName;
  // 16 ranks over 2 nodes: parts of bytes / 16. 128 MiB is 8 MiB a peer, where measurement agrees.
  r.collectives.push_back(record(CollectiveType::kAllToAll, 128 * MiB, 16, 0, p2p));
  // Inside one node, below it: nothing was measured to disagree.
  r.collectives.push_back(record(CollectiveType::kAllToAll, 1 * MiB, 8, 1, p2p));
  // Another algorithm's all-to-all, and another collective: not this model.
  r.collectives.push_back(record(CollectiveType::kAllToAll, 16 * MiB, 16, 0, "ring"));
  r.collectives.push_back(record(CollectiveType::kAllGather, 16 * MiB, 16, 0, p2p));
  EXPECT_TRUE(model_range_warnings(r).empty());

  // Just below 8 MiB a peer, and 2 MiB a peer: both counted, the smallest named.
  r.collectives.push_back(record(CollectiveType::kAllToAll, 128 * MiB - 16, 16, 0, p2p));
  r.collectives.push_back(record(CollectiveType::kAllToAll, 32 * MiB, 16, 0, p2p));
  const auto w = model_range_warnings(r);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].rfind("2 of the ranks' all-to-alls across nodes [nccl:p2p] have parts below 8 MiB (8388608 B) a "
                       "peer (the smallest 2 MiB (2097152 B), 32 MiB (33554432 B) on 16 ranks over 2 nodes)",
                       0),
            0u)
      << w[0];
  EXPECT_NE(w[0].find("read their times as lower bounds"), std::string::npos) << w[0];
}

}  // namespace
}  // namespace sim
