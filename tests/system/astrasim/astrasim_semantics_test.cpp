// The strict system config reader, ASTRA-sim's system semantics as options,
// and ASTRA-sim's system JSON.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "system/scenario/system_files.h"
#include "core/error.h"
#include "system/astrasim/astrasim_system.h"
#include "system/config/system_config.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;
namespace fs = std::filesystem;

std::string system_yaml_error(const std::string& yaml) {
  try {
    parse_system_config(yaml, "s.yml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string json_error(const std::string& json) {
  try {
    parse_astrasim_system(json, "sys.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(StrictSystemConfig, DuplicateWrongTypedAndLenientValuesAreErrorsWithFileLineAndKey) {
  EXPECT_NE(
      system_yaml_error("collective:\n  chunks: 2\n  chunks: 3\n").find("s.yml:3: duplicate key 'collective.chunks'"),
      std::string::npos);
  EXPECT_NE(system_yaml_error("collective:\n  reduction_bandwidth: [1, 2]\n")
                .find("s.yml:2: 'collective.reduction_bandwidth'"),
            std::string::npos);
  EXPECT_NE(system_yaml_error("collective:\n  algorithms:\n    all_reduce: []\n").find("s.yml:3:"), std::string::npos);
  EXPECT_NE(system_yaml_error("collective:\n  algorithms:\n    all_reduce: {a: 1}\n")
                .find("collective.algorithms.all_reduce"),
            std::string::npos);
  EXPECT_NE(system_yaml_error("collective:\n  algorithms:\n    all_reduce: [ring, {a: 1}]\n").find("all_reduce[1]"),
            std::string::npos);
  EXPECT_NE(system_yaml_error("collective: {chunks: 2.9}").find("'collective.chunks' must be a whole number"),
            std::string::npos);
  EXPECT_NE(system_yaml_error("compute: {peak_tflops: 989abc, memory_bandwidth: 1GB/s}")
                .find("'compute.peak_tflops' must be a number"),
            std::string::npos);
  EXPECT_NE(system_yaml_error("network:\n  backend: flow\n  backend: analytical\n")
                .find("s.yml:3: duplicate key 'network.backend'"),
            std::string::npos);
  EXPECT_NE(system_yaml_error("collective: {scheduling_policy: LIFO}").find("LIFO is not supported"),
            std::string::npos);
  // A list is hierarchical, one algorithm per dimension; a list of one applies to every dimension.
  EXPECT_EQ(parse_system_config("collective:\n  algorithms:\n    all_reduce: [direct]\n", "s.yml")
                .algorithms.at(CollectiveType::kAllReduce),
            "hierarchical,direct");
  EXPECT_EQ(parse_system_config("collective:\n  algorithms:\n    all_reduce: [ring, direct]\n", "s.yml")
                .algorithms.at(CollectiveType::kAllReduce),
            "ring,direct");
}

TEST(StrictSystemConfig, DirectoriesAndSpecialFilesAreNotConfigs) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("sim_sysdir_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  try {
    load_system_config(dir.string());
    FAIL() << "a directory was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_system_config("/dev/null"), InputError);
  fs::remove_all(dir);
}

TEST(StrictSystemConfig, AstraSimOptionsParse) {
  const SystemConfig cfg = parse_system_config(
      "collective:\n  endpoint_delay: 10ns\n  dataset_splits: 4\n  active_chunks: 1\n  local_reduction: 1600GB/s\n"
      "  astrasim_quirks: true\n  scheduling_policy: FIFO\n",
      "s.yml");
  EXPECT_EQ(cfg.endpoint_delay, 10 * kNanosecond);
  EXPECT_EQ(cfg.dataset_splits, 4u);
  EXPECT_EQ(cfg.active_chunks, 1u);
  EXPECT_TRUE(cfg.astrasim_quirks);
  // ASTRA-sim's reduction: 3 x floor(m / 1600 B/ns) whole ns.
  EXPECT_EQ(cfg.reduction_time(524288), 3 * 327 * kNanosecond);
  EXPECT_EQ(cfg.reduction_time(1599), 0);
  EXPECT_NE(system_yaml_error("collective: {local_reduction: 1600GB/s, reduction_bandwidth: 1GB/s}").find("give one"),
            std::string::npos);
}

SimulationResult ring8_allreduce(const SystemConfig& cfg, std::uint64_t bytes) {
  return simulate_collective(shape("Ring", 8), CollectiveType::kAllReduce, bytes, cfg);
}

TEST(AstraSimSemantics, SerialSplitsTakeKTimesOneSplitPlusTheEndpointDelays) {
  SystemConfig one;
  const Time single = ring8_allreduce(one, 1 << 20).makespan;
  SystemConfig serial;
  serial.dataset_splits = 4;
  serial.active_chunks = 1;
  EXPECT_EQ(ring8_allreduce(serial, 4 << 20).makespan, 4 * single);
  serial.endpoint_delay = 10 * kNanosecond;
  // 14 messages per split each delayed 10 ns, plus the split's closing 10 ns.
  EXPECT_EQ(ring8_allreduce(serial, 4 << 20).makespan, 4 * (single + 15 * 10 * kNanosecond));
  SystemConfig parallel;
  parallel.dataset_splits = 4;  // all in flight: faster than serial
  EXPECT_LT(ring8_allreduce(parallel, 4 << 20).makespan, 4 * single);
}

TEST(AstraSimSemantics, SizeEnlargementRule) {
  // 16 B in 4 splits on 8 NPUs: each split would be 4 B < 8 NPUs, so it becomes 8 B.
  SystemConfig cfg;
  cfg.dataset_splits = 4;
  cfg.active_chunks = 1;
  SystemConfig plain;
  EXPECT_EQ(ring8_allreduce(cfg, 16).makespan, 4 * ring8_allreduce(plain, 8).makespan);
}

TEST(AstraSimJson, KeysAreHonouredRejectedOrWarned) {
  const SystemConfig cfg = parse_astrasim_system(R"({
    "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 4, "all-reduce-implementation": ["oneRing"],
    "all-gather-implementation": ["direct8"], "reduce-scatter-implementation": ["halvingDoubling"],
    "all-to-all-implementation": ["halvingDoubling"], "collective-optimization": "localBWAware",
    "local-mem-bw": 1600, "boost-mode": 0, "roofline-enabled": 0, "peak-perf": 900})",
                                                 "sys.json");
  EXPECT_EQ(cfg.endpoint_delay, 10 * kNanosecond);
  EXPECT_EQ(cfg.dataset_splits, 4u);
  EXPECT_EQ(cfg.active_chunks, 1u);
  EXPECT_EQ(cfg.local_reduction, 1'600'000'000'000u);
  EXPECT_EQ(cfg.algorithms.at(CollectiveType::kAllReduce), "ring");
  EXPECT_EQ(cfg.algorithm_dims.count(CollectiveType::kAllReduce), 0u);  // oneRing: flat, any dimensions
  EXPECT_EQ(cfg.algorithms.at(CollectiveType::kAllGather), "direct:window=8");
  EXPECT_EQ(cfg.algorithm_dims.at(CollectiveType::kReduceScatter), 1u);
  EXPECT_EQ(cfg.unavailable.count(CollectiveType::kAllToAll), 1u);  // halvingDoubling has no all-to-all
  EXPECT_TRUE(cfg.astrasim_lifo);
  EXPECT_FALSE(cfg.roofline());
  ASSERT_EQ(cfg.warnings.size(), 1u);
  EXPECT_NE(cfg.warnings[0].find("boost-mode"), std::string::npos);

  EXPECT_NE(json_error(R"({"endpoint-delay": 10,
  "endpoint-delay": 20})").find("sys.json:2: duplicate key 'endpoint-delay'"),
            std::string::npos);
  EXPECT_NE(json_error(R"({"endpont-delay": 10})").find("unknown key"), std::string::npos);
  EXPECT_NE(json_error(R"({"preferred-dataset-splits": 2.5})").find("whole number"), std::string::npos);
  // Per-dimension lists: the hierarchical algorithm, ASTRA-sim's splits and window per dimension.
  const SystemConfig two = parse_astrasim_system(
      R"({"all-reduce-implementation": ["ring", "direct"], "preferred-dataset-splits": 4,
          "collective-optimization": "baseline", "reduce-scatter-implementation": ["ring", "doubleBinaryTree"]})",
      "sys.json");
  EXPECT_EQ(two.algorithms.at(CollectiveType::kAllReduce),
            "hierarchical:chunks=4,active_chunks=1,dimension_queue=1,optimization=baseline,ring,direct");
  EXPECT_EQ(two.algorithm_dims.at(CollectiveType::kAllReduce), 2u);
  EXPECT_EQ(two.unavailable.count(CollectiveType::kReduceScatter), 1u);  // doubleBinaryTree: all-reduce only
  EXPECT_NE(json_error(R"({"all-reduce-implementation": ["ring", "oneRing"]})").find("mixes"), std::string::npos);
  EXPECT_NE(json_error(R"({"all-reduce-implementation": ["ringg"]})").find("unknown algorithm"), std::string::npos);
  EXPECT_NE(json_error(R"({"scheduling-policy": "EXPLICIT"})").find("not supported"), std::string::npos);
  EXPECT_NE(json_error(R"({"model-shared-bus": 1})").find("not supported"), std::string::npos);
  EXPECT_NE(json_error(R"({"per-node-custom-implementation": "x.yml"})").find("cannot read 'x.yml'"), std::string::npos);
  const SystemConfig roof = parse_astrasim_system(R"({"roofline-enabled": 1, "peak-perf": 900, "local-mem-bw": 1600})", "s.json");
  EXPECT_TRUE(roof.roofline());
  EXPECT_DOUBLE_EQ(roof.peak_flops, 900e12);
}

TEST(AstraSimJson, PerDimensionListsMustMatchTheTopology) {
  const SystemConfig cfg =
      parse_astrasim_system(R"({"all-reduce-implementation": ["ring", "ring"]})", "sys.json");
  EXPECT_THROW(ring8_allreduce(cfg, 1024), InputError);  // 2 entries, 1 dimension
  const SystemConfig hd = parse_astrasim_system(R"({"all-reduce-implementation": ["halvingDoubling"]})", "sys.json");
  EXPECT_THROW(simulate_collective(shape("Ring", 8), CollectiveType::kAllToAll, 1024, hd), InputError);
}

TEST(AstraSimJson, RemoteMemory) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("sim_remote_mem_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  EXPECT_NO_THROW(check_astrasim_remote_memory(write("a.json", R"({"memory-type": "NO_MEMORY_EXPANSION"})")));
  EXPECT_THROW(check_astrasim_remote_memory(write("b.json", R"({"memory-type": "MEMORY_POOL"})")), InputError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sim

namespace sim {
namespace {

TEST(AstraSimJson, SchedulingPolicyDoesNotChangeTimes) {
  // ASTRA-sim's scheduling-policy orders waiting chunk streams of DIFFERENT
  // collectives (LIFO: newer first) in its ready list and dimension queues;
  // its workload layer runs one communication node per rank at a time, so two
  // collectives never wait together and LIFO and FIFO give the same times.
  // Here too: two independent all-reduces per rank run the same under both,
  // and only LIFO (ASTRA-sim's default) warns that ASTRA-sim would have run
  // them one after another (docs/system.md).
  const auto run = [](const std::string& policy) {
    const SystemConfig cfg = parse_astrasim_system(R"({"scheduling-policy": ")" + policy + R"(",
      "endpoint-delay": 10, "active-chunks-per-dimension": 1, "preferred-dataset-splits": 4,
      "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
      "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"],
      "collective-optimization": "localBWAware", "local-mem-bw": 1600})", "sys.json");
    const auto traces = make_traces(8, [](int) {
      return std::vector<et::Node>{coll_node(1, CollectiveType::kAllReduce, 1 << 20),
                                   coll_node(2, CollectiveType::kAllReduce, 1 << 16)};
    });
    return simulate(traces, shape("Ring", 8), cfg);
  };
  const SimulationResult lifo = run("LIFO"), fifo = run("FIFO");
  EXPECT_EQ(lifo.makespan, fifo.makespan);
  const auto warns = [](const SimulationResult& r) {
    for (const std::string& w : r.warnings) {
      if (w.find("one communication node per rank") != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(warns(lifo));
  EXPECT_FALSE(warns(fifo));
}

}  // namespace
}  // namespace sim
