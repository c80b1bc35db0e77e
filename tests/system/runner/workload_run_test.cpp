// Running whole workloads: point-to-point, resources, models, real traces, failures.
#include <gtest/gtest.h>

#include <filesystem>

#include "system/scenario/system_files.h"
#include "core/error.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;

TEST(WorkloadRun, OneMiBBetweenRingNeighboursTakesLatencyPlusSerialization) {
  // 500 ns + 1,048,576 B / 50 GB/s = 21,471.52 ns, on two of ring8's eight NPUs.
  const auto traces = make_traces(2, [](int r) {
    return std::vector<et::Node>{p2p_node(1, r == 0, r == 0 ? 1 : 0, 1 << 20)};
  });
  const auto res = simulate(traces, ring8());
  EXPECT_EQ(res.makespan, 21'471'520);
  EXPECT_EQ(res.ranks[0].finish, 21'471'520);
  EXPECT_EQ(res.ranks[1].finish, 21'471'520);
  ASSERT_EQ(res.warnings.size(), 1u);  // fewer ranks than NPUs
  EXPECT_NE(res.warnings[0].find("ranks run on NPUs 0..1"), std::string::npos);
}

TEST(WorkloadRun, ReceivePostedLateCompletesWhenPosted) {
  const auto traces = make_traces(2, [](int r) {
    if (r == 0) return std::vector<et::Node>{p2p_node(1, true, 1, 1 << 20)};
    return std::vector<et::Node>{comp_node(1, 100), p2p_node(2, false, 0, 1 << 20, 0, {1})};
  });
  const auto res = simulate(traces, ring8());
  EXPECT_EQ(res.ranks[0].finish, 21'471'520);  // eager send: done on delivery
  EXPECT_EQ(res.ranks[1].finish, 100 * kMicrosecond);
}

TEST(WorkloadRun, MessagesMatchFifoPerTag) {
  // Two sends with different tags, received in the opposite order: each matches its own tag.
  const auto traces = make_traces(2, [](int r) {
    if (r == 0) return std::vector<et::Node>{p2p_node(1, true, 1, 1024, 7), p2p_node(2, true, 1, 2048, 9)};
    return std::vector<et::Node>{p2p_node(1, false, 0, 2048, 9), p2p_node(2, false, 0, 1024, 7)};
  });
  EXPECT_NO_THROW(simulate(traces, ring8()));
}

TEST(WorkloadRun, SizeMismatchIsAnInputError) {
  const auto traces = make_traces(2, [](int r) {
    return std::vector<et::Node>{p2p_node(1, r == 0, r == 0 ? 1 : 0, r == 0 ? 1024 : 2048, 3)};
  });
  try {
    simulate(traces, ring8());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("size mismatch"), std::string::npos) << e.what();
  }
}

TEST(WorkloadRun, UnmatchedReceiveSaysWhoWaitsOnWhat) {
  const auto traces = make_traces(2, [](int r) {
    if (r == 0) return std::vector<et::Node>{comp_node(1, 5)};
    return std::vector<et::Node>{p2p_node(4, false, 0, 4096, 2), comp_node(5, 1, {4})};
  });
  try {
    simulate(traces, ring8());
    FAIL();
  } catch (const IncompleteError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rank 1 (mem.1.et): 2 of 2 nodes unfinished"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank 1 node 4 'recv' (COMM_RECV from rank 0, tag 2, 4096 B) waits"), std::string::npos) << msg;
  }
}

TEST(WorkloadRun, UnmatchedSendIsReported) {
  const auto traces = make_traces(2, [](int r) {
    if (r == 0) return std::vector<et::Node>{p2p_node(1, true, 1, 4096, 2)};
    return std::vector<et::Node>{comp_node(1, 5)};
  });
  try {
    simulate(traces, ring8());
    FAIL();
  } catch (const IncompleteError& e) {
    EXPECT_NE(std::string(e.what()).find("was never received by rank 1"), std::string::npos) << e.what();
  }
}

TEST(WorkloadRun, CollectiveAMemberNeverIssuesIsReported) {
  const auto traces = make_traces(4, [](int r) {
    if (r == 3) return std::vector<et::Node>{comp_node(1, 5)};
    return std::vector<et::Node>{coll_node(1, CollectiveType::kAllReduce, 1 << 20)};
  });
  try {
    simulate(traces, ring8());
    FAIL();
  } catch (const IncompleteError& e) {
    EXPECT_NE(std::string(e.what()).find("ALL_REDUCE of 1048576 B on all ranks (ranks 0, 1, 2, 3; network dimensions "
                                         "[0]), collective number 1 of that group:\n    issued by: rank 0 node 1 'coll', "
                                         "rank 1 node 1 'coll', rank 2 node 1 'coll'\n    not issued by rank 3, which has "
                                         "finished all its nodes"),
              std::string::npos)
        << e.what();
  }
}

TEST(WorkloadRun, RanksDisagreeingOnACollectiveIsAnInputError) {
  const auto traces = make_traces(4, [](int r) {
    return std::vector<et::Node>{coll_node(1, CollectiveType::kAllReduce, r == 2 ? 2048 : 1024)};
  });
  try {
    simulate(traces, ring8());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("collective number 1 of all ranks: mem.2.et: rank 2 node 1 'coll' issues "
                                         "ALL_REDUCE of 2048 B but mem.0.et: rank 0 node 1 'coll' issued ALL_REDUCE of "
                                         "1024 B"),
              std::string::npos)
        << e.what();
  }
}

TEST(WorkloadRun, GpuComputeSerializesWhileCommunicationOverlaps) {
  // Two independent 10 us COMPs run back to back; a send overlaps them.
  const auto traces = make_traces(2, [](int r) {
    if (r == 1) return std::vector<et::Node>{p2p_node(1, false, 0, 1 << 20)};
    return std::vector<et::Node>{comp_node(1, 10), comp_node(2, 10), p2p_node(3, true, 1, 1 << 20)};
  });
  const auto res = simulate(traces, ring8());
  EXPECT_EQ(res.ranks[0].finish, 21'471'520);  // the send finishes after the 20 us of compute
  EXPECT_EQ(res.ranks[0].compute, 20 * kMicrosecond);
  EXPECT_EQ(res.ranks[0].exposed_comm, 21'471'520 - 20 * kMicrosecond);
  EXPECT_EQ(res.ranks[0].idle, 0);
  EXPECT_EQ(res.ranks[1].exposed_comm, 21'471'520);
}

TEST(WorkloadRun, CpuAndGpuOpsOverlap) {
  const auto traces = make_traces(1, [](int) {
    et::Node cpu = comp_node(1, 10);
    set_attr_bool(cpu, "is_cpu_op", true);
    return std::vector<et::Node>{cpu, comp_node(2, 10)};
  });
  EXPECT_EQ(simulate(traces, ring8()).makespan, 10 * kMicrosecond);
}

TEST(WorkloadRun, RooflineAndMemoryModels) {
  SystemConfig cfg = parse_system_config(
      "compute: {peak_tflops: 100, memory_bandwidth: 1000GB/s}\nmemory: {latency: 100ns, bandwidth: 100GB/s}\n",
      "test.yml");
  const auto traces = make_traces(1, [](int) {
    et::Node flops = comp_node(1, 999);  // compute-bound: 1e9 ops at 100 TFLOPS = 10 us
    set_attr_int(flops, "num_ops", 1'000'000'000);
    set_attr_int(flops, "tensor_size", 1'000'000);
    et::Node bytes = comp_node(2, 999, {1});  // memory-bound: 1e8 B at 1000 GB/s = 100 us
    set_attr_int(bytes, "num_ops", 1000);
    set_attr_int(bytes, "tensor_size", 100'000'000);
    et::Node load;
    load.set_id(3);
    load.set_type(et::MEM_LOAD_NODE);
    load.add_data_deps(2);
    set_attr_int(load, "tensor_size", 1'000'000);  // 100 ns + 1e6 B / 100 GB/s = 10.1 us
    return std::vector<et::Node>{flops, bytes, load};
  });
  EXPECT_EQ(simulate(traces, ring8(), cfg).makespan, 10 * kMicrosecond + 100 * kMicrosecond + 10'100'000);
}

TEST(WorkloadRun, MoreRanksThanNpusIsAnError) {
  const auto traces = make_traces(9, [](int) { return std::vector<et::Node>{comp_node(1, 1)}; });
  EXPECT_THROW(simulate(traces, ring8()), InputError);
}

TEST(WorkloadRun, ChakraTraceRunsBetweenCriticalPathAndSerialSum) {
  const std::string path = testdata("chakra/chakra.0.et");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "testdata absent: " << path;
  const std::vector<EtTrace> traces{read_et(path)};
  const auto res = simulate(traces, load_topology(source_dir() + "/configs/switch8.yml"));
  EXPECT_GE(res.makespan, 45'094 * kMicrosecond);
  EXPECT_LE(res.makespan, 381'795 * kMicrosecond);
  EXPECT_EQ(res.ranks[0].nodes, 3664u);
}

TEST(WorkloadRun, SameInputsSameResults) {
  const auto run = [] {
    return simulate_collective(shape("Torus", 8), CollectiveType::kAllReduce, 3'000'001);
  };
  const auto a = run(), b = run();
  EXPECT_EQ(a.makespan, b.makespan);
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (std::size_t i = 0; i < a.collectives.size(); ++i) EXPECT_EQ(a.collectives[i].duration, b.collectives[i].duration);
}

}  // namespace
}  // namespace sim

namespace sim {
namespace {

TEST(SystemConfigFile, ShippedExampleParses) {
  const SystemConfig cfg = load_system_config(testing::source_dir() + "/configs/system/h100_like.yml");
  EXPECT_TRUE(cfg.roofline());
  EXPECT_EQ(cfg.collective_chunks, 4u);
  EXPECT_EQ(cfg.reduction_bandwidth, 1'000'000'000'000u);
  EXPECT_EQ(cfg.algorithms.at(CollectiveType::kAllReduce), "ring");
}

TEST(SystemConfigFile, BadValuesNameTheirKey) {
  const auto message = [](const std::string& yaml) {
    try {
      parse_system_config(yaml, "s.yml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("collective: {chunks: 0}").find("collective.chunks"), std::string::npos);
  EXPECT_NE(message("memory: {bandwidth: -5GB/s}").find("memory.bandwidth"), std::string::npos);
  EXPECT_NE(message("compute: {peak_tflops: 10}").find("needs both"), std::string::npos);
  EXPECT_NE(message("collective: {algorithms: {allreduse: ring}}").find("unknown collective type"), std::string::npos);
  EXPECT_NE(message("networks: 1").find("unknown key"), std::string::npos);
  EXPECT_NE(message("network: 1").find("network"), std::string::npos);
  EXPECT_NE(message("network: {nic_bandwidth: [1, 2]}").find("network.nic_bandwidth"), std::string::npos);
}

}  // namespace
}  // namespace sim
