// What the PyTorch importer refuses at import (exit 2, naming file, rank and
// ids) rather than hang on or hand to a run that cannot complete: host traces
// and Kineto links checked as graphs, process groups naming ranks not
// imported, durations past the largest simulated time; the rank a file is;
// and the per-rank GPU / CPU busy times of a replayed import.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../../common/run_sim.h"
#include "../../common/temp_folder.h"
#include "core/error.h"
#include "pytorch_traces.h"
#include "workload/pytorch/host_trace.h"
#include "workload/pytorch/pytorch_import.h"
#include "workload/pytorch/trace_rank.h"

namespace sim::pytorch {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using sim::testing::cpu_event;
using sim::testing::op;
using sim::testing::pytorch_testdata;
using sim::testing::run_shell;

// `sim` bounded by 60 s: a hang fails the test (exit 124) instead of stalling the suite.
sim::testing::SimRun run_bounded(const std::string& args) {
  return run_shell("timeout 60 " + std::string(SIM_BINARY) + " " + args + " 2>&1");
}

json host_trace(int pid, json nodes) {
  json root = op(1, "[pytorch|profiler|execution_trace|process]", 1, 0);
  json thread = op(2, "[pytorch|profiler|execution_trace|thread]", 1, 0);
  nodes.insert(nodes.begin(), thread);
  nodes.insert(nodes.begin(), root);
  return {{"schema", "1.1.1-chakra.0.0.4"}, {"pid", pid}, {"nodes", nodes}};
}

json kineto_trace(int rank, int world, json events, json pg_config = nullptr) {
  json info = {{"backend", "nccl"}, {"rank", rank}, {"world_size", world}};
  if (!pg_config.is_null()) info["pg_config"] = pg_config;
  return {{"schemaVersion", 1}, {"distributedInfo", info}, {"traceEvents", events}};
}

json runtime_event(int pid, double ts, double dur, int ext, int corr) {
  return {{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", pid}, {"tid", pid}, {"ts", ts},
          {"dur", dur}, {"args", {{"External id", ext}, {"correlation", corr}}}};
}

json kernel_event(const std::string& name, double ts, double dur, int corr) {
  return {{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"pid", 0}, {"tid", 7}, {"ts", ts}, {"dur", dur},
          {"args", {{"stream", 7}, {"device", 0}, {"correlation", corr}}}};
}

class PytorchInputChecks : public sim::testing::TempFolderTest {
 protected:
  void write(const std::string& name, const json& j) { std::ofstream(path(name)) << j.dump(); }
  // Imports the folder (host traces, and device traces where present) on the command line.
  sim::testing::SimRun import_folder(bool kineto) {
    return run_bounded("workload import pytorch --host-et " + path("in") + (kineto ? " --kineto " + path("in") : "") +
                       " -o " + path("out/wl"));
  }
  void SetUp() override {
    TempFolderTest::SetUp();
    fs::create_directories(path("in"));
    fs::create_directories(path("out"));
  }
  bool nothing_written() { return entries(path("out")).empty(); }
};

// --- host traces as graphs ----------------------------------------------------

TEST_F(PytorchInputChecks, ACycleOfCtrlDepsIsExit2NamingTheOpsOnItNotAHang) {
  // A collective under the cycle: the walk up from it for an enclosing collective never ended.
  write("in/et_rank0.json", host_trace(10, json::array({op(5, "aten::add", 6, 3), op(6, "aten::mul", 5, 4),
                                                        op(7, "c10d::barrier", 5, 5)})));
  const auto run = import_folder(false);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("sim: error: " + path("in/et_rank0.json") + ": rank 0: the ctrl_deps of ops form a cycle: 5 -> 6 -> 5"),
            std::string::npos)
      << run.output;
  EXPECT_TRUE(nothing_written());
  // The same folder run directly.
  std::ofstream(path("two.yml")) << "shape: Switch\nnpus: 2\nbandwidth: 50GB/s\nlatency: 500ns\n";
  const auto direct = run_bounded("--workload pytorch:" + path("in") + " --network " + path("two.yml"));
  EXPECT_EQ(direct.code, 2) << direct.output;
  EXPECT_NE(direct.output.find("form a cycle: 5 -> 6 -> 5"), std::string::npos) << direct.output;
}

TEST_F(PytorchInputChecks, ALongCycleIsNamedShortAndFound) {
  // 5,000 ops in one ring: found in linear time, named with its first ids and its length.
  json nodes = json::array();
  const int n = 5000;
  for (int i = 0; i < n; ++i) nodes.push_back(op(10 + i, "aten::add", 10 + (i + 1) % n, 10 + i));
  write("in/et_rank0.json", host_trace(10, nodes));
  const auto run = import_folder(false);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("form a cycle: 10 -> 11 -> 12"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("-> ... (5000 ops) -> 10"), std::string::npos) << run.output;
}

TEST_F(PytorchInputChecks, ASelfParentAndADanglingParentAreErrors) {
  write("in/et_rank0.json", host_trace(10, json::array({op(5, "aten::add", 5, 3)})));
  auto run = import_folder(false);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find(": rank 0: op id 5 (aten::add): field 'ctrl_deps' names the op itself"), std::string::npos)
      << run.output;
  write("in/et_rank0.json", host_trace(10, json::array({op(5, "aten::add", 77, 3)})));
  run = import_folder(false);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("op id 5 (aten::add): field 'ctrl_deps' names op id 77, which the trace does not have"),
            std::string::npos)
      << run.output;
  EXPECT_TRUE(nothing_written());
}

// --- Kineto links as graphs -----------------------------------------------------

TEST_F(PytorchInputChecks, DuplicatedAndDanglingKinetoLinksAreErrors) {
  write("in/et_rank0.json", host_trace(10, json::array({op(5, "aten::mm", 2, 3), op(6, "aten::relu", 2, 4)})));
  const json mm = cpu_event(10, "aten::mm", 3, 100, 10, 41), relu = cpu_event(10, "aten::relu", 4, 110, 5, 42);
  // Two launches with one correlation id.
  write("in/kineto_rank0.json", kineto_trace(0, 1, json::array({mm, relu, runtime_event(10, 102, 2, 41, 900),
                                                                 runtime_event(10, 112, 2, 42, 900),
                                                                 kernel_event("k", 120, 7, 900)})));
  auto run = import_folder(true);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find(path("in/kineto_rank0.json") +
                            ": rank 0: runtime calls 'cudaLaunchKernel' and 'cudaLaunchKernel' have one \"correlation\", 900"),
            std::string::npos)
      << run.output;
  // A kernel whose correlation names no launch.
  write("in/kineto_rank0.json", kineto_trace(0, 1, json::array({mm, relu, runtime_event(10, 102, 2, 41, 900),
                                                                 kernel_event("orphan", 120, 7, 999)})));
  run = import_folder(true);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("rank 0: kernel 'orphan' on stream 7: its \"correlation\" 999 names no CUDA runtime or driver call"),
            std::string::npos)
      << run.output;
  // Two operators with one Record function id (which host op is which?).
  write("in/kineto_rank0.json", kineto_trace(0, 1, json::array({mm, cpu_event(10, "aten::relu", 3, 110, 5, 42)})));
  run = import_folder(true);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("operators 'aten::mm' and 'aten::relu' have one \"Record function id\", 3"), std::string::npos)
      << run.output;
  // Two host ops with one rf_id.
  write("in/et_rank0.json", host_trace(10, json::array({op(5, "aten::mm", 2, 3), op(6, "aten::relu", 2, 3)})));
  write("in/kineto_rank0.json", kineto_trace(0, 1, json::array({mm})));
  run = import_folder(true);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("op ids 5 (aten::mm) and 6 (aten::relu) have one rf_id, 3"), std::string::npos) << run.output;
  EXPECT_TRUE(nothing_written());
}

// --- what a run would refuse, refused at import --------------------------------

json two_rank_groups() {
  return json::array({{{"pg_name", "0"}, {"pg_desc", "default_pg"}, {"ranks", {0, 1, 2, 3}}},
                      {{"pg_name", "1"}, {"pg_desc", "undefined"}, {"ranks", {0, 1}}}});
}

TEST_F(PytorchInputChecks, ImportingSomeOfTheRanksNamesTheGroupAndTheMissingRanks) {
  for (int r = 0; r < 2; ++r) {
    write("in/et_rank" + std::to_string(r) + ".json", host_trace(10 + r, json::array({op(5, "aten::mm", 2, 3)})));
    write("in/kineto_rank" + std::to_string(r) + ".json",
          kineto_trace(r, 4, json::array({cpu_event(10 + r, "aten::mm", 3, 100, 10, 41)}), two_rank_groups()));
  }
  const auto run = import_folder(true);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find(path("in/kineto_rank0.json") +
                            ": rank 0: process group '0' (default_pg) lists ranks 2, 3, whose traces are missing: traces "
                            "were given for 2 ranks (0..1)"),
            std::string::npos)
      << run.output;
  EXPECT_TRUE(nothing_written());
}

TEST_F(PytorchInputChecks, AGroupNamingARankOutsideTheJobIsAnError) {
  const json groups = json::array({{{"pg_name", "0"}, {"ranks", {0, 1}}}, {{"pg_name", "5"}, {"ranks", {0, 99}}}});
  for (int r = 0; r < 2; ++r) {
    write("in/et_rank" + std::to_string(r) + ".json", host_trace(10 + r, json::array({op(5, "aten::mm", 2, 3)})));
    write("in/kineto_rank" + std::to_string(r) + ".json",
          kineto_trace(r, 2, json::array({cpu_event(10 + r, "aten::mm", 3, 100, 10, 41)}), groups));
  }
  const auto run = import_folder(true);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("process group '5' lists rank 99, whose traces are missing: the trace's job had 2 ranks"),
            std::string::npos)
      << run.output;
}

// Two definitions of one group name with different ranks, in one rank's
// pg_config or across ranks: the import wrote the ETs (exit 0) and every run
// of them failed.
TEST_F(PytorchInputChecks, AGroupDefinedTwiceWithDifferentRanksIsAnError) {
  const json all = {{"pg_name", "0"}, {"ranks", json::array()}};
  const std::vector<json> groups = {json::array({all, {{"pg_name", "1"}, {"ranks", {0, 1}}}}),
                                    json::array({all, {{"pg_name", "1"}, {"ranks", {2, 3}}}})};
  for (int r = 0; r < 4; ++r) {
    write("in/et_rank" + std::to_string(r) + ".json", host_trace(10 + r, json::array({op(5, "aten::mm", 2, 3)})));
    write("in/kineto_rank" + std::to_string(r) + ".json",
          kineto_trace(r, 4, json::array({cpu_event(10 + r, "aten::mm", 3, 100, 10, 41)}), groups[r / 2]));
  }
  auto run = import_folder(true);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("sim: error: process group '1' is defined twice with different ranks: " +
                            path("in/kineto_rank0.json") + ": rank 0 (Kineto distributedInfo.pg_config) gives [0, 1], " +
                            path("in/kineto_rank2.json") +
                            ": rank 2 (Kineto distributedInfo.pg_config) gives [2, 3]; the traces of one job agree on "
                            "each group's ranks"),
            std::string::npos)
      << run.output;
  EXPECT_TRUE(nothing_written());
  // Within one rank's list.
  write("in/kineto_rank0.json",
        kineto_trace(0, 4, json::array({cpu_event(10, "aten::mm", 3, 100, 10, 41)}),
                     json::array({all, {{"pg_name", "1"}, {"ranks", {0, 1}}}, {{"pg_name", "1"}, {"ranks", {0, 2}}}})));
  run = import_folder(true);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("process group '1' is defined twice with different ranks: " + path("in/kineto_rank0.json") +
                            ": rank 0 (Kineto distributedInfo.pg_config) gives [0, 1], " +
                            path("in/kineto_rank0.json") + ": rank 0 (Kineto distributedInfo.pg_config) gives [0, 2]"),
            std::string::npos)
      << run.output;
  EXPECT_TRUE(nothing_written());
}

// The device traces of one job record one world size: which file came last
// decided whether a partial import was warned about.
TEST_F(PytorchInputChecks, DeviceTracesDisagreeingOnTheWorldSizeAreAnError) {
  for (int r = 0; r < 2; ++r) {
    write("in/et_rank" + std::to_string(r) + ".json", host_trace(10 + r, json::array({op(5, "aten::mm", 2, 3)})));
    write("in/kineto_rank" + std::to_string(r) + ".json",
          kineto_trace(r, r == 0 ? 8 : 2, json::array({cpu_event(10 + r, "aten::mm", 3, 100, 10, 41)})));
  }
  const auto run = import_folder(true);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("sim: error: " + path("in/kineto_rank1.json") +
                            ": rank 1: distributedInfo.world_size is 2 but " + path("in/kineto_rank0.json") +
                            " records 8: the device traces are not of one job"),
            std::string::npos)
      << run.output;
  EXPECT_TRUE(nothing_written());
}

// A rank's file that is empty, not gzip or not a trace was passed over
// without a word, and the error said the rank had no file.
TEST_F(PytorchInputChecks, ARanksFileThatIsNoTraceIsNamedWhenItsRankIsMissing) {
  for (int r = 1; r < 3; ++r) {
    write("in/et_rank" + std::to_string(r) + ".json", host_trace(10 + r, json::array({op(5, "aten::mm", 2, 3)})));
  }
  std::ofstream(path("in/et_rank0.json")) << "";
  std::ofstream(path("in/notes.json")) << R"({"comment": "not a trace"})";
  const auto run = import_folder(false);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("sim: error: --host-et: no file for rank 0 (ranks must be 0..N-1; found rank 1: " +
                            path("in/et_rank1.json") + "); passed over as no trace: " + path("in/et_rank0.json") +
                            " (empty), " + path("in/notes.json") +
                            " (neither a host execution trace nor a Kineto trace)"),
            std::string::npos)
      << run.output;
  EXPECT_TRUE(nothing_written());
}

TEST_F(PytorchInputChecks, TwoOfTheRealFourRanksAreRefused) {
  const std::string dir = pytorch_testdata("ddp4-gloo-h100");
  if (!fs::exists(dir)) GTEST_SKIP() << "no " << dir << " (../shared/testdata)";
  const auto run = run_bounded("workload import pytorch --host-et " + dir + "/et_rank0.json.gz --host-et " + dir +
                               "/et_rank1.json.gz --kineto " + dir + "/kineto_rank0.json.gz --kineto " + dir +
                               "/kineto_rank1.json.gz -o " + path("out/wl"));
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("process group '0' (default_pg) lists ranks 2, 3, whose traces are missing"), std::string::npos)
      << run.output;
  EXPECT_TRUE(nothing_written());
}

TEST_F(PytorchInputChecks, DurationsPastTheLargestSimulatedTimeAreExit2NamingTheEvent) {
  write("in/et_rank0.json", host_trace(10, json::array({op(5, "aten::mm", 2, 3)})));
  for (const char* dur : {"1e13", "1e300"}) {
    std::ofstream(path("in/kineto_rank0.json"))
        << R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 10, "ts": 100, "dur": )"
        << dur << R"(, "args": {"External id": 41, "Record function id": 3}}]})";
    const auto run = import_folder(true);
    EXPECT_EQ(run.code, 2) << run.output;
    EXPECT_NE(run.output.find(path("in/kineto_rank0.json") + ": rank 0: traceEvents[0] (cpu_op 'aten::mm'): field 'dur' is " +
                              (std::string(dur) == "1e13" ? "10000000000000" : "1.0000000000000001e+300") +
                              " us, longer than the largest simulated time"),
              std::string::npos)
        << run.output;
  }
  // The host trace's own "dur" likewise; 9e12 us (just under the limit) imports.
  json mm = op(5, "aten::mm", 2, 3);
  mm["dur"] = 1e15;
  write("in/et_rank0.json", host_trace(10, json::array({mm})));
  auto run = import_folder(false);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("op id 5 (aten::mm): field 'dur' is 1000000000000000 us"), std::string::npos) << run.output;
  mm["dur"] = 9e12;
  write("in/et_rank0.json", host_trace(10, json::array({mm})));
  run = import_folder(false);
  EXPECT_EQ(run.code, 0) << run.output;
}

TEST_F(PytorchInputChecks, MatrixShapesWhoseProductPassesInt64AreErrors) {
  json mm = op(5, "aten::mm", 2, 3);
  mm["inputs"]["shapes"] = json::array({{4294967296, 4294967296}, {4294967296, 4}});
  mm["inputs"]["types"] = json::array({"Tensor(c10::BFloat16)", "Tensor(c10::BFloat16)"});
  mm["inputs"]["values"] = json::array({json::array(), json::array()});
  write("in/et_rank0.json", host_trace(10, json::array({mm})));
  const auto run = import_folder(false);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("op id 5 (aten::mm): field 'inputs.shapes' give a matrix product of more than 2^63 - 1"),
            std::string::npos)
      << run.output;
}

// --- which rank a file is ------------------------------------------------------

TEST(PytorchTraceRank, TheNameGivesARankOnlyWhenUnambiguous) {
  EXPECT_EQ(rank_in_name("d/et_rank0.json.gz"), 0);
  EXPECT_EQ(rank_in_name("d/kineto_rank12.json"), 12);
  EXPECT_EQ(rank_in_name("d/host_rank2_step2.json"), 2);   // the marker, not the last number
  EXPECT_EQ(rank_in_name("d/node7_RANK-3.json"), 3);
  EXPECT_EQ(rank_in_name("d/trace7.json"), 7);             // the only number
  EXPECT_EQ(rank_in_name("d/host_3_step2.json"), -1);      // two numbers, no marker
  EXPECT_EQ(rank_in_name("d/gpu-node-1_12345.1732655187123456789.pt.trace.json.gz"), -1);  // PyTorch's default name
  EXPECT_EQ(rank_in_name("d/rank1_rank2.json"), -1);       // two markers that disagree
  EXPECT_EQ(rank_in_name("d/trace.json"), -1);
}

TEST_F(PytorchInputChecks, ProfilerDefaultNamesTakeTheRankTheyRecord) {
  for (int r = 0; r < 2; ++r) {
    write("in/et_rank" + std::to_string(r) + ".json", host_trace(10 + r, json::array({op(5, "aten::mm", 2, 3)})));
    // PyTorch's default name: <host>_<pid>.<ts>.pt.trace.json; the higher ts is rank 0.
    write("in/gpu-node_" + std::to_string(10 + r) + "." + std::to_string(1732655187999 - r) + ".pt.trace.json",
          kineto_trace(r, 2, json::array({cpu_event(10 + r, "aten::mm", 3, 100, 10 + r, 41)})));
  }
  const auto files = resolve_pytorch_files({path("in")}, {path("in")});
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].kineto, path("in/gpu-node_10.1732655187999.pt.trace.json"));
  EXPECT_EQ(files[1].kineto, path("in/gpu-node_11.1732655187998.pt.trace.json"));
  const auto run = import_folder(true);
  EXPECT_EQ(run.code, 0) << run.output;
}

// Host traces named by host and pid only: each takes the rank of its process's device trace.
TEST_F(PytorchInputChecks, HostTracesWithoutARankInTheirNameTakeTheirProcesssDeviceTraceRank) {
  for (int r = 0; r < 2; ++r) {
    write("in/host_" + std::to_string(20 - r) + "_step2.json", host_trace(20 - r, json::array({op(5, "aten::mm", 2, 3)})));
    write("in/gpu-node_" + std::to_string(20 - r) + ".17326551879" + std::to_string(r) + ".pt.trace.json",
          kineto_trace(r, 2, json::array({cpu_event(20 - r, "aten::mm", 3, 100, 10, 41)})));
  }
  const auto files = resolve_pytorch_files({path("in")}, {path("in")});
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].host, path("in/host_20_step2.json"));
  EXPECT_EQ(files[1].host, path("in/host_19_step2.json"));
  EXPECT_EQ(import_folder(true).code, 0);
  // Without the device traces nothing says which is which.
  const auto run = import_folder(false);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("host_19_step2.json has no rank: its name states none unambiguously"), std::string::npos)
      << run.output;
}

TEST_F(PytorchInputChecks, ANameContradictingTheRecordedRankOrTwoFilesOfOneRankAreErrors) {
  write("in/et_rank0.json", host_trace(10, json::array({op(5, "aten::mm", 2, 3)})));
  write("in/et_rank1.json", host_trace(11, json::array({op(5, "aten::mm", 2, 3)})));
  write("in/kineto_rank0.json", kineto_trace(1, 2, json::array({cpu_event(10, "aten::mm", 3, 100, 10, 41)})));
  write("in/kineto_rank1.json", kineto_trace(0, 2, json::array({cpu_event(11, "aten::mm", 3, 100, 10, 41)})));
  auto run = import_folder(true);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("records rank 1 (distributedInfo.rank) but its name says rank 0"), std::string::npos)
      << run.output;
  fs::remove(path("in/kineto_rank0.json"));
  fs::remove(path("in/kineto_rank1.json"));
  write("in/a_1.111.pt.trace.json", kineto_trace(1, 2, json::array({cpu_event(10, "aten::mm", 3, 100, 10, 41)})));
  write("in/b_2.222.pt.trace.json", kineto_trace(1, 2, json::array({cpu_event(11, "aten::mm", 3, 100, 10, 41)})));
  run = import_folder(true);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("--kineto: rank 1 twice: "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("a_1.111.pt.trace.json"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("b_2.222.pt.trace.json"), std::string::npos) << run.output;
  // A host trace whose name states no rank.
  fs::remove(path("in/a_1.111.pt.trace.json"));
  fs::remove(path("in/b_2.222.pt.trace.json"));
  fs::rename(path("in/et_rank1.json"), path("in/host_3_step2.json"));
  run = import_folder(false);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("host_3_step2.json has no rank: its name states none unambiguously"), std::string::npos)
      << run.output;
  EXPECT_TRUE(nothing_written());
}

// --- what the GPU and the CPU did ----------------------------------------------

// aten::mm (10 us on the CPU) launches a 7 us kernel; aten::relu (5 us) follows
// mm on the CPU while the kernel runs: CPU busy 0-15 us, GPU busy 10-17 us.
TEST_F(PytorchInputChecks, TheReportGivesGpuAndCpuBusyTimesApart) {
  write("in/et_rank0.json", host_trace(10, json::array({op(5, "aten::mm", 2, 3), op(6, "aten::relu", 2, 4)})));
  write("in/kineto_rank0.json",
        kineto_trace(0, 1, json::array({cpu_event(10, "aten::mm", 3, 100, 10, 41), cpu_event(10, "aten::relu", 4, 110, 5, 42),
                                        runtime_event(10, 105, 2, 41, 900), kernel_event("gemm", 111, 7, 900)})));
  ASSERT_EQ(import_folder(true).code, 0);
  std::ofstream(path("one.yml")) << "shape: Switch\nnpus: 2\nbandwidth: 50GB/s\nlatency: 500ns\n";
  const auto run = run_bounded("--workload " + path("out/wl") + " --network " + path("one.yml") + " --report " +
                               path("r.json"));
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("per rank (max): compute 17 us (GPU busy 7 us, CPU busy 15 us)"), std::string::npos)
      << run.output;
  std::ifstream in(path("r.json"));
  const json report = json::parse(in);
  const json& rank = report["ranks"][0];
  EXPECT_EQ(rank["compute_ns"], 17000);
  EXPECT_EQ(rank["gpu_busy_ns"], 7000);
  EXPECT_EQ(rank["cpu_busy_ns"], 15000);
  EXPECT_EQ(rank["finish_ns"], 17000);
}

// A trace without CPU nodes: every COMP is GPU time, as compute_ns always counted it.
TEST_F(PytorchInputChecks, WithoutCpuNodesGpuBusyIsComputeAndCpuBusyIsZero) {
  std::ofstream(path("w.0.json")) << R"({"metadata": {"version": "0.0.4"}, "nodes": [
      {"id": "1", "name": "a", "type": "COMP_NODE", "durationMicros": "3"},
      {"id": "2", "name": "b", "type": "COMP_NODE", "durationMicros": "4", "dataDeps": ["1"]}]})";
  std::ofstream(path("one.yml")) << "shape: Switch\nnpus: 2\nbandwidth: 50GB/s\nlatency: 500ns\n";
  const auto run = run_bounded("--workload " + path("w") + " --network " + path("one.yml") + " --report " + path("r.json"));
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("per rank (max): compute 7 us, exposed communication"), std::string::npos) << run.output;
  std::ifstream in(path("r.json"));
  const json rank = json::parse(in)["ranks"][0];
  EXPECT_EQ(rank["compute_ns"], 7000);
  EXPECT_EQ(rank["gpu_busy_ns"], 7000);
  EXPECT_EQ(rank["cpu_busy_ns"], 0);
}

}  // namespace
}  // namespace sim::pytorch

// A schema's version parts may be any number: compared part by part, and a part
// past int is not a version (it overflowed the comparison key under UBSan).
TEST(PytorchSchema, VersionPartsAreComparedWithoutOverflow) {
  EXPECT_TRUE(sim::pytorch::is_known_schema(sim::pytorch::kNewestSchema));
  EXPECT_TRUE(sim::pytorch::is_known_schema(sim::pytorch::kOldestSchema));
  EXPECT_FALSE(sim::pytorch::is_known_schema("1.651588039.1-chakra.0.0.4"));
  EXPECT_FALSE(sim::pytorch::is_known_schema("1.11111111111111111.1-chakra.0.0.4"));
  EXPECT_FALSE(sim::pytorch::is_known_schema("-1.0.1-chakra.0.0.4"));
  EXPECT_FALSE(sim::pytorch::is_known_schema("1.0-chakra.0.0.4"));
}
