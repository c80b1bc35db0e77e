// ASTRA-sim's own results, reproduced through the drop-in command line.
//
// Every congestion_unaware row of ../shared/testdata/astrasim-reference/
// results_sample.csv on the 1-D topologies (Ring_8, Ring_64, Switch_8,
// Switch_64, FullyConnected_8) is run by the `sim` binary exactly as ASTRA-sim
// was run: --workload-configuration (one collective per rank, written here),
// --system-configuration system/<algorithm>_1d.json,
// --network-configuration network/<topology>.yml and
// --remote-memory-configuration remote_memory/no_memory_expansion.json.
//
//   ring, halvingDoubling   within 0.5% of ASTRA-sim's sim_time_ns (asserted)
//   direct (1-D, 2-D, 3-D)  bounded (and with --egress=overlap, ASTRA-sim's own
//                           model, 39 of 40 1-D rows within 0.5%): ASTRA-sim's congestion-unaware backend lets
//                           an NPU inject on one port faster than the port's
//                           bandwidth; ours never reports busbw above the sum
//                           of the NPU's egress links (asserted); equal on
//                           FullyConnected_8 (one link per peer)
//   doubleBinaryTree        runs as astrasimTree, ASTRA-sim's own tree (one
//                           whole-chunk tree per chunk, ranks leave a chunk once
//                           their sends are issued; docs/collectives.md): its
//                           closed form within 0.5% of every row (asserted); our
//                           run slower by exactly the egress serialization
//                           ASTRA-sim's congestion-unaware backend skips (asserted)
//   Ring_Ring_8x8 doubleBinaryTree: ASTRA-sim's rule (three whole-chunk tree phases per
//                           chunk, trees handed out per dimension): its form and our
//                           --egress=overlap run within 0.5%
//   Ring_8 direct all-reduce 16 MiB: ASTRA-sim's early all-gather sends (its rule
//                           reproduces the row; ours waits for the reductions)
//   Ring_Ring_8x8, Ring_Ring_Ring_4x4x4 (system/<algorithm>_2d.json, _3d.json):
//                           ring, halvingDoubling within 0.5% (the hierarchical
//                           algorithm, one window per dimension)
#include <gtest/gtest.h>

#include "tests/system/astrasim/astrasim_results.h"
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/common/run_sim.h"
#include "tests/system/collectives/astrasim_tree_form.h"
#include "system/program/collective_writer.h"
#include "report/report.h"
#include "tests/system/test_util.h"
#include "workload/generators/workload_generator.h"

namespace sim {
namespace {

using namespace sim::testing;
namespace fs = std::filesystem;

using Row = AstraSimRow;

bool one_dimensional(const std::string& topology) {
  return topology == "Ring_8" || topology == "Ring_64" || topology == "Switch_8" || topology == "Switch_64" ||
         topology == "FullyConnected_8";
}

class AstraSimReference : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testdata("astrasim-reference");
    if (!fs::exists(root_ + "/results_sample.csv")) GTEST_SKIP() << "testdata absent: " << root_;
    dir_ = fs::path(::testing::TempDir()) /
           ("sim_astrasim_reference_" + std::to_string(::getpid()) + "_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // One collective per rank, as ASTRA-sim's runs had.
  std::string workload(const Row& r) {
    const std::string prefix = (dir_ / (r.collective + "_" + std::to_string(r.npus) + "_" + std::to_string(r.bytes))).string();
    if (!fs::exists(prefix + ".0.et")) {
      CollectiveType type;
      EXPECT_TRUE(parse_collective_name(r.collective, type));
      CollectivesSpec spec;
      spec.npus = r.npus;
      spec.collectives = {type};
      spec.bytes = r.bytes;
      write_rank_ets(collectives_workload(spec), prefix);
    }
    return prefix;
  }

  // The drop-in command line on that row's ASTRA-sim files; the JSON report.
  nlohmann::json run(const Row& r, const std::string& dims = "1d", const std::string& extra = "") {
    const std::string report = (dir_ / "report.json").string();
    const SimRun out = run_sim("--workload-configuration=" + workload(r) + " --system-configuration=" + root_ +
                               "/system/" + r.algorithm + "_" + dims + ".json --network-configuration=" + root_ + "/network/" +
                               r.topology + ".yml --remote-memory-configuration=" + root_ +
                               "/remote_memory/no_memory_expansion.json --report=" + report + extra);
    EXPECT_EQ(out.code, 0) << out.output;
    // ASTRA-sim's per-rank lines, for scripts that parse them.
    EXPECT_NE(out.output.find("sys[" + std::to_string(r.npus - 1) + "] finished, "), std::string::npos) << out.output;
    std::ifstream in(report);
    return nlohmann::json::parse(in);
  }

  std::string root_;
  fs::path dir_;
};

TEST_F(AstraSimReference, RingAndHalvingDoublingRowsWithinHalfAPercent) {
  std::size_t matched = 0;
  double worst = 0;
  std::string worst_row;
  for (const Row& r : read_astrasim_rows(root_ + "/results_sample.csv")) {
    if (r.backend != "congestion_unaware" || !one_dimensional(r.topology)) continue;
    if (r.algorithm != "ring" && r.algorithm != "halvingDoubling") continue;
    const double ours = run(r)["sim_time_ns"].get<double>();
    const double err = (ours - static_cast<double>(r.ns)) / static_cast<double>(r.ns);
    EXPECT_LT(std::abs(err), 0.005) << r.topology << " " << r.collective << " " << r.algorithm << " " << r.bytes
                                    << ": ours " << ours << " ns, ASTRA-sim " << r.ns << " ns";
    ++matched;
    if (std::abs(err) > worst) {
      worst = std::abs(err);
      worst_row = r.topology + " " + r.collective + " " + r.algorithm + " " + std::to_string(r.bytes);
    }
  }
  // 5 topologies x 2 sizes x (4 ring + 3 halvingDoubling collectives).
  EXPECT_EQ(matched, 70u);
  std::printf("%zu rows within 0.5%%; worst |error| %.4f%% (%s)\n", matched, 100 * worst, worst_row.c_str());
}

TEST_F(AstraSimReference, DirectIsBoundedByTheNpuInjectionBandwidth) {
  // ASTRA-sim's congestion-unaware direct charges every message as if alone on
  // the network, so an NPU sends n-1 messages at once at full bandwidth each.
  // Ours serializes messages leaving by one port: busbw never exceeds what an
  // NPU can inject (the sum of its egress links).
  std::size_t rows = 0, theirs_above = 0;
  double worst_overlap = 0;
  for (const Row& r : read_astrasim_rows(root_ + "/results_sample.csv")) {
    if (r.backend != "congestion_unaware" || r.algorithm != "direct") continue;
    // Multi-dimensional rows too (per-dimension direct, hierarchical): the same bound.
    const std::string dims = one_dimensional(r.topology)              ? "1d"
                             : r.topology == "Ring_Ring_8x8"          ? "2d"
                             : r.topology == "Ring_Ring_Ring_4x4x4" ? "3d"
                                                                     : "";
    if (dims.empty()) continue;
    const nlohmann::json report = run(r, dims);
    const Topology topo = [&] {
      std::ifstream in(root_ + "/network/" + r.topology + ".yml");
      std::stringstream text;
      text << in.rdbuf();
      return parse_topology(text.str() + "\nbandwidth_unit: GiB/s\n", r.topology);
    }();
    double egress = 0;  // GB/s out of NPU 0
    for (const Link& l : topo.links()) {
      if (l.from == 0) egress += static_cast<double>(l.bandwidth) / 1e9;
    }
    CollectiveRecord c;
    ASSERT_TRUE(parse_collective_name(r.collective, c.type));
    c.bytes = r.bytes;
    c.group_size = r.npus;
    c.duration = static_cast<Time>(report["sim_time_ns"].get<double>() * kNanosecond);
    const double ours = busbw_gbps(c);
    c.duration = r.ns * kNanosecond;
    const double theirs = busbw_gbps(c);
    EXPECT_LE(ours, egress * 1.0001) << r.topology << " " << r.collective << " " << r.bytes;
    theirs_above += theirs > egress;
    if (r.topology == "FullyConnected_8") {  // one link per peer: nothing to share, the same numbers
      EXPECT_LT(std::abs(report["sim_time_ns"].get<double>() - r.ns) / r.ns, 0.005) << r.collective << " " << r.bytes;
    }
    // With ASTRA-sim's own model (--egress=overlap: every message as if
    // alone), its 1-D numbers come back, above the NPU's bandwidth included:
    // 39 of 40 rows within 0.01%. The exception, Ring_8 all-reduce 16 MiB, is
    // 2.1% slow (98,169 vs 96,164 ns) while its reduce-scatter and 64 KiB
    // rows agree to the ns: ASTRA-sim sends all-gather blocks before they are
    // fully reduced (DirectAllReduceRing8ExceptionIsAstraSimSendingUnreducedData).
    const bool known_exception = r.topology == "Ring_8" && r.collective == "all_reduce" && r.bytes == 16777216;
    if (dims == "1d" && !known_exception) {
      const double overlap = run(r, dims, " --egress=overlap")["sim_time_ns"].get<double>();
      EXPECT_LT(std::abs(overlap - r.ns) / r.ns, 0.005) << r.topology << " " << r.collective << " " << r.bytes
                                                        << ": overlap " << overlap << " ns, ASTRA-sim " << r.ns;
      worst_overlap = std::max(worst_overlap, std::abs(overlap - r.ns) / r.ns);
    }
    ++rows;
  }
  EXPECT_EQ(rows, 56u);  // 40 on 1-D topologies, 16 on Ring_Ring_8x8 and Ring_Ring_Ring_4x4x4
  EXPECT_GT(theirs_above, 0u) << "the reference's direct rows should include some above the NPU's bandwidth";
  std::printf("direct: %zu rows, ASTRA-sim above the NPU's injection bandwidth in %zu; 1-D rows with "
              "--egress=overlap within %.4f%%\n", rows, theirs_above, 100 * worst_overlap);
}

TEST_F(AstraSimReference, DirectAllReduceRing8ExceptionIsAstraSimSendingUnreducedData) {
  // The one direct row --egress=overlap does not reproduce: Ring_8 all-reduce
  // 16 MiB (ours +2.1%). Cause, from ASTRA-sim's AllToAll (direct) all-reduce:
  // its all-gather sends start at the first local reduction that completes
  // after the last reduce-scatter message has ARRIVED, and then one per later
  // completion, not after the last reduction. Per chunk (m = S/4/8 bytes, t =
  // floor(m/B), red = 3 floor(m/R), d_j = ring hops to peer j): a block from
  // peer j arrives at E + d_j L + t and is reduced by done_j = that + E +
  // red; block sends go at max(go, j-th completion), go = the first done_j
  // at or after the last arrival; the phase ends E after the last all-gather
  // message arrives. At 16 MiB the 3-hop reductions (t + 2.5 us) finish after
  // the 4-hop block arrives (t + 2.0 us), so ASTRA-sim sends 6 of 7 blocks,
  // the 4-hop peer's included, before that peer's contribution is reduced
  // (done at t + 3.0 us): 500 ns per chunk earlier, and not a correct
  // all-reduce. Ours sends after the reductions its data needs (the data
  // check holds), which is ASTRA-sim's rule with go = the last done_j. At
  // 64 KiB the reductions take 3 ns and both rules agree.
  const double B = 50.0 * (1u << 30) / 1e9, R = 1600, E = 10, L = 500;
  const auto chunk = [&](std::uint64_t m, bool astrasim) {
    const double t = std::floor(static_cast<double>(m) / B), red = 3 * std::floor(static_cast<double>(m) / R);
    std::vector<double> done, hops;
    double last = 0;
    for (std::uint32_t j = 1; j < 8; ++j) {
      hops.push_back(std::min(j, 8 - j));
      last = std::max(last, E + hops.back() * L + t);
      done.push_back(E + hops.back() * L + t + E + red);
    }
    std::vector<double> sorted = done;
    std::sort(sorted.begin(), sorted.end());
    double go = sorted.back();
    if (astrasim) go = *std::find_if(sorted.begin(), sorted.end(), [&](double d) { return d >= last; });
    double end = 0;
    for (std::size_t j = 0; j < 7; ++j) end = std::max(end, std::max(go, sorted[j]) + hops[j] * L + t);
    return end + E;
  };
  std::size_t rows = 0;
  for (const Row& r : read_astrasim_rows(root_ + "/results_sample.csv")) {
    if (r.backend != "congestion_unaware" || r.topology != "Ring_8" || r.algorithm != "direct" ||
        r.collective != "all_reduce") {
      continue;
    }
    const std::uint64_t m = r.bytes / 4 / 8;
    const double theirs = static_cast<double>(r.ns), astrasim_form = 4 * chunk(m, true), ours_form = 4 * chunk(m, false);
    const double overlap = run(r, "1d", " --egress=overlap")["sim_time_ns"].get<double>();
    EXPECT_LT(std::abs(astrasim_form - theirs) / theirs, 0.0005) << r.bytes << ": " << astrasim_form;
    EXPECT_LT(std::abs(overlap - ours_form) / ours_form, 0.0005) << r.bytes << ": " << overlap << " vs " << ours_form;
    if (r.bytes == 16777216) {
      EXPECT_DOUBLE_EQ(ours_form - astrasim_form, 4 * 500.0);  // 500 ns per chunk
    } else {
      EXPECT_DOUBLE_EQ(ours_form, astrasim_form);
    }
    std::printf("Ring_8 direct all_reduce %llu: ASTRA-sim %llu ns, its rule %.0f; ours --egress=overlap %.0f, "
                "reduce-before-send rule %.0f\n", static_cast<unsigned long long>(r.bytes),
                static_cast<unsigned long long>(r.ns), astrasim_form, overlap, ours_form);
    ++rows;
  }
  EXPECT_EQ(rows, 2u);
}

TEST_F(AstraSimReference, DoubleBinaryTreeRows) {
  // ASTRA-sim's doubleBinaryTree runs as astrasimTree (one whole-chunk tree
  // per chunk, alternating RootMax/RootMin; a rank leaves a chunk once its
  // sends are issued): docs/collectives.md.
  //  1. Its closed form (astrasim_tree_form.h; no two messages on a link at
  //     once) reproduces every row within 0.5% (0.03% in fact: ASTRA-sim
  //     truncates m/B to whole ns).
  //  2. Our run is slower by exactly what serializing a sender's messages per
  //     egress link costs (ASTRA-sim's congestion-unaware backend lets them
  //     overlap): a rank interior in chunk c is a leaf in chunk c+1 whose
  //     parent is the child it just sent chunk c to, so its send waits t - E
  //     at each of the k-1 chunk boundaries; on a switch (one egress per NPU)
  //     each interior rank's second child also waits t, on each of the
  //     log2(n) - 1 levels of interior ranks and in each of the k chunks.
  //     Asserted within 0.05%.
  const double B = 50.0 * (1u << 30) / 1e9;  // bytes per ns (ASTRA-sim's GB/s = GiB/s)
  const double E = 10, lat = 500;
  const std::uint32_t k = 4;
  std::size_t rows = 0;
  double worst_form = 0, worst_ours = 0, worst_overlap = 0;
  for (const Row& r : read_astrasim_rows(root_ + "/results_sample.csv")) {
    if (r.backend != "congestion_unaware" || !one_dimensional(r.topology) || r.algorithm != "doubleBinaryTree") continue;
    const std::string what = r.topology + " " + r.collective + " " + std::to_string(r.bytes);
    const double theirs = static_cast<double>(r.ns);
    const std::uint32_t n = r.npus;
    const bool sw = r.topology.rfind("Switch", 0) == 0, ring = r.topology.rfind("Ring", 0) == 0;
    const auto a = [&](std::uint32_t p, std::uint32_t q) -> Time {
      if (sw) return static_cast<Time>(2 * lat) * kNanosecond;
      const std::uint32_t d = p > q ? p - q : q - p;
      return static_cast<Time>(ring ? std::min(d, n - d) * lat : lat) * kNanosecond;
    };
    std::vector<std::uint64_t> sizes(k, r.bytes / k);
    const Time form = astrasim_tree_form(n, sizes, static_cast<Time>(E) * kNanosecond, 1'600'000'000'000,
                                         static_cast<BytesPerSecond>(50.0 * (1u << 30)), a);
    const double form_err = (static_cast<double>(form) / kNanosecond - theirs) / theirs;
    EXPECT_LT(std::abs(form_err), 0.005) << what << ": closed form " << form / kNanosecond << " ns, ASTRA-sim " << r.ns;
    worst_form = std::max(worst_form, std::abs(form_err));

    const double ours = run(r)["sim_time_ns"].get<double>();
    const double t = static_cast<double>(sizes[0]) / B;
    const double levels = std::log2(static_cast<double>(n)) - 1;
    const double serialized = (k - 1) * (t - E) + (sw ? k * levels * t : 0);
    EXPECT_LT(std::abs(ours - (theirs + serialized)) / theirs, 0.0005)
        << what << ": ours " << ours << " ns, ASTRA-sim " << r.ns << " + egress serialization " << serialized;
    EXPECT_GE(ours, theirs) << what;
    worst_ours = std::max(worst_ours, (ours - theirs) / theirs);
    //  3. With ASTRA-sim's model (--egress=overlap), our run is the row.
    const double overlap = run(r, "1d", " --egress=overlap")["sim_time_ns"].get<double>();
    EXPECT_LT(std::abs(overlap - theirs) / theirs, 0.005) << what << ": overlap " << overlap << " ns, ASTRA-sim " << r.ns;
    worst_overlap = std::max(worst_overlap, std::abs(overlap - theirs) / theirs);
    ++rows;
  }
  EXPECT_EQ(rows, 10u);  // 5 topologies x 2 sizes, all-reduce only
  std::printf("doubleBinaryTree: %zu rows; closed form within %.4f%%; ours up to +%.2f%% (egress serialization); "
              "--egress=overlap within %.4f%%\n", rows, 100 * worst_form, 100 * worst_ours, 100 * worst_overlap);
}

TEST_F(AstraSimReference, TwoDimensionalDoubleBinaryTreeRows) {
  // Ring_Ring_8x8 with system/doubleBinaryTree_2d.json ([doubleBinaryTree,
  // doubleBinaryTree], localBWAware). ASTRA-sim's tree phase ignores the
  // phase's type and size rule: each chunk runs three whole-chunk tree
  // all-reduces (dimension 0 as "reduce-scatter", dimension 1, dimension 0
  // again as "all-gather"), and each dimension hands out RootMax / RootMin in
  // turn as phases are created, so dimension 0's first phases are all RootMax
  // and its third all RootMin (astrasim_tree_2d_form, docs/collectives.md).
  //  1. That form is within 0.5% of both rows; the obvious alternatives are
  //     not (trees alternating per chunk in every phase; no third phase).
  //  2. Our run with ASTRA-sim's link model (--egress=overlap) is within 0.5%;
  //     our default run is slower (egress serialization), never faster.
  const BytesPerSecond B = static_cast<BytesPerSecond>(50.0 * (1u << 30)), R = 1'600'000'000'000;
  const Time E = 10 * kNanosecond;
  const auto a = [](std::uint32_t p, std::uint32_t q) -> Time {
    const bool same_row = p / 8 == q / 8;
    const std::uint32_t x = same_row ? p % 8 : p / 8, y = same_row ? q % 8 : q / 8;
    const std::uint32_t d = x > y ? x - y : y - x;
    return static_cast<Time>(std::min(d, 8 - d)) * 500 * kNanosecond;
  };
  std::size_t rows = 0;
  for (const Row& r : read_astrasim_rows(root_ + "/results_sample.csv")) {
    if (r.backend != "congestion_unaware" || r.topology != "Ring_Ring_8x8" || r.algorithm != "doubleBinaryTree") continue;
    const double theirs = static_cast<double>(r.ns);
    const std::vector<std::uint64_t> sizes(4, r.bytes / 4);
    const auto err = [&](Time form) { return (static_cast<double>(form) / kNanosecond - theirs) / theirs; };
    const double form = err(testing::astrasim_tree_2d_form(8, 8, sizes, E, R, B, a));
    const double per_chunk = err(testing::astrasim_tree_2d_form(
        8, 8, sizes, E, R, B, a, [](std::uint32_t, std::uint32_t c) { return c % 2 == 1; }));
    const double two_phases = err(testing::astrasim_tree_2d_form(8, 8, sizes, E, R, B, a, nullptr, 2));
    EXPECT_LT(std::abs(form), 0.005) << r.bytes;
    EXPECT_GT(std::abs(per_chunk), 0.005) << r.bytes;
    EXPECT_GT(std::abs(two_phases), 0.005) << r.bytes;
    const double overlap = run(r, "2d", " --egress=overlap")["sim_time_ns"].get<double>();
    const double ours = run(r, "2d")["sim_time_ns"].get<double>();
    EXPECT_LT(std::abs(overlap - theirs) / theirs, 0.005) << r.bytes << ": overlap " << overlap << ", ASTRA-sim " << r.ns;
    EXPECT_GE(ours, theirs * 0.9995) << r.bytes;
    std::printf("Ring_Ring_8x8 all_reduce doubleBinaryTree %llu: ASTRA-sim %llu ns; form %+.3f%% (trees per chunk "
                "%+.2f%%, two phases %+.2f%%); ours --egress=overlap %.0f (%+.3f%%), default %.0f (%+.2f%%)\n",
                static_cast<unsigned long long>(r.bytes), static_cast<unsigned long long>(r.ns), 100 * form,
                100 * per_chunk, 100 * two_phases, overlap, 100 * (overlap - theirs) / theirs, ours,
                100 * (ours - theirs) / theirs);
    ++rows;
  }
  EXPECT_EQ(rows, 2u);
}

TEST_F(AstraSimReference, MultiDimensionalRows) {
  // ASTRA-sim's per-dimension lists run as the hierarchical algorithm with one
  // window per dimension (dimension_queue): system/<algorithm>_2d.json and _3d.json.
  std::size_t matched = 0;
  double worst = 0;
  std::string worst_row;
  for (const Row& r : read_astrasim_rows(root_ + "/results_sample.csv")) {
    if (r.backend != "congestion_unaware") continue;
    const std::string dims = r.topology == "Ring_Ring_8x8" ? "2d" : r.topology == "Ring_Ring_Ring_4x4x4" ? "3d" : "";
    if (dims.empty() || (r.algorithm != "ring" && r.algorithm != "halvingDoubling")) continue;
    const double ours = run(r, dims)["sim_time_ns"].get<double>();
    const double err = (ours - static_cast<double>(r.ns)) / static_cast<double>(r.ns);
    std::printf("%s %s %s %llu: ours %.0f ASTRA-sim %llu (%+.3f%%)\n", r.topology.c_str(), r.collective.c_str(),
                r.algorithm.c_str(), static_cast<unsigned long long>(r.bytes), ours,
                static_cast<unsigned long long>(r.ns), 100 * err);
    EXPECT_LT(std::abs(err), 0.005) << r.topology << " " << r.collective << " " << r.algorithm << " " << r.bytes
                                    << ": ours " << ours << " ns, ASTRA-sim " << r.ns << " ns";
    ++matched;
    if (std::abs(err) > worst) {
      worst = std::abs(err);
      worst_row = r.topology + " " + r.collective + " " + r.algorithm + " " + std::to_string(r.bytes);
    }
  }
  // 2 topologies x 2 sizes x (4 ring + 3 halvingDoubling collectives).
  EXPECT_EQ(matched, 28u);
  std::printf("%zu rows within 0.5%%; worst |error| %.4f%% (%s)\n", matched, 100 * worst, worst_row.c_str());
}

}  // namespace
}  // namespace sim
