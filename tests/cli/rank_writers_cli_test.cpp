// Every writer of per-rank Chakra ETs (`-o PREFIX`) follows one rule
// (workload/et/rank_set_writer.h): a plain prefix or exit 2, its folder created,
// and the set written is the set that runs (rank files of an earlier write
// removed and said so; a failed write leaves nothing runnable).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../common/run_sim.h"
#include "../common/temp_folder.h"

namespace sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_sim;
using testing::SimRun;
using testing::shipped_config;

class RankWriters : public testing::TempFolderTest {
 protected:
  // The writers, each writing `ranks` ranks to `prefix` (already quoted as needed).
  SimRun gen_collectives(int ranks, const std::string& prefix) const {
    return run_sim("workload gen collectives --npus " + std::to_string(ranks) +
                   " --coll allreduce --size 1MiB -o " + prefix);
  }
  SimRun gen_transformer(int ranks, const std::string& prefix) const {
    return run_sim("workload gen transformer --model llama3-8b --parallel tp=" + std::to_string(ranks) +
                   " --global-batch 1 --seq 256 --layers-only -o " + prefix);
  }
  SimRun collective_gen(int ranks, const std::string& prefix) const {
    return run_sim("collective gen ring --coll allreduce --npus " + std::to_string(ranks) + " -o " + prefix);
  }
  // PyTorch host traces of `ranks` ranks (one aten::mm each), imported.
  SimRun import_pytorch(int ranks, const std::string& prefix) {
    const std::string folder = path("pt" + std::to_string(ranks));
    fs::create_directories(folder);
    for (int r = 0; r < ranks; ++r) {
      auto op = [](int id, const std::string& name, int parent, int scope) {
        return json{{"id", id},
                    {"name", name},
                    {"ctrl_deps", parent},
                    {"inputs", {{"values", json::array()}, {"shapes", json::array()}, {"types", json::array()}}},
                    {"outputs", {{"values", json::array()}, {"shapes", json::array()}, {"types", json::array()}}},
                    {"attrs", json::array({{{"name", "rf_id"}, {"type", "uint64"}, {"value", id}},
                                           {{"name", "tid"}, {"type", "uint64"}, {"value", 1}},
                                           {{"name", "scope"}, {"type", "uint64"}, {"value", scope}}})}};
      };
      const json host = {{"schema", "1.1.1-chakra.0.0.4"},
                         {"pid", 10 + r},
                         {"nodes", json::array({op(1, "[pytorch|profiler|execution_trace|process]", 1, 7),
                                                op(2, "[pytorch|profiler|execution_trace|thread]", 1, 7),
                                                op(5, "aten::mm", 2, 0)})}};
      std::ofstream(folder + "/et_rank" + std::to_string(r) + ".json") << host.dump();
    }
    return run_sim("workload import pytorch --host-et " + folder + " -o " + prefix);
  }

  using Writer = std::function<SimRun(RankWriters&, int, const std::string&)>;
  static std::vector<std::pair<std::string, Writer>> writers() {
    return {{"gen", [](RankWriters& t, int n, const std::string& p) { return t.gen_collectives(n, p); }},
            {"transformer", [](RankWriters& t, int n, const std::string& p) { return t.gen_transformer(n, p); }},
            {"coll", [](RankWriters& t, int n, const std::string& p) { return t.collective_gen(n, p); }},
            {"import", [](RankWriters& t, int n, const std::string& p) { return t.import_pytorch(n, p); }}};
  }

  // The names in `folder` (under the test's folder).
  std::vector<std::string> rank_files(const std::string& folder) const { return entries(dir_ / folder); }
  // Runs the written set: its rank count as the run header gives it.
  std::string header_of_run(const std::string& prefix) const {
    const SimRun run = run_sim("--workload " + prefix + " --network " + shipped_config("switch8.yml"));
    EXPECT_EQ(run.code, 0) << run.output;
    const std::size_t at = run.output.find("workload:");
    return at == std::string::npos ? run.output : run.output.substr(at, run.output.find('\n', at) - at);
  }
};

TEST_F(RankWriters, GenCollectivesRemovesTheRanksOfAnEarlierLargerWrite) {
  ASSERT_EQ(gen_collectives(8, path("wl/job")).code, 0);
  // Other forms the loader would take as ranks of the prefix go too.
  std::ofstream(path("wl/job.2.json")) << "{}";
  std::ofstream(path("wl/job.9.et.gz")) << "x";
  std::ofstream(path("wl/jobs.1.et")) << "another prefix's";
  const SimRun again = gen_collectives(4, path("wl/job"));
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_NE(again.output.find("; removed 6 rank files of an earlier write of " + path("wl/job") + " (ranks 2, 4-7, 9)"),
            std::string::npos)
      << again.output;
  EXPECT_EQ(rank_files("wl"), (std::vector<std::string>{"job.0.et", "job.1.et", "job.2.et", "job.3.et", "jobs.1.et"}));
  EXPECT_NE(header_of_run(path("wl/job")).find("(4 ranks)"), std::string::npos);
}

TEST_F(RankWriters, EveryWriterRemovesTheRanksOfAnEarlierLargerWrite) {
  for (const auto& [name, write] : writers()) {
    const std::string prefix = path(name + "/job");
    const SimRun first = write(*this, 4, prefix);
    ASSERT_EQ(first.code, 0) << name << ": " << first.output;
    EXPECT_EQ(first.output.find("removed"), std::string::npos) << name << ": " << first.output;
    const SimRun second = write(*this, 2, prefix);
    ASSERT_EQ(second.code, 0) << name << ": " << second.output;
    EXPECT_NE(second.output.find("; removed 2 rank files of an earlier write of " + prefix + " (ranks 2, 3)"),
              std::string::npos)
        << name << ": " << second.output;
    EXPECT_EQ(rank_files(name), (std::vector<std::string>{"job.0.et", "job.1.et"})) << name;
  }
  // What runs is the rewrite.
  EXPECT_NE(header_of_run(path("gen/job")).find("(2 ranks)"), std::string::npos);
}

// A write that fails part way leaves no set that would run: neither half of
// the new one nor the earlier one mixed in.
TEST_F(RankWriters, AFailedWriteLeavesNothingToRun) {
  ASSERT_EQ(gen_collectives(8, path("wl/job")).code, 0);
  fs::remove(path("wl/job.3.et"));
  fs::create_directories(path("wl/job.3.et"));  // rank 3 cannot be written
  const SimRun fail = gen_collectives(6, path("wl/job"));
  EXPECT_EQ(fail.code, 2) << fail.output;
  EXPECT_NE(fail.output.find("sim: error: "), std::string::npos) << fail.output;
  EXPECT_EQ(rank_files("wl"), std::vector<std::string>{"job.3.et"}) << "only the folder in the way";
  const SimRun run = run_sim("--workload " + path("wl/job") + " --network " + shipped_config("switch8.yml"));
  EXPECT_EQ(run.code, 2) << run.output;
}

// A set larger than the disk's free space is refused once the first rank is
// encoded, before any file is touched (a million ranks of 44 MB: 46 TB; it
// used to write until the disk was full), and an earlier set stays whole.
TEST_F(RankWriters, ASetLargerThanTheFreeDiskSpaceIsRefusedBeforeWriting) {
  ASSERT_EQ(gen_collectives(2, path("wl/job")).code, 0);
  const SimRun r = run_sim("workload gen chain --npus 1048576 --nodes 1000000 -o " + path("wl/job"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sim: error: -o '" + path("wl/job") + "': 1048576 rank files of about "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(" B (the first one written) need about "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GiB, but the file system of '" + path("wl") + "' has "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("free; write fewer ranks or smaller ones, or elsewhere"), std::string::npos) << r.output;
  EXPECT_EQ(rank_files("wl"), (std::vector<std::string>{"job.0.et", "job.1.et"}));
  EXPECT_NE(header_of_run(path("wl/job")).find("(2 ranks)"), std::string::npos);
}

// One rule for every writer's prefix: a plain prefix, or exit 2 with one line
// saying what a prefix is, and nothing written.
TEST_F(RankWriters, EveryWriterRefusesWhatIsNotAPlainPrefix) {
  fs::create_directories(path("dir"));
  std::ofstream(path("file")) << "x";
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  const std::vector<std::string> bad = {"''", path("dir/"), path("dir"), "/dev/null", "-", path("fifo"), path("file"),
                                        path("dir/..")};
  for (const auto& [name, write] : writers()) {
    for (const std::string& prefix : bad) {
      const SimRun r = write(*this, 2, prefix);
      EXPECT_EQ(r.code, 2) << name << " -o " << prefix << ": " << r.output;
      EXPECT_NE(r.output.find("sim: error: -o '"), std::string::npos) << name << " -o " << prefix << ": " << r.output;
      EXPECT_NE(r.output.find("a prefix is a path and the start of a file name (-o wl/job writes wl/job.0.et"),
                std::string::npos)
          << name << " -o " << prefix << ": " << r.output;
      EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << name << " -o " << prefix << ": " << r.output;
    }
  }
  // Nothing written anywhere: no hidden dir/.N.et, no /dev/null.N.et, no -.N.et.
  EXPECT_EQ(entries(dir_ / "dir"), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists("/dev/null.0.et"));
  EXPECT_FALSE(fs::exists("-.0.et"));
  EXPECT_FALSE(fs::exists(".0.et"));
  std::vector<std::string> expected = {"dir", "fifo", "file", "pt2"};
  EXPECT_EQ(entries(dir_), expected);
}

TEST_F(RankWriters, EveryWriterCreatesAMissingFolder) {
  EXPECT_EQ(gen_collectives(2, path("a/b/job")).code, 0);
  EXPECT_EQ(gen_transformer(2, path("c/d/job")).code, 0);
  EXPECT_EQ(collective_gen(2, path("e/f/job")).code, 0);
  const SimRun imported = import_pytorch(2, path("g/h/job"));
  EXPECT_EQ(imported.code, 0) << imported.output;
  for (const char* folder : {"a/b", "c/d", "e/f", "g/h"}) {
    EXPECT_EQ(rank_files(folder), (std::vector<std::string>{"job.0.et", "job.1.et"})) << folder;
  }
}

}  // namespace
}  // namespace sim
