// `sim sweep` end to end: a sweep equals single runs, reruns reuse the cache,
// a changed input reruns exactly its points, a bad point does not stop others,
// and shards merge into the local CSV byte for byte.
#include <gtest/gtest.h>

#include "workflows/sweep_fixture.h"

namespace sim::testing {
namespace {

const std::string kBandwidthSpec = source_path("configs/sweeps/bandwidth_size.yml");

TEST(SweepRun, FortyEightPointsEqualFortyEightSingleRuns) {
  TempDir tmp("sweep48");
  const SimRun sweep = run_sim("sweep " + kBandwidthSpec + " -o " + (tmp / "out") + " -j 2");
  ASSERT_EQ(sweep.code, 0) << sweep.output;
  const auto rows = csv_rows(tmp / "out/results.csv");
  ASSERT_EQ(rows.size(), 48u);
  for (const auto& row : rows) {
    ASSERT_EQ(row.at("status"), "ok");
    // The same point as one `sim` run on files: a generated workload and the
    // ring with its bandwidth edited.
    const std::string size = row.at("size"), bw = row.at("network.bandwidth");
    const std::string wl = tmp / ("wl_" + size + "/w"), net = tmp / ("ring_" + bw.substr(0, bw.find('G')) + ".yml");
    if (!std::filesystem::exists(net)) {
      spit(net, shape8("Ring", bw));
    }
    if (!std::filesystem::exists(tmp / ("wl_" + size))) {
      ASSERT_EQ(run_sim("workload gen collectives --npus 8 --coll allreduce --size " + size + " -o " + wl).code, 0);
    }
    const std::string csv = tmp / "single.csv";
    const SimRun one = run_sim("-q --workload " + wl + " --network " + net + " --collective " + row.at("--collective") +
                               " --backend " + row.at("backend") + " --csv " + csv);
    ASSERT_EQ(one.code, 0) << one.output;
    double slowest = 0;
    for (const auto& r : csv_rows(csv)) slowest = std::max(slowest, std::stod(r.at("duration_ns")));
    EXPECT_EQ(std::stod(row.at("time_ns")), slowest) << "point " << row.at("point");
    EXPECT_EQ(std::stod(row.at("sim_time_ns")), slowest) << "point " << row.at("point");
  }
}

TEST(SweepRun, RerunSimulatesNothingAndWritesTheSameCsv) {
  TempDir tmp("sweep_rerun");
  ASSERT_EQ(run_sim("sweep " + kBandwidthSpec + " -q -o " + (tmp / "out")).code, 0);
  EXPECT_EQ(summary_of(tmp / "out").at("simulated"), 48);
  const std::string first = slurp(tmp / "out/results.csv");
  const SimRun again = run_sim("sweep " + kBandwidthSpec + " -o " + (tmp / "out"));
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_EQ(summary_of(tmp / "out").at("simulated"), 0);
  EXPECT_EQ(summary_of(tmp / "out").at("from_cache"), 48);
  EXPECT_NE(again.output.find("0 simulated, 48 from cache"), std::string::npos) << again.output;
  EXPECT_EQ(slurp(tmp / "out/results.csv"), first);
}

TEST(SweepRun, ChangingOneInputFileRerunsExactlyThePointsThatReadIt) {
  TempDir tmp("sweep_change");
  spit(tmp / "a.yml", shape8("Ring"));
  spit(tmp / "b.yml", shape8("Switch"));
  spit(tmp / "spec.yml",
       "base:\n  microbenchmark: {npus: 8, collectives: [allreduce, allgather]}\n  network: a.yml\n"
       "axes:\n  network: [a.yml, b.yml]\n  size: [4KiB, 1MiB, 64MiB]\n");
  ASSERT_EQ(run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out")).code, 0);
  EXPECT_EQ(summary_of(tmp / "out").at("simulated"), 6);
  const auto before = csv_rows(tmp / "out/results.csv");

  spit(tmp / "b.yml", shape8("Switch", "100GB/s"));
  ASSERT_EQ(run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out")).code, 0);
  const nlohmann::json j = nlohmann::json::parse(slurp(tmp / "out/results.json"));
  EXPECT_EQ(j.at("summary").at("simulated"), 3);
  for (const auto& p : j.at("points")) {
    EXPECT_EQ(p.at("from_cache").get<bool>(), p.at("axes").at("network") == "a.yml") << p.dump();
  }
  const auto after = csv_rows(tmp / "out/results.csv");
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t r = 0; r < after.size(); ++r) {
    if (after[r].at("network") == "a.yml") EXPECT_EQ(after[r], before[r]);
    else EXPECT_LT(std::stod(after[r].at("time_ns")), std::stod(before[r].at("time_ns")));  // twice the bandwidth
  }
}

// A point's key covers the files its inputs name, not only the inputs' own
// text: a kernel table the system config reads and a model file the generated
// iteration reads. Editing either used to leave the cached (stale) row, exit 0.
TEST(SweepRun, FilesTheSystemAndTheModelNameKeyThePoint) {
  TempDir tmp("sweep_named_files");
  std::filesystem::create_directories(tmp / "kern");
  spit(tmp / "kern/gemm.csv", slurp(source_path("configs/kernels/h100/gemm.csv")));
  spit(tmp / "kern/attention.csv", slurp(source_path("configs/kernels/h100/attention.csv")));
  spit(tmp / "system.yml", "compute:\n  peak_tflops: 989.4\n  memory_bandwidth: 3.35TB/s\n  kernels: kern\n");
  const std::string model = "name: tiny\nlayers: 2\nhidden: 1024\nffn_hidden: 4096\nheads: 8\nkv_heads: 8\n"
                            "vocab: 32000\nmlp: swiglu\nnorm: rmsnorm\nbias: false\ntied_embeddings: false\n";
  spit(tmp / "model.yml", model);
  spit(tmp / "net.yml", shape8("Switch"));
  spit(tmp / "spec.yml", "base:\n  workload: 'gen:transformer?model=" + (tmp / "model.yml") +
                             "&parallel=tp=1,pp=1,dp=8&global-batch=8&seq=1024'\n  network: net.yml\n"
                             "  system: system.yml\naxes:\n  backend: [analytical]\n");
  const auto time_of = [&] {
    const SimRun run = run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out"));
    EXPECT_EQ(run.code, 0) << run.output;
    const auto rows = csv_rows(tmp / "out/results.csv");
    EXPECT_EQ(rows.size(), 1u);
    return rows.empty() ? std::string() : rows[0].at("sim_time_ns");
  };
  const std::string first = time_of();
  EXPECT_EQ(summary_of(tmp / "out").at("from_cache"), 0);
  EXPECT_EQ(time_of(), first);
  EXPECT_EQ(summary_of(tmp / "out").at("from_cache"), 1);
  // Another attention table under the same name: recomputed, and it is another time.
  spit(tmp / "kern/attention.csv", slurp(source_path("configs/kernels/h100-flash-attention-2/attention.csv")));
  const std::string second = time_of();
  EXPECT_EQ(summary_of(tmp / "out").at("from_cache"), 0);
  EXPECT_NE(second, first);
  // Twice the layers under the same file name: recomputed, longer.
  spit(tmp / "model.yml", "name: tiny\nlayers: 4\n" + model.substr(model.find("hidden")));
  const std::string third = time_of();
  EXPECT_EQ(summary_of(tmp / "out").at("from_cache"), 0);
  EXPECT_GT(std::stod(third), std::stod(second));
}

// A transformer's model file is a path like the spec's others: relative to the
// spec's folder (it was read from the working folder), in the base workload and
// in a workload.model axis; a built-in model's name stays a name.
TEST(SweepRun, AModelFileIsRelativeToTheSpec) {
  TempDir tmp("sweep_model_path");
  std::filesystem::create_directories(tmp / "spec/models");
  spit(tmp / "spec/models/tiny.yml", "name: tiny\nlayers: 2\nhidden: 1024\nffn_hidden: 4096\nheads: 8\nkv_heads: 8\n"
                                     "vocab: 32000\nmlp: swiglu\nnorm: rmsnorm\nbias: false\ntied_embeddings: false\n");
  spit(tmp / "spec/net.yml", shape8("Switch"));
  spit(tmp / "spec/spec.yml", "base:\n  workload: 'gen:transformer?model=models/tiny.yml&parallel=tp=1,pp=1,dp=8"
                              "&global-batch=8&seq=1024'\n  network: net.yml\naxes:\n"
                              "  workload.model: [models/tiny.yml, llama3-8b]\n");
  const SimRun run = run_sim("sweep " + (tmp / "spec/spec.yml") + " -q -o " + (tmp / "out"));
  ASSERT_EQ(run.code, 0) << run.output;
  const auto rows = csv_rows(tmp / "out/results.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("status"), "ok") << rows[0].at("message");
  EXPECT_EQ(rows[1].at("status"), "ok") << rows[1].at("message");
  EXPECT_LT(std::stod(rows[0].at("sim_time_ns")), std::stod(rows[1].at("sim_time_ns")));  // 2 layers against 32
}

// A folder `sim system gen` wrote is its system.yml, as for `sim --system DIR`;
// a folder without one is refused. It used to read as an empty config (no
// NCCL, no compute model), exit 0.
TEST(SweepRun, ASystemFolderIsItsSystemYml) {
  TempDir tmp("sweep_system_folder");
  ASSERT_EQ(run_sim("system gen dgx-h100 --nodes 1 -o " + (tmp / "h100")).code, 0);
  std::filesystem::create_directories(tmp / "empty");
  spit(tmp / "spec.yml",
       "base:\n  microbenchmark: {npus: 8, size: 1MiB}\n  network: h100/network.yml\n"
       "axes:\n  system: [h100, h100/system.yml, empty]\n");
  const SimRun run = run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out"));
  EXPECT_EQ(run.code, 4) << run.output;
  const auto rows = csv_rows(tmp / "out/results.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].at("status"), "ok");
  EXPECT_EQ(rows[0].at("algorithm").rfind("nccl:", 0), 0u) << rows[0].at("algorithm");
  EXPECT_EQ(rows[0].at("time_ns"), rows[1].at("time_ns"));
  EXPECT_EQ(rows[2].at("status"), "failed");
  EXPECT_EQ(rows[2].at("exit_code"), "2");
  EXPECT_EQ(rows[2].at("message"), "system config '" + (tmp / "empty") + "' is not a regular file (it is a directory)");
}

TEST(SweepRun, APointWithBadInputIsReportedAndTheOthersComplete) {
  TempDir tmp("sweep_bad");
  spit(tmp / "good.yml", shape8("Ring"));
  spit(tmp / "typo.yml", shape8("Ring", "50GB/s", "bandwidht"));
  spit(tmp / "spec.yml",
       "base:\n  microbenchmark: {npus: 8}\n  network: good.yml\n"
       "axes:\n  network: [good.yml, typo.yml, missing.yml]\n  size: [1KiB, 1MiB]\n");
  const SimRun run = run_sim("sweep " + (tmp / "spec.yml") + " -o " + (tmp / "out"));
  EXPECT_EQ(run.code, 4) << run.output;  // finished, some points failed
  EXPECT_NE(run.output.find("typo.yml"), std::string::npos) << run.output;
  const auto rows = csv_rows(tmp / "out/results.csv");
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& r : rows) {
    if (r.at("network") == "good.yml") {
      EXPECT_EQ(r.at("status"), "ok");
      continue;
    }
    EXPECT_EQ(r.at("status"), "failed");
    EXPECT_EQ(r.at("exit_code"), "2");
    EXPECT_NE(r.at("message").find(r.at("network") == "typo.yml" ? "bandwidht" : "missing.yml"), std::string::npos)
        << r.at("message");
  }
}

// A folder where results.json goes was found after every point had run; the
// results are now checked writable first, and neither file replaced alone.
TEST(SweepRun, AResultsPathThatCannotBeWrittenIsRefusedBeforeAnyPointRuns) {
  TempDir tmp("sweep_results_path");
  spit(tmp / "ring.yml", shape8("Ring"));
  spit(tmp / "spec.yml", "base:\n  microbenchmark: {npus: 8}\n  network: ring.yml\naxes:\n  size: [1KiB, 1MiB]\n");
  std::filesystem::create_directories(tmp / "out/results.json");
  const SimRun run = run_sim("sweep -q " + (tmp / "spec.yml") + " -o " + (tmp / "out"));
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_EQ(run.output, "sim: error: cannot write '" + (tmp / "out/results.json") + "': it is a folder; give a file name\n");
  EXPECT_TRUE(std::filesystem::is_empty(tmp / "out/cache"));  // no point ran
  EXPECT_FALSE(std::filesystem::exists(tmp / "out/results.csv"));
}

TEST(SweepRun, ShardsMergeIntoTheLocalCsvByteForByte) {
  TempDir tmp("sweep_shard");
  ASSERT_EQ(run_sim("sweep " + kBandwidthSpec + " -q -j 2 -o " + (tmp / "local")).code, 0);
  ASSERT_EQ(run_sim("sweep " + kBandwidthSpec + " -q --shard 0/2 -o " + (tmp / "s0")).code, 0);
  ASSERT_EQ(run_sim("sweep " + kBandwidthSpec + " -q --shard 1/2 -o " + (tmp / "s1")).code, 0);
  EXPECT_EQ(csv_rows(tmp / "s0/results.csv").size(), 24u);
  // An empty share (an unset variable in a job script) ran every point.
  const SimRun empty = run_sim("sweep " + kBandwidthSpec + " -q --shard '' -o " + (tmp / "empty"));
  EXPECT_EQ(empty.code, 2) << empty.output;
  EXPECT_NE(empty.output.find("sim: error: --shard '': expected I/K with 0 <= I < K (e.g. 0/4)"), std::string::npos)
      << empty.output;
  EXPECT_FALSE(std::filesystem::exists(tmp / "empty"));
  // Digits only: std::stoul skipped a space and a plus, and read -1 as 2^64 - 1.
  for (const char* shard : {"' 1/2'", "+1/2", "1/+2", "-1/2", "1/2x", "2/2", "0/0"}) {
    const SimRun bad = run_sim("sweep " + kBandwidthSpec + " -q --shard " + shard + " -o " + (tmp / "bad"));
    EXPECT_EQ(bad.code, 2) << shard << bad.output;
    EXPECT_NE(bad.output.find("expected I/K with 0 <= I < K"), std::string::npos) << bad.output;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp / "bad"));
  // A merge of one shard is refused: it misses half the points.
  const SimRun partial = run_sim("sweep merge " + (tmp / "s0") + " -o " + (tmp / "partial"));
  EXPECT_EQ(partial.code, 2);
  EXPECT_NE(partial.output.find("24 of 48 points are in none of the folders"), std::string::npos) << partial.output;
  // Into a shard's own folder: refused, that shard's results untouched.
  const std::string s0 = slurp(tmp / "s0/results.csv");
  for (const std::string& out : {tmp / "s0", tmp / "s1/../s0"}) {
    const SimRun over = run_sim("sweep merge " + (tmp / "s0") + " " + (tmp / "s1") + " -o " + out);
    EXPECT_EQ(over.code, 2) << over.output;
    EXPECT_NE(over.output.find("is one of the shards' folders"), std::string::npos) << over.output;
  }
  EXPECT_EQ(slurp(tmp / "s0/results.csv"), s0);
  const SimRun merge = run_sim("sweep merge " + (tmp / "s0") + " " + (tmp / "s1") + " -o " + (tmp / "merged"));
  ASSERT_EQ(merge.code, 0) << merge.output;
  EXPECT_EQ(slurp(tmp / "merged/results.csv"), slurp(tmp / "local/results.csv"));
}

// A shard's results.json naming a point past the sweep's count (edited, or of
// another run) was merged as one more row, exit 0.
TEST(SweepRun, AMergedPointPastTheSweepsCountIsAnError) {
  TempDir tmp("sweep_merge_past");
  spit(tmp / "ring.yml", shape8("Ring"));
  spit(tmp / "spec.yml", "base:\n  microbenchmark: {npus: 8}\n  network: ring.yml\naxes:\n  size: [1KiB, 1MiB]\n");
  ASSERT_EQ(run_sim("sweep -q " + (tmp / "spec.yml") + " --shard 0/2 -o " + (tmp / "s0")).code, 0);
  ASSERT_EQ(run_sim("sweep -q " + (tmp / "spec.yml") + " --shard 1/2 -o " + (tmp / "s1")).code, 0);
  std::string json = slurp(tmp / "s1/results.json");
  const std::size_t at = json.find("\"index\": 1");
  ASSERT_NE(at, std::string::npos) << json;
  spit(tmp / "s1/results.json", json.replace(at, 10, "\"index\": 7"));
  const SimRun merge = run_sim("sweep merge " + (tmp / "s0") + " " + (tmp / "s1") + " -o " + (tmp / "merged"));
  EXPECT_EQ(merge.code, 2) << merge.output;
  EXPECT_EQ(merge.output, "sim: error: " + (tmp / "s1") + "/results.json: point 7 is past the sweep's 2 points "
                          "(numbered from 0): not a share of this sweep\n");
  EXPECT_FALSE(std::filesystem::exists(tmp / "merged"));
}

TEST(SweepRun, AnAlgorithmInjectedAsEtsEqualsTheNativeOneAndIsKeyedByItsFiles) {
  TempDir tmp("sweep_et");
  ASSERT_EQ(run_sim("collective gen ring --coll allreduce --npus 8 -o " + (tmp / "algo/ring")).code, 0);
  spit(tmp / "spec.yml", "base:\n  microbenchmark: {npus: 8}\n  network: " + source_path("configs/switch8.yml") +
                             "\naxes:\n  collective: [allreduce=ring, allreduce=algo/ring]\n  size: [64KiB, 1MiB, 16MiB]\n"
                             "  backend: [analytical, flow]\n");
  ASSERT_EQ(run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out")).code, 0);
  const auto rows = csv_rows(tmp / "out/results.csv");
  ASSERT_EQ(rows.size(), 12u);
  for (std::size_t r = 0; r < 6; ++r) {
    EXPECT_EQ(rows[r].at("algorithm"), "ring");
    EXPECT_EQ(rows[r + 6].at("algorithm").rfind("et:", 0), 0u) << rows[r + 6].at("algorithm");
    EXPECT_EQ(rows[r].at("time_ns"), rows[r + 6].at("time_ns")) << "point " << r;  // bit-identical
  }
  // Rewritten with 2 chunks: only the 6 points that read those files rerun.
  ASSERT_EQ(run_sim("collective gen ring --coll allreduce --npus 8 --chunks 2 -o " + (tmp / "algo/ring")).code, 0);
  ASSERT_EQ(run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out")).code, 0);
  EXPECT_EQ(summary_of(tmp / "out").at("simulated"), 6);
}

// A microbenchmark runs the same collective on every rank: on one switch, rank
// 0 stands for all (as identical rank files do on the command line), and each
// point equals the run of every rank message by message.
TEST(SweepRun, AMicrobenchmarksIdenticalRanksFoldAndEqualEveryRank) {
  TempDir tmp("sweep_fold");
  spit(tmp / "spec.yml", "base:\n  microbenchmark: {npus: 64}\n  network: " + source_path("configs/switch64.yml") +
                             "\naxes:\n  collective: [allreduce=ring, allreduce=direct]\n  size: [64KiB, 4MiB]\n");
  ASSERT_EQ(run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out")).code, 0);
  const auto rows = csv_rows(tmp / "out/results.csv");
  ASSERT_EQ(rows.size(), 4u);
  // Each point's events, from its cached result.
  std::vector<std::uint64_t> point_events;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(tmp / "out")) {
    if (entry.path().extension() != ".json") continue;
    const nlohmann::json j = nlohmann::json::parse(slurp(entry.path().string()));
    if (j.contains("events") && j.contains("key")) point_events.push_back(j.at("events").get<std::uint64_t>());
  }
  ASSERT_EQ(point_events.size(), 4u);
  for (const auto& row : rows) {
    ASSERT_EQ(row.at("status"), "ok");
    const std::string coll = row.at("--collective"), size = row.at("size");
    const std::string wl = tmp / ("wl_" + size + "/w");
    if (!std::filesystem::exists(tmp / ("wl_" + size))) {
      ASSERT_EQ(run_sim("workload gen collectives --npus 64 --coll allreduce --size " + size + " -o " + wl).code, 0);
    }
    const std::string report = tmp / "every.json";
    const SimRun every = run_sim("-q --workload " + wl + " --network " + source_path("configs/switch64.yml") +
                                 " --collective " + coll + " --no-aggregation --report " + report);
    ASSERT_EQ(every.code, 0) << every.output;
    const nlohmann::json r = nlohmann::json::parse(slurp(report));
    // The same picosecond (both print ns with ps digits).
    EXPECT_NEAR(std::stod(row.at("sim_time_ns")), r.at("sim_time_ns").get<double>(), 0.0005) << coll << " " << size;
    EXPECT_EQ(row.at("npus"), "64");
    // Folded: a sixty-fourth of the events, near enough.
    for (const std::uint64_t e : point_events) EXPECT_LT(e * 16, r.at("events").get<std::uint64_t>()) << coll << " " << size;
  }
}

// A microbenchmark named as a generated workload: its query's keys are axes
// (workload.size, workload.npus), and each point equals the same
// microbenchmark given as base.microbenchmark, row for row.
TEST(SweepRun, AGeneratedMicrobenchmarksQueryKeysAreAxes) {
  TempDir tmp("sweep_genmb");
  const std::string net = source_path("configs/switch64.yml");
  spit(tmp / "gen.yml", "base:\n  workload: 'gen:collectives?npus=16&coll=allreduce,allgather'\n  network: " + net +
                            "\naxes:\n  workload.size: [64KiB, 4MiB]\n  workload.npus: [16, 64]\n"
                            "  collective: [allreduce=ring, allreduce=halvingDoubling]\n");
  spit(tmp / "mb.yml", "base:\n  microbenchmark: {npus: 16, collectives: [allreduce, allgather]}\n  network: " + net +
                           "\naxes:\n  size: [64KiB, 4MiB]\n  npus: [16, 64]\n"
                           "  collective: [allreduce=ring, allreduce=halvingDoubling]\n");
  ASSERT_EQ(run_sim("sweep " + (tmp / "gen.yml") + " -q -o " + (tmp / "gen")).code, 0);
  ASSERT_EQ(run_sim("sweep " + (tmp / "mb.yml") + " -q -o " + (tmp / "mb")).code, 0);
  const auto gen = csv_rows(tmp / "gen/results.csv");
  const auto mb = csv_rows(tmp / "mb/results.csv");
  ASSERT_EQ(gen.size(), 16u);  // 8 points, 2 collectives each
  ASSERT_EQ(mb.size(), gen.size());
  for (std::size_t i = 0; i < gen.size(); ++i) {
    EXPECT_EQ(gen[i].at("status"), "ok");
    EXPECT_EQ(gen[i].at("workload.size"), mb[i].at("size"));
    EXPECT_EQ(gen[i].at("workload.npus"), mb[i].at("npus"));
    for (const char* column : {"npus", "sim_time_ns", "collective", "bytes", "group_size", "algorithm", "time_ns", "busbw_gbps"}) {
      EXPECT_EQ(gen[i].at(column), mb[i].at(column)) << "row " << i << " " << column;
    }
  }
}

// The `npus` axis's column was named `npus`, as the result's: `sim compare`
// refused the sweep's own results.csv ("column 5 ('npus') is named twice").
TEST(SweepRun, AnNpusAxisHasAColumnOfItsOwnAndTheResultsCompare) {
  TempDir tmp("sweep_npus_axis");
  spit(tmp / "ring.yml", shape8("Ring"));
  spit(tmp / "spec.yml", "base:\n  microbenchmark: {npus: 8}\n  network: ring.yml\naxes:\n  npus: [4, 8]\n");
  ASSERT_EQ(run_sim("sweep -q " + (tmp / "spec.yml") + " -o " + (tmp / "out")).code, 0);
  const std::string csv = tmp / "out/results.csv";
  EXPECT_EQ(slurp(csv).substr(0, slurp(csv).find('\n')),
            "point,microbenchmark.npus,status,exit_code,npus,sim_time_ns,collective,bytes,group_size,algorithm,ranks,"
            "time_ns,algbw_gbps,busbw_gbps,message");
  const auto rows = csv_rows(csv);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("microbenchmark.npus"), "4");
  EXPECT_EQ(rows[0].at("npus"), "4");
  const SimRun compare = run_sim("compare " + csv + " " + csv);
  EXPECT_EQ(compare.code, 0) << compare.output;
  EXPECT_NE(compare.output.find("2 points compared"), std::string::npos) << compare.output;
}

TEST(SweepRun, InterruptedSweepKeepsFinishedPointsAndTheRerunFinishesIt) {
  TempDir tmp("sweep_int");
  std::string sizes;
  for (int k = 0; k < 40; ++k) sizes += (k ? ", " : "") + std::to_string(1000 + k) + "KiB";
  spit(tmp / "spec.yml", "base:\n  microbenchmark: {npus: 64}\n  network: " + source_path("configs/torus8x8.yml") +
                             "\naxes:\n  size: [" + sizes + "]\n  collective: [allreduce=ring, allreduce=direct]\n"
                             "  backend: [analytical, flow]\n");
  // SIGINT once the first point is saved (not after a fixed delay: on a loaded
  // machine the signal could come before sim has even started): running
  // points finish, the rest are left for the rerun.
  const std::string cache = tmp / "out/cache";
  const std::string cmd = "sh -c '" + std::string(SIM_BINARY) + " sweep " + (tmp / "spec.yml") + " -j 1 -o " +
                          (tmp / "out") + " & pid=$!; i=0; while [ $i -lt 600 ] && ! ls " + cache +
                          " 2>/dev/null | grep -q json; do sleep 0.05; i=$((i+1)); done; kill -INT $pid; wait $pid; "
                          "echo exit=$?'";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  pclose(pipe);
  if (out.find("exit=0") != std::string::npos) GTEST_SKIP() << "the sweep finished before the signal";
  ASSERT_NE(out.find("exit=130"), std::string::npos) << out;
  const nlohmann::json j = nlohmann::json::parse(slurp(tmp / "out/results.json"));
  EXPECT_TRUE(j.at("interrupted").get<bool>());
  const std::size_t saved = j.at("points").size();
  EXPECT_LT(saved, 160u);
  EXPECT_EQ(csv_rows(tmp / "out/results.csv").size(), saved);  // a whole file, its finished points
  for (const auto& entry : std::filesystem::directory_iterator(tmp / "out/cache")) {
    EXPECT_EQ(entry.path().extension(), ".json") << entry.path();  // no temporary file left
  }
  ASSERT_EQ(run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out")).code, 0);
  EXPECT_EQ(summary_of(tmp / "out").at("simulated"), 160 - static_cast<int>(saved));
  EXPECT_EQ(csv_rows(tmp / "out/results.csv").size(), 160u);
}

TEST(SweepRun, ProgressLinesWhenNotATerminal) {
  TempDir tmp("sweep_progress");
  const SimRun run = run_sim("sweep " + kBandwidthSpec + " --progress-interval 0.001 -j 1 -o " + (tmp / "out"));
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("sweep: 48/48 points, 0 failed"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("\r["), std::string::npos);  // no bar in a log
}

// nan was taken (no progress line ever) and 0 named CLI11's range as 300 digits.
TEST(SweepRun, ProgressIntervalIsSecondsAboveZero) {
  TempDir tmp("sweep_progress_interval");
  for (const char* bad : {"nan", "0", "inf", "1e308", "5s"}) {
    const SimRun run = run_sim("sweep " + kBandwidthSpec + " -q -o " + (tmp / "out") + " --progress-interval " + bad);
    EXPECT_EQ(run.code, 2) << run.output;
    EXPECT_NE(run.output.find(std::string("sim: error: --progress-interval: expected seconds, a number above 0 and at "
                                          "most 1e9, got '") + bad + "'"),
              std::string::npos)
        << run.output;
    EXPECT_FALSE(std::filesystem::exists(tmp / "out")) << bad;
  }
}

TEST(SweepRun, ZippedAxesAdvanceTogether) {
  TempDir tmp("sweep_zip");
  spit(tmp / "spec.yml",
       "base:\n  microbenchmark: {npus: 8}\n  network: " + source_path("configs/ring8.yml") +
           "\naxes:\n  size: [1KiB, 1MiB, 1GiB]\n  network.bandwidth: [10, 20, 40]\n  backend: [analytical, flow]\n"
           "zip: [[size, network.bandwidth]]\n");
  ASSERT_EQ(run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out")).code, 0);
  const auto rows = csv_rows(tmp / "out/results.csv");
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0].at("size") + rows[0].at("network.bandwidth") + rows[0].at("backend"), "1KiB10analytical");
  EXPECT_EQ(rows[1].at("size") + rows[1].at("network.bandwidth") + rows[1].at("backend"), "1KiB10flow");
  EXPECT_EQ(rows[5].at("size") + rows[5].at("network.bandwidth") + rows[5].at("backend"), "1GiB40flow");
}

struct SpecError {
  std::string spec, expected;
  friend void PrintTo(const SpecError& e, std::ostream* os) { *os << e.expected; }
};

class SweepSpecErrors : public ::testing::TestWithParam<SpecError> {};

TEST_P(SweepSpecErrors, ExitTwoNamingTheLine) {
  TempDir tmp("sweep_spec_err");
  spit(tmp / "ring.yml", shape8("Ring"));
  spit(tmp / "spec.yml", GetParam().spec);
  const SimRun run = run_sim("sweep " + (tmp / "spec.yml") + " -o " + (tmp / "out"));
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find(GetParam().expected), std::string::npos) << run.output;
  EXPECT_FALSE(std::filesystem::exists(tmp / "out/results.csv"));
}

const std::string kBase = "base:\n  microbenchmark: {npus: 8}\n  network: ring.yml\n";
INSTANTIATE_TEST_SUITE_P(
    Spec, SweepSpecErrors,
    ::testing::Values(
        SpecError{kBase + "axes:\n  size: [1KiB]\nbogus: 1\n", "spec.yml:6: unknown key 'bogus'"},
        SpecError{kBase + "axes:\n  size: []\n", "spec.yml:5: axes.size: expected a non-empty list"},
        SpecError{kBase + "axes:\n  network.bandwith: [10, 20]\n", "spec.yml:5: axis 'network.bandwith': "},
        SpecError{kBase + "axes:\n  colour: [red]\n", "spec.yml:5: axes: unknown axis 'colour'"},
        SpecError{kBase + "axes:\n  size: [1KiB, 2KiB]\n  backend: [flow]\nzip: [[size, backend]]\n",
                  "spec.yml:7: zip: axis 'backend' has 1 values but 'size' has 2"},
        SpecError{kBase + "axes:\n  size: [1KiB, 1KiB]\n", "'1KiB' is listed twice"},
        SpecError{kBase + "axes:\n  size: [lots]\n", "spec.yml:5: axes.size[0]"},
        // Sizes as the command line's --workload gen:collectives?size= takes them.
        SpecError{kBase + "axes:\n  size: [1MiB, 0B]\n",
                  "spec.yml:5: axes.size[1]: must be at least 1 byte, got '0B'\n"},
        SpecError{kBase + "axes:\n  size:\n    - 1MiB\n    - 9223372036854775808\n",
                  "spec.yml:7: axes.size[1]: '9223372036854775808' is too large\n"},
        SpecError{"base:\n  microbenchmark: {npus: 8, size: 0B}\n  network: ring.yml\naxes:\n  backend: [flow]\n",
                  "spec.yml:2: base.microbenchmark.size: must be at least 1 byte, got '0B'\n"},
        // PyTorch traces were taken as an ET prefix: every point failed with "no files spec/pytorch:DIR.<rank>.et".
        SpecError{"base:\n  workload: 'pytorch:traces'\n  network: ring.yml\naxes:\n  backend: [flow]\n",
                  "spec.yml:2: workload 'pytorch:traces': a sweep runs Chakra ETs or a gen: workload, not PyTorch "
                  "traces; import them once (sim workload import pytorch --host-et DIR -o PREFIX) and name PREFIX\n"},
        SpecError{kBase + "axes:\n  workload: [wl/a, 'pytorch:traces']\n",
                  "spec.yml:5: workload 'pytorch:traces': a sweep runs Chakra ETs or a gen: workload"}));

}  // namespace
}  // namespace sim::testing
