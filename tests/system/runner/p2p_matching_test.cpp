// Point-to-point sends and receives through the simulation: matching order,
// many rounds on one key, and the diagnostics for what never matched.
#include <gtest/gtest.h>

#include "core/error.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;

TEST(P2PMatching, SameKeyMatchesInSendOrder) {
  // A 1 MiB then a 1 KiB send with one tag: the receives (1 MiB then 1 KiB)
  // take them in the order they were sent, whatever order the network
  // delivers them in (a size mismatch would say otherwise).
  const auto traces = make_traces(2, [](int r) {
    if (r == 0) return std::vector<et::Node>{p2p_node(1, true, 1, 1 << 20, 5), p2p_node(2, true, 1, 1024, 5)};
    return std::vector<et::Node>{p2p_node(1, false, 0, 1 << 20, 5), p2p_node(2, false, 0, 1024, 5)};
  });
  const auto res = simulate(traces, ring8());
  // The link carries them back to back: 1 MiB at 21,471.52 ns, 1 KiB 20.48 ns later.
  EXPECT_EQ(res.ranks[1].finish, 21'492'000);
  EXPECT_EQ(res.messages, 2u);
}

TEST(P2PMatching, ManyRoundsOnOneTagInBothOrders) {
  // 4 ranks x 200 rounds, all with tag 0: rank r sends to r+1 and receives
  // from r-1. Even ranks post their receive before their send (receive first),
  // odd ranks after, so both "posted before arrival" and "arrived before
  // posted" happen on every key.
  constexpr int kRounds = 200;
  const auto traces = make_traces(4, [](int r) {
    std::vector<et::Node> nodes;
    std::uint64_t prev_recv = 0;
    for (int k = 0; k < kRounds; ++k) {
      const std::uint64_t base = 1 + 2 * static_cast<std::uint64_t>(k);
      std::vector<std::uint64_t> deps;
      if (prev_recv) deps.push_back(prev_recv);
      et::Node send = p2p_node(r % 2 ? base : base + 1, true, (r + 1) % 4, 4096, 0, deps);
      et::Node recv = p2p_node(r % 2 ? base + 1 : base, false, (r + 3) % 4, 4096, 0, deps);
      prev_recv = recv.id();
      if (r % 2) {
        nodes.push_back(send);
        nodes.push_back(recv);
      } else {
        nodes.push_back(recv);
        nodes.push_back(send);
      }
    }
    return nodes;
  });
  const auto res = simulate(traces, ring8());
  EXPECT_EQ(res.messages, 4u * kRounds);
  for (const RankStats& s : res.ranks) EXPECT_EQ(s.nodes, 2u * kRounds);
}

TEST(P2PMatching, UnmatchedReceivesAreListedPerRankInKeyAndPostingOrder) {
  const auto traces = make_traces(3, [](int r) {
    if (r != 1) return std::vector<et::Node>{comp_node(1, 5)};
    return std::vector<et::Node>{p2p_node(1, false, 2, 64, 1), p2p_node(2, false, 0, 64, 3),
                                 p2p_node(3, false, 0, 64, 1), p2p_node(4, false, 0, 128, 1)};
  });
  try {
    simulate(traces, ring8());
    FAIL();
  } catch (const IncompleteError& e) {
    const std::string msg = e.what();
    const std::size_t a = msg.find("rank 1 node 3 'recv' (COMM_RECV from rank 0, tag 1, 64 B) waits");
    const std::size_t b = msg.find("rank 1 node 4 'recv' (COMM_RECV from rank 0, tag 1, 128 B) waits");
    const std::size_t c = msg.find("rank 1 node 2 'recv' (COMM_RECV from rank 0, tag 3, 64 B) waits");
    const std::size_t d = msg.find("rank 1 node 1 'recv' (COMM_RECV from rank 2, tag 1, 64 B) waits");
    ASSERT_NE(a, std::string::npos) << msg;
    ASSERT_NE(b, std::string::npos) << msg;
    ASSERT_NE(c, std::string::npos) << msg;
    ASSERT_NE(d, std::string::npos) << msg;
    EXPECT_LT(a, b);
    EXPECT_LT(b, c);
    EXPECT_LT(c, d);
  }
}

TEST(P2PMatching, UnreceivedSendsAreCountedAndListedInKeyOrder) {
  // Rank 1 takes one of rank 0's three tag-4 messages; two are left, plus one with tag 2.
  const auto traces = make_traces(2, [](int r) {
    if (r == 0) {
      return std::vector<et::Node>{p2p_node(1, true, 1, 10, 4), p2p_node(2, true, 1, 20, 4),
                                   p2p_node(3, true, 1, 30, 4), p2p_node(4, true, 1, 40, 2)};
    }
    return std::vector<et::Node>{p2p_node(1, false, 0, 10, 4)};
  });
  try {
    simulate(traces, ring8());
    FAIL();
  } catch (const IncompleteError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("3 message(s) sent but never received:\n"
                       "  rank 0 node 4 'send' (COMM_SEND to rank 1, tag 2, 40 B) was never received by rank 1\n"
                       "  rank 0 node 2 'send' (COMM_SEND to rank 1, tag 4, 20 B) was never received by rank 1\n"
                       "  rank 0 node 3 'send' (COMM_SEND to rank 1, tag 4, 30 B) was never received by rank 1"),
              std::string::npos)
        << msg;
  }
}

TEST(P2PMatching, SizeMismatchNamesBothNodes) {
  const auto traces = make_traces(2, [](int r) {
    if (r == 0) return std::vector<et::Node>{comp_node(1, 5), p2p_node(2, true, 1, 1024, 3, {1})};
    return std::vector<et::Node>{p2p_node(7, false, 0, 2048, 3)};
  });
  try {
    simulate(traces, ring8());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("size mismatch: rank 0 node 2 'send' (COMM_SEND to rank 1, tag 3, 1024 B) matched "
                                         "rank 1 node 7 'recv' (COMM_RECV from rank 0, tag 3, 2048 B)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sim
