// Exact step aggregation of direct and halving-doubling collectives
// (system/runner/aggregation/): their programs keep the rank-symmetry
// contract (collective_program.h) op by op, and runs with aggregation give
// the reports, link statistics and timelines of --no-aggregation, byte for
// byte, on the analytical backend (with and without a per-message latency)
// and on the flow backend; sizes that do not divide into equal pieces and
// groups that are not a power of two are simulated message by message.
#include <gtest/gtest.h>

#include <memory>

#include "network/topology.h"
#include "random_workloads.h"
#include "system/collectives/direct.h"
#include "system/collectives/halving_doubling.h"

namespace sim {
namespace {

using testing::Case;

// Every rank runs the origin's ops under the same refs, with the same kind,
// bytes and tag, its peer the origin's moved by symmetric_peer; and each
// receive's message is the peer's matched_send, addressed back to the rank.
void expect_contract(const CollectiveProgram& p) {
  ASSERT_TRUE(p.rank_symmetric()) << p.name();
  const std::uint32_t n = p.group_size(), origin = p.symmetric_origin();
  std::vector<std::pair<OpRef, CollectiveOp>> mine;
  for_each_op(p, origin, [&](OpRef ref, const CollectiveOp& op) {
    mine.emplace_back(ref, op);
    return true;
  });
  ASSERT_FALSE(mine.empty());
  for (std::uint32_t pos = 0; pos < n; ++pos) {
    SCOPED_TRACE("rank " + std::to_string(pos) + " of " + p.name());
    std::size_t i = 0;
    std::vector<bool> seen(n, false);
    for (std::uint32_t q = 0; q < n; ++q) seen[p.symmetric_peer(pos, q)] = true;
    EXPECT_EQ(std::count(seen.begin(), seen.end(), true), static_cast<std::ptrdiff_t>(n)) << "not a permutation";
    EXPECT_EQ(p.symmetric_peer(pos, origin), pos);
    for_each_op(p, pos, [&](OpRef ref, const CollectiveOp& op) {
      EXPECT_LT(i, mine.size());
      if (i >= mine.size()) return false;
      const auto& [oref, oop] = mine[i++];
      EXPECT_EQ(ref, oref);
      EXPECT_EQ(op.kind, oop.kind);
      EXPECT_EQ(op.bytes, oop.bytes);
      EXPECT_EQ(op.tag, oop.tag);
      if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
        EXPECT_EQ(op.peer, p.symmetric_peer(pos, oop.peer));
      }
      if (op.kind == OpKind::kRecv) {
        const CollectiveOp send = p.op(op.peer, p.matched_send(ref));
        EXPECT_EQ(send.kind, OpKind::kSend);
        EXPECT_EQ(send.peer, pos);
        EXPECT_EQ(send.tag, op.tag);
        EXPECT_EQ(send.bytes, op.bytes);
      }
      return true;
    });
    EXPECT_EQ(i, mine.size());
  }
}

TEST(DirectHalvingDoublingSymmetry, ProgramsKeepTheContractWhereTheyClaimIt) {
  for (const CollectiveType t : {CollectiveType::kAllReduce, CollectiveType::kReduceScatter,
                                 CollectiveType::kAllGather, CollectiveType::kAllToAll, CollectiveType::kBarrier}) {
    for (const std::uint32_t window : {0u, 2u}) {
      expect_contract(DirectProgram(t, 8, 8 * 3 * 1000, 3, window));
      expect_contract(DirectProgram(t, 5, 5 * 2 * 77, 2, window));
    }
  }
  for (const CollectiveType t : {CollectiveType::kAllReduce, CollectiveType::kReduceScatter,
                                 CollectiveType::kAllGather}) {
    expect_contract(HalvingDoublingProgram(t, 8, 8 * 2 * 1024, 2));
    expect_contract(HalvingDoublingProgram(t, 16, 16 * 4096, 1));
  }
  expect_contract(HalvingDoublingProgram(CollectiveType::kAllReduce, 16, 16 * 3 * 64, 3, true));
}

TEST(DirectHalvingDoublingSymmetry, UnequalPiecesRootsAndExtraRanksAreNotClaimed) {
  // 1,000,003 B do not cut into equal pieces: near-equal ones differ by a byte from rank to rank.
  EXPECT_FALSE(DirectProgram(CollectiveType::kAllReduce, 8, 1000003, 1, 0).rank_symmetric());
  EXPECT_FALSE(DirectProgram(CollectiveType::kAllToAll, 8, 8 * 1000 + 1, 1, 0).rank_symmetric());
  EXPECT_TRUE(DirectProgram(CollectiveType::kAllGather, 8, 1000003, 3, 0).rank_symmetric());  // pieces per chunk
  // A root does what no other rank does.
  EXPECT_FALSE(DirectProgram(CollectiveType::kBroadcast, 8, 8 * 1024, 1, 0).rank_symmetric());
  EXPECT_FALSE(DirectProgram(CollectiveType::kReduce, 8, 8 * 1024, 1, 0).rank_symmetric());
  EXPECT_FALSE(DirectProgram(CollectiveType::kAllReduce, 1, 1024, 1, 0).rank_symmetric());
  EXPECT_FALSE(HalvingDoublingProgram(CollectiveType::kAllReduce, 8, 1000003, 1).rank_symmetric());
  EXPECT_FALSE(HalvingDoublingProgram(CollectiveType::kAllReduce, 12, 12 * 4096, 1).rank_symmetric());  // 4 extra
  EXPECT_FALSE(HalvingDoublingProgram(CollectiveType::kAllGather, 6, 4096, 1).rank_symmetric());
}

class DirectHalvingDoublingAggregation : public testing::AggregationRuns {
 protected:
  // Two layers of (compute, collective) on every rank of a switch of n NPUs.
  static Case layered(std::uint32_t n, const std::string& algorithm, CollectiveType type, std::uint64_t bytes,
                      std::uint32_t chunks, const std::string& backend, bool message_latency) {
    Case c;
    c.topology = "shape: Switch\nnpus: " + std::to_string(n) + "\nbandwidth: 50GB/s\nlatency: 500ns\n";
    c.config.collective_chunks = chunks;
    c.config.algorithms[type] = algorithm;
    c.config.reduction_bandwidth = 400'000'000'000;
    if (backend == "flow") c.config.network.backend = "flow";
    if (message_latency) c.config.network.options["message_latency"] = OptionValue{"700ns", "test"};
    c.traces = testing::make_traces(static_cast<int>(n), [&](int) {
      std::vector<et::Node> nodes;
      nodes.push_back(testing::comp_node(1, 3));
      nodes.push_back(testing::with_deps(testing::coll_node(2, type, bytes), {1}));
      nodes.push_back(testing::with_deps(testing::comp_node(3, 2), {2}));
      nodes.push_back(testing::with_deps(testing::coll_node(4, type, bytes), {3}));
      return nodes;
    });
    c.name = algorithm + " " + std::to_string(static_cast<int>(type)) + " on " + std::to_string(n) + " NPUs, " +
             std::to_string(bytes) + " B, " + std::to_string(chunks) + " chunk(s), " + backend +
             (message_latency ? ", message latency" : "");
    return c;
  }
};

TEST_F(DirectHalvingDoublingAggregation, AnalyticalRunsAreIdenticalWithAndWithout) {
  struct Algo {
    const char* name;
    std::vector<CollectiveType> types;
  };
  const std::vector<Algo> algos = {
      {"direct", {CollectiveType::kAllReduce, CollectiveType::kReduceScatter, CollectiveType::kAllGather,
                  CollectiveType::kAllToAll}},
      {"direct:window=3", {CollectiveType::kAllReduce, CollectiveType::kAllToAll}},
      {"halvingDoubling", {CollectiveType::kAllReduce, CollectiveType::kReduceScatter, CollectiveType::kAllGather}},
      {"halvingDoubling:order=nearest", {CollectiveType::kAllReduce}},
  };
  for (const Algo& a : algos) {
    for (const CollectiveType t : a.types) {
      const bool halving = std::string(a.name).rfind("halving", 0) == 0;
      for (const std::uint32_t n : {8u, 12u, 64u}) {
        for (const std::uint64_t bytes : {std::uint64_t{3} << 20, std::uint64_t{1000003}}) {
          for (const bool latency : {false, true}) {
            const std::uint32_t chunks = n == 64 ? 1 : 3;
            const Case c = layered(n, a.name, t, bytes, chunks, "analytical", latency);
            SCOPED_TRACE(c.name);
            const std::uint64_t aggregated = same_with_and_without(c);
            // Equal pieces (3 x 2^20 B cut into 8 x 3 or 64 x 1 parts; an
            // all-gather's input into k parts, any for direct) and, for
            // halving-doubling, no extra ranks: both layers.
            const bool gather = t == CollectiveType::kAllGather;
            const bool equal = gather ? !halving || bytes % chunks == 0 : bytes % (std::uint64_t{n} * chunks) == 0;
            const bool expected = equal && (!halving || (n & (n - 1)) == 0);
            EXPECT_EQ(aggregated, expected ? 2u : 0u);
          }
        }
      }
    }
  }
}

TEST_F(DirectHalvingDoublingAggregation, FlowRunsAreIdenticalWithAndWithout) {
  // Halving-doubling with one chunk: each rank's one flow at a time is alone on
  // its links, so aggregated. Direct puts every destination's flow on one
  // uplink at once: simulated message by message.
  for (const bool latency : {false, true}) {
    for (const std::uint32_t n : {8u, 16u}) {
      const Case hd = layered(n, "halvingDoubling", CollectiveType::kAllReduce, std::uint64_t{1} << 20, 1, "flow", latency);
      SCOPED_TRACE(hd.name);
      EXPECT_EQ(same_with_and_without(hd), 2u);
      const Case hd3 = layered(n, "halvingDoubling", CollectiveType::kAllReduce, 3u << 20, 3, "flow", latency);
      same_with_and_without(hd3);
      const Case uneven = layered(n, "halvingDoubling", CollectiveType::kReduceScatter, 1000003, 1, "flow", latency);
      EXPECT_EQ(same_with_and_without(uneven), 0u);
      const Case direct = layered(n, "direct", CollectiveType::kAllReduce, std::uint64_t{1} << 20, 1, "flow", latency);
      EXPECT_EQ(same_with_and_without(direct), 0u);
    }
  }
}

}  // namespace
}  // namespace sim
