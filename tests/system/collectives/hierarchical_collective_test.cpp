// Hierarchical (multi-dimensional) collectives: topology dimensions, choice
// syntax, closed forms on contention-free cases, the data check on grids,
// injected-as-ET equals native, sub-communicators, tree per dimension.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <memory>

#include "core/error.h"
#include "system/registry/algorithm_registry.h"
#include "system/registry/collective_checker.h"
#include "system/registry/collective_tools.h"
#include "system/program/collective_writer.h"
#include "system/collectives/hierarchical.h"
#include "system/config/system_config.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

namespace fs = std::filesystem;
using testing::kBw;
using testing::kLat;
using testing::ring_phase;
using testing::simulate_collective;

Topology torus(const std::string& dims, const std::string& shape = "Torus") {
  return parse_topology("shape: " + shape + "\ndims: [" + dims + "]\nbandwidth: 50GB/s\nlatency: 500ns\n", "test");
}

Topology ring_ring(std::uint32_t a, std::uint32_t b) {
  return parse_topology("topology: [Ring, Ring]\nnpus_count: [" + std::to_string(a) + ", " + std::to_string(b) +
                            "]\nbandwidth: [50, 50]\nlatency: [500, 500]\n",
                        "test-astra");
}

TEST(TopologyDimensions, EveryFormDescribesItsDimensions) {
  const Topology a = parse_topology(
      "topology: [Ring, FullyConnected, Switch]\nnpus_count: [4, 2, 3]\nbandwidth: [50, 25, 12.5]\n"
      "latency: [500, 700, 900]\n",
      "astra");
  ASSERT_EQ(a.dimensions().size(), 3u);
  EXPECT_EQ(a.dimensions()[0].kind, DimensionKind::kRing);
  EXPECT_EQ(a.dimensions()[1].kind, DimensionKind::kFullyConnected);
  EXPECT_EQ(a.dimensions()[2].kind, DimensionKind::kSwitch);
  EXPECT_EQ(a.dimensions()[1].size, 2u);
  EXPECT_EQ(a.dimensions()[2].latency, 900 * kNanosecond);
  EXPECT_EQ(a.dimensions()[0].bandwidth, kBw);  // bare numbers are GB/s (1e9 B/s) unless bandwidth_unit says GiB/s
  EXPECT_EQ(a.dims(), (std::vector<std::uint32_t>{4, 2, 3}));

  const Topology t = torus("4, 4, 4");
  ASSERT_EQ(t.dimensions().size(), 3u);
  for (const TopologyDimension& d : t.dimensions()) {
    EXPECT_EQ(d.kind, DimensionKind::kRing);
    EXPECT_EQ(d.size, 4u);
    EXPECT_EQ(d.bandwidth, kBw);
    EXPECT_EQ(d.latency, kLat);
  }
  EXPECT_EQ(torus("4, 2", "Mesh").dimensions()[1].kind, DimensionKind::kLine);
  const Topology h = parse_topology("shape: Hypercube\nnpus: 8\nbandwidth: 50GB/s\nlatency: 500ns\n", "h");
  ASSERT_EQ(h.dimensions().size(), 3u);
  EXPECT_EQ(h.dimensions()[2].kind, DimensionKind::kLine);
  EXPECT_EQ(h.dimensions()[2].size, 2u);
  EXPECT_EQ(testing::shape("Switch", 8).dimensions()[0].kind, DimensionKind::kSwitch);
  EXPECT_EQ(testing::shape("FullyConnected", 8).dimensions()[0].kind, DimensionKind::kFullyConnected);

  const Topology f = parse_topology(
      "shape: FatTree\nleaves: 4\nnpus_per_leaf: 8\nspines: 2\nbandwidth: 50GB/s\nlatency: 500ns\n", "ft");
  ASSERT_EQ(f.dimensions().size(), 2u);
  EXPECT_EQ(f.dimensions()[0].kind, DimensionKind::kSwitch);
  EXPECT_EQ(f.dimensions()[0].size, 8u);
  EXPECT_EQ(f.dimensions()[1].kind, DimensionKind::kOther);
  EXPECT_EQ(f.dimensions()[1].size, 4u);

  const Topology g = parse_topology("npus: 3\nlinks:\n  - {src: 0, dst: 1, bandwidth: 50GB/s, latency: 500ns}\n"
                                    "  - {src: 1, dst: 2, bandwidth: 50GB/s, latency: 500ns}\n",
                                    "graph");
  ASSERT_EQ(g.dimensions().size(), 1u);
  EXPECT_EQ(g.dimensions()[0].kind, DimensionKind::kOther);
  EXPECT_EQ(g.dimensions()[0].size, 3u);
}

TEST(HierarchicalChoice, SyntaxListsHeadsAndParameters) {
  using T = CollectiveType;
  AlgorithmChoice c = parse_algorithm_choice("ring,direct:window=4,chunks=2,halvingDoubling", T::kAllReduce);
  ASSERT_TRUE(c.hierarchical);
  ASSERT_EQ(c.dims.size(), 3u);
  EXPECT_EQ(c.dims[0].native->name, "ring");
  EXPECT_EQ(c.dims[1].native->name, "direct");
  EXPECT_EQ(c.dims[1].params.at("window"), 4u);
  EXPECT_EQ(c.dims[1].params.at("chunks"), 2u);
  EXPECT_EQ(c.dims[2].native->name, "halvingDoubling");

  c = parse_algorithm_choice("hierarchical:optimization=baseline,active_chunks=1,ring,direct", T::kAllReduce);
  ASSERT_TRUE(c.hierarchical);
  EXPECT_EQ(c.params.at("optimization"), 0u);
  EXPECT_EQ(c.params.at("active_chunks"), 1u);
  ASSERT_EQ(c.dims.size(), 2u);

  c = parse_algorithm_choice("hierarchical:ring,direct", T::kAllGather);
  ASSERT_EQ(c.dims.size(), 2u);
  EXPECT_EQ(c.dims[0].native->name, "ring");

  c = parse_algorithm_choice("hierarchical", T::kReduceScatter);
  EXPECT_TRUE(c.hierarchical);
  EXPECT_TRUE(c.dims.empty());

  c = parse_algorithm_choice("direct:window=4,chunks=2", T::kAllReduce);  // one algorithm is not hierarchical
  EXPECT_FALSE(c.hierarchical);
  EXPECT_EQ(c.params.at("chunks"), 2u);

  EXPECT_TRUE(names_native_algorithm("ring,direct"));
  EXPECT_TRUE(names_native_algorithm("hierarchical"));
  EXPECT_THROW(parse_algorithm_choice("ring,doubleBinaryTree", T::kReduceScatter), InputError);
  EXPECT_THROW(parse_algorithm_choice("ring,nope", T::kAllReduce), InputError);
  EXPECT_THROW(parse_algorithm_choice("hierarchical:optimization=fast,ring", T::kAllReduce), InputError);
  EXPECT_THROW(parse_algorithm_choice("ring,binaryTree", T::kReduce), InputError);

  const SystemConfig cfg = parse_system_config(
      "collective:\n  optimization: baseline\n  active_chunks_per_dimension: 1\n  algorithms:\n"
      "    all_reduce: [ring, direct, halvingDoubling]\n    all_gather: [direct]\n",
      "sys.yml");
  EXPECT_EQ(cfg.collective_optimization, "baseline");
  EXPECT_EQ(cfg.active_chunks_per_dimension, 1u);
  EXPECT_EQ(cfg.algorithms.at(T::kAllReduce), "ring,direct,halvingDoubling");
  EXPECT_TRUE(parse_algorithm_choice(cfg.algorithms.at(T::kAllGather), T::kAllGather).hierarchical);
  EXPECT_THROW(parse_system_config("collective:\n  optimization: fast\n", "s"), InputError);
  EXPECT_THROW(parse_system_config("collective:\n  active_chunks_per_dimension: -1\n", "s"), InputError);
}

TEST(HierarchicalCollective, PhasesFollowAstraSimOrder) {
  std::uint32_t k = 1;
  const auto ar = std::dynamic_pointer_cast<const HierarchicalProgram>(
      native_program("ring", CollectiveType::kAllReduce, 64, k, 1 << 20, {4, 4, 4}));
  EXPECT_EQ(ar, nullptr);  // one name: flat
  const auto h = std::dynamic_pointer_cast<const HierarchicalProgram>(
      native_program("hierarchical", CollectiveType::kAllReduce, 64, k, 1 << 20, {4, 4, 4}));
  ASSERT_NE(h, nullptr);
  using T = CollectiveType;
  const auto phases = h->phase_list();
  ASSERT_EQ(phases.size(), 5u);
  const std::pair<std::uint32_t, T> want[] = {{0, T::kReduceScatter}, {1, T::kReduceScatter}, {2, T::kAllReduce},
                                              {1, T::kAllGather},     {0, T::kAllGather}};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(phases[i].dim, want[i].first);
    EXPECT_EQ(phases[i].type, want[i].second);
  }
  const auto ag = std::dynamic_pointer_cast<const HierarchicalProgram>(
      native_program("hierarchical", T::kAllGather, 64, k, 1 << 20, {4, 4, 4}));
  ASSERT_NE(ag, nullptr);
  EXPECT_EQ(ag->phase_list().front().dim, 2u);  // all-gather walks the dimensions in reverse
  // A dimension without reduce-scatter (the double binary tree) all-reduces in place.
  const auto t = std::dynamic_pointer_cast<const HierarchicalProgram>(
      native_program("doubleBinaryTree,ring,doubleBinaryTree", T::kAllReduce, 64, k, 1 << 20, {4, 4, 4}));
  ASSERT_NE(t, nullptr);
  const auto tp = t->phase_list();
  ASSERT_EQ(tp.size(), 4u);
  EXPECT_EQ(tp[0].type, T::kAllReduce);
  EXPECT_EQ(tp[1].type, T::kReduceScatter);
  EXPECT_EQ(tp[3].type, T::kAllGather);
}

// Ring per dimension on an ASTRA-sim Ring_Ring 4x4, one chunk: the phases run
// back to back, each the ring's closed form on its data.
TEST(HierarchicalCollective, RingPerDimensionMatchesClosedFormsOnRingRing4x4) {
  const Topology topo = ring_ring(4, 4);
  const std::uint64_t S = 1 << 20;
  SystemConfig cfg;
  cfg.algorithms[CollectiveType::kAllReduce] = "ring,ring";
  // localBWAware: RS dim 0 (3 steps of S/4), AR dim 1 on S/4 (6 steps of S/16), AG dim 0 (3 steps of S/4).
  auto r = simulate_collective(topo, CollectiveType::kAllReduce, S, cfg);
  EXPECT_EQ(r.makespan, ring_phase(3, S / 4) + ring_phase(6, S / 16) + ring_phase(3, S / 4));
  EXPECT_EQ(r.collectives[0].algorithm, "hierarchical(ring,ring;localBWAware)");
  // baseline: an all-reduce of S on each dimension (6 steps of S/4 each).
  cfg.collective_optimization = "baseline";
  r = simulate_collective(topo, CollectiveType::kAllReduce, S, cfg);
  EXPECT_EQ(r.makespan, 2 * ring_phase(6, S / 4));
  // Reduce-scatter: dim 0 on S, dim 1 on S/4; all-gather: dim 1 on S, dim 0 on 4S; all-to-all: S on each.
  cfg.algorithms[CollectiveType::kReduceScatter] = "ring,ring";
  cfg.algorithms[CollectiveType::kAllGather] = "ring,ring";
  cfg.algorithms[CollectiveType::kAllToAll] = "ring,ring";
  EXPECT_EQ(simulate_collective(topo, CollectiveType::kReduceScatter, S, cfg).makespan,
            ring_phase(3, S / 4) + ring_phase(3, S / 16));
  EXPECT_EQ(simulate_collective(topo, CollectiveType::kAllGather, S, cfg).makespan,
            ring_phase(3, S) + ring_phase(3, 4 * S));
  Time a2a = 0;
  for (std::uint32_t j = 1; j < 4; ++j) a2a += kLat + transfer_time(j * S / 4, kBw);
  EXPECT_EQ(simulate_collective(topo, CollectiveType::kAllToAll, S, cfg).makespan, 2 * a2a);
  // 3-D: 2x4x8 localBWAware, RS 0, RS 1, AR 2, AG 1, AG 0.
  const Topology t3 = parse_topology(
      "topology: [Ring, Ring, Ring]\nnpus_count: [2, 4, 8]\nbandwidth: [50, 50, 50]\nlatency: [500, 500, 500]\n", "t3");
  cfg = {};
  cfg.algorithms[CollectiveType::kAllReduce] = "hierarchical,ring";  // a list of one: every dimension
  const std::uint64_t S3 = 1 << 22;
  EXPECT_EQ(simulate_collective(t3, CollectiveType::kAllReduce, S3, cfg).makespan,
            2 * ring_phase(1, S3 / 2) + 2 * ring_phase(3, S3 / 8) + ring_phase(14, S3 / 64));
}

// With k chunks and one chunk per phase at a time, phases on different
// dimensions form a flow shop: T = A + B + (k-1) max(A, B).
TEST(HierarchicalCollective, ChunksPipelineAcrossDimensions) {
  const Topology topo = ring_ring(4, 8);
  const std::uint64_t S = 1 << 22;
  for (std::uint32_t k : {1u, 2u, 4u}) {
    SystemConfig cfg;
    cfg.collective_chunks = k;
    cfg.active_chunks_per_dimension = 1;
    cfg.algorithms[CollectiveType::kReduceScatter] = "ring,ring";
    cfg.algorithms[CollectiveType::kAllGather] = "ring,ring";
    const std::uint64_t x = S / k;
    Time a = ring_phase(3, x / 4), b = ring_phase(7, x / 32);
    EXPECT_EQ(simulate_collective(topo, CollectiveType::kReduceScatter, S, cfg).makespan,
              a + b + (k - 1) * std::max(a, b))
        << "k=" << k;
    a = ring_phase(7, x), b = ring_phase(3, 8 * x);  // all-gather: dim 1 first, then dim 0
    EXPECT_EQ(simulate_collective(topo, CollectiveType::kAllGather, S, cfg).makespan,
              a + b + (k - 1) * std::max(a, b))
        << "k=" << k;
  }
  // Without the limit, chunks also overlap within a phase; the reduce-scatter
  // and all-gather of different chunks then share dimension 0's egress ports,
  // so it is not always faster (here 133.8 us against 131.3 us with one at a time).
  SystemConfig one, all;
  one.collective_chunks = all.collective_chunks = 4;
  one.active_chunks_per_dimension = 1;
  one.algorithms[CollectiveType::kAllReduce] = all.algorithms[CollectiveType::kAllReduce] = "ring,ring";
  EXPECT_EQ(simulate_collective(topo, CollectiveType::kAllReduce, S, all).makespan, 133'761'280);
  EXPECT_EQ(simulate_collective(topo, CollectiveType::kAllReduce, S, one).makespan, 131'329'120);
}

TEST(HierarchicalCollective, DimensionQueueServesEachDimensionInOneOrder) {
  // ASTRA-sim's queue per dimension: dimension 0 of a 2-D all-reduce serves
  // all chunks' reduce-scatters, then their all-gathers; the reduce-scatter of
  // one chunk no longer overlaps the all-gather of another there.
  const Topology topo = ring_ring(8, 8);
  const std::uint64_t S = 1 << 24;
  SystemConfig cfg;
  cfg.collective_chunks = 4;
  cfg.active_chunks_per_dimension = 1;
  cfg.algorithms[CollectiveType::kAllReduce] = "ring,ring";
  const Time per_phase = simulate_collective(topo, CollectiveType::kAllReduce, S, cfg).makespan;
  cfg.dimension_queue = true;
  const Time per_dim = simulate_collective(topo, CollectiveType::kAllReduce, S, cfg).makespan;
  // Dimension 0 carries 4 reduce-scatters of S/4 and 4 all-gathers back to S/4, one at a time.
  const Time dim0 = 4 * (ring_phase(7, S / 32) + ring_phase(7, S / 32));
  EXPECT_GE(per_dim, dim0);
  EXPECT_LT(per_dim, dim0 + ring_phase(14, S / 256) + ring_phase(7, S / 32));
  EXPECT_GT(per_dim, per_phase);

  const std::vector<HierarchicalDimension> dims = [] {
    std::vector<HierarchicalDimension> d(3);
    for (auto& x : d) {
      x.size = 4;
      x.name = "ring";
      x.rs_shift = 1;
      const NativeAlgorithm* ring = find_native_algorithm("ring");
      x.supports = [ring](CollectiveType t) { return ring->supports(t); };
      x.make = [ring](CollectiveType t, std::uint32_t n, std::uint64_t b, std::uint32_t) { return make_native_program(*ring, {}, t, n, b, 1); };
    }
    return d;
  }();
  std::vector<std::uint32_t> grid(64);
  for (std::uint32_t i = 0; i < 64; ++i) grid[i] = i;
  const HierarchicalProgram p(CollectiveType::kAllReduce, 1 << 24, 4, 1, HierarchicalOptimization::kLocalBWAware, dims,
                              grid, true);
  const auto seq = p.dimension_sequences();
  ASSERT_EQ(seq.size(), 3u);
  // Phases RS0 RS1 AR2 AG1 AG0: dimension 0 runs the 4 reduce-scatters, then the 4 all-gathers;
  // dimension 1 interleaves (its all-gather of chunk c arrives before the reduce-scatter of c + 1).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> d0, d1;
  for (std::uint32_t c = 0; c < 4; ++c) d0.emplace_back(c, 0);
  for (std::uint32_t c = 0; c < 4; ++c) d0.emplace_back(c, 4);
  for (std::uint32_t c = 0; c < 4; ++c) {
    d1.emplace_back(c, 1);
    d1.emplace_back(c, 3);
  }
  EXPECT_EQ(seq[0], d0);
  EXPECT_EQ(seq[1], d1);
  EXPECT_EQ(p.name(), "hierarchical(ring,ring,ring;localBWAware;dimension_queue)");
}

AlgorithmCheck check_program(const std::string& algorithm, CollectiveType type, std::uint32_t chunks,
                             std::uint64_t bytes, const std::vector<std::uint32_t>& dims) {
  std::uint32_t n = 1;
  for (std::uint32_t d : dims) n *= d;
  const auto program = native_program(algorithm, type, n, chunks, bytes, dims);
  auto algo = std::make_shared<const EtAlgorithm>(program_algorithm(*program, normalized(type), bytes));
  return check_et_algorithm(algo, true, bytes);
}

TEST(HierarchicalCollective, DataCheckPassesOnGrids) {
  using T = CollectiveType;
  const std::vector<std::vector<std::uint32_t>> grids = {{2, 3}, {4, 4}, {2, 2, 2}, {3, 2, 5}, {4, 4, 4}};
  const char* lists[] = {"hierarchical",
                         "hierarchical:optimization=baseline",
                         "direct",
                         "halvingDoubling",
                         "hierarchical:active_chunks=1",
                         "hierarchical:active_chunks=2,halvingDoubling,direct:window=1",
                         "hierarchical:active_chunks=1,dimension_queue=1",
                         "hierarchical:active_chunks=2,dimension_queue=1,optimization=baseline"};
  const std::uint64_t bytes = (1 << 20) + 7;  // uneven everywhere
  for (const auto& grid : grids) {
    for (const char* list : lists) {
      std::string algorithm = list;
      // A per-dimension list must match the grid's dimension count; a list of one applies to all.
      if (algorithm.find(",halvingDoubling,direct") != std::string::npos && grid.size() != 2) continue;
      if (algorithm.rfind("hierarchical", 0) != 0) algorithm = "hierarchical," + algorithm;
      for (T type : {T::kAllReduce, T::kReduceScatter}) {
        for (std::uint32_t k : {1u, 3u}) {
          SCOPED_TRACE(algorithm + " " + collective_name(type) + " k=" + std::to_string(k) + " grid " +
                       std::to_string(grid.size()) + "-D, " + std::to_string(grid[0]) + "x" + std::to_string(grid[1]));
          AlgorithmCheck c;
          try {
            c = check_program(algorithm, type, k, bytes, grid);
          } catch (const SimError& e) {
            FAIL() << e.what();
          }
          EXPECT_TRUE(c.data_checked) << c.data_note;
          EXPECT_EQ(c.data_note.rfind("data check passed", 0), 0u) << c.data_note;
        }
      }
      // All-gather and all-to-all: structure only (their blocks land in another order than the checker models).
      for (T type : {T::kAllGather, T::kAllToAll}) {
        if (type == T::kAllToAll && algorithm.find("halvingDoubling") != std::string::npos) continue;
        std::uint32_t k = 2;
        EXPECT_NO_THROW(check_program(algorithm, type, k, bytes, grid)) << algorithm << collective_name(type);
      }
    }
  }
  // The double binary tree per dimension (all-reduce only): in place on every dimension.
  for (const auto& grid : grids) {
    const AlgorithmCheck c = check_program("hierarchical,doubleBinaryTree", T::kAllReduce, 2, bytes, grid);
    EXPECT_EQ(c.data_note.rfind("data check passed", 0), 0u) << c.data_note;
  }
  const AlgorithmCheck mixed = check_program("doubleBinaryTree,ring,halvingDoubling", T::kAllReduce, 2, bytes, {2, 3, 4});
  EXPECT_EQ(mixed.data_note.rfind("data check passed", 0), 0u) << mixed.data_note;
}

TEST(HierarchicalCollective, InjectedAsEtsEqualsNative) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("sim_hier_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Topology topo = ring_ring(4, 4);
  using T = CollectiveType;
  for (const char* algorithm : {"ring,direct", "halvingDoubling,ring"}) {
    for (T type : {T::kAllReduce, T::kReduceScatter}) {
      for (std::uint32_t k : {1u, 3u}) {
        const std::uint64_t written = 1 << 20;
        const std::string prefix = (dir / ("h" + std::to_string(static_cast<int>(type)) + "_" + std::to_string(k) +
                                           (algorithm[0] == 'r' ? "r" : "h")))
                                       .string();
        std::uint32_t chunks = k;
        const auto program = native_program(algorithm, type, 16, chunks, written, {4, 4});
        write_rank_ets(program_ets(*program, type, written, k), prefix);
        for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{1'000'003}}) {
          SystemConfig native;
          native.collective_chunks = k;
          native.algorithms[type] = algorithm;
          native.aggregation = false;  // the same messages, event for event (aggregation saves events)
          SystemConfig injected = native;
          injected.algorithms[type] = prefix;
          const auto x = simulate_collective(topo, type, bytes, native);
          const auto y = simulate_collective(topo, type, bytes, injected);
          EXPECT_EQ(x.makespan, y.makespan) << algorithm << " " << collective_name(type) << " k=" << k << " " << bytes;
          EXPECT_EQ(x.events, y.events);
        }
      }
    }
  }
  fs::remove_all(dir);
}

// A communicator on one row (dimension 0) or one column (dimension 1) of a
// 2-D torus runs on that dimension alone: the flat ring's closed form, and
// only that dimension's links carry bytes.
TEST(HierarchicalCollective, SubCommunicatorUsesOnlyItsDimension) {
  const Topology topo = torus("8, 8");
  const std::uint64_t S = 1 << 20;
  for (int column = 0; column < 2; ++column) {
    std::vector<std::uint32_t> members;
    for (std::uint32_t i = 0; i < 8; ++i) members.push_back(column ? 3 + 8 * i : 16 + i);
    const auto traces = testing::make_traces(64, [&](int r) {
      std::vector<et::Node> nodes;
      if (std::find(members.begin(), members.end(), static_cast<std::uint32_t>(r)) != members.end()) {
        et::Node n = testing::coll_node(1, CollectiveType::kAllReduce, S);
        set_attr_string(n, "pg_name", "g");
        nodes.push_back(n);
      }
      return nodes;
    });
    SystemConfig cfg;
    cfg.algorithms[CollectiveType::kAllReduce] = "ring,direct";
    SimulationOptions opts;
    opts.comm_groups["g"] = members;
    const auto r = testing::simulate(traces, topo, cfg, opts);
    const Time want = column ? 0 : ring_phase(14, S / 8);
    if (!column) {
      EXPECT_EQ(r.makespan, want);  // a row: ring on dimension 0
    } else {
      // A column: direct all-reduce on dimension 1 (reduce-scatter then all-gather, S/8 to each peer).
      EXPECT_GT(r.makespan, 0);
    }
    EXPECT_EQ(r.collectives[0].algorithm, column ? "hierarchical(direct;localBWAware)" : "hierarchical(ring;localBWAware)");
    for (const LinkRecord& l : r.links) {
      const bool along_dim0 = l.from / 8 == l.to / 8;
      if (l.usage.bytes == 0) continue;
      EXPECT_EQ(along_dim0, !column) << l.from << " -> " << l.to;
    }
  }
}

TEST(HierarchicalCollective, DoubleBinaryTreePerDimensionOn4x4x4TorusCompletes) {
  const Topology topo = torus("4, 4, 4");
  for (const char* list : {"hierarchical,doubleBinaryTree", "doubleBinaryTree,ring,doubleBinaryTree"}) {
    for (const char* opt : {"localBWAware", "baseline"}) {
      SystemConfig cfg;
      cfg.collective_chunks = 4;
      cfg.collective_optimization = opt;
      cfg.active_chunks_per_dimension = 1;
      cfg.algorithms[CollectiveType::kAllReduce] = list;
      const auto r = simulate_collective(topo, CollectiveType::kAllReduce, 1 << 24, cfg);
      EXPECT_GT(r.makespan, 0);
      EXPECT_EQ(r.collectives.size(), 64u);
    }
  }
}

TEST(HierarchicalCollective, WrongListLengthIsAnError) {
  const Topology topo = torus("4, 4, 4");
  SystemConfig cfg;
  cfg.algorithms[CollectiveType::kAllReduce] = "ring,direct";
  EXPECT_THROW(simulate_collective(topo, CollectiveType::kAllReduce, 1 << 20, cfg), InputError);
}

}  // namespace
}  // namespace sim
