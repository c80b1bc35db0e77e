// Several jobs on one cluster (--workload NAME=PATH, --placement) and the
// plausibility check (--strict), end to end through the `sim` binary.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../common/run_sim.h"
#include "workload/et/et_io.h"

namespace sim {
namespace {

namespace fs = std::filesystem;
using testing::run_sim;
using testing::SimRun;

using testing::shipped_config;

class Jobs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sim_jobs_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }
  // `ranks` ranks, each: an all-reduce of `bytes` (on `pg` when given).
  std::string allreduce_workload(const std::string& prefix, int ranks, std::int64_t bytes, const std::string& pg = "") const {
    for (int r = 0; r < ranks; ++r) {
      EtTrace t;
      t.metadata.set_version("0.0.4");
      et::Node& n = t.nodes.emplace_back();
      n.set_id(1);
      n.set_name("grad_allreduce");
      n.set_type(et::COMM_COLL_NODE);
      set_attr_int(n, "comm_type", 0);
      set_attr_int(n, "comm_size", bytes);
      if (!pg.empty()) set_attr_string(n, "pg_name", pg);
      write_et(t, path(prefix + "." + std::to_string(r) + ".et"));
    }
    return path(prefix);
  }
  nlohmann::json report(const std::string& name) const {
    std::ifstream in(path(name));
    return nlohmann::json::parse(in);
  }
  fs::path dir_;
};

// Two 4-rank jobs interleaved on an 8-NPU ring: on the flow backend their
// all-reduces share links and slow each other; on the analytical backend (no
// contention) each takes what it takes alone.
TEST_F(Jobs, TwoJobsWithAPlacementShareTheNetwork) {
  const std::string a = allreduce_workload("a", 4, 4 << 20);
  const std::string b = allreduce_workload("b", 4, 4 << 20, "dp");
  const std::string groups = file("b_groups.json", R"({"dp": [0, 1, 2, 3]})");
  const std::string both = file("both.json", R"({"a-0": 0, "a-1": 2, "a-2": 4, "a-3": 6,
                                                 "b-0": 1, "b-1": 3, "b-2": 5, "b-3": 7})");
  const std::string alone = file("alone.json", R"({"a-0": 0, "a-1": 2, "a-2": 4, "a-3": 6})");
  for (const std::string backend : {"flow", "analytical"}) {
    const SimRun together = run_sim("--workload a=" + a + " --workload b=" + b + " --comm-group b=" + groups +
                                    " --placement " + both + " --network " + shipped_config("ring8.yml") +
                                    " --backend " + backend + " --report " + path("both.json.out"));
    ASSERT_EQ(together.code, 0) << together.output;
    EXPECT_NE(together.output.find("job a (4 ranks): "), std::string::npos) << together.output;
    const SimRun single =
        run_sim("--workload a=" + a + " --placement " + alone + " --network " + shipped_config("ring8.yml") +
                " --backend " + backend + " --report " + path("alone.json.out"));
    ASSERT_EQ(single.code, 0) << single.output;
    const nlohmann::json r = report("both.json.out"), s = report("alone.json.out");
    ASSERT_EQ(r["jobs"].size(), 2u);
    EXPECT_EQ(r["jobs"][0]["name"], "a");
    EXPECT_EQ(r["jobs"][1]["name"], "b");
    const double a_together = r["jobs"][0]["sim_time_ns"], a_alone = s["jobs"][0]["sim_time_ns"];
    EXPECT_EQ(r["sim_time_ns"].get<double>(), std::max(a_together, r["jobs"][1]["sim_time_ns"].get<double>()));
    if (backend == "flow") {
      EXPECT_GT(a_together, a_alone * 1.2) << "job a should be slowed by job b";
    } else {
      EXPECT_EQ(a_together, a_alone);
    }
    for (const auto& c : r["collectives"]) {
      EXPECT_EQ(c["group_size"], 4);
      const bool job_b = c["rank"].get<int>() >= 4;
      EXPECT_EQ(c["group"], job_b ? "pg_name 'dp'" : "all ranks");
      EXPECT_EQ(c["npu"].get<int>() % 2, job_b ? 1 : 0);
    }
  }
  // Without a placement the jobs are packed in order: a on NPUs 0-3, b on 4-7.
  const SimRun packed = run_sim("--workload a=" + a + " --workload b=" + b + " --comm-group b=" + groups +
                                " --network " + shipped_config("ring8.yml") + " --report " + path("packed.json"));
  ASSERT_EQ(packed.code, 0) << packed.output;
  const nlohmann::json packed_report = report("packed.json");
  for (const auto& c : packed_report["collectives"]) EXPECT_EQ(c["npu"], c["rank"]);
}

TEST_F(Jobs, BadPlacementsAndJobArgumentsExitTwo) {
  const std::string a = allreduce_workload("a", 2, 1024);
  const std::string b = allreduce_workload("b", 2, 1024);
  const std::string net = " --network " + shipped_config("ring8.yml");
  const std::string jobs = "--workload a=" + a + " --workload b=" + b + net;
  const std::pair<std::string, std::string> cases[] = {
      {R"({"a-0": 0, "a-1": 1, "b-0": 1, "b-1": 2})", "keys 'a-1' and 'b-0' both use NPU 1"},
      {R"({"a-0": 0, "a-1": 1, "b-0": 2})", ": no NPU for 'b-1'"},
      {R"({"a-0": 0, "a-1": 1, "b-0": 2, "b-2": 3})", "key 'b-2': job 'b' has ranks 0..1"},
      // One spelling per rank: b-01 and b-+1 would read as b-1.
      {R"({"a-0": 0, "a-1": 1, "b-0": 2, "b-01": 3})", "key 'b-01': the rank is written in plain digits, e.g. 'b-1' (job 'b' has ranks 0..1)"},
      {R"({"a-0": 0, "a-1": 1, "b-0": 2, "b-+1": 3})", "key 'b-+1': the rank is written in plain digits"},
      {R"({"a-0": 0, "a-1": 1, "c-0": 2})", "key 'c-0': no job named 'c'"},
      {R"({"a-0": 0, "a-1": 9, "b-0": 2, "b-1": 3})", "key 'a-1': expected an NPU id 0..7, got 9"},
  };
  for (const auto& [placement, want] : cases) {
    const SimRun r = run_sim(jobs + " --placement " + file("p.json", placement));
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find(path("p.json") + ": "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(want), std::string::npos) << r.output;
  }
  const SimRun mixed = run_sim("--workload a=" + a + " --workload " + b + net);
  EXPECT_EQ(mixed.code, 2);
  EXPECT_NE(mixed.output.find("with several workloads each is NAME=PATH"), std::string::npos) << mixed.output;
  const SimRun unknown = run_sim(jobs + " --comm-group c=" + file("g.json", "{}"));
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.output.find("no --workload is named 'c'"), std::string::npos) << unknown.output;
}

// --service-level: a lone LEVEL for one workload, NAME=LEVEL per job; bad
// levels, unknown or repeated jobs and mixed forms exit 2 naming the argument.
// Where the network has one traffic class (analytical) a warning says the
// level changes nothing.
TEST_F(Jobs, ServiceLevelsAreCheckedAndSayWhereTheyChangeNothing) {
  const std::string a = allreduce_workload("a", 2, 1024);
  const std::string b = allreduce_workload("b", 2, 1024);
  const std::string net = " --network " + shipped_config("ring8.yml");
  const std::string jobs = "--workload a=" + a + " --workload b=" + b + net;
  const std::pair<std::string, std::string> cases[] = {
      {jobs + " --service-level b=16", "--service-level b=16: expected a service level from 0 to 15, got '16'"},
      {jobs + " --service-level b=-1", "expected a service level from 0 to 15, got '-1'"},
      {jobs + " --service-level b=x", "got 'x'"},
      {jobs + " --service-level c=1", "--service-level c=1: no --workload is named 'c'"},
      {jobs + " --service-level b=1 --service-level b=2", "--service-level: job 'b' given twice"},
      {jobs + " --service-level 1", "--service-level 1: with several workloads each is NAME=LEVEL"},
      {"--workload " + a + net + " --service-level a=1", "a job name is only for --workload NAME=PATH"},
      {"--workload " + a + net + " --service-level 1 --service-level 2", "given 2 times for one workload"},
      {net.substr(1) + " --service-level 1", "--network, --comm-group, --placement and --service-level need --workload"},
      // The bundled example runs on its own ring: a network without a workload would be ignored.
      {net.substr(1), "--network, --comm-group, --placement and --service-level need --workload"},
  };
  for (const auto& [args, want] : cases) {
    const SimRun r = run_sim(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(want), std::string::npos) << args << "\n" << r.output;
  }
  const SimRun one = run_sim("--workload " + a + net + " --service-level 3");
  EXPECT_EQ(one.code, 0) << one.output;
  EXPECT_NE(one.output.find("--service-level changes nothing here: the analytical network carries one traffic class"),
            std::string::npos)
      << one.output;
  const SimRun none = run_sim(jobs + " --service-level b=0");
  EXPECT_EQ(none.code, 0) << none.output;
  EXPECT_EQ(none.output.find("--service-level"), std::string::npos) << none.output;
  // The summary and the report say each job's level.
  const SimRun two = run_sim(jobs + " --service-level b=2 --report " + path("r.json"));
  EXPECT_EQ(two.code, 0) << two.output;
  EXPECT_NE(two.output.find("job a (2 ranks): "), std::string::npos) << two.output;
  EXPECT_NE(two.output.find("job b (2 ranks, service level 2): "), std::string::npos) << two.output;
  const nlohmann::json r = report("r.json");
  ASSERT_EQ(r["jobs"].size(), 2u);
  EXPECT_EQ(r["jobs"][0]["service_level"], 0);
  EXPECT_EQ(r["jobs"][1]["service_level"], 2);
}

// An algorithm written for 1 MiB declared (wrongly) as written for 64 MiB:
// its messages shrink 64 times, the result beats the links: a warning, and
// with --strict exit 2.
TEST_F(Jobs, ImplausibleBusBandwidthWarnsAndStrictExitsTwo) {
  const SimRun gen = run_sim("collective gen ring --coll allreduce --npus 8 --size 1MiB -o " + path("algo/ring"));
  ASSERT_EQ(gen.code, 0) << gen.output;
  for (int r = 0; r < 8; ++r) {  // keep the messages as written: no chunk attributes, no recorded size
    const std::string f = path("algo/ring." + std::to_string(r) + ".et");
    EtTrace t = read_et(f);
    t.metadata.clear_attr();
    for (et::Node& n : t.nodes) {
      for (int i = n.attr_size() - 1; i >= 0; --i) {
        const std::string& name = n.attr(i).name();
        if (name == "msg_chunk_cnt" || name == "msg_chunk_idx" || name == "total_chunk_cnt") {
          n.mutable_attr()->DeleteSubrange(i, 1);
        }
      }
    }
    write_et(t, f);
  }
  const std::string w = allreduce_workload("w", 8, 1 << 20);
  const std::string args = "--workload " + w + " --network " + shipped_config("ring8.yml") +
                           " --collective allreduce=" + path("algo/ring") + "@64MiB --report " + path("r.json");
  const SimRun lenient = run_sim(args);
  EXPECT_EQ(lenient.code, 0) << lenient.output;
  EXPECT_NE(lenient.output.find("exceeds what its NPU can send or receive"), std::string::npos) << lenient.output;
  bool in_report = false;
  const nlohmann::json written = report("r.json");
  for (const auto& warning : written["warnings"]) {
    in_report = in_report || warning.get<std::string>().find("the result is not physical") != std::string::npos;
  }
  EXPECT_TRUE(in_report) << written.dump();
  const SimRun strict = run_sim(args + " --strict");
  EXPECT_EQ(strict.code, 2) << strict.output;
  EXPECT_NE(strict.output.find("--strict: 1 collective result(s) exceed what their ranks can inject"), std::string::npos)
      << strict.output;
  // Declared at its real size it is plausible.
  const SimRun right = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") +
                               " --collective allreduce=" + path("algo/ring") + "@1MiB --strict");
  EXPECT_EQ(right.code, 0) << right.output;
}

// An all-reduce algorithm whose ranks send nothing ended 1 MiB in 0 ps,
// "busbw 0.00 GB/s", with exit 0 even under --strict.
TEST_F(Jobs, ACollectiveInNoTimeWarnsAndStrictExitsTwo) {
  for (int r = 0; r < 4; ++r) {
    file("none." + std::to_string(r) + ".json",
         R"({"metadata": {"version": "0.0.4", "attr": [{"name": "collective", "string_val": "ALL_REDUCE"},
                                                     {"name": "collective_size", "int64_val": "1048576"}]},
             "nodes": [{"id": "1", "name": "nothing", "type": "COMP_NODE", "duration_micros": "0"}]})");
  }
  const std::string args = "-q --workload " + allreduce_workload("w", 4, 1 << 20) + " --network " +
                           shipped_config("switch8.yml") + " --collective allreduce=" + path("none");
  const std::string warning =
      "sim: warning: ALL_REDUCE of 1 MiB (1048576 B) on 4 ranks [et:" + path("none") +
      "]: it ends in 0 ps on rank 0, faster than its NPU can send or receive (50 GB/s over all its links): the result "
      "is not physical; check the algorithm and its sizes";
  const SimRun lenient = run_sim(args);
  EXPECT_EQ(lenient.code, 0) << lenient.output;
  EXPECT_NE(lenient.output.find(warning), std::string::npos) << lenient.output;
  const SimRun strict = run_sim(args + " --strict");
  EXPECT_EQ(strict.code, 2) << strict.output;
  EXPECT_NE(strict.output.find("--strict: 1 collective result(s) exceed what their ranks can inject"), std::string::npos)
      << strict.output;
}

}  // namespace
}  // namespace sim
