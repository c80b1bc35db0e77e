// Nothing truncates and every message says where: integers from traces and
// configs are range-checked against where they are kept, numbers parse
// completely, duplicate keys and special files are refused, and each error
// names the file, line and key (configs) or file, rank, node id and name, and
// attribute (traces). Exit 2 for all of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "../common/run_sim.h"
#include "../common/temp_workload.h"

namespace sim {
namespace {

using testing::run_sim;
using testing::SimRun;

class StrictInput : public testing::TempWorkload {
 protected:
  // Runs the bundled example with `--system <file of yaml>`.
  SimRun with_system(const std::string& yaml) { return run_sim("-q --system " + text_file("sys.yml", yaml)); }
  // A one-rank workload on ring8, for options that need --workload (--comm-group).
  std::string with_workload() {
    et::Node c;
    c.set_id(1);
    c.set_name("step");
    c.set_type(et::COMP_NODE);
    c.set_duration_micros(1);
    return "-q --workload " + workload("cg", {{c}}) + " --network " + std::string(SIM_SOURCE_DIR) + "/configs/ring8.yml";
  }
};

using testing::shipped_config;

void expect_error(const SimRun& r, const std::vector<std::string>& parts) {
  EXPECT_EQ(r.code, 2) << r.output;
  for (const std::string& p : parts) EXPECT_NE(r.output.find(p), std::string::npos) << p << "\n" << r.output;
}

et::Node send(std::int64_t dst) {
  et::Node n;
  n.set_id(7);
  n.set_name("halo_send");
  n.set_type(et::COMM_SEND_NODE);
  set_attr_int(n, "comm_dst", dst);
  set_attr_int(n, "comm_size", 64);
  return n;
}

et::Node recv() {
  et::Node n;
  n.set_id(7);
  n.set_name("halo_recv");
  n.set_type(et::COMM_RECV_NODE);
  set_attr_int(n, "comm_src", 0);
  set_attr_int(n, "comm_size", 64);
  return n;
}

TEST_F(StrictInput, RankBeyondInt32IsNotTruncated) {
  // 2^32 + 1 used to be taken as rank 1 and run.
  const std::string w = workload("w", {{send((std::int64_t{1} << 32) + 1)}, {recv()}});
  expect_error(run_sim("--workload " + w + " --network " + shipped_config("ring8.yml")),
               {"w.0.et: rank 0, node 7 'halo_send': attribute 'comm_dst' value 4294967297 is outside 0..2147483647"});
}

TEST_F(StrictInput, NegativeSizesAreErrors) {
  et::Node load;
  load.set_id(3);
  load.set_name("weights");
  load.set_type(et::MEM_LOAD_NODE);
  set_attr_int(load, "tensor_size", -5);
  const std::string w = workload("w", {{load}});
  expect_error(run_sim("--workload " + w + " --network " + shipped_config("ring8.yml")),
               {"w.0.et: rank 0, node 3 'weights': attribute 'tensor_size' value -5"});
}

TEST_F(StrictInput, WrongTypedAttributeNamesFileRankNodeAndAttribute) {
  et::Node n = send(1);
  n.mutable_attr(1)->set_string_val("64");  // comm_size as a string
  const std::string w = workload("w", {{n}, {recv()}});
  expect_error(run_sim("--workload " + w + " --network " + shipped_config("ring8.yml")),
               {"w.0.et: rank 0, node 7 'halo_send': attribute 'comm_size' has type string_val, expected integer"});
}

TEST_F(StrictInput, SystemConfigNumbersParseCompletely) {
  expect_error(with_system("collective:\n  chunks: 2.9\n"), {"sys.yml:2: 'collective.chunks' must be a whole number"});
  expect_error(with_system("compute:\n  peak_tflops: 989abc\n  memory_bandwidth: 1TB/s\n"),
               {"sys.yml:2: 'compute.peak_tflops' must be a number, got '989abc'"});
  expect_error(with_system("compute:\n  peak_tflops: 1e400\n  memory_bandwidth: 1TB/s\n"),
               {"sys.yml:2: 'compute.peak_tflops'"});
  expect_error(with_system("collective:\n  chunks: 99999999999999999999\n"), {"sys.yml:2: 'collective.chunks'"});
  expect_error(with_system("memory:\n  bandwidth: 1e400\n"), {"sys.yml:2: 'memory.bandwidth'", "out of range"});
}

// Rates are whole bytes per second: an efficiency that leaves a link below
// 1 B/s used to run it at 1 B/s (1e-12 and 1e-300 gave the same time, exit 0).
TEST_F(StrictInput, LinkEfficiencyBelowOneBytePerSecondIsRefused) {
  for (const char* backend : {"analytical", "flow"}) {
    const std::string yaml = std::string("network:\n  backend: ") + backend + "\n  link_efficiency: ";
    expect_error(with_system(yaml + "1e-12\n"),
                 {"sys.yml:3: network.link_efficiency: 1e-12 of a 50 GB/s link is less than 1 B/s, the smallest rate "
                  "a link can have (rates are whole bytes per second)"});
    expect_error(with_system(yaml + "1e-300\n"), {"sys.yml:3: network.link_efficiency: 1e-300 of a 50 GB/s link"});
    EXPECT_EQ(with_system(yaml + "1e-3\n").code, 0) << backend;  // 50 MB/s: slow, but a rate
  }
}

// A kernel table row that rounds to 0 ps, or beats its roofline by more than
// 100 times, is refused where it is read; one a little faster is warned about.
TEST_F(StrictInput, KernelTableRowsFasterThanPhysicsAreRefused) {
  const std::string yaml = "compute:\n  peak_tflops: 989.4\n  memory_bandwidth: 3.35TB/s\n  kernels: k.csv\n";
  const std::string header = "op,dtype,m,n,k,time_us\ngemm,bf16,512,512,512,15\n";
  text_file("k.csv", header + "gemm,bf16,1024,1024,1024,1e-300\n");
  expect_error(with_system(yaml), {"k.csv:3: column 6 (time_us): '1e-300' us rounds to 0 ps"});
  text_file("k.csv", header + "gemm,bf16,1024,1024,1024,0.001\n");
  expect_error(with_system(yaml), {"sys.yml:4: 'compute.kernels': ", "k.csv:3: a gemm bf16 kernel of 0.001 us is 2170 "
                                   "times faster than its roofline (2.17049 us"});
  text_file("k.csv", header + "gemm,bf16,1024,1024,1024,1\n");
  const SimRun warned = with_system(yaml);
  EXPECT_EQ(warned.code, 0) << warned.output;
  EXPECT_NE(warned.output.find("sim: warning: " + (dir_ / "k.csv").string() +
                               ":3: a gemm bf16 kernel of 1 us is 2.17 times faster than its roofline"),
            std::string::npos)
      << warned.output;
}

// A barrier of comm_size 1 MiB moves 1-byte messages: --strict refused it as
// faster than its ports (busbw 1048 GB/s printed). Now algbw and busbw are 0.
TEST_F(StrictInput, ABarrierIsNeverTooFastForStrict) {
  const SimRun r = run_sim("--workload 'gen:collectives?npus=8&coll=barrier&size=1MiB' --network " +
                           shipped_config("switch8.yml") + " --strict --csv -");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("not physical"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(",BARRIER,1048576,8,direct,0,1000.14,0.000000,0.000000\n"), std::string::npos) << r.output;
}

TEST_F(StrictInput, SystemConfigDuplicateAndWrongTypedKeys) {
  expect_error(with_system("collective:\n  chunks: 2\ncollective:\n  chunks: 3\n"), {"sys.yml:3: duplicate key 'collective'"});
  expect_error(with_system("collective:\n  chunks: 2\n  chunks: 3\n"), {"sys.yml:3: duplicate key 'collective.chunks'"});
  expect_error(with_system("collective:\n  reduction_bandwidth: [1, 2]\n"),
               {"sys.yml:2: 'collective.reduction_bandwidth' must be a single value"});
  expect_error(with_system("collective:\n  algorithms:\n    all_reduce: []\n"),
               {"sys.yml:3: 'collective.algorithms.all_reduce' must not be an empty list"});
}

TEST_F(StrictInput, SpecialFilesAreRefused) {
  expect_error(run_sim("-q --system " + dir_.string()), {"system config '" + dir_.string() + "' is not a regular file (it is a directory)"});
  expect_error(run_sim("-q --system /dev/zero"), {"'/dev/zero' is not a regular file (it is a character device)"});
  expect_error(run_sim(with_workload() + " --comm-group " + dir_.string()), {"communicator file", "is not a regular file"});
  // /proc files claim to be regular and empty: read as such, an error naming the file.
  expect_error(run_sim(with_workload() + " --comm-group /proc/self/mem"), {"/proc/self/mem"});
  expect_error(run_sim("--workload " + workload("w", {{recv()}}) + " --network /dev/zero"),
               {"topology file '/dev/zero' is not a regular file"});
}

TEST_F(StrictInput, CommGroupRanksAreRangeChecked) {
  const std::string w = workload("w", {{recv()}});
  const std::string big = text_file("g.json", "{\n  \"tp\": [0, 4294967297]\n}\n");
  expect_error(run_sim(with_workload() + " --comm-group " + big), {"g.json:2: key 'tp': ranks must be integers 0..2147483647, got 4294967297"});
  const std::string dup = text_file("d.json", "{\n  \"tp\": [0],\n  \"tp\": [1]\n}\n");
  expect_error(run_sim(with_workload() + " --comm-group " + dup), {"d.json:3: duplicate key 'tp'"});
}

TEST_F(StrictInput, DeepNestingIsAnErrorNotACrash) {
  const std::string deep_json = std::string(100'000, '[') + std::string(100'000, ']');
  expect_error(run_sim(with_workload() + " --comm-group " + text_file("deep.json", "{\"a\": " + deep_json + "}")),
               {"deep.json: JSON nested deeper than 512 levels"});
  const std::string w = text_file("deep.0.json", "{\"metadata\": {\"x\": " + deep_json + "}, \"nodes\": []}");
  expect_error(run_sim("--workload " + path("deep") + " --network " + shipped_config("ring8.yml")),
               {"nested deeper than 512"});
  expect_error(run_sim("-q --system " + text_file("deep.yml", "compute: " + std::string(50'000, '[') + "\n")),
               {"deep.yml:1: YAML nested deeper than 256 levels"});
  std::string dashes;  // "- - - ... 1": a sequence nested 10,000 deep on one line
  for (int i = 0; i < 10'000; ++i) dashes += "- ";
  expect_error(run_sim("-q --system " + text_file("dash.yml", "compute:\n" + dashes + "1\n")),
               {"dash.yml:2: YAML nested too deeply"});
}

// Every YAML config is one document: a second one (two files pasted together,
// `---` between them) was dropped and the first ran, exit 0; text after `...`
// was never parsed. Markers around the one document, a %YAML directive and an
// empty document after it still load.
TEST_F(StrictInput, ASecondYamlDocumentIsAnErrorNotIgnored) {
  const std::string wl = " --workload 'gen:collectives?npus=8&size=1MiB' --network ";
  const std::string ring = "shape: Ring\nnpus: 8\nbandwidth: 50GB/s\nlatency: 500ns\n";
  const std::string second = ": a second YAML document begins here; a config file holds one document: remove this "
                             "one or move it to a file of its own";
  expect_error(run_sim("-q" + wl + text_file("two.yml", ring + "---\nshape: Switch\n")), {"two.yml:5" + second});
  expect_error(run_sim("-q" + wl + text_file("end.yml", ring + "...\nshape: Switch\n")),
               {"end.yml:6: a second YAML document begins here, the first having ended before this line (at '...', "
                "or where its top-level value ended); a config file holds one document"});
  expect_error(run_sim("-q" + wl + text_file("bad.yml", ring + "...\n]\n")), {"bad.yml:6: invalid YAML"});
  expect_error(run_sim("-q --system " + text_file("sys.yml", "compute:\n  peak_tflops: 100\n---\ncompute: {}\n")),
               {"sys.yml:3" + second});
  std::ifstream model_file(std::string(SIM_SOURCE_DIR) + "/configs/models/llama3-8b.yml");
  const std::string model((std::istreambuf_iterator<char>(model_file)), std::istreambuf_iterator<char>());
  expect_error(run_sim("workload gen transformer --model " + text_file("model.yml", model + "---\nlayers: 2\n") +
                       " --parallel tp=1 --global-batch 1 --seq 256 --layers-only -o " + path("wl")),
               {"model.yml:" + std::to_string(std::count(model.begin(), model.end(), '\n') + 1) + second});
  expect_error(run_sim("sweep -q " +
                       text_file("spec.yml", "base:\n  network: " + shipped_config("ring8.yml") +
                                                 "\naxes:\n  size: [1MiB]\n---\naxes:\n  size: [2MiB]\n") +
                       " -o " + path("out")),
               {"spec.yml:5" + second});
  // One document: markers around it, a directive, an empty one after it.
  EXPECT_EQ(run_sim("-q" + wl + text_file("one.yml", "%YAML 1.2\n---\n" + ring + "...\n---\n# shape: Switch\n")).code, 0);
}

// Fuzz findings in the MSCCL-IR importer (fuzz/regressions/msccl_import/): each
// used to end in "internal error" (exit 1), a misleading data verdict, or a
// wrapped size that checked "ok" at 0 B.
TEST_F(StrictInput, MscclHugeValuesAreErrorsNotWraps) {
  const std::string dir = std::string(SIM_SOURCE_DIR) + "/fuzz/regressions/msccl_import/";
  const auto check = [&](const std::string& file) { return run_sim("collective check " + dir + file); };
  expect_error(check("ngpus_huge.xml"), {"ngpus_huge.xml:1: <algo> ngpus 4000000000 but the file has 2 <gpu> elements"});
  expect_error(check("off_plus_cnt_wraps.xml"),
               {"off_plus_cnt_wraps.xml:4: gpu 0 tb 0 step 0: srcoff 9223372036854775807 with cnt 1 is outside buffer 'i' of 2 chunks"});
  expect_error(check("transient_sum_wraps.xml"),
               {"transient_sum_wraps.xml:14: gpu 1 tb 0 step 1: the rrs steps' transient chunks add up past 2^63-1"});
  expect_error(check("slots_wrap.xml"), {"slots_wrap.xml: rank ", "its message would be more than 2^64-1 bytes"});
}

// A sweep spec's npus must not wrap (4294967297 ran as 1 NPU) and its points
// must not outgrow memory (10^7 points used to be allocated, not refused).
TEST_F(StrictInput, SweepSpecNpusAndPointCountAreBounded) {
  const std::string dir = std::string(SIM_SOURCE_DIR) + "/fuzz/regressions/sweep_spec/";
  const std::string out = text_file("out", "");
  expect_error(run_sim("sweep -q " + dir + "npus_2_32_plus_1.yml -o " + out + "_a"),
               {"npus_2_32_plus_1.yml:2:", "base.microbenchmark.npus: expected 1..1048576 NPUs, got 4294967297"});
  expect_error(run_sim("sweep -q " + dir + "product_1e7_points.yml -o " + out + "_b"),
               {"product_1e7_points.yml: the axes make 10 x 10 x 10 x 10 x 10 x 10 x 10 points, more than 1000000"});
}

// A mutation-campaign finding: --injection-scale=1e308 rounded the scaled
// endpoint delay past 2^63 into a negative time ("internal error", exit 1).
TEST_F(StrictInput, AstrasimInjectionScalePastTheTimeLimit) {
  const std::string td = std::string(SIM_SOURCE_DIR) + "/../shared/testdata/";
  const std::string system = td + "astrasim-reference/system/ring_1d.json";
  const std::string wl = td + "astrasim-microbenchmarks/all_reduce/8npus_1MB/all_reduce";
  if (!std::ifstream(system) || !std::ifstream(wl + ".0.et")) GTEST_SKIP() << "../shared/testdata is absent";
  expect_error(run_sim("--workload-configuration=" + wl + " --system-configuration=" + system +
                       " --network-configuration=" + shipped_config("astrasim/ring8.yml") + " --injection-scale=1e308"),
               {"--injection-scale 1e308: the endpoint delay scaled by it would pass the largest representable time"});
}

}  // namespace
}  // namespace sim
