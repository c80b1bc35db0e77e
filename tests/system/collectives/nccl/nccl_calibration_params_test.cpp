// `nccl`'s calibration parameters (overhead, nvls_efficiency, nvls_latency)
// change NCCL's table and the simulated time as stated, exactly on a network
// too fast to matter; and NCCL tunes an all-gather on the gathered total.
#include <gtest/gtest.h>

#include <string>

#include "tests/system/test_util.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/registry/algorithm_registry.h"
#include "system/collectives/nccl/model/nccl_protocol.h"
#include "nccl_test_cluster.h"

namespace sim {
namespace {

using namespace sim::testing;

// 8 GPUs on one switch, no latency.
Topology eight_gpu_node(const std::string& bw, bool reduces) {
  return parse_topology("shape: Switch\nnpus: 8\nbandwidth: " + bw + "\nlatency: 0ns" +
                            (reduces ? "\nin_network_reduction: true\n" : "\n"),
                        "test-node");
}

nccl::Params params(const std::string& text) {
  nccl::Params p;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const std::size_t eq = item.find('=');
    p[item.substr(0, eq)] = nccl::param_value(item.substr(0, eq), item.substr(eq + 1));
    at = comma + 1;
  }
  return p;
}

// NCCL's plan over every GPU with the parameters `text` gives.
nccl::Plan plan_for_text(const Topology& topo, CollectiveType type, std::uint64_t bytes, const std::string& text) {
  auto members = std::make_shared<std::vector<std::uint32_t>>();
  for (std::uint32_t i = 0; i < topo.npu_count(); ++i) members->push_back(i);
  return nccl::plan(type, bytes, params(text), *make_algorithm_context(members, &topo));
}

// A config choosing `text` for all-reduce and all-gather.
SystemConfig choose_ar_ag(const std::string& text) {
  SystemConfig c;
  c.algorithms[CollectiveType::kAllReduce] = text;
  c.algorithms[CollectiveType::kAllGather] = text;
  return c;
}

TEST(NcclCalibrationParams, EfficiencyScalesNvlsBandwidthAndLatencyReplacesItsHop) {
  const Topology dgx = eight_gpu_node("450GB/s", true);
  const std::uint64_t s = std::uint64_t{256} << 20;
  const nccl::Plan as_is = plan_for_text(dgx, CollectiveType::kAllReduce, s, "algo=nvls");
  const nccl::Plan tuned =
      plan_for_text(dgx, CollectiveType::kAllReduce, s, "algo=nvls,nvls_efficiency=0.85,nvls_latency=40us");
  // NCCL's model on the node: 8 channels x 40 GB/s x 5/6 of algorithm bandwidth, 23 us.
  EXPECT_NEAR(as_is.table.bandwidth[kNvls][kSimple], 8 * 40.0 * 5 / 6, 1e-9);
  EXPECT_NEAR(tuned.table.bandwidth[kNvls][kSimple], 8 * 40.0 * 5 / 6 * 0.85, 1e-9);
  EXPECT_NEAR(tuned.table.latency[kNvls][kSimple], 40, 1e-9);
  EXPECT_NEAR(tuned.predicted_us, 40 + static_cast<double>(s) / (1000 * 8 * 40.0 * 5 / 6 * 0.85), 1e-9);
  EXPECT_EQ(tuned.model.base, 40'000'000);  // ps
  // The channel's pace follows: 0.85 of it.
  EXPECT_NEAR(static_cast<double>(tuned.model.channel_rate), 0.85 * static_cast<double>(as_is.model.channel_rate), 2);
  // Rings keep NCCL's numbers.
  EXPECT_EQ(tuned.table.bandwidth[kRing][kSimple], as_is.table.bandwidth[kRing][kSimple]);
}

TEST(NcclCalibrationParams, LowEnoughEfficiencyHandsTheChoiceToRings) {
  // NVLS at 0.8 x 266.7 = 213 GB/s still beats the ring's 205.7 at 1 GiB;
  // at 0.7 (186.7) NCCL runs the ring.
  const Topology dgx = eight_gpu_node("450GB/s", true);
  const std::uint64_t s = std::uint64_t{1} << 30;
  EXPECT_EQ(plan_for_text(dgx, CollectiveType::kAllReduce, s, "nvls_efficiency=0.8").name, "nccl:nvls/simple");
  EXPECT_EQ(plan_for_text(dgx, CollectiveType::kAllReduce, s, "nvls_efficiency=0.7").name, "nccl:ring/simple");
}

TEST(NcclCalibrationParams, OverheadIsPaidOncePerCallWhateverTheAlgorithm) {
  const Topology fast = eight_gpu_node("1000000000GB/s", true);
  for (const char* algo : {"ring", "nvls"}) {
    SCOPED_TRACE(algo);
    const std::uint64_t s = std::uint64_t{4} << 20;
    const std::string base = std::string("nccl:algo=") + algo;
    const SimulationResult a = simulate_collective(fast, CollectiveType::kAllReduce, s, choose_ar_ag(base));
    const SimulationResult b =
        simulate_collective(fast, CollectiveType::kAllReduce, s, choose_ar_ag(base + ",overhead=17us"));
    EXPECT_EQ(b.makespan - a.makespan, 17'000'000);
    const nccl::Plan p =
        plan_for_text(fast, CollectiveType::kAllReduce, s, std::string("algo=") + algo + ",overhead=17us");
    const nccl::Plan q = plan_for_text(fast, CollectiveType::kAllReduce, s, std::string("algo=") + algo);
    EXPECT_NEAR(p.predicted_us - q.predicted_us, 17, 1e-6);
    EXPECT_EQ(p.name, q.name);
  }
}

TEST(NcclCalibrationParams, BadValuesAreErrors) {
  EXPECT_THROW(nccl::param_value("nvls_efficiency", "1.2"), InputError);
  EXPECT_THROW(nccl::param_value("nvls_efficiency", "0"), InputError);
  EXPECT_THROW(nccl::param_value("nvls_efficiency", "0.8x"), InputError);
  EXPECT_THROW(nccl::param_value("overhead", "17"), InputError);  // no unit
  EXPECT_THROW(nccl::param_value("nvls_latency", "fast"), InputError);
  EXPECT_EQ(nccl::param_value("overhead", "17us"), 17'000'000u);
  EXPECT_EQ(nccl::param_value("nvls_efficiency", "0.85"), 850'000u);
  // Hex floats, and fractions below the millionths it is kept in (4e-7 was kept as 0: no NVLS at all).
  EXPECT_THROW(nccl::param_value("nvls_efficiency", "0x.8"), InputError);
  EXPECT_THROW(nccl::param_value("nvls_efficiency", "4e-7"), InputError);
  EXPECT_EQ(nccl::param_value("nvls_efficiency", "1e-6"), 1u);
  // Times that, summed along a call, passed 2^63 ps and wrapped (a 106-day
  // overhead made the call 14 us shorter): every time key is at most 1 s.
  for (const char* key : {"overhead", "nvls_latency", "proxy", "net_latency", "plugin_latency", "net_write_cost"}) {
    EXPECT_EQ(nccl::param_value(key, "1s"), 1'000'000'000'000u) << key;
    EXPECT_THROW(nccl::param_value(key, "9223372036854775807ps"), InputError) << key;
  }
}

// A choice is checked against its collective when it is read, not when a
// workload first issues that collective: keys that never apply to the type,
// a key given twice, an empty entry of a comma list.
TEST(NcclCalibrationParams, KeysAreCheckedForTheirCollectiveWhenRead) {
  const auto message = [](const std::string& text, CollectiveType type) {
    try {
      parse_algorithm_choice(text, type);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("nccl:p2p_net_chunk=1MiB", CollectiveType::kAllReduce).find("applies to ALL_TO_ALL only"),
            std::string::npos);
  EXPECT_NE(message("nccl:tuner=aws-p5", CollectiveType::kAllToAll).find("tuner does not apply to ALL_TO_ALL"),
            std::string::npos);
  EXPECT_NE(message("nccl:algo=ring", CollectiveType::kAllToAll).find("algo does not apply to ALL_TO_ALL"),
            std::string::npos);
  EXPECT_EQ(message("nccl:p2p_net_chunk=1MiB", CollectiveType::kAllToAll), "accepted");
  EXPECT_EQ(message("nccl:algo=ring,algo=tree", CollectiveType::kAllReduce),
            "collective algorithm 'nccl:algo=ring,algo=tree': algo is given twice (each key once)");
  EXPECT_EQ(message("ring:chunks=2,chunks=4", CollectiveType::kAllReduce),
            "collective algorithm 'ring:chunks=2,chunks=4': chunks is given twice (each key once)");
  EXPECT_NE(message("nccl:algo=ring,", CollectiveType::kAllReduce).find("an empty entry"), std::string::npos);
}

// NCCL tunes on nBytes, the whole buffer (src/enqueue.cc): an all-gather of 2
// MiB per rank on 8 GPUs is a 16 MiB all-gather to NCCL, which runs LL128
// (LL would take 178 us there); per rank it would look like LL's 2 MiB.
TEST(NcclCalibrationParams, AllGatherIsTunedOnTheGatheredTotal) {
  const Topology dgx = eight_gpu_node("450GB/s", true);
  const nccl::Plan pl = plan_for_text(dgx, CollectiveType::kAllGather, std::uint64_t{2} << 20, "");
  EXPECT_EQ(pl.name, "nccl:ring/ll128");
  // Ring LL128 all-gather: 14 + 7 x 1.9 us, min(0.92 x 12 x 30, 12 x 36.7) GB/s x 8/7 of algorithm
  // bandwidth (Simple: 8.4 + 7 x 3.4 us at 360 x 8/7, 1.4 us more).
  EXPECT_NEAR(pl.predicted_us, 14 + 7 * 1.9 + (16 << 20) / (1000 * 0.92 * 360 * 8 / 7), 1e-9);
}

// With the same nBytes NCCL picks the same ring for both, and the ring moves
// the same pieces: an all-gather of S/8 per rank takes as long as a
// reduce-scatter of S (NCCL's reductions are free in its model and ours), to
// the byte rounding of how each cuts its pieces (under a nanosecond).
TEST(NcclCalibrationParams, AllGatherOfAShareTakesAsLongAsReduceScatterOfTheWhole) {
  const Topology dgx = eight_gpu_node("450GB/s", true);
  for (const std::uint64_t s : {std::uint64_t{1} << 20, std::uint64_t{16} << 20, std::uint64_t{256} << 20}) {
    SCOPED_TRACE(s);
    const SimulationResult ag = simulate_collective(dgx, CollectiveType::kAllGather, s / 8, choose_ar_ag("nccl"));
    SystemConfig rs_config;
    rs_config.algorithms[CollectiveType::kReduceScatter] = "nccl";
    const SimulationResult rs = simulate_collective(dgx, CollectiveType::kReduceScatter, s, rs_config);
    EXPECT_EQ(ag.collectives[0].algorithm, rs.collectives[0].algorithm);
    EXPECT_NEAR(static_cast<double>(ag.makespan), static_cast<double>(rs.makespan), 1000);  // ps
  }
}

TEST(NcclCalibrationParams, PluginLatencyIsAddedToEveryNetworkHopOfNcclsModel) {
  // NCCL's model: interLat = hwLat[NET] + graph->latencyInter, + latencyInter
  // again for Simple (the flush); a tree pays 2 log2(nodes) network hops, a
  // ring 2 nodes of its 2 (ranks - 1) steps (tuning.cc). Four nodes of 8 GPUs.
  const Topology topo = nccl_cluster(8, 4, "450GB/s", "50GB/s", "500ns", "2us", true, false);
  const double L = 75;  // us
  const std::uint64_t s = std::uint64_t{64} << 20;
  const nccl::Plan plain = plan_for_text(topo, CollectiveType::kAllReduce, s, "algo=tree");
  const nccl::Plan plugin = plan_for_text(topo, CollectiveType::kAllReduce, s, "algo=tree,plugin_latency=75us");
  constexpr int kTree = static_cast<int>(nccl::Algo::kTree), kNvlsTree = static_cast<int>(nccl::Algo::kNvlsTree);
  constexpr int kLL = static_cast<int>(nccl::Proto::kLL), kLL128 = static_cast<int>(nccl::Proto::kLL128);
  for (const int p : {kLL, kLL128}) {
    EXPECT_NEAR(plugin.table.latency[kTree][p] - plain.table.latency[kTree][p], 2 * 2 * L, 1e-9) << p;
  }
  EXPECT_NEAR(plugin.table.latency[kTree][kSimple] - plain.table.latency[kTree][kSimple], 2 * 2 * 2 * L, 1e-9);
  EXPECT_NEAR(plugin.table.latency[kNvlsTree][kSimple] - plain.table.latency[kNvlsTree][kSimple], 2 * 2 * 2 * L, 1e-9);
  EXPECT_NEAR(plugin.table.latency[kRing][kLL] - plain.table.latency[kRing][kLL], 2 * 4 * L, 1e-9);
  EXPECT_NEAR(plugin.table.latency[kRing][kSimple] - plain.table.latency[kRing][kSimple], 2 * 4 * 2 * L, 1e-9);
  // The bandwidths, and the simulated steps of a forced algorithm, stay.
  for (int a = 0; a < nccl::kAlgos; ++a) {
    for (int p = 0; p < nccl::kProtos; ++p) EXPECT_EQ(plugin.table.bandwidth[a][p], plain.table.bandwidth[a][p]);
  }
  EXPECT_EQ(plugin.model.hop_inter, plain.model.hop_inter);
  EXPECT_EQ(plugin.model.base, plain.model.base);
  // What it moves is NCCL's choice: at 64 MiB NVLS-tree's four Simple hops
  // cost 600 us more, the tree/LL128's four 300 us.
  const std::uint64_t mid = std::uint64_t{64} << 20;
  EXPECT_EQ(plan_for_text(topo, CollectiveType::kAllReduce, mid, "").name, "nccl:nvlstree/simple");
  EXPECT_EQ(plan_for_text(topo, CollectiveType::kAllReduce, mid, "plugin_latency=75us").name, "nccl:tree/ll128");
  // Inside one node there is no network, so nothing to add.
  const Topology one = eight_gpu_node("450GB/s", true);
  const nccl::Plan one_plugin = plan_for_text(one, CollectiveType::kAllReduce, s, "plugin_latency=75us");
  const nccl::Plan one_plain = plan_for_text(one, CollectiveType::kAllReduce, s, "");
  for (int a = 0; a < nccl::kAlgos; ++a) {
    for (int p = 0; p < nccl::kProtos; ++p) EXPECT_EQ(one_plugin.table.latency[a][p], one_plain.table.latency[a][p]);
  }
  EXPECT_THROW(params("plugin_latency=75"), InputError);
  EXPECT_THROW(nccl::p2p_model(params("plugin_latency=75us")), InputError);
}

}  // namespace
}  // namespace sim
