// The flow backend against ASTRA-sim's congestion-aware analytical backend
// (../shared/testdata/astrasim-reference/results_sample.csv, ring rows; every
// 8-NPU row, all algorithms, is in astrasim_congestion_rows_test.cpp).
//
// ASTRA-sim's native ring (../shared/reference/astra-sim.md, section 8) is
// written here as Chakra ETs, exactly as it schedules a collective of S bytes
// per rank on n NPUs: k = 4 (preferred-dataset-splits) chunks of c = S/k run
// one after another (active-chunks-per-dimension 1); each chunk is one ring
// phase of `steps` steps of m bytes (table below), step s+1 waiting for step
// s's receive and, on reducing steps, a local reduction of 3m bytes at
// local-mem-bw R = 1600 GB/s (two reads and a write); a phase ends with one
// more endpoint delay ED = 10 ns. The per-message ED is the flow backend's
// `message_latency: 10ns`; the reduction and the phase's trailing ED are COMP
// nodes priced by the system's reduction model at 1600 GB/s (3m bytes, and
// 16,000 B = 10 ns).
//
//   phase            steps        m      reducing steps
//   all-reduce       2(n-1)       c/n    n-1
//   reduce-scatter   n-1          c/n    n-1
//   all-gather       n-1          c      0
//   all-to-all       n(n-1)/2     c/n    0
//
// Our time is then exactly (every ring message alone on its links, cut-through):
//   ours   = k * (steps * (hops*L + ED + t(m)) + red * 3m/R + ED)
// where t(m) = m / B rounded up to a ps, B = 50 x 2^30 B/s, L = 500 ns, hops =
// 1 on Ring and FullyConnected, 2 on Switch (NPU -> switch -> NPU).
// ASTRA-sim's congestion-aware backend stores and forwards each message whole
// at every hop, so a 2-hop switch path costs 2 x (L + m/B); with its whole-ns
// truncation, all 40 congestion-aware ring rows are
//   theirs = k * (steps * (hops*(L + floor(m/B)) + ED) + red * 3*floor(m/R) + ED).
// On 1-hop paths the two are the same model; on the switch they differ by
// k * steps * m/B, the second serialization of every message (docs/network.md,
// "Against ASTRA-sim's congestion-aware backend").
#include <gtest/gtest.h>

#include "tests/system/astrasim/astrasim_results.h"
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "system/program/collective_writer.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;
namespace fs = std::filesystem;

constexpr Time kEndpointDelay = 10 * kNanosecond;            // endpoint-delay
constexpr Time kLatency = 500 * kNanosecond;                 // every link
constexpr BytesPerSecond kLinkRate = 50ull << 30;            // 50 "GB/s" = 50 GiB/s
constexpr BytesPerSecond kLocalMemRate = 1'600'000'000'000;  // local-mem-bw 1600 (GB/s)
constexpr std::uint64_t kTrailingEdBytes = 16'000;           // 10 ns at kLocalMemRate

using Row = AstraSimRow;

// One ring phase of ASTRA-sim on a chunk: steps, bytes per message, reducing steps.
struct Phase {
  std::uint32_t steps, reducing;
  std::uint64_t message;
};

Phase astrasim_ring_phase(CollectiveType type, std::uint32_t n, std::uint64_t chunk) {
  switch (type) {
    case CollectiveType::kAllReduce: return {2 * (n - 1), n - 1, chunk / n};
    case CollectiveType::kReduceScatter: return {n - 1, n - 1, chunk / n};
    case CollectiveType::kAllGather: return {n - 1, 0, chunk};
    case CollectiveType::kAllToAll: return {n * (n - 1) / 2, 0, chunk / n};
    default: throw std::logic_error("no ASTRA-sim ring phase for this collective");
  }
}

// ASTRA-sim's ring schedule as one Chakra ET per rank: k serial chunks, each
// `steps` send/recv pairs to the ring neighbours, a 3m-byte reduce after the
// receive of a reducing step (the first `reducing` steps), and a 10 ns
// (16,000 B) COMP closing each chunk. Node ids ascend in issue order.
std::vector<EtTrace> astrasim_ring_ets(CollectiveType type, std::uint32_t n, std::uint64_t bytes) {
  const Phase p = astrasim_ring_phase(type, n, bytes / kSplits);
  return make_traces(static_cast<int>(n), [&](int pos) {
    std::vector<et::Node> nodes;
    std::uint64_t id = 0;
    std::int64_t last = -1;  // the op the next step waits for
    auto deps = [&](et::Node& node) {
      if (last >= 0) node.add_data_deps(static_cast<std::uint64_t>(last));
    };
    for (std::uint32_t c = 0; c < kSplits; ++c) {
      for (std::uint32_t s = 0; s < p.steps; ++s) {
        const int tag = static_cast<int>(c * p.steps + s);
        et::Node send = p2p_node(id++, true, (pos + 1) % static_cast<int>(n), p.message, tag);
        deps(send);
        et::Node recv = p2p_node(id++, false, (pos + static_cast<int>(n) - 1) % static_cast<int>(n), p.message, tag);
        deps(recv);
        last = static_cast<std::int64_t>(recv.id());
        nodes.push_back(std::move(send));
        nodes.push_back(std::move(recv));
        if (s < p.reducing) {
          et::Node reduce = comp_node(id++, 0, {static_cast<std::uint64_t>(last)});
          set_attr_int(reduce, "tensor_size", static_cast<std::int64_t>(3 * p.message));
          last = static_cast<std::int64_t>(reduce.id());
          nodes.push_back(std::move(reduce));
        }
      }
      et::Node ed = comp_node(id++, 0, {static_cast<std::uint64_t>(last)});
      set_attr_int(ed, "tensor_size", static_cast<std::int64_t>(kTrailingEdBytes));
      last = static_cast<std::int64_t>(ed.id());
      nodes.push_back(std::move(ed));
    }
    return nodes;
  });
}

CollectiveType type_of(const std::string& name) {
  CollectiveType t;
  if (!parse_collective_name(name, t)) throw std::invalid_argument("unknown collective " + name);
  return t;
}

// Our closed form, exact in ps (cut-through: hop latencies add, the bytes cross once).
Time ours_closed_form(CollectiveType type, std::uint32_t n, std::uint64_t bytes, std::uint32_t hops) {
  const Phase p = astrasim_ring_phase(type, n, bytes / kSplits);
  const Time phase = p.steps * (hops * kLatency + kEndpointDelay + transfer_time(p.message, kLinkRate)) +
                     p.reducing * transfer_time(3 * p.message, kLocalMemRate) + kEndpointDelay;
  return kSplits * phase;
}

// ASTRA-sim's congestion-aware closed form in ns (store-and-forward: every
// hop re-sends the whole message; times truncated to whole ns).
std::int64_t theirs_closed_form(CollectiveType type, std::uint32_t n, std::uint64_t bytes, std::uint32_t hops) {
  const Phase p = astrasim_ring_phase(type, n, bytes / kSplits);
  const double b = static_cast<double>(kLinkRate) / 1e9;  // bytes per ns
  const auto t = static_cast<std::int64_t>(std::floor(static_cast<double>(p.message) / b));
  const auto r = static_cast<std::int64_t>(std::floor(static_cast<double>(p.message) / 1600.0));
  const std::int64_t phase = p.steps * (hops * (500 + t) + 10) + p.reducing * 3 * r + 10;
  return kSplits * phase;
}

class AstraSimCongestion : public ::testing::Test {
 protected:
  void SetUp() override {
    csv_ = testdata("astrasim-reference/results_sample.csv");
    if (!fs::exists(csv_)) GTEST_SKIP() << "testdata absent: " << csv_;
    dir_ = fs::path(::testing::TempDir()) /
           ("sim_astra_" + std::to_string(::getpid()) + "_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // ASTRA-sim's own network file, with its "GB/s" read as it means it (2^30).
  static Topology astrasim_topology(const std::string& name) {
    const std::string path = testdata("astrasim-reference/network/" + name + ".yml");
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();
    return parse_topology(text.str() + "\nbandwidth_unit: GiB/s\n", path);
  }

  // Runs one row's collective with ASTRA-sim's ring schedule on the flow backend.
  Time run_ours(const Row& row, const std::string& backend = "flow") {
    const CollectiveType type = type_of(row.collective);
    const std::string prefix = (dir_ / (row.topology + "_" + row.collective + "_" + std::to_string(row.bytes))).string();
    write_rank_ets(astrasim_ring_ets(type, row.npus, row.bytes), prefix);
    SystemConfig cfg;
    cfg.algorithms[type] = prefix;
    cfg.reduction_bandwidth = kLocalMemRate;
    cfg.network.backend = backend;
    cfg.network.options["message_latency"] = OptionValue{"10ns", "astrasim_congestion_test"};
    const Topology topo = astrasim_topology(row.topology);
    EXPECT_EQ(topo.npu_count(), row.npus);
    const auto res = simulate_collective(topo, type, row.bytes, cfg);
    EXPECT_EQ(res.collectives.at(0).algorithm, "et:" + prefix);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    return res.makespan;
  }

  std::vector<Row> ring_rows(bool switches) const {
    std::vector<Row> out;
    for (const Row& r : read_astrasim_rows(csv_)) {
      if (r.backend != "congestion_aware" || r.algorithm != "ring") continue;
      const bool sw = r.topology == "Switch_8" || r.topology == "Switch_64";
      const bool one_hop = r.topology == "Ring_8" || r.topology == "Ring_64" || r.topology == "FullyConnected_8";
      if (switches ? sw : one_hop) out.push_back(r);
    }
    return out;
  }

  std::string csv_;
  fs::path dir_;
};

// The row as a Markdown table row, in the test's output (docs/network.md's tables are scripts/docs/tables/network.py's).
void print_row(const Row& r, Time ours) {
  const double ours_ns = static_cast<double>(ours) / kNanosecond;
  const double err = 100.0 * (ours_ns - static_cast<double>(r.ns)) / static_cast<double>(r.ns);
  std::printf("| %s | %s | %llu | %.2f | %lld | %+.3f%% |\n", r.topology.c_str(), r.collective.c_str(),
              static_cast<unsigned long long>(r.bytes), ours_ns, static_cast<long long>(r.ns), err);
}

TEST_F(AstraSimCongestion, RingRowsOnOneHopTopologiesAgreeWithin1Percent) {
  // Ring neighbours are one hop apart on Ring and FullyConnected: store-and-forward
  // and cut-through are the same model there, and no two ring messages share a link.
  const std::vector<Row> rows = ring_rows(false);
  ASSERT_EQ(rows.size(), 24u) << "expected 3 topologies x 4 collectives x 2 sizes";
  double worst = 0;
  for (const Row& r : rows) {
    const Time ours = run_ours(r);
    print_row(r, ours);
    const CollectiveType type = type_of(r.collective);
    EXPECT_EQ(ours, ours_closed_form(type, r.npus, r.bytes, 1)) << r.topology << " " << r.collective << " " << r.bytes;
    EXPECT_EQ(r.ns, theirs_closed_form(type, r.npus, r.bytes, 1)) << r.topology << " " << r.collective << " " << r.bytes;
    const double err = std::abs(static_cast<double>(ours) / kNanosecond - r.ns) / r.ns;
    worst = std::max(worst, err);
    EXPECT_LT(err, 0.01) << r.topology << " " << r.collective << " " << r.bytes << ": ours "
                         << static_cast<double>(ours) / kNanosecond << " ns, ASTRA-sim " << r.ns << " ns";
  }
  std::printf("worst |error| over %zu rows: %.4f%%\n", rows.size(), 100 * worst);
}

TEST_F(AstraSimCongestion, SwitchRowsDifferByStoreAndForwardExactly) {
  // Through a switch a message crosses two links. Ours: cut-through, 2L + m/B.
  // ASTRA-sim's congestion-aware backend: the whole message is stored at the
  // switch, 2 x (L + m/B). Both sides match their closed forms; the gap is
  // then k * steps * m/B, the second hop's re-serialization of every message.
  const std::vector<Row> rows = ring_rows(true);
  ASSERT_EQ(rows.size(), 16u) << "expected 2 topologies x 4 collectives x 2 sizes";
  for (const Row& r : rows) {
    const CollectiveType type = type_of(r.collective);
    const Time ours = run_ours(r);
    print_row(r, ours);
    EXPECT_EQ(ours, ours_closed_form(type, r.npus, r.bytes, 2)) << r.topology << " " << r.collective << " " << r.bytes;
    const std::int64_t sf = theirs_closed_form(type, r.npus, r.bytes, 2);
    EXPECT_LT(std::abs(static_cast<double>(sf - r.ns)) / r.ns, 0.01)
        << r.topology << " " << r.collective << " " << r.bytes << ": store-and-forward form " << sf
        << " ns, ASTRA-sim " << r.ns << " ns";
    EXPECT_EQ(sf, r.ns) << "(exact in all 16 sample rows)";
    // The gap is the second hop's serialization of every message.
    const Phase p = astrasim_ring_phase(type, r.npus, r.bytes / kSplits);
    const double gap = static_cast<double>(r.ns) - static_cast<double>(ours) / kNanosecond;
    const double predicted = kSplits * p.steps * (static_cast<double>(p.message) * 1e9 / kLinkRate);
    EXPECT_LT(std::abs(gap - predicted) / r.ns, 0.01) << r.topology << " " << r.collective << " " << r.bytes;
  }
}

TEST_F(AstraSimCongestion, UnawareAndAwareRingRowsAreIdenticalOffTheSwitch) {
  // A sanity check of the reference itself: with only 1-hop ring messages, its
  // two analytical backends give the same numbers, as ours do.
  std::map<std::string, std::int64_t> unaware;
  for (const Row& r : read_astrasim_rows(csv_)) {
    if (r.backend == "congestion_unaware" && r.algorithm == "ring") {
      unaware[r.topology + r.collective + std::to_string(r.bytes)] = r.ns;
    }
  }
  for (const Row& r : ring_rows(false)) {
    EXPECT_EQ(unaware.at(r.topology + r.collective + std::to_string(r.bytes)), r.ns) << r.topology << " " << r.collective;
  }
}

}  // namespace
}  // namespace sim
