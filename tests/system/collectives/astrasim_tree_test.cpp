// astrasimTree (ASTRA-sim's doubleBinaryTree) against its closed form on the
// analytical backend, exact in ps. Per chunk c (bytes m, t = m/B, path
// latency a, reduction red = 3 floor(m/R) ns, endpoint delay E), on the tree
// of chunk c (RootMax for even c, RootMin for odd c), with S(r) the time rank
// r starts the chunk (0 for chunk 0):
//   up(leaf)  = S + E                                  (its send enters the network)
//   up(node)  = max(S, max_k up(k) + a + t) + red + E  (node: interior or root)
//   D(child of p) = up(p) + a + t      (p the root)    the result arrives
//   D(child of p) = D(p) + red + E + a + t  (p interior)
//   leave(leaf) = D + E; leave(interior) = D + red + E; leave(root) = up(root)
//   S_{c+1}(r) = leave_c(r);  T = max_r leave_{k-1}(r).
// Chunks are serial per rank, but a rank leaves a chunk when its sends enter
// the network, not when they arrive.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "network/backend_registry.h"
#include "network/topology.h"
#include "system/registry/algorithm_registry.h"
#include "system/collectives/astrasim_tree.h"
#include "tests/system/collectives/astrasim_tree_form.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using testing::shape;
using testing::simulate_collective;
using Node = AstraSimTreeProgram::Node;
using testing::astrasim_tree_form;

TEST(AstraSimTree, AstraSimBinaryTreeShape) {
  // 8 ranks, RootMax: 7 -> 3; 3 -> 1, 5; 1 -> 0, 2; 5 -> 4, 6 (in-order numbering).
  EXPECT_EQ(AstraSimTreeProgram::tree_node(8, 7, false).parent, -1);
  EXPECT_EQ(AstraSimTreeProgram::tree_node(8, 7, false).child[0], 3);
  EXPECT_EQ(AstraSimTreeProgram::tree_node(8, 3, false).child[0], 1);
  EXPECT_EQ(AstraSimTreeProgram::tree_node(8, 3, false).child[1], 5);
  EXPECT_EQ(AstraSimTreeProgram::tree_node(8, 5, false).child[1], 6);
  EXPECT_EQ(AstraSimTreeProgram::tree_node(8, 6, false).parent, 5);
  // RootMin: 0 -> 4; 4 -> 2, 6; 2 -> 1, 3; 6 -> 5, 7.
  EXPECT_EQ(AstraSimTreeProgram::tree_node(8, 0, true).child[0], 4);
  EXPECT_EQ(AstraSimTreeProgram::tree_node(8, 4, true).child[0], 2);
  EXPECT_EQ(AstraSimTreeProgram::tree_node(8, 4, true).child[1], 6);
  EXPECT_EQ(AstraSimTreeProgram::tree_node(8, 7, true).parent, 6);
  // Every rank has a parent but the root, on any n.
  for (std::uint32_t n = 2; n <= 33; ++n) {
    for (bool min : {false, true}) {
      std::uint32_t roots = 0;
      for (std::uint32_t r = 0; r < n; ++r) {
        const Node nd = AstraSimTreeProgram::tree_node(n, r, min);
        roots += nd.parent < 0;
        for (std::int64_t c : nd.child) {
          if (c >= 0) {
            EXPECT_EQ(AstraSimTreeProgram::tree_node(n, static_cast<std::uint32_t>(c), min).parent, r);
          }
        }
      }
      EXPECT_EQ(roots, 1u) << n;
    }
  }
}

TEST(AstraSimTree, MatchesClosedFormWithAstraSimSettings) {
  // The closed form assumes no two messages share a link at once, as
  // ASTRA-sim's congestion-unaware backend does. Ours serializes a sender's
  // messages per egress link: exact with one chunk on FullyConnected and Ring
  // (an interior rank's two children lie on different links); with k chunks a
  // rank interior in chunk c is a leaf in chunk c+1 whose parent is the child
  // it just sent chunk c to, on the same link: its send waits t - E longer,
  // once per chunk boundary: + (k-1)(t - E) (n = 8, where it is on the critical path).
  const BytesPerSecond B = 50'000'000'000, R = 1'600'000'000'000;
  const Time E = 10 * kNanosecond, lat = 500 * kNanosecond;
  for (std::uint32_t k : {1u, 4u}) {
    for (std::uint32_t n : {2u, 5u, 8u, 13u, 16u}) {
      if (k > 1 && n != 8) continue;
      for (const char* topo_name : {"FullyConnected", "Ring"}) {
        for (std::uint64_t bytes : {std::uint64_t{65536}, std::uint64_t{1} << 24}) {
          SystemConfig cfg;
          cfg.algorithms[CollectiveType::kAllReduce] = "astrasimTree";
          cfg.dataset_splits = k;
          cfg.active_chunks = 1;
          cfg.endpoint_delay = E;
          cfg.local_reduction = R;
          const Topology topo = shape(topo_name, n);
          const auto res = simulate_collective(topo, CollectiveType::kAllReduce, bytes, cfg);
          const std::string tn = topo_name;
          const auto a = [&](std::uint32_t p, std::uint32_t q) -> Time {
            if (tn == "Ring") {
              const std::uint32_t d = p > q ? p - q : q - p;
              return static_cast<Time>(std::min(d, n - d)) * lat;
            }
            return lat;
          };
          const auto sizes = dataset_split_sizes(cfg, CollectiveType::kAllReduce, n, bytes);
          const Time serial = static_cast<Time>(k - 1) * (transfer_time(sizes[0], B) - E);
          EXPECT_EQ(res.makespan, astrasim_tree_form(n, sizes, E, R, B, a) + serial)
              << topo_name << " n=" << n << " k=" << k << " bytes=" << bytes;
          EXPECT_EQ(res.collectives[0].algorithm, "astrasimTree");
        }
      }
    }
  }
}

TEST(AstraSimTree, TwoDimensionalMatchesComposedClosedForm) {
  // ASTRA-sim's doubleBinaryTree on a 2-D grid (a per-dimension list in its
  // system JSON, localBWAware): three whole-chunk tree all-reduces per chunk
  // (dimension 0, 1, 0), the trees handed out in turn per dimension, one
  // phase per dimension at a time in arrival order (astrasim_tree_2d_form).
  // With ASTRA-sim's link model (egress: overlap, every message as if alone)
  // our run is that form exactly (ps), at every size, chunk count and shape.
  const BytesPerSecond R = 1'600'000'000'000;
  const Time E = 10 * kNanosecond, lat = 500 * kNanosecond;
  for (const auto& shape : std::vector<std::pair<std::uint32_t, std::uint32_t>>{{8, 8}, {4, 8}, {8, 4}, {3, 5}}) {
    const std::uint32_t n0 = shape.first, n1 = shape.second;  // named, not bound: the lambda below captures them
    const Topology topo = parse_topology("topology: [Ring, Ring]\nnpus_count: [" + std::to_string(n0) + ", " +
                                             std::to_string(n1) + "]\nbandwidth: [50, 50]\nlatency: [500, 500]\n",
                                         "test-ring-ring");
    const BytesPerSecond B = 50'000'000'000;
    const auto a = [&](std::uint32_t p, std::uint32_t q) -> Time {
      // Within a line of one dimension: ring distance x latency.
      const bool same_row = p / n0 == q / n0;
      const std::uint32_t n = same_row ? n0 : n1;
      const std::uint32_t x = same_row ? p % n0 : p / n0, y = same_row ? q % n0 : q / n0;
      const std::uint32_t d = x > y ? x - y : y - x;
      return static_cast<Time>(std::min(d, n - d)) * lat;
    };
    for (std::uint32_t k : {1u, 4u}) {
      for (std::uint64_t bytes : {std::uint64_t{4096}, std::uint64_t{65536}, std::uint64_t{1} << 20,
                                  std::uint64_t{1} << 24, std::uint64_t{1} << 26}) {
        SystemConfig cfg;
        cfg.algorithms[CollectiveType::kAllReduce] = "hierarchical:chunks=" + std::to_string(k) +
                                                     ",active_chunks=1,dimension_queue=1,doubleBinaryTree,"
                                                     "doubleBinaryTree";
        cfg.astrasim_quirks = true;
        cfg.endpoint_delay = E;
        cfg.local_reduction = R;
        cfg.network.options["egress"] = OptionValue{"overlap", "test"};
        const auto res = simulate_collective(topo, CollectiveType::kAllReduce, bytes, cfg);
        const std::vector<std::uint64_t> sizes(k, bytes / k);
        EXPECT_EQ(res.makespan, testing::astrasim_tree_2d_form(n0, n1, sizes, E, R, B, a))
            << n0 << "x" << n1 << " k=" << k << " bytes=" << bytes;
        EXPECT_EQ(res.collectives[0].algorithm, "hierarchical(astrasimTree,astrasimTree;localBWAware;dimension_queue)");
      }
    }
  }
}

TEST(AstraSimTree, DoubleBinaryTreeRunsAsAstraSimTreeWithQuirks) {
  SystemConfig cfg;
  cfg.algorithms[CollectiveType::kAllReduce] = "doubleBinaryTree";
  const Topology topo = shape("Switch", 8);
  EXPECT_EQ(simulate_collective(topo, CollectiveType::kAllReduce, 1 << 20, cfg).collectives[0].algorithm,
            "doubleBinaryTree");
  cfg.astrasim_quirks = true;
  EXPECT_EQ(simulate_collective(topo, CollectiveType::kAllReduce, 1 << 20, cfg).collectives[0].algorithm,
            "astrasimTree");
}

}  // namespace
}  // namespace sim
