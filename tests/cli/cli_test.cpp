// The `sim` binary end to end: exit codes, messages, output files.
#include <gtest/gtest.h>

#include "../common/run_sim.h"
#include "../common/temp_workload.h"
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "system/collectives/nccl/model/nccl_tuner.h"
#include "workload/et/et_io.h"

namespace sim {
namespace {

namespace fs = std::filesystem;

using testing::SimRun;
using testing::run_sim;

using testing::shipped_config;
std::string testdata(const std::string& rel) { return std::string(SIM_SOURCE_DIR) + "/../shared/testdata/" + rel; }

class Cli : public testing::TempWorkload {};

et::Node comp(std::uint64_t id, std::vector<std::uint64_t> deps = {}) {
  et::Node n;
  n.set_id(id);
  n.set_name(std::string("c").append(std::to_string(id)));  // not "c" + ...: GCC 12 -Wrestrict false positive
  n.set_type(et::COMP_NODE);
  n.set_duration_micros(3);
  for (auto d : deps) n.add_data_deps(d);
  return n;
}

using testing::p2p;

TEST_F(Cli, DefaultRunsTheBundledExample) {
  const SimRun r = run_sim("");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("simulated time:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GB/s"), std::string::npos);
}

TEST_F(Cli, HelpAndVersion) {
  EXPECT_EQ(run_sim("--help").code, 0);
  const SimRun v = run_sim("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.output.find("sim "), std::string::npos);
}

// `sim --help` names every algorithm `nccl:algo=` takes (NCCL's names).
TEST_F(Cli, HelpNamesEveryNcclAlgorithm) {
  const SimRun r = run_sim("--help");
  ASSERT_EQ(r.code, 0);
  const std::size_t at = r.output.find("nccl:algo=");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string list = r.output.substr(at, r.output.find(',', at) - at);
  for (int a = 0; a < nccl::kAlgos; ++a) {
    const std::string name = nccl::algo_name(static_cast<nccl::Algo>(a));
    EXPECT_NE(("|" + list.substr(10) + "|").find("|" + name + "|"), std::string::npos) << name << " in " << list;
  }
}

TEST_F(Cli, UnknownOptionIsAUsageError) {
  const SimRun r = run_sim("--workload x --netwrk y");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--netwrk"), std::string::npos) << r.output;
}

TEST_F(Cli, WorkloadWithoutNetworkIsAUsageError) {
  const SimRun r = run_sim("--workload " + workload("w", {{comp(1)}}));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--workload needs --network"), std::string::npos) << r.output;
}

TEST_F(Cli, UnknownSubcommandOptionIsAUsageError) {
  const SimRun r = run_sim("collective gen ring --coll allreduce --npus 4 -o " + path("x") + " --bogus");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--bogus"), std::string::npos) << r.output;
}

TEST_F(Cli, PointToPointReportAndCsv) {
  const std::string w = workload("p2p", {{p2p(1, true, 1, 1 << 20)}, {p2p(1, false, 0, 1 << 20)}});
  const SimRun r = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " --report " +
                           path("r.json") + " --csv " + path("c.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream in(path("r.json"));
  const auto j = nlohmann::json::parse(in);
  EXPECT_DOUBLE_EQ(j["sim_time_ns"].get<double>(), 21471.52);
  EXPECT_EQ(j["ranks"].size(), 2u);
  EXPECT_TRUE(j["ranks"][0].contains("exposed_comm_ns"));
  EXPECT_TRUE(fs::exists(path("c.csv")));
}

TEST_F(Cli, TimelineHasOneSlicePerNodeInMicroseconds) {
  et::Node send = p2p(2, true, 1, 1 << 20);
  send.add_data_deps(1);
  const std::string w = workload("p2p", {{comp(1), send}, {p2p(1, false, 0, 1 << 20)}});
  const SimRun r =
      run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " -q --timeline " + path("t.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream in(path("t.json"));
  const auto j = nlohmann::json::parse(in);
  std::vector<nlohmann::json> slices;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") slices.push_back(e);
  }
  ASSERT_EQ(slices.size(), 3u);
  // Rank 0: 3 us of compute (lane 0), then the send (lane 3) for 21.47152 us.
  const auto find = [&](int pid, int tid) {
    for (const auto& e : slices) {
      if (e["pid"] == pid && e["tid"] == tid) return e;
    }
    return nlohmann::json();
  };
  EXPECT_DOUBLE_EQ(find(0, 0)["dur"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(find(0, 3)["ts"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(find(0, 3)["dur"].get<double>(), 21.47152);
  EXPECT_DOUBLE_EQ(find(1, 3)["dur"].get<double>(), 24.47152);
  EXPECT_EQ(find(1, 3)["name"], "recv");
}

TEST_F(Cli, CollectiveReportHasNcclTestsBandwidths) {
  const std::string dir = testdata("astrasim-microbenchmarks/all_reduce/8npus_1MB");
  if (!fs::exists(dir)) GTEST_SKIP() << "testdata absent: " << dir;
  const SimRun r =
      run_sim("--workload " + dir + " --network " + shipped_config("switch8.yml") + " --report " + path("r.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream in(path("r.json"));
  const auto j = nlohmann::json::parse(in);
  EXPECT_DOUBLE_EQ(j["sim_time_ns"].get<double>(), 50700.16);
  ASSERT_EQ(j["collectives"].size(), 8u);
  const auto& c = j["collectives"][0];
  EXPECT_EQ(c["type"], "ALL_REDUCE");
  EXPECT_EQ(c["bytes"], 1048576);
  EXPECT_EQ(c["group_size"], 8);
  const double algbw = 1048576 / 50700.16;  // B/ns = GB/s
  EXPECT_NEAR(c["algbw_gbps"].get<double>(), algbw, 1e-9);
  EXPECT_NEAR(c["busbw_gbps"].get<double>(), algbw * 2 * 7 / 8, 1e-9);
}

TEST_F(Cli, FlowBackendWritesLinkStatistics) {
  // Two messages from 0 to 1 on ring8: one after the other on link 0 -> 1.
  const std::string w = workload("p2p", {{p2p(1, true, 1, 1 << 20), p2p(2, true, 1, 1 << 20)},
                                         {p2p(1, false, 0, 1 << 20), p2p(2, false, 0, 1 << 20)}});
  const SimRun r = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") +
                           " --backend flow --report " + path("r.json") + " --link-stats " + path("links.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("backend flow"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hottest links"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("npu0 -> npu1 (50 GB/s): 2 MiB"), std::string::npos) << r.output;
  std::ifstream in(path("r.json"));
  const auto j = nlohmann::json::parse(in);
  EXPECT_DOUBLE_EQ(j["sim_time_ns"].get<double>(), 500 + 2 * 20971.52);
  ASSERT_EQ(j["links"].size(), 1u);
  EXPECT_EQ(j["links"][0]["src"], "npu0");
  EXPECT_EQ(j["links"][0]["peak_flows"], 1);
  EXPECT_EQ(j["links"][0]["bytes"], 2 << 20);
  std::ifstream csv(path("links.csv"));
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  EXPECT_EQ(header, "link,src,dst,bandwidth_gbps,bytes,busy_ns,utilization,busy_fraction,peak_flows");
  EXPECT_EQ(first.substr(0, first.find(",0.")), "0,npu0,npu1,50.000000,2097152,41943.04");
  std::size_t rows = 1;
  for (std::string line; std::getline(csv, line);) ++rows;
  EXPECT_EQ(rows, 16u);  // every link of ring8
}

TEST_F(Cli, BackendFromTheSystemConfigAndItsOptions) {
  const std::string w = workload("p2p", {{p2p(1, true, 1, 1 << 20)}, {p2p(1, false, 0, 1 << 20)}});
  const std::string sys = text_file("s.yml", "network:\n  backend: flow\n  message_latency: 1us\n");
  const SimRun r = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " --system " + sys +
                           " --report " + path("r.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream in(path("r.json"));
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["backend"], "flow");
  EXPECT_DOUBLE_EQ(j["sim_time_ns"].get<double>(), 1500 + 20971.52);
}

TEST_F(Cli, BadBackendChoicesAreUsageErrors) {
  const std::string w = workload("w", {{comp(1)}});
  const SimRun unknown = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " --backend garnet");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.output.find("unknown network backend 'garnet'"), std::string::npos) << unknown.output;
  const std::string sys = text_file("s.yml", "network:\n  backend: analytical\n  nic_bandwidth: 100GB/s\n");
  const SimRun wrong = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " --system " + sys);
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.output.find("s.yml:3: network.nic_bandwidth: backend 'analytical' has no option"),
            std::string::npos)
      << wrong.output;
  const SimRun help = run_sim("--help");
  EXPECT_NE(help.output.find("nic_bandwidth"), std::string::npos);
}

TEST_F(Cli, MissingWorkloadFile) {
  const SimRun r = run_sim("--workload " + path("nothing") + " --network " + shipped_config("ring8.yml"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("no files"), std::string::npos) << r.output;
}

TEST_F(Cli, MissingRank) {
  workload("w", {{comp(1)}, {comp(1)}, {comp(1)}});
  fs::remove(path("w.1.et"));
  const SimRun r = run_sim("--workload " + path("w") + " --network " + shipped_config("ring8.yml"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("missing rank 1"), std::string::npos) << r.output;
}

TEST_F(Cli, TruncatedEt) {
  workload("w", {{comp(1), comp(2, {1}), comp(3, {2})}});
  const auto size = fs::file_size(path("w.0.et"));
  fs::resize_file(path("w.0.et"), size - 3);
  const SimRun r = run_sim("--workload " + path("w") + " --network " + shipped_config("ring8.yml"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("w.0.et"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("truncated"), std::string::npos) << r.output;
}

TEST_F(Cli, GarbledEt) {
  text_file("g.0.et", std::string("\x05\x01\x02\x03\x04\x05\x07garbage!", 15));
  const SimRun r = run_sim("--workload " + path("g") + " --network " + shipped_config("ring8.yml"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("g.0.et"), std::string::npos) << r.output;
}

TEST_F(Cli, UnknownYamlKey) {
  const std::string net = text_file("n.yml", "shape: Ring\ndims: [8]\nbandwdith: 50GB/s\nlatency: 500ns\n");
  const SimRun r = run_sim("--workload " + workload("w", {{comp(1)}}) + " --network " + net);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("bandwdith"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("n.yml"), std::string::npos) << r.output;
}

TEST_F(Cli, UnknownSystemKey) {
  const std::string sys = text_file("s.yml", "collective:\n  chunk: 4\n");
  const SimRun r = run_sim("--workload " + workload("w", {{comp(1)}}) + " --network " + shipped_config("ring8.yml") +
                           " --system " + sys);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("collective.chunk"), std::string::npos) << r.output;
}

// A graph's link given twice: the second never carried traffic, its bandwidth lost.
TEST_F(Cli, ALinkGivenTwiceIsExit2) {
  const std::string net = text_file("g.yml",
                                    "npus: 2\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n  - {src: npu0, dst: npu1}\n"
                                    "  - {src: npu1, dst: npu0, bandwidth: 100GB/s}\n");
  const SimRun r = run_sim("-q --workload " + workload("w", {{comp(1)}, {comp(1)}}) + " --network " + net);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("g.yml:6: 'links[1]' repeats the link npu1 -> npu0 of 'links[0]'"), std::string::npos)
      << r.output;
}

// Two --collective options for one type: the later silently won.
TEST_F(Cli, TwoCollectiveOptionsForOneTypeAreExit2) {
  const SimRun r = run_sim("-q --collective allreduce=ring --collective allreduce=direct");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sim: error: --collective allreduce=direct: --collective allreduce=ring already chose "
                          "ALL_REDUCE's algorithm: give one --collective per collective type"),
            std::string::npos)
      << r.output;
}

// A per-dimension list that does not match the topology's dimensions is
// refused only when a group runs it; the message said neither the choice nor
// where it was read ("hierarchical ALL_REDUCE: 3 per-dimension algorithms ...").
TEST_F(Cli, AHierarchicalChoiceRefusedWhenItRunsNamesWhereItWasRead) {
  const std::string run = "-q --workload 'gen:collectives?npus=64' --network " + shipped_config("torus8x8.yml");
  SimRun r = run_sim(run + " --collective allreduce=ring,direct,ring");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_EQ(r.output, "sim: error: --collective allreduce=ring,direct,ring: collective algorithm 'ring,direct,ring': "
                      "hierarchical ALL_REDUCE: 3 per-dimension algorithms for a topology of 2 dimensions (give one "
                      "per dimension, or one for all)\n");
  const std::string sys = text_file("s.yml", "collective:\n  algorithms:\n    all_reduce: ring,direct,ring\n");
  r = run_sim(run + " --system " + sys);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sim: error: " + sys + ":3: 'collective.algorithms.all_reduce': collective algorithm "
                          "'ring,direct,ring': hierarchical ALL_REDUCE: 3 per-dimension algorithms"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(run_sim(run + " --collective allreduce=ring,direct").code, 0);
}

TEST_F(Cli, NonPositiveBandwidth) {
  const std::string net = text_file("n.yml", "shape: Ring\ndims: [8]\nbandwidth: 0\nlatency: 500ns\n");
  const SimRun r = run_sim("--workload " + workload("w", {{comp(1)}}) + " --network " + net);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("bandwidth"), std::string::npos) << r.output;
}

TEST_F(Cli, DependencyCycle) {
  const SimRun r = run_sim("--workload " + workload("w", {{comp(1, {2}), comp(2, {1})}}) + " --network " +
                           shipped_config("ring8.yml"));
  EXPECT_EQ(r.code, 2);  // bad input, found while the graph is built, before simulating
  EXPECT_NE(r.output.find("dependency cycle"), std::string::npos) << r.output;
}

TEST_F(Cli, DependencyOnAbsentNode) {
  const SimRun data =
      run_sim("--workload " + workload("w", {{comp(1, {42})}}) + " --network " + shipped_config("ring8.yml"));
  EXPECT_EQ(data.code, 2);
  EXPECT_NE(data.output.find("absent node 42"), std::string::npos) << data.output;
  et::Node n = comp(1);
  n.add_ctrl_deps(43);
  const std::string w = workload("c", {{n}});
  const SimRun lenient = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " --ctrl-deps");
  EXPECT_EQ(lenient.code, 0) << lenient.output;
  EXPECT_NE(lenient.output.find("absent nodes; ignored"), std::string::npos) << lenient.output;
  const SimRun strict =
      run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " --ctrl-deps --strict-deps");
  EXPECT_EQ(strict.code, 2);
  EXPECT_NE(strict.output.find("control dependency on absent node 43"), std::string::npos) << strict.output;
}

TEST_F(Cli, UnmatchedReceiveExitsThreeAndWritesNoReport) {
  const std::string w = workload("w", {{comp(1)}, {p2p(1, false, 0, 100)}});
  const SimRun r =
      run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " --report " + path("r.json"));
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.output.find("rank 1 node 1 'recv' (COMM_RECV from rank 0, tag 5, 100 B) waits"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(path("r.json")));
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "left behind: " << e.path();
  }
}

TEST_F(Cli, UnmatchedSendExitsThree) {
  const std::string w = workload("w", {{p2p(1, true, 1, 100)}, {comp(1)}});
  const SimRun r = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml"));
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.output.find("never received by rank 1"), std::string::npos) << r.output;
}

TEST_F(Cli, MoreRanksThanNpus) {
  std::vector<std::vector<et::Node>> ranks(9, {comp(1)});
  const SimRun r = run_sim("--workload " + workload("w", ranks) + " --network " + shipped_config("ring8.yml"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("9 ranks but the network has only 8 NPUs"), std::string::npos) << r.output;
}

TEST_F(Cli, ReportIntoMissingFolderFailsCleanly) {
  const SimRun r = run_sim("--workload " + workload("w", {{comp(1)}}) + " --network " + shipped_config("ring8.yml") +
                           " --report " + path("no/such/dir/r.json"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("cannot write"), std::string::npos) << r.output;
}

TEST_F(Cli, ByteIdenticalReportsOnRerun) {
  const std::string dir = testdata("astrasim-microbenchmarks/all_to_all/16npus_1MB");
  if (!fs::exists(dir)) GTEST_SKIP() << "testdata absent: " << dir;
  const std::string net = shipped_config("torus4x4x4.yml");
  ASSERT_EQ(run_sim("--workload " + dir + " --network " + net + " -q --report " + path("a.json")).code, 0);
  ASSERT_EQ(run_sim("--workload " + dir + " --network " + net + " -q --report " + path("b.json")).code, 0);
  std::ifstream a(path("a.json")), b(path("b.json"));
  const std::string sa((std::istreambuf_iterator<char>(a)), {}), sb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(sa, sb);
  EXPECT_FALSE(sa.empty());
}

}  // namespace
}  // namespace sim

namespace sim {
namespace {

TEST(CliAstraSim, DropInCommandLinePrintsAstraSimPerRankLines) {
  const std::string root = std::string(SIM_SOURCE_DIR) + "/../shared/testdata/astrasim-reference";
  const std::string micro = std::string(SIM_SOURCE_DIR) + "/../shared/testdata/astrasim-microbenchmarks/all_reduce/8npus_1MB/all_reduce";
  if (!std::filesystem::exists(root) || !std::filesystem::exists(micro + ".0.et")) GTEST_SKIP() << "testdata absent";
  const testing::SimRun r = testing::run_sim("--workload-configuration=" + micro + " --system-configuration=" + root +
                                             "/system/ring_1d.json --network-configuration=" + root +
                                             "/network/Ring_8.yml --remote-memory-configuration=" + root +
                                             "/remote_memory/no_memory_expansion.json");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("sys[0] finished, "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sys[7] finished, "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GiB/s"), std::string::npos) << r.output;
  const testing::SimRun typo = testing::run_sim("--workload-configuration=" + micro + " --system-configuration=" +
                                                root + "/system/ring_1d.json --network-configuration=" + root +
                                                "/network/Ring_8.yml --num-queue-per-dim=2");
  EXPECT_EQ(typo.code, 2) << typo.output;
  EXPECT_NE(typo.output.find("unknown option --num-queue-per-dim"), std::string::npos) << typo.output;
}

TEST(CliAstraSim, DirectoryAsSystemConfigIsExit2) {
  const testing::SimRun r = testing::run_sim("--workload x --network " + std::string(SIM_SOURCE_DIR) +
                                             "/configs/ring8.yml --system " + std::string(SIM_SOURCE_DIR) + "/configs");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("not a regular file"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace sim
