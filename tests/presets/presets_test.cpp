// Presets of real systems: every preset's files load, the generated network
// is what the preset says, the one-node DGX H100 runs NCCL at the bus
// bandwidths NVIDIA reports, and `sim system gen` output runs on the normal
// command line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/run_sim.h"
#include "common/temp_folder.h"
#include "core/error.h"
#include "core/units.h"
#include "network/topology.h"
#include "presets/preset.h"
#include "system/runner/simulation.h"
#include "system/scenario/system_files.h"
#include "workload/generators/workload_generator.h"

namespace sim::presets {
namespace {

using sim::testing::run_sim;
using sim::testing::TempFolderTest;

struct OneRun {
  Time duration = 0;      // the slowest rank's, ps
  std::string algorithm;  // what ran, e.g. "nccl:nvls/simple"
};

// One collective of `bytes` per rank on every NPU.
OneRun run_one(const PresetFiles& f, CollectiveType type, std::uint64_t bytes, const std::string& system_yaml = "") {
  const Topology topology = parse_topology(f.network_yaml, "network.yml");
  const SystemConfig config = parse_system_text(system_yaml.empty() ? f.system_yaml : system_yaml, "system.yml");
  CollectivesSpec spec;
  spec.npus = topology.npu_count();
  spec.collectives = {type};
  spec.bytes = bytes;
  std::vector<RankGraph> graphs;
  const std::vector<EtTrace> traces = collectives_workload(spec);
  for (std::size_t r = 0; r < traces.size(); ++r) graphs.emplace_back(traces[r], static_cast<int>(r), GraphOptions{});
  Simulation sim(std::move(graphs), topology, config, SimulationOptions{});
  const SimulationResult result = sim.run();
  OneRun run;
  for (const CollectiveRecord& c : result.collectives) {
    run.duration = std::max(run.duration, c.duration);
    run.algorithm = c.algorithm;
  }
  return run;
}

TEST(Presets, ListHasTheIssuesPresets) {
  for (const char* name : {"dgx-h100", "dgx-h100-superpod", "h100-roce-clos", "dgx-a100", "p5", "dgx-h100-calibrated"}) {
    EXPECT_NO_THROW(find_preset(name)) << name;
  }
  EXPECT_THROW(find_preset("dgx-h200"), InputError);
}

TEST(Presets, EveryPresetLoadsOnOneTwoAndItsDefaultNodes) {
  for (const Preset& p : all_presets()) {
    for (const std::uint32_t nodes : {1u, 2u, p.default_nodes}) {
      SCOPED_TRACE(p.name + " x" + std::to_string(nodes));
      const PresetFiles f = generate_preset(p, nodes);
      const Topology t = parse_topology(f.network_yaml, "network.yml");
      EXPECT_EQ(t.npu_count(), 8 * nodes);
      EXPECT_EQ(f.npus, 8 * nodes);
      const SystemConfig c = parse_system_text(f.system_yaml, "system.yml");
      EXPECT_TRUE(c.roofline());
      EXPECT_NE(f.calibration_yaml.find("free:"), std::string::npos);
    }
  }
}

// A preset frees for calibration only what acts on its node count: on one
// node no message crosses the network, so no proxy or network hop (which a
// fit would have reported as fitted at their starting values).
TEST(Presets, OneNodeFreesNothingOfTheNetwork) {
  for (const Preset& p : all_presets()) {
    SCOPED_TRACE(p.name);
    for (const FreeParameter& f : free_parameters(p, 1)) {
      EXPECT_NE(f.name, "nccl_proxy");
      EXPECT_NE(f.name, "nccl_net_latency");
      EXPECT_NE(f.name, "nvls_copy_bandwidth");
    }
  }
  std::vector<std::string> two;
  for (const FreeParameter& f : free_parameters(find_preset("p5"), 2)) two.push_back(f.name);
  EXPECT_EQ(two, (std::vector<std::string>{"nccl_overhead", "nccl_proxy", "nccl_net_latency", "nvls_copy_bandwidth"}));
}

TEST(Presets, DgxH100NumbersAreTheSpecSheetsWithSources) {
  const PresetFiles f = generate_preset(find_preset("dgx-h100"), 4);
  EXPECT_EQ(f.dims, (std::vector<std::uint32_t>{8, 4}));
  EXPECT_NE(f.network_yaml.find("bandwidth: [450GB/s, 400Gbps]"), std::string::npos) << f.network_yaml;
  EXPECT_NE(f.network_yaml.find("18 links x 25 GB/s"), std::string::npos);
  EXPECT_NE(f.network_yaml.find("ConnectX-7"), std::string::npos);
  EXPECT_NE(f.network_yaml.find("hwLat"), std::string::npos);  // the NCCL constant the latency comes from
  const SystemConfig c = parse_system_text(f.system_yaml, "system.yml");
  EXPECT_DOUBLE_EQ(c.peak_flops, 989.4e12);
  EXPECT_EQ(c.compute_memory_bandwidth, 3'350'000'000'000ULL);
  // 450 GB/s = 18 x 25 GB/s, 400 Gb/s = 50 GB/s.
  const Topology t = parse_topology(f.network_yaml, "network.yml");
  ASSERT_EQ(t.dims(), (std::vector<std::uint32_t>{8, 4}));
  EXPECT_EQ(parse_bandwidth("400Gbps"), 50'000'000'000ULL);
}

TEST(Presets, LevelsSplitNodesAsStated) {
  EXPECT_EQ(generate_preset(find_preset("dgx-h100-superpod"), 64).dims, (std::vector<std::uint32_t>{8, 32, 2}));
  EXPECT_EQ(generate_preset(find_preset("dgx-h100-superpod"), 16).dims, (std::vector<std::uint32_t>{8, 16}));
  EXPECT_EQ(generate_preset(find_preset("h100-roce-clos"), 2048).dims, (std::vector<std::uint32_t>{8, 32, 32, 2}));
  EXPECT_EQ(generate_preset(find_preset("dgx-a100"), 40).dims, (std::vector<std::uint32_t>{8, 20, 2}));
  EXPECT_EQ(generate_preset(find_preset("dgx-h100"), 1).dims, (std::vector<std::uint32_t>{8}));
  // The Clos's core level carries the stated 2:1 oversubscription.
  const PresetFiles clos = generate_preset(find_preset("h100-roce-clos"), 2048);
  EXPECT_NE(clos.network_yaml.find("bandwidth: [450GB/s, 400Gbps, 400Gbps, 200Gbps]"), std::string::npos)
      << clos.network_yaml;
  // p5: 32 x 100 Gb/s EFA over 8 GPUs.
  EXPECT_NE(generate_preset(find_preset("p5"), 2).network_yaml.find("bandwidth: [450GB/s, 400Gbps]"),
            std::string::npos);
  EXPECT_NE(generate_preset(find_preset("dgx-a100"), 2).network_yaml.find("bandwidth: [300GB/s, 200Gbps]"),
            std::string::npos);
}

TEST(Presets, NodesThatDoNotFitAreErrorsSayingWhatWould) {
  try {
    generate_preset(find_preset("dgx-h100"), 65);
    FAIL() << "65 nodes on one rail switch";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("at most 64"), std::string::npos) << e.what();
  }
  try {
    // 37 is prime: no even spread over leaves of at most 20 nodes.
    generate_preset(find_preset("dgx-a100"), 37);
    FAIL() << "37 nodes cannot be spread evenly over 20-node leaves";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no divisor from 2 to 20"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("give e.g. 36 or 38"), std::string::npos) << e.what();
  }
  EXPECT_THROW(generate_preset(find_preset("dgx-h100"), 0), InputError);
}

// A node count the radix does not divide is spread evenly over partly
// populated switches: the largest divisor the radix allows, and the file says so.
TEST(Presets, NodesTheRadixDoesNotDivideSpreadEvenlyOverPartlyPopulatedSwitches) {
  // Selene's 1T run (Narayanan et al., SC'21): 384 nodes, 20-node scalable units.
  const std::string selene = generate_preset(find_preset("dgx-a100"), 384).network_yaml;
  EXPECT_NE(selene.find("npus_count: [8, 16, 24]"), std::string::npos) << selene;
  EXPECT_NE(selene.find("partly populated: 16 of the switch's 20 ports down; the nodes spread evenly over 24 "
                        "switches per rail"),
            std::string::npos)
      << selene;
  // 40 servers on a three-layer Clos of 32-server leaves: two leaves of 20, one pod.
  const std::string clos = generate_preset(find_preset("h100-roce-clos"), 40).network_yaml;
  EXPECT_NE(clos.find("npus_count: [8, 20, 2]"), std::string::npos) << clos;
  // A count that fills its leaves says nothing of the kind.
  const std::string full = generate_preset(find_preset("dgx-a100"), 240).network_yaml;
  EXPECT_NE(full.find("npus_count: [8, 20, 12]"), std::string::npos) << full;
  EXPECT_EQ(full.find("partly populated"), std::string::npos) << full;
  // A placement the user names: 192 nodes as 16 leaves of 12 (so that groups of 24 sit on whole leaves).
  const PresetFiles placed = generate_preset(find_preset("dgx-a100"), 192, PresetChoices{12, false, ""});
  EXPECT_EQ(placed.dims, (std::vector<std::uint32_t>{8, 12, 16}));
  EXPECT_NE(placed.network_yaml.find("--nodes 192 --leaf-nodes 12`"), std::string::npos) << placed.network_yaml;
  for (const std::uint32_t bad : {7u, 24u, 0u + 384u}) {
    try {
      generate_preset(find_preset("dgx-a100"), 192, PresetChoices{bad, false, ""});
      FAIL() << "--leaf-nodes " << bad << " on 192 nodes of 20-node leaves";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("must divide --nodes 192 and be at most the rail leaf switch's 20"),
                std::string::npos)
          << e.what();
    }
  }
}

// One node per leaf (--leaf-nodes 1): the leaf level is no dimension, but
// every message between nodes still crosses a leaf on each side, so the
// spine's dimension carries the leaf's latency too: spreading nodes over
// more leaves is never faster than packing them under one.
TEST(Presets, OneNodePerLeafStillPaysTheLeaf) {
  const PresetFiles spread = generate_preset(find_preset("dgx-h100-superpod"), 4, PresetChoices{1, false, ""});
  const PresetFiles packed = generate_preset(find_preset("dgx-h100-superpod"), 4);
  EXPECT_NE(packed.network_yaml.find("latency: [300ns, 1350ns]"), std::string::npos) << packed.network_yaml;
  EXPECT_NE(spread.network_yaml.find("latency: [300ns, 1850ns]"), std::string::npos) << spread.network_yaml;
  EXPECT_NE(spread.network_yaml.find("rail leaf 1350ns + spine 500ns: one group per switch below"), std::string::npos)
      << spread.network_yaml;
}

// A preset with one network level holds every node under it: --leaf-nodes
// can only say so, and the message says that, not a false node limit.
TEST(Presets, LeafNodesOnOneLevelNamesTheLevel) {
  for (const std::uint32_t leaf : {2u, 3u}) {
    try {
      generate_preset(find_preset("p5"), 8, PresetChoices{leaf, false, ""});
      FAIL() << "--leaf-nodes " << leaf << " on p5";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("p5 has one network level (EFA network), which holds every node: give "
                                           "--leaf-nodes 8 or leave it out"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(generate_preset(find_preset("p5"), 8, PresetChoices{8, false, ""}).dims,
            generate_preset(find_preset("p5"), 8).dims);
}

// One node: a ring over the NVSwitch, chunks 1. Each step sends one block
// through two links (GPU -> switch -> GPU) of latency L at B:
//   all-reduce      2 (n-1) x (2L + (S/n)/B)
//   reduce-scatter    (n-1) x (2L + (S/n)/B)
//   all-gather        (n-1) x (2L + S/B)      (S: each rank's input)
// A preset's system file selects NCCL's algorithms; the H100 NVSwitch reduces
// (NVLS). Checked on the spec-sheet dgx-h100, all-reduce at 4 GiB:
// NCCL's own choice (NVLS) within 10% of the 480 GB/s busbw NVIDIA staff
// report, the ring forced (`nccl:algo=ring`) within 10% of 370 GB/s
// (nccl-tests issue 212). Nothing here is fitted: NCCL's search and tuning
// constants on the spec sheet's 450 GB/s (docs/nccl.md).
// --attention flash-attention-2: the H100 presets time attention at
// FlashAttention-2's published speeds (the GEMMs and memory-bound ops stay
// the measured ones), with the efficiency fitted with it where the preset
// has one; only the kernels and the efficiency change. The A100 presets,
// which have no such table, refuse it, naming the presets that have one.
TEST(Presets, FlashAttention2IsTheAttentionOfEarly2024) {
  const Preset& superpod = find_preset("dgx-h100-superpod");
  const PresetFiles plain = generate_preset(superpod, 16);
  const PresetFiles fa2 = generate_preset(superpod, 16, PresetChoices{0, false, kFlashAttention2});
  // The network file differs only in the command its header names.
  EXPECT_EQ(fa2.network_yaml.substr(fa2.network_yaml.find("\n\n")),
            plain.network_yaml.substr(plain.network_yaml.find("\n\n")));
  EXPECT_NE(fa2.system_yaml.find("\n  kernels: [builtin:h100/gemm.csv, builtin:h100/membound.csv, "
                                 "builtin:h100-flash-attention-2]\n"),
            std::string::npos);
  EXPECT_NE(fa2.system_yaml.find("\n  efficiency: 0.705   # fit: Llama 3 405B on 8,192 H100s with FlashAttention-2"),
            std::string::npos);
  EXPECT_NE(plain.system_yaml.find("\n  kernels: builtin:h100\n"), std::string::npos);
  EXPECT_NE(plain.system_yaml.find("\n  efficiency: 0.661   #"), std::string::npos);
  EXPECT_NE(fa2.system_yaml.find("`sim system gen dgx-h100-superpod --nodes 16 --attention flash-attention-2`"),
            std::string::npos);
  // Everything after the compute section is the same.
  EXPECT_EQ(fa2.system_yaml.substr(fa2.system_yaml.find("\ncollective:")),
            plain.system_yaml.substr(plain.system_yaml.find("\ncollective:")));
  const SystemConfig parsed = parse_system_text(fa2.system_yaml, "system.yml");
  EXPECT_DOUBLE_EQ(parsed.compute_efficiency, 0.705);

  // p5 has no fitted efficiency: the kernels change, no efficiency is written.
  const PresetFiles p5 = generate_preset(find_preset("p5"), 2, PresetChoices{0, false, kFlashAttention2});
  EXPECT_NE(p5.system_yaml.find("builtin:h100-flash-attention-2]"), std::string::npos);
  EXPECT_EQ(p5.system_yaml.find("\n  efficiency:"), std::string::npos);

  try {
    generate_preset(find_preset("dgx-a100"), 2, PresetChoices{0, false, kFlashAttention2});
    ADD_FAILURE() << "dgx-a100 took --attention flash-attention-2";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--attention flash-attention-2: no table of its speeds on dgx-a100's GPU "
                                          "(A100 SXM4 80GB); the presets with one: dgx-h100, ",
                                          0),
              0u)
        << e.what();
  }
  EXPECT_THROW(generate_preset(superpod, 16, PresetChoices{0, false, "flash-attention-3"}), InputError);
}

// --sharp: the InfiniBand presets' fabric switches reduce (SHARP, sourced),
// so NCCL runs NVLS across nodes through CollNet, over one switch level or
// several; fabrics that cannot and one node are refused, saying why.
TEST(Presets, SharpMakesTheFabricReduceAndNcclRunsNvlsAcrossNodes) {
  const Preset& superpod = find_preset("dgx-h100-superpod");
  const PresetFiles plain = generate_preset(superpod, 4, PresetChoices{});
  const PresetFiles sharp = generate_preset(superpod, 4, PresetChoices{0, true, ""});
  EXPECT_NE(plain.network_yaml.find("in_network_reduction: [true, false]\n"), std::string::npos);
  EXPECT_NE(sharp.network_yaml.find("in_network_reduction: [true, true]\n"), std::string::npos);
  EXPECT_NE(sharp.network_yaml.find("--sharp: SHARPv3; spec sheet: NVIDIA Quantum-2 QM9700"), std::string::npos);
  EXPECT_NE(sharp.network_yaml.find("`sim system gen dgx-h100-superpod --nodes 4 --sharp`"), std::string::npos);
  EXPECT_NE(sharp.system_yaml.find("`sim system gen dgx-h100-superpod --nodes 4 --sharp`"), std::string::npos);
  const OneRun without = run_one(plain, CollectiveType::kAllReduce, std::uint64_t{1} << 30);
  const OneRun with = run_one(sharp, CollectiveType::kAllReduce, std::uint64_t{1} << 30);
  EXPECT_EQ(without.algorithm.find("nccl:nvls/"), std::string::npos) << without.algorithm;  // NVLS needs CollNet across nodes
  EXPECT_EQ(with.algorithm, "nccl:nvls/simple");
  EXPECT_LT(with.duration, without.duration);
  EXPECT_NO_THROW(generate_preset(find_preset("dgx-a100"), 2, PresetChoices{0, true, ""}));

  const auto error_of = [](const std::string& name, std::uint32_t nodes) {
    try {
      generate_preset(find_preset(name), nodes, PresetChoices{0, true, ""});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of("p5", 4).rfind("--sharp: p5's fabric does not reduce in its switches; the presets whose fabric "
                                    "can: dgx-h100, ",
                                    0),
            0u);
  EXPECT_NE(error_of("h100-roce-clos", 4).find("RoCEv2"), std::string::npos);
  EXPECT_EQ(error_of("dgx-h100-superpod", 1), "--sharp: one node has no fabric to reduce in (give --nodes 2 or more)");

  // Rails over leaves and spines (4 nodes, 2 per leaf): both levels reduce,
  // and the SHARP tree over them (nccl/model/sharp_tree.h) moves 1 GiB as fast as
  // one switch per rail, within 1.5% (the leaves' reduce-scatter and
  // multicast add a pipeline's fill, which NVLS's copies into and out of its
  // buffer lengthen; each GPU's spine link carries half).
  const PresetFiles two_levels = generate_preset(superpod, 4, PresetChoices{2, true, ""});
  EXPECT_NE(two_levels.network_yaml.find("in_network_reduction: [true, true, true]\n"), std::string::npos)
      << two_levels.network_yaml;
  const OneRun tree = run_one(two_levels, CollectiveType::kAllReduce, std::uint64_t{1} << 30);
  EXPECT_EQ(tree.algorithm, "nccl:nvls/simple");
  EXPECT_GE(tree.duration, with.duration);
  EXPECT_NEAR(static_cast<double>(tree.duration), static_cast<double>(with.duration), 0.015 * with.duration);
}

TEST(Presets, OneNodeDgxH100RunsNcclAtItsPublishedBusBandwidth) {
  const PresetFiles f = generate_preset(find_preset("dgx-h100"), 1);
  EXPECT_NE(f.network_yaml.find("in_network_reduction: [true]"), std::string::npos) << f.network_yaml;
  for (const char* type : {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"}) {
    EXPECT_NE(f.system_yaml.find(std::string("    ") + type + ": nccl:overhead=0us"), std::string::npos) << type;
  }
  const std::uint64_t s = std::uint64_t{4} << 30;
  const auto busbw = [](const OneRun& r, std::uint64_t bytes) {
    return 2.0 * 7 / 8 * static_cast<double>(bytes) / (static_cast<double>(r.duration) / 1e12) / 1e9;
  };
  const OneRun nvls = run_one(f, CollectiveType::kAllReduce, s);
  EXPECT_EQ(nvls.algorithm, "nccl:nvls/simple");
  EXPECT_NEAR(busbw(nvls, s), 480, 48) << nvls.algorithm;
  std::string ring_yaml = f.system_yaml;
  const std::string key = "all_reduce: nccl:overhead=0us,nvls_efficiency=1\n";
  ASSERT_NE(ring_yaml.find(key), std::string::npos) << ring_yaml;
  ring_yaml.replace(ring_yaml.find(key), key.size(), "all_reduce: nccl:algo=ring\n");
  const OneRun ring = run_one(f, CollectiveType::kAllReduce, s, ring_yaml);
  EXPECT_EQ(ring.algorithm, "nccl:ring/simple");
  EXPECT_NEAR(busbw(ring, s), 370, 37) << ring.algorithm;
  // All-gather and reduce-scatter run NCCL's ring (NVLS loses to it there in NCCL's model).
  EXPECT_EQ(run_one(f, CollectiveType::kAllGather, std::uint64_t{64} << 20).algorithm, "nccl:ring/simple");
  EXPECT_EQ(run_one(f, CollectiveType::kReduceScatter, std::uint64_t{512} << 20).algorithm, "nccl:ring/simple");
  // The A100's NVSwitch (second generation) does not reduce: no NVLS there.
  EXPECT_EQ(generate_preset(find_preset("dgx-a100"), 1).network_yaml.find("in_network_reduction"), std::string::npos);
}

class PresetsCli : public TempFolderTest {};

TEST_F(PresetsCli, ListNamesEveryPreset) {
  const auto r = run_sim("system list");
  ASSERT_EQ(r.code, 0) << r.output;
  for (const Preset& p : all_presets()) EXPECT_NE(r.output.find(p.name), std::string::npos) << p.name;
}

TEST_F(PresetsCli, EveryGeneratedPresetRunsOnTheNormalCommandLine) {
  const std::string wl = path("wl");
  for (const Preset& p : all_presets()) {
    SCOPED_TRACE(p.name);
    const std::string dir = path(p.name);
    auto r = run_sim("system gen " + p.name + " --nodes 2 -o " + dir);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(std::filesystem::exists(dir + "/calibration.yml"));
    r = run_sim("workload gen collectives --npus 16 --coll allreduce,allgather,reducescatter --size 64MiB -o " + wl);
    ASSERT_EQ(r.code, 0) << r.output;
    r = run_sim("--workload " + wl + " --network " + dir + "/network.yml --system " + dir + "/system.yml");
    EXPECT_EQ(r.code, 0) << r.output;
  }
}

TEST_F(PresetsCli, BadPresetOrNodesExitTwoAndWriteNothing) {
  auto r = run_sim("system gen dgx-h200 -o " + path("x"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown preset 'dgx-h200'"), std::string::npos) << r.output;
  r = run_sim("system gen dgx-h100 --nodes 100 -o " + path("y"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("y")));
  r = run_sim("system gen dgx-h100 -o ''");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_EQ(r.output, "sim: error: -o: an empty folder name\n");
}

TEST_F(PresetsCli, SystemFolderStandsForItsFiles) {
  const std::string dir = path("dgx");
  ASSERT_EQ(run_sim("system gen dgx-h100 -o " + dir).code, 0);
  ASSERT_EQ(run_sim("workload gen collectives --npus 8 --coll allreduce --size 1GiB -o " + path("wl")).code, 0);
  const auto by_folder = run_sim("--workload " + path("wl") + " --system " + dir + " --csv " + path("a.csv"));
  const auto by_files = run_sim("--workload " + path("wl") + " --network " + dir + "/network.yml --system " + dir +
                                "/system.yml --csv " + path("b.csv"));
  ASSERT_EQ(by_folder.code, 0) << by_folder.output;
  ASSERT_EQ(by_files.code, 0) << by_files.output;
  EXPECT_EQ(read(path("a.csv")), read(path("b.csv")));
  EXPECT_FALSE(read(path("a.csv")).empty());
  std::filesystem::create_directories(path("empty"));
  const auto r = run_sim("--workload " + path("wl") + " --system " + path("empty"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("holds no system.yml"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace sim::presets

namespace sim::presets {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// configs/presets/NAME-xN (the sweeps' inputs) are what `sim system gen NAME
// --nodes N` writes today, and every preset has its two-node folder.
TEST(Presets, CheckedInFoldersAreTheGeneratorsOutput) {
  const std::filesystem::path root = std::filesystem::path(SIM_SOURCE_DIR) / "configs" / "presets";
  std::size_t checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    const auto x = name.rfind("-x");
    ASSERT_NE(x, std::string::npos) << name;
    SCOPED_TRACE(name);
    const PresetFiles f = generate_preset(find_preset(name.substr(0, x)), std::stoul(name.substr(x + 2)));
    const std::string dir = entry.path().string() + "/";
    EXPECT_EQ(read_text(dir + "network.yml"), f.network_yaml) << "regenerate " << dir;
    EXPECT_EQ(read_text(dir + "system.yml"), f.system_yaml) << "regenerate " << dir;
    EXPECT_EQ(read_text(dir + "calibration.yml"), f.calibration_yaml) << "regenerate " << dir;
    ++checked;
  }
  for (const Preset& p : all_presets()) EXPECT_TRUE(std::filesystem::is_directory(root / (p.name + "-x2"))) << p.name;
  EXPECT_EQ(checked, all_presets().size() + 2);  // and dgx-h100-calibrated-x1, dgx-h100-superpod-x512
}

}  // namespace
}  // namespace sim::presets
