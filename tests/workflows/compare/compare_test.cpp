// `sim compare` and the reference formats it reads.
#include <gtest/gtest.h>

#include "core/error.h"
#include "workflows/sweep_fixture.h"
#include "workflows/compare/compare.h"
#include "workflows/compare/nccl_tests_parser.h"
#include "workflows/compare/reference_reader.h"

namespace sim::testing {
namespace {

using workflows::parse_nccl_tests;

const std::string kFixture = source_path("tests/workflows/compare/data/all_reduce_perf_8xH100.txt");

std::string small_sweep(const TempDir& tmp) {
  spit(tmp / "spec.yml", "base:\n  microbenchmark: {npus: 8, collectives: [allreduce, allgather]}\n  network: " +
                             source_path("configs/switch8.yml") +
                             "\naxes:\n  size: [64KiB, 1MiB, 16MiB]\n  collective: [allreduce=ring, allreduce=direct]\n");
  const SimRun run = run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out"));
  EXPECT_EQ(run.code, 0) << run.output;
  return tmp / "out/results.csv";
}

TEST(Compare, AResultAgainstItselfIsWithinTolerance) {
  TempDir tmp("compare_self");
  const std::string csv = small_sweep(tmp);
  const SimRun run = run_sim("compare " + csv + " " + csv);
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("12 points compared (0 without a reference point), 0 outside 5%"), std::string::npos)
      << run.output;
}

TEST(Compare, OnePointPerturbedByTenPercentIsOutsideFivePercentAndNamed) {
  TempDir tmp("compare_perturbed");
  const std::string csv = small_sweep(tmp);
  // Point 3's all-gather row, its time 10% longer in the reference.
  auto rows = workflows::parse_csv(slurp(csv), csv);
  const auto& header = rows[0].fields;
  const auto column = [&](const char* name) { return std::find(header.begin(), header.end(), name) - header.begin(); };
  const auto coll = column("collective"), time = column("time_ns");
  std::string text;
  for (auto& row : rows) {
    if (row.fields[0] == "3" && row.fields[coll] == "ALL_GATHER") {
      row.fields[time] = std::to_string(std::stod(row.fields[time]) * 1.10);
    }
    for (std::size_t k = 0; k < row.fields.size(); ++k) text += (k ? "," : "") + row.fields[k];
    text += "\n";
  }
  spit(tmp / "reference.csv", text);
  const SimRun run = run_sim("compare " + csv + " " + (tmp / "reference.csv") + " --tolerance 5%");
  EXPECT_EQ(run.code, 1) << run.output;
  EXPECT_NE(run.output.find("outside tolerance: point 3 (ALL_GATHER 1048576 B"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("-9.09"), std::string::npos) << run.output;  // ours / (1.1 ours) - 1
  EXPECT_NE(run.output.find("1 outside 5%"), std::string::npos) << run.output;
  // 10% is within a 10.5% tolerance.
  EXPECT_EQ(run_sim("compare " + csv + " " + (tmp / "reference.csv") + " --tolerance 0.105").code, 0);
}

TEST(Compare, BadInputExitsTwo) {
  TempDir tmp("compare_bad");
  const std::string csv = small_sweep(tmp);
  spit(tmp / "junk.csv", "a,b\n1,2\n");
  EXPECT_EQ(run_sim("compare " + csv + " " + (tmp / "junk.csv")).code, 2);
  EXPECT_EQ(run_sim("compare " + csv + " " + (tmp / "absent.csv")).code, 2);
  EXPECT_EQ(run_sim("compare " + csv + " " + csv + " --tolerance five").code, 2);
  const SimRun none = run_sim("compare " + csv + " " + kFixture);  // switch8 sizes vs nccl sizes: 1MiB matches
  EXPECT_NE(none.code, 2) << none.output;
}

// A number without '%' is a fraction: 5 would be 500% and pass every point.
TEST(Compare, ABareToleranceAboveOneIsRefused) {
  TempDir tmp("compare_tolerance");
  const std::string csv = small_sweep(tmp);
  const SimRun run = run_sim("compare " + csv + " " + csv + " --tolerance 5");
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_EQ(run.output,
            "sim: error: --tolerance 5: a number without '%' is a fraction, so 5 allows 500%: write 5% or 0.05 (a "
            "fraction is at most 1)\n");
  EXPECT_EQ(run_sim("compare " + csv + " " + csv + " --tolerance 1").code, 0);
  EXPECT_EQ(run_sim("compare " + csv + " " + csv + " --tolerance 500%").code, 0);
  EXPECT_EQ(workflows::parse_tolerance("0.05"), 0.05);
  EXPECT_EQ(workflows::parse_tolerance("5%"), 0.05);
  EXPECT_THROW(workflows::parse_tolerance("1.5"), InputError);
}

const std::string kReferenceHeader = "system,nodes,ranks,collective,size_bytes,time_us,algbw_GBps,busbw_GBps\n";

// Two reference rows that one point matches: refused naming both (`sim
// calibrate` refuses two fitting rows of one point the same way).
TEST(Compare, APointThatTwoReferenceRowsMatchIsAnErrorNamingBoth) {
  TempDir tmp("compare_twice");
  spit(tmp / "ours.csv", kReferenceHeader + "x,2,16,all_reduce,33554432,430,78.03,146.31\n");
  for (const std::string second :
       {"x,2,16,all_reduce,33554432,900,37.28,69.90", "x,2,16,all_reduce,33554432,427.1,78.57,147.32"}) {
    spit(tmp / "ref.csv", kReferenceHeader + "x,2,16,all_reduce,33554432,427.1,78.57,147.32\n" + second + "\n");
    const SimRun run = run_sim("compare " + (tmp / "ours.csv") + " " + (tmp / "ref.csv"));
    EXPECT_EQ(run.code, 2) << run.output;
    EXPECT_EQ(run.output, "sim: error: " + (tmp / "ours.csv") + ":2: matches both " + (tmp / "ref.csv") + ":2 and " +
                              (tmp / "ref.csv") + ":3 (narrow the reference with --filter key=value)\n");
  }
}

// Two rows of our own curve that are one point would count a reference
// point twice; rows apart on a label the reference lacks (the sweep's two
// algorithms) are each compared with it.
TEST(Compare, TwoOfOurRowsThatAreOnePointAreAnErrorNamingBoth) {
  TempDir tmp("compare_ours_twice");
  spit(tmp / "ref.csv", kReferenceHeader + "x,2,16,all_reduce,33554432,427.1,78.57,147.32\n");
  spit(tmp / "ours.csv", kReferenceHeader + "x,2,16,all_reduce,33554432,430,78.03,146.31\n" +
                             "x,2,16,all_reduce,33554432,430,78.03,146.31\n");
  const SimRun run = run_sim("compare " + (tmp / "ours.csv") + " " + (tmp / "ref.csv"));
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_EQ(run.output, "sim: error: " + (tmp / "ours.csv") + ":3: the same point as " + (tmp / "ours.csv") +
                            ":2 (ALL_REDUCE 33554432 B, npus=16): a comparison would count it twice (delete a row)\n");
  const std::string csv = small_sweep(tmp);  // ring and direct at each size: both against the one log
  const SimRun sweep = run_sim("compare " + csv + " " + kFixture);
  EXPECT_NE(sweep.code, 2) << sweep.output;
}

// A reference row whose busbw disagrees with its time, and nccl-tests '#
// Rank' lines that list a rank twice: exit 2 naming the line.
TEST(Compare, AReferenceRowAtOddsWithItselfExitsTwo) {
  TempDir tmp("compare_odd_rows");
  const std::string csv = small_sweep(tmp);
  spit(tmp / "ref.csv", kReferenceHeader + "x,2,16,all_reduce,33554432,427.1,78.57,1e300\n");
  SimRun run = run_sim("compare " + csv + " " + (tmp / "ref.csv") + " --metric busbw");
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_EQ(run.output,
            "sim: error: " + (tmp / "ref.csv") +
                ":2: column 8 (busbw_GBps): 1e300 GB/s disagrees with the row's time: 33554432 B in 427.1 us "
                "on 16 ranks is a busbw of 147.31 GB/s (nccl-tests' size / time x 1.875 for ALL_REDUCE), and "
                "a given bandwidth must be within 2% of it\n");
  std::string log = slurp(kFixture);
  const std::size_t ranks = log.find("#  Rank"), end = log.find("#\n", ranks);
  log.insert(end, log.substr(ranks, end - ranks));  // ranks 0-7 twice
  spit(tmp / "all_reduce_perf.txt", log);
  run = run_sim("compare " + csv + " " + (tmp / "all_reduce_perf.txt"));
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_EQ(run.output, "sim: error: " + (tmp / "all_reduce_perf.txt") +
                            ":12: rank 0 is listed again (first at line 4): each rank has one '# Rank' line (one "
                            "nccl-tests run per file)\n");
}

TEST(NcclTests, FixtureParsesWithHeaderAndSummaryLines) {
  const workflows::NcclTestsOutput out = parse_nccl_tests(slurp(kFixture), kFixture, "");
  EXPECT_EQ(out.ranks, 8u);
  EXPECT_NEAR(out.avg_busbw_gbps, 0, 1e9);
  EXPECT_GT(out.avg_busbw_gbps, 100);
  ASSERT_EQ(out.curve.points.size(), 11u);  // 1 KiB .. 1 GiB by 4x; '#' lines are not rows
  const auto& first = out.curve.points.front();
  EXPECT_EQ(first.collective, "ALL_REDUCE");  // from the file name
  EXPECT_EQ(first.bytes, 1024u);
  EXPECT_DOUBLE_EQ(*first.time_ns, 30000);  // 30.00 us, out-of-place
  EXPECT_DOUBLE_EQ(*first.busbw_gbps, 0.06);
  EXPECT_EQ(first.labels.at("npus"), "8");
  EXPECT_EQ(out.curve.points.back().bytes, 1u << 30);
}

TEST(NcclTests, AllGatherSizesBecomePerRank) {
  // The fixture's 8 ranks and columns, with a row of all_gather_perf (busbw = algbw x 7/8).
  const std::string log = slurp(kFixture);
  const std::string text = log.substr(0, log.find("        1024")) +
                           "        1024            32     float    none      -1    30.00    0.03    0.03      0    "
                           "29.70    0.03    0.03      0\n";
  const auto out = parse_nccl_tests(text, "ag.txt", "allgather");
  EXPECT_EQ(out.curve.points.front().collective, "ALL_GATHER");
  EXPECT_EQ(out.curve.points.front().bytes, 1024u / 8);
}

TEST(NcclTests, MalformedRowNamesTheLine) {
  std::string text = slurp(kFixture);
  text.insert(text.find("        4096"), "        2048           512     float     sum      -1    30.00\n");
  try {
    parse_nccl_tests(text, "x_all_reduce.txt", "");
    FAIL() << "accepted a short row";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x_all_reduce.txt:17: expected 13 fields"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_nccl_tests(slurp(kFixture), "unnamed.txt", ""), InputError);  // collective unknown
}

TEST(Compare, AstraSimResultsAreReadAndMatchOurRunOfItsFiles) {
  const std::string ref = "../shared/testdata/astrasim-reference";
  const std::string root = std::string(SIM_SOURCE_DIR) + "/" + ref;
  if (!std::filesystem::exists(root + "/results_sample.csv")) GTEST_SKIP() << ref << " absent";
  const workflows::Curve curve = workflows::read_curve(root + "/results_sample.csv");
  EXPECT_EQ(curve.format, "astra-sim");
  EXPECT_EQ(curve.points.size(), 286u);

  // Its Ring_8 ring all-reduce rows, from its own network and system files
  // (50 "GB/s" meaning GiB/s, as ASTRA-sim reads it).
  TempDir tmp("compare_astra");
  spit(tmp / "Ring_8.yml", slurp(root + "/network/Ring_8.yml") + "\nbandwidth_unit: GiB/s\n");
  spit(tmp / "spec.yml", "base:\n  microbenchmark: {npus: 8}\n  network: Ring_8.yml\n  system: " + root +
                             "/system/ring_1d.json\naxes:\n  size: [65536, 16777216]\n  backend: [analytical]\n");
  const SimRun sweep = run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out"));
  ASSERT_EQ(sweep.code, 0) << sweep.output;
  const SimRun run = run_sim("compare " + (tmp / "out/results.csv") + " " + root +
                             "/results_sample.csv --filter topology=Ring_8 --tolerance 0.15%");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("matched on collective, bytes, algorithm, backend, npus"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("2 points compared"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace sim::testing
