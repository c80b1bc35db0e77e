// Collectives injected as Chakra ETs (--collective) run on the same executor
// as native ones: the ring written by `sim collective gen` must give exactly
// the native ring's simulated time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "system/collectives/ring.h"
#include "core/error.h"
#include "system/registry/algorithm_registry.h"
#include "system/registry/collective_tools.h"
#include "system/program/collective_writer.h"
#include "system/program/et_algorithm.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;
namespace fs = std::filesystem;

class Injected : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("sim_inj_" + std::to_string(::getpid()) + "_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_ring(CollectiveType type, std::uint32_t n, std::uint32_t chunks, std::uint64_t bytes) {
    const std::string prefix = (dir_ / ("ring_" + std::to_string(static_cast<int>(type)) + "_" +
                                        std::to_string(n) + "_" + std::to_string(chunks)))
                                   .string();
    write_rank_ets(ring_algorithm_ets(type, n, chunks, bytes), prefix);
    return prefix;
  }
  fs::path dir_;
};

// Every native algorithm, every type it implements: its ETs run exactly as
// the native program (same makespan, same event count), at the written size
// and at other sizes (uneven ones included where chunk ranges make them exact).
TEST_F(Injected, EveryNativeAlgorithmWrittenAsEtsEqualsNative) {
  const char* algorithms[] = {"direct", "direct:window=2", "halvingDoubling", "doubleBinaryTree", "binaryTree"};
  for (const char* algorithm : algorithms) {
    const NativeAlgorithm* a = find_native_algorithm(std::string(algorithm).substr(0, std::string(algorithm).find(':')));
    ASSERT_NE(a, nullptr);
    for (const char* topo_name : {"Switch", "FullyConnected"}) {
      for (std::uint32_t n : {2u, 5u, 8u}) {
        const Topology topo = shape(topo_name, n);
        for (CollectiveType type : a->types) {
          for (std::uint32_t chunks : {1u, 3u}) {
            const bool exact_only = type == CollectiveType::kAllToAll || type == CollectiveType::kBarrier;
            const std::uint64_t written = exact_only ? n * chunks * 65536 : 1 << 20;
            const std::string prefix =
                (dir_ / (std::string(a->name) + "_" + std::to_string(static_cast<int>(type)) + "_" +
                         std::to_string(n) + "_" + std::to_string(chunks)))
                    .string();
            write_rank_ets(native_algorithm_ets(algorithm, type, n, chunks, written), prefix);
            for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{1'000'003}, std::uint64_t{n} * chunks * 3000}) {
              if (exact_only && bytes % (n * chunks) != 0) continue;
              SystemConfig native;
              native.collective_chunks = chunks;
              native.algorithms[type] = algorithm;
              native.aggregation = false;  // the same messages, event for event (aggregation saves events)
              SystemConfig injected = native;
              injected.algorithms[type] = prefix;
              const auto x = simulate_collective(topo, type, bytes, native);
              const auto y = simulate_collective(topo, type, bytes, injected);
              ASSERT_EQ(y.collectives[0].algorithm, "et:" + prefix);
              EXPECT_EQ(x.makespan, y.makespan) << algorithm << " " << topo_name << " n=" << n << " "
                                                << collective_name(type) << " chunks=" << chunks << " bytes=" << bytes;
              EXPECT_EQ(x.events, y.events);
            }
          }
        }
      }
    }
  }
}

TEST_F(Injected, GeneratedRingEqualsNativeRingExactly) {
  const char* topologies[] = {"Switch", "Ring", "FullyConnected"};
  const CollectiveType types[] = {CollectiveType::kAllReduce, CollectiveType::kReduceScatter,
                                  CollectiveType::kAllGather, CollectiveType::kAllToAll};
  for (const char* topo_name : topologies) {
    for (std::uint32_t n : {2u, 5u, 8u}) {
      const Topology topo = shape(topo_name, n);
      for (CollectiveType type : types) {
        for (std::uint32_t chunks : {1u, 3u}) {
          // Written for 1 MiB; run at other sizes, uneven ones included (not for
          // all-to-all, whose ETs rescale comm_size and are exact only on even splits).
          // All-to-all ETs carry no chunk indices: they rescale comm_size, exact when
          // both the written and the run size split evenly into n * chunks parts.
          const std::uint64_t written = type == CollectiveType::kAllToAll ? n * chunks * 65536 : 1 << 20;
          const std::string prefix = write_ring(type, n, chunks, written);
          for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{40} << 20, std::uint64_t{1'000'003},
                                      std::uint64_t{n} * chunks * 3000}) {
            if (type == CollectiveType::kAllToAll && bytes % (n * chunks) != 0) continue;
            SystemConfig native;
            native.collective_chunks = chunks;
            native.aggregation = false;  // the same messages, event for event (aggregation saves events)
            SystemConfig injected = native;
            injected.algorithms[type] = prefix;
            const auto a = simulate_collective(topo, type, bytes, native);
            const auto b = simulate_collective(topo, type, bytes, injected);
            ASSERT_EQ(b.collectives[0].algorithm, "et:" + prefix);
            EXPECT_EQ(a.makespan, b.makespan) << topo_name << " n=" << n << " " << collective_name(type)
                                              << " chunks=" << chunks << " bytes=" << bytes;
            EXPECT_EQ(a.events, b.events);
          }
        }
      }
    }
  }
}

// The ring's ETs say their parts are padded to one size (GlobalMetadata
// chunk_sizes "equal"), which is what makes them match the native ring at
// sizes that do not divide (above); a value the reader does not know is an
// error naming the file, not a silent near-equal cut.
TEST_F(Injected, RingEtsSayTheirPartsArePadded) {
  std::vector<EtTrace> traces = ring_algorithm_ets(CollectiveType::kAllReduce, 4, 1, 1 << 20);
  EXPECT_TRUE(et_algorithm_from_traces(traces, "mem", std::nullopt).equal_parts);
  for (const char* value : {"cut", "padded"}) {
    for (EtTrace& t : traces) {
      for (et::AttributeProto& a : *t.metadata.mutable_attr()) {
        if (a.name() == "chunk_sizes") a.set_string_val(value);
      }
    }
    if (std::string(value) == "cut") {
      EXPECT_FALSE(et_algorithm_from_traces(traces, "mem", std::nullopt).equal_parts);
      continue;
    }
    try {
      et_algorithm_from_traces(traces, "mem", std::nullopt);
      ADD_FAILURE() << "chunk_sizes 'padded' accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("metadata 'chunk_sizes' is 'padded'; expected 'equal' or 'cut'"),
                std::string::npos)
          << e.what();
    }
  }
}

// What padding costs: the same ring ETs read with chunk_sizes "cut" run the
// near-equal parts (a byte apart) the native ring used before it padded them.
// Each piece travels its own chain of steps, so the largest part, ceil(S/P),
// paced the ring then as now: the makespans differ by at most one byte's
// transfer (20 ps at 50 GB/s, plus a picosecond of rounding) per step and chunk.
TEST_F(Injected, PaddedPartsCostAtMostAByteTimePerStep) {
  for (std::uint32_t n : {5u, 8u}) {
    for (CollectiveType type : {CollectiveType::kAllReduce, CollectiveType::kReduceScatter}) {
      for (std::uint32_t chunks : {1u, 3u}) {
        std::vector<EtTrace> traces = ring_algorithm_ets(type, n, chunks, 1 << 20);
        for (EtTrace& t : traces) {
          for (et::AttributeProto& a : *t.metadata.mutable_attr()) {
            if (a.name() == "chunk_sizes") a.set_string_val("cut");
          }
        }
        const std::string prefix = (dir_ / ("cut_" + std::to_string(n) + "_" + std::to_string(static_cast<int>(type)) +
                                            "_" + std::to_string(chunks)))
                                       .string();
        write_rank_ets(traces, prefix);
        for (std::uint64_t bytes : {std::uint64_t{1'000'003}, (std::uint64_t{40} << 20) + 3}) {
          SystemConfig native;
          native.collective_chunks = chunks;
          SystemConfig cut = native;
          cut.algorithms[type] = prefix;
          const Topology topo = shape("Switch", n);
          const Time padded = simulate_collective(topo, type, bytes, native).makespan;
          const Time near_equal = simulate_collective(topo, type, bytes, cut).makespan;
          const Time steps = type == CollectiveType::kAllReduce ? 2 * (n - 1) : n - 1;
          EXPECT_GE(padded, near_equal);
          EXPECT_LE(padded - near_equal, steps * chunks * (transfer_time(1, 50'000'000'000) + 1))
              << "n=" << n << " " << collective_name(type) << " k=" << chunks << " bytes=" << bytes;
        }
      }
    }
  }
}

TEST_F(Injected, WithReductionCostToo) {
  SystemConfig native;
  native.reduction_bandwidth = 200'000'000'000;
  native.reduction_latency = 50 * kNanosecond;
  native.collective_chunks = 2;
  SystemConfig injected = native;
  injected.algorithms[CollectiveType::kAllReduce] = write_ring(CollectiveType::kAllReduce, 8, 2, 1 << 20);
  const Topology topo = load_topology(source_dir() + "/configs/torus8x8.yml");
  const auto traces = make_traces(8, [](int) { return std::vector<et::Node>{coll_node(1, CollectiveType::kAllReduce, 3 << 20)}; });
  const Topology sw = shape("Switch", 8);
  EXPECT_EQ(simulate(traces, sw, native).makespan, simulate(traces, sw, injected).makespan);
}

TEST_F(Injected, GroupSizeMismatchIsAnInputError) {
  SystemConfig cfg;
  cfg.algorithms[CollectiveType::kAllReduce] = write_ring(CollectiveType::kAllReduce, 4, 1, 1 << 20);
  try {
    simulate_collective(shape("Switch", 8), CollectiveType::kAllReduce, 1 << 20, cfg);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("written for 4 ranks but a ALL_REDUCE runs on a group of 8"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(Injected, MissingRankFileIsAnInputError) {
  const std::string prefix = write_ring(CollectiveType::kAllReduce, 4, 1, 1 << 20);
  fs::remove(prefix + ".2.et");
  SystemConfig cfg;
  cfg.algorithms[CollectiveType::kAllReduce] = prefix;
  EXPECT_THROW(AlgorithmRegistry registry(cfg), InputError);
}

TEST_F(Injected, SendNeverReceivedIsReportedNotHung) {
  // Drop rank 1's first receive: every rank finishes its ops, but rank 0's
  // first message is never received; that is an error, not a silent success.
  auto traces = ring_algorithm_ets(CollectiveType::kAllGather, 4, 1, 1 << 20);
  auto& nodes = traces[1].nodes;
  const std::uint64_t dropped = nodes[1].id();
  ASSERT_EQ(nodes[1].type(), et::COMM_RECV_NODE);
  nodes.erase(nodes.begin() + 1);
  for (auto& n : nodes) {
    auto* deps = n.mutable_data_deps();
    for (int i = 0; i < deps->size(); ++i) {
      if (deps->Get(i) == dropped) deps->Set(i, nodes[0].id());
    }
  }
  const std::string prefix = (dir_ / "broken").string();
  write_rank_ets(traces, prefix);
  SystemConfig cfg;
  cfg.algorithms[CollectiveType::kAllGather] = prefix;
  try {
    simulate_collective(shape("Switch", 4), CollectiveType::kAllGather, 1 << 20, cfg);
    FAIL();
  } catch (const SimError& e) {
    EXPECT_EQ(e.exit_code(), 3) << e.what();
    EXPECT_NE(std::string(e.what()).find("never received:\n  rank 0 -> rank 1, tag 0, 1048576 B"), std::string::npos)
        << e.what();
  }
}

TEST_F(Injected, AstraSimCustomRingRunsAndItsTimeIsExplained) {
  // An MSCCL ring all-reduce converted by another tool: 14 sends and 14
  // receives of 131,072 B per rank, and 7 COMP reduce nodes of 7 us (the
  // converter's duration), no chunk attributes and no recorded size, so sizes
  // are used as written. Each of the 14 ring steps costs 500 ns + 131072 B / 50 GB/s
  // on ring8.yml; the 7 reduce steps add 7 us each on the critical path:
  //   14 x 3121.44 ns + 7 x 7000 ns = 92,700.16 ns.
  const std::string prefix = testdata("astrasim-custom-ring/custom_allreduce");
  if (!fs::exists(prefix + ".0.et")) GTEST_SKIP() << "testdata absent: " << prefix;
  SystemConfig cfg;
  cfg.algorithms[CollectiveType::kAllReduce] = prefix;
  const auto res = simulate_collective(load_topology(source_dir() + "/configs/ring8.yml"),
                                       CollectiveType::kAllReduce, 1 << 20, cfg);
  EXPECT_EQ(res.makespan, 14 * (500 * kNanosecond + 2'621'440) + 7 * 7 * kMicrosecond);
}

}  // namespace
}  // namespace sim
