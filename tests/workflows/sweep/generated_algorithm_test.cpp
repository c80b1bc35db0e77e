// Collective algorithms a sweep makes as a step of its points (gen:, synth),
// MSCCL-IR files as axis values, and key paths into ASTRA-sim's system JSON:
// each equals the single `sim` runs a user would do by hand.
#include <set>

#include <gtest/gtest.h>

#include "core/error.h"
#include "workflows/sweep_fixture.h"
#include "workflows/sweep/generated_algorithm.h"

namespace sim::testing {
namespace {

using workflows::GeneratedAlgorithm;
using workflows::parse_generated_algorithm;

const std::string kShared = source_path("../shared/testdata");

// The slowest rank's time of one `sim` run, from its --csv.
double single_run_ns(const std::string& args, const TempDir& tmp) {
  const std::string csv = tmp / "single.csv";
  const SimRun one = run_sim("-q " + args + " --csv " + csv);
  EXPECT_EQ(one.code, 0) << args << "\n" << one.output;
  double slowest = 0;
  for (const auto& r : csv_rows(csv)) slowest = std::max(slowest, std::stod(r.at("duration_ns")));
  return slowest;
}

TEST(GeneratedAlgorithm, ParsesGenAndSynthAndLeavesOtherChoicesAlone) {
  const auto gen = parse_generated_algorithm("allreduce=gen:direct:window=4");
  ASSERT_TRUE(gen);
  EXPECT_EQ(gen->kind, GeneratedAlgorithm::Kind::kGen);
  EXPECT_EQ(gen->algorithm, "direct:window=4");
  const auto synth = parse_generated_algorithm("allgather=synth:chunks=2,seed=7,size=4MiB");
  ASSERT_TRUE(synth);
  EXPECT_EQ(synth->kind, GeneratedAlgorithm::Kind::kSynth);
  EXPECT_EQ(synth->chunks, 2u);
  EXPECT_EQ(synth->seed, 7u);
  EXPECT_EQ(synth->size_text, "4MiB");
  EXPECT_FALSE(parse_generated_algorithm("allreduce=ring"));
  EXPECT_FALSE(parse_generated_algorithm("allreduce=algo/ring"));
  EXPECT_FALSE(parse_generated_algorithm("allreduce=x.xml"));
  EXPECT_FALSE(parse_generated_algorithm("allreduce=synthetic/prefix"));  // a folder named synth...
  for (const char* bad : {"gen:ring", "allreduce=gen:nosuch", "allreduce=gen:", "allreduce=gen:ring:window=2",
                          "alltoall=synth", "allgather=synth:chunk=2", "allgather=synth:seed=0",
                          "allgather=synth:size=lots", "allgather=synth:chunks=100000", "frob=gen:ring"}) {
    EXPECT_THROW(parse_generated_algorithm(bad), InputError) << bad;
  }
}

TEST(GeneratedAlgorithm, GenAndSynthEqualTheFilesTheCommandsWrite) {
  TempDir tmp("sweep_gen");
  const std::string ring8 = source_path("configs/ring8.yml"), switch8 = source_path("configs/switch8.yml");
  spit(tmp / "spec.yml", "base:\n  microbenchmark: {npus: 8, collectives: [allgather]}\n  network: " + ring8 +
                             "\naxes:\n  network: [" + ring8 + ", " + switch8 +
                             "]\n  collective: [allgather=gen:ring, allgather=synth]\n  size: [4KiB, 16MiB]\n"
                             "  backend: [analytical, flow]\n");
  const SimRun sweep = run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out"));
  ASSERT_EQ(sweep.code, 0) << sweep.output;
  const auto rows = csv_rows(tmp / "out/results.csv");
  ASSERT_EQ(rows.size(), 16u);
  // By hand: the ring written once, the synthesized algorithm once per network.
  ASSERT_EQ(run_sim("collective gen ring --coll allgather --npus 8 -o " + (tmp / "algo/ring")).code, 0);
  for (const auto& [name, net] : {std::pair{"ring8", ring8}, {"switch8", switch8}}) {
    const SimRun s = run_sim("collective synth --coll allgather --network " + net + " -o " + (tmp / "algo/synth_") + name);
    ASSERT_EQ(s.code, 0) << s.output;
  }
  for (const auto& row : rows) {
    ASSERT_EQ(row.at("status"), "ok") << row.at("message");
    const std::string size = row.at("size"), net = row.at("network");
    const std::string wl = tmp / ("wl_" + size + "/w");
    if (!std::filesystem::exists(tmp / ("wl_" + size))) {
      ASSERT_EQ(run_sim("workload gen collectives --npus 8 --coll allgather --size " + size + " -o " + wl).code, 0);
    }
    const bool synth = row.at("--collective") == "allgather=synth";
    const std::string prefix = synth ? tmp / ("algo/synth_" + std::string(net == ring8 ? "ring8" : "switch8"))
                                     : tmp / "algo/ring";
    const double want = single_run_ns("--workload " + wl + " --network " + net + " --backend " + row.at("backend") +
                                          " --collective allgather=" + prefix,
                                      tmp);
    EXPECT_EQ(std::stod(row.at("time_ns")), want) << "point " << row.at("point") << " " << row.at("--collective");
    EXPECT_EQ(row.at("algorithm").rfind("et:", 0), 0u) << row.at("algorithm");
  }
  // One folder per distinct algorithm: the ring once (8 ranks), synth once per network.
  std::size_t folders = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp / "out/generated")) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();  // nothing half-written
    ++folders;
  }
  EXPECT_EQ(folders, 3u);
  // Shards write their algorithms in their own folders, yet merge into the same CSV.
  for (const char* shard : {"0", "1"}) {
    ASSERT_EQ(run_sim("sweep " + (tmp / "spec.yml") + " -q --shard " + shard + "/2 -o " + (tmp / "s") + shard).code, 0);
  }
  ASSERT_EQ(run_sim("sweep merge " + (tmp / "s0") + " " + (tmp / "s1") + " -o " + (tmp / "merged")).code, 0);
  EXPECT_EQ(slurp(tmp / "merged/results.csv"), slurp(tmp / "out/results.csv"));
  // A rerun is all from the cache and generates nothing.
  std::filesystem::remove_all(tmp / "out/generated");
  ASSERT_EQ(run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out")).code, 0);
  EXPECT_EQ(summary_of(tmp / "out").at("simulated"), 0);
  EXPECT_FALSE(std::filesystem::exists(tmp / "out/generated"));
}

TEST(GeneratedAlgorithm, ABadGeneratedChoiceIsASpecErrorNamingTheLine) {
  TempDir tmp("sweep_gen_bad");
  spit(tmp / "spec.yml", "base:\n  microbenchmark: {npus: 8}\n  network: " + source_path("configs/ring8.yml") +
                             "\naxes:\n  collective:\n    - allreduce=ring\n    - allreduce=gen:nosuch\n");
  const SimRun bad = run_sim("sweep " + (tmp / "spec.yml") + " -o " + (tmp / "out"));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("spec.yml:7: axes.collective[1]: collective 'allreduce=gen:nosuch': gen: takes a native"),
            std::string::npos)
      << bad.output;
}

TEST(SweepAxes, AnMscclIrFileIsAnAlgorithmValueKeyedByItsContent) {
  const std::string xml = kShared + "/msccl/rccl__allgather-allpairs-8n-ll.xml";
  if (!std::filesystem::exists(xml)) GTEST_SKIP() << "no " << xml << " (../shared/testdata)";
  TempDir tmp("sweep_msccl");
  std::filesystem::copy_file(xml, tmp / "allpairs.xml");
  spit(tmp / "spec.yml", "base:\n  microbenchmark: {npus: 8, collectives: [allgather]}\n  network: " +
                             source_path("configs/switch8.yml") +
                             "\naxes:\n  collective: [allgather=allpairs.xml, allgather=direct]\n"
                             "  size: [64KiB, 4MiB]\n  backend: [analytical, flow]\n");
  const SimRun sweep = run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out"));
  ASSERT_EQ(sweep.code, 0) << sweep.output;
  const auto rows = csv_rows(tmp / "out/results.csv");
  ASSERT_EQ(rows.size(), 8u);
  for (std::size_t r = 0; r < 4; ++r) {
    const auto& row = rows[r];
    ASSERT_EQ(row.at("status"), "ok") << row.at("message");
    const std::string wl = tmp / ("wl_" + row.at("size") + "/w");
    if (!std::filesystem::exists(tmp / ("wl_" + row.at("size")))) {
      ASSERT_EQ(run_sim("workload gen collectives --npus 8 --coll allgather --size " + row.at("size") + " -o " + wl).code, 0);
    }
    const double want = single_run_ns("--workload " + wl + " --network " + source_path("configs/switch8.yml") +
                                          " --backend " + row.at("backend") + " --collective allgather=" +
                                          (tmp / "allpairs.xml"),
                                      tmp);
    EXPECT_EQ(std::stod(row.at("time_ns")), want) << "point " << r;
    EXPECT_GT(std::stod(row.at("time_ns")), 0);
  }
  // Editing the XML reruns exactly the 4 points that read it.
  std::ofstream(tmp / "allpairs.xml", std::ios::app) << "<!-- edited -->\n";
  ASSERT_EQ(run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out")).code, 0);
  EXPECT_EQ(summary_of(tmp / "out").at("simulated"), 4);
}

TEST(SweepAxes, KeyPathsIntoAstraSimSystemJsonAreStrict) {
  const std::string json = kShared + "/astrasim-reference/system/ring_1d.json";
  const std::string net = kShared + "/astrasim-reference/network/Ring_8.yml";
  if (!std::filesystem::exists(json)) GTEST_SKIP() << "no " << json << " (../shared/testdata)";
  TempDir tmp("sweep_json");
  const std::string head = "base:\n  microbenchmark: {npus: 8}\n  network: " + net + "\n  system: " + json + "\naxes:\n";
  spit(tmp / "spec.yml", head + "  system.active-chunks-per-dimension: [1, 2]\n  system.preferred-dataset-splits: [1, 4]\n"
                                "  network.bandwidth.0: [25, 50]\n");
  const SimRun sweep = run_sim("sweep " + (tmp / "spec.yml") + " -q -o " + (tmp / "out"));
  ASSERT_EQ(sweep.code, 0) << sweep.output;
  const auto rows = csv_rows(tmp / "out/results.csv");
  ASSERT_EQ(rows.size(), 8u);
  // Each point equals a run on the JSON edited by hand (nlohmann, as a user's script would).
  ASSERT_EQ(run_sim("workload gen collectives --npus 8 --coll allreduce --size 1MiB -o " + (tmp / "wl/w")).code, 0);
  std::set<std::string> times;
  for (const auto& row : rows) {
    nlohmann::json j = nlohmann::json::parse(slurp(json));
    j["active-chunks-per-dimension"] = std::stoi(row.at("system.active-chunks-per-dimension"));
    j["preferred-dataset-splits"] = std::stoi(row.at("system.preferred-dataset-splits"));
    spit(tmp / "edited.json", j.dump());
    std::string yml = slurp(net);
    const std::string bw = row.at("network.bandwidth.0");
    const auto at = yml.find("bandwidth:");
    ASSERT_NE(at, std::string::npos);
    yml = yml.substr(0, at) + "bandwidth: [" + bw + "]" + yml.substr(yml.find('\n', at));
    spit(tmp / "edited.yml", yml);
    EXPECT_EQ(std::stod(row.at("time_ns")),
              single_run_ns("--workload " + (tmp / "wl/w") + " --network " + (tmp / "edited.yml") + " --system " +
                                (tmp / "edited.json"),
                            tmp))
        << "point " << row.at("point");
    times.insert(row.at("time_ns"));
  }
  EXPECT_GE(times.size(), 4u);  // the keys do change the result
  // A key the file does not have, and a value of the wrong type: exit 2 naming the spec line.
  spit(tmp / "bad.yml", head + "  system.active-chunks-per-dimensions: [1, 2]\n");
  SimRun bad = run_sim("sweep " + (tmp / "bad.yml") + " -o " + (tmp / "bad"));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("bad.yml:6: axis 'system.active-chunks-per-dimensions': " + json +
                            " has no key 'active-chunks-per-dimensions'"),
            std::string::npos)
      << bad.output;
  spit(tmp / "bad.yml", head + "  system.active-chunks-per-dimension: [1, many]\n");
  bad = run_sim("sweep " + (tmp / "bad.yml") + " -o " + (tmp / "bad"));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("bad.yml:6: axis 'system.active-chunks-per-dimension': 'many' for " + json +
                            " key 'active-chunks-per-dimension', which holds an integer"),
            std::string::npos)
      << bad.output;
}

}  // namespace
}  // namespace sim::testing
