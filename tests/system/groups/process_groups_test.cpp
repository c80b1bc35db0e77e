// Process groups (system/groups/process_groups.h), involved_dim groups
// (system/groups/group_table.h) and diagnoses of stuck runs in the trace's terms.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "system/collectives/ring.h"
#include "core/error.h"
#include "system/program/collective_writer.h"
#include "system/groups/process_groups.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

namespace fs = std::filesystem;
using testing::kBw;
using testing::kLat;
using testing::make_traces;
using testing::ring_phase;
using testing::simulate;

Topology rings(const std::string& sizes, std::size_t dims) {
  std::string kinds, bw, lat;
  for (std::size_t i = 0; i < dims; ++i) {
    kinds += std::string(i ? ", " : "") + "Ring";
    bw += std::string(i ? ", " : "") + "50";
    lat += std::string(i ? ", " : "") + "500";
  }
  return parse_topology("topology: [" + kinds + "]\nnpus_count: [" + sizes + "]\nbandwidth: [" + bw +
                            "]\nlatency: [" + lat + "]\n",
                        "test-rings");
}

et::Node coll(std::uint64_t id, std::uint64_t bytes, const std::string& pg, std::vector<std::uint64_t> deps = {},
              const std::string& name = "coll") {
  et::Node n = testing::coll_node(id, CollectiveType::kAllReduce, bytes);
  n.set_name(name);
  if (!pg.empty()) set_attr_string(n, "pg_name", pg);
  for (auto d : deps) n.add_data_deps(d);
  return n;
}

void set_involved(et::Node& n, std::vector<bool> dims) {
  et::AttributeProto* a = n.add_attr();
  a->set_name("involved_dim");
  for (bool d : dims) a->mutable_bool_list()->add_values(d);
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("sim_pg_" + std::to_string(getpid()) + "_" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

// Runs traces written to files (the binary fast path reads them).
SimulationResult simulate_files(const std::vector<EtTrace>& traces, const Topology& topo, SimulationOptions opts = {},
                                const SystemConfig& cfg = {}) {
  TempDir dir;
  std::vector<RankGraph> graphs;
  for (std::size_t r = 0; r < traces.size(); ++r) {
    const std::string p = (dir.path / ("t." + std::to_string(r) + ".et")).string();
    write_et(traces[r], p);
    graphs.emplace_back(p, static_cast<int>(r), GraphOptions{});
  }
  Simulation s(std::move(graphs), topo, cfg, std::move(opts));
  return s.run();
}

std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ProcessGroups, NumericNamesFindTheirGroupAndZeroIsWhatTheFileSays) {
  ProcessGroups g(8);
  g.define_all({{"0", {0, 1}}, {"4", {0, 4}}, {"tp", {2, 3}}}, "groups.json");
  EXPECT_EQ(g.resolve("0.0", "w")->name, "0");
  EXPECT_EQ(g.resolve("4.0", "w")->name, "4");
  EXPECT_EQ(g.resolve("04", "w")->name, "4");
  EXPECT_EQ(g.resolve("tp", "w")->ranks, (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(g.resolve("", "w"), nullptr);  // all ranks
  EXPECT_EQ(ProcessGroups(8).resolve("0", "w"), nullptr);  // no group defined at all: the default group
  ProcessGroups no_zero(8);
  no_zero.define_all({{"1", {0, 1}}}, "groups.json");
  EXPECT_EQ(input_error([&] { no_zero.resolve("0.0", "t.0.et: rank 0, node 3 'ar'"); }),
            "t.0.et: rank 0, node 3 'ar': pg_name '0.0' names no process group; defined: '1' [0, 1] (groups come "
            "from --comm-group files and the trace's process-group METADATA nodes)");
  EXPECT_EQ(input_error([&] { g.resolve("4.5", "t.0.et: rank 0, node 3 'ar'"); }),
            "t.0.et: rank 0, node 3 'ar': pg_name '4.5' names no process group; defined: '0' [0, 1], '4' [0, 4], "
            "'tp' [2, 3] (groups come from --comm-group files and the trace's process-group METADATA nodes)");
  EXPECT_EQ(input_error([&] { g.define(ProcessGroup{"4.0", {0, 5}, "t.1.et: rank 1, node 1 'pg' (METADATA)"}); }),
            "process group '4.0' is defined twice with different ranks: groups.json gives [0, 4], t.1.et: rank 1, "
            "node 1 'pg' (METADATA) gives [0, 5]");
  EXPECT_EQ(input_error([&] { g.define(ProcessGroup{"9", {0, 8}, "groups.json"}); }),
            "groups.json: process group '9' lists rank 8 but the job has 8 ranks (0..7)");
}

TEST(ProcessGroups, PyTorchMetadataTextParses) {
  const auto groups = parse_pg_metadata(
      "['[{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"ranks\": [], "
      "\"group_size\": 4}, {\"pg_name\": \"1\", \"pg_desc\": \"undefined\", \"ranks\": [0, 2], \"group_size\": 2}]']",
      "w");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].name, "0");
  EXPECT_TRUE(groups[0].ranks.empty());
  EXPECT_EQ(groups[1].ranks, (std::vector<std::uint32_t>{0, 2}));
  EXPECT_TRUE(parse_pg_metadata("['[]']", "w").empty());
  EXPECT_NE(input_error([] { parse_pg_metadata("[{\"pg_name\": \"1\", \"ranks\": [0,}]", "f: rank 0, node 1 'pg'"); })
                .find("f: rank 0, node 1 'pg': process-group metadata (inputs.values) is not a JSON list"),
            std::string::npos);
}

// A 4x4 example: rows named "0.0".."3.0", columns "4".."7"; the file defines "0".."7".
TEST(ProcessGroups, RowAndColumnGroupsNamedAsFloatsRunOnTheirDimension) {
  const Topology topo = rings("4, 4", 2);
  const std::uint64_t S = 1 << 20;
  SimulationOptions opts;
  for (std::uint32_t i = 0; i < 4; ++i) {
    opts.comm_groups[std::to_string(i)] = {4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3};
    opts.comm_groups[std::to_string(4 + i)] = {i, i + 4, i + 8, i + 12};
  }
  const auto traces = make_traces(16, [&](int r) {
    return std::vector<et::Node>{coll(1, S, std::to_string(r / 4) + ".0", {}, "row"),
                                 coll(2, S, std::to_string(4 + r % 4), {1}, "column")};
  });
  const SimulationResult res = simulate_files(traces, topo, opts);
  ASSERT_EQ(res.collectives.size(), 32u);
  for (const CollectiveRecord& c : res.collectives) {
    EXPECT_EQ(c.group_size, 4u);
    const bool row = c.node_id == 1;
    EXPECT_EQ(res.groups[c.group].label, row ? "pg_name '" + std::to_string(c.rank / 4) + "'" : "pg_name '" + std::to_string(4 + c.rank % 4) + "'");
    EXPECT_EQ(res.groups[c.group].dims, (std::vector<std::uint32_t>{row ? 0u : 1u}));
    EXPECT_EQ(c.duration, ring_phase(6, S / 4)) << c.rank << " node " << c.node_id;
  }
}

// A 2x2x2 example whose file defines "0" as ranks {0, 1}: that group, not all ranks.
TEST(ProcessGroups, FileDefinedZeroIsThatSubsetNotTheWorld) {
  const Topology topo = rings("2, 2, 2", 3);
  SimulationOptions opts;
  for (std::uint32_t i = 0; i < 4; ++i) opts.comm_groups[std::to_string(i)] = {2 * i, 2 * i + 1};
  const std::uint64_t S = 1 << 20;
  const auto traces = make_traces(8, [&](int r) { return std::vector<et::Node>{coll(1, S, std::to_string(r / 2))}; });
  const SimulationResult res = simulate(traces, topo, {}, opts);
  for (const CollectiveRecord& c : res.collectives) {
    EXPECT_EQ(c.group_size, 2u);
    EXPECT_EQ(c.duration, ring_phase(2, S / 2));
  }
  // Without the file, "0" is PyTorch's default group: all ranks.
  const auto world = make_traces(8, [&](int) { return std::vector<et::Node>{coll(1, S, "0")}; });
  EXPECT_EQ(simulate(world, topo).collectives[0].group_size, 8u);
}

et::Node pg_metadata(std::uint64_t id, const std::string& groups_json) {
  et::Node n;
  n.set_id(id);
  n.set_name("[pytorch|profiler|execution_trace|process_group:init]");
  n.set_type(et::METADATA_NODE);
  n.mutable_inputs()->set_values("['" + groups_json + "']");
  return n;
}

TEST(ProcessGroups, MetadataNodesDefineGroups) {
  const Topology topo = testing::shape("Ring", 4);
  const std::string groups =
      "[{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"ranks\": [], \"group_size\": 4}, "
      "{\"pg_name\": \"1\", \"ranks\": [0, 2]}, {\"pg_name\": \"2\", \"ranks\": [1, 3]}]";
  const auto traces = make_traces(4, [&](int r) {
    return std::vector<et::Node>{pg_metadata(1, groups), coll(2, 4096, r % 2 ? "2" : "1", {1}),
                                 coll(3, 4096, "0", {2})};
  });
  for (const SimulationResult& res : {simulate(traces, topo), simulate_files(traces, topo)}) {
    ASSERT_EQ(res.collectives.size(), 8u);
    for (const CollectiveRecord& c : res.collectives) {
      EXPECT_EQ(c.group_size, c.node_id == 2 ? 2u : 4u);
      EXPECT_EQ(res.groups[c.group].label, c.node_id == 2 ? (c.rank % 2 ? "pg_name '2'" : "pg_name '1'") : "pg_name '0'");
    }
  }
  // Ranks whose METADATA nodes disagree.
  auto bad = traces;
  bad[3].nodes[0] = pg_metadata(1, "[{\"pg_name\": \"1\", \"ranks\": [0, 1]}]");
  EXPECT_EQ(input_error([&] { simulate(bad, topo); }),
            "process group '1' is defined twice with different ranks: mem.0.et: rank 0, node 1 "
            "'[pytorch|profiler|execution_trace|process_group:init]' (METADATA) gives [0, 2], mem.3.et: rank 3, node 1 "
            "'[pytorch|profiler|execution_trace|process_group:init]' (METADATA) gives [0, 1]");
}

TEST(ProcessGroups, ErrorsNameFileRankNodeAndGroup) {
  const Topology topo = testing::shape("Ring", 4);
  SimulationOptions opts;
  opts.comm_groups["1"] = {0, 1};
  opts.comm_group_file = "groups.json";
  auto traces = make_traces(4, [&](int r) { return std::vector<et::Node>{coll(7, 4096, r < 2 ? "1" : "", {}, "ar")}; });
  traces[2].nodes[0] = coll(7, 4096, "3", {}, "ar");
  EXPECT_EQ(input_error([&] { simulate(traces, topo, {}, opts); }),
            "mem.2.et: rank 2, node 7 'ar': pg_name '3' names no process group; defined: '1' [0, 1] (groups come from "
            "--comm-group files and the trace's process-group METADATA nodes)");
  traces[2].nodes[0] = coll(7, 4096, "1.0", {}, "ar");
  EXPECT_EQ(input_error([&] { simulate(traces, topo, {}, opts); }),
            "mem.2.et: rank 2, node 7 'ar': pg_name '1.0' is process group '1' [0, 1] (from groups.json), which does "
            "not include rank 2");
  opts.comm_groups["1"] = {0, 4};
  EXPECT_EQ(input_error([&] { simulate(traces, topo, {}, opts); }),
            "groups.json: process group '1' lists rank 4 but the job has 4 ranks (0..3)");
}

// involved_dim on a 4x2 Ring-Ring (unequal dimensions): the group is the
// ranks sharing this rank's coordinate in the other dimension.
TEST(InvolvedDim, TwoDimensionsGroupsAlongTheMarkedDimension) {
  const Topology topo = rings("4, 2", 2);
  const std::uint64_t S = 1 << 20;
  const auto traces = make_traces(8, [&](int) {
    std::vector<et::Node> nodes{coll(1, S, ""), coll(2, S, "", {1}), coll(3, S, "", {2}), coll(4, S, "", {3})};
    set_involved(nodes[0], {true, false});
    set_involved(nodes[1], {false, true});
    set_involved(nodes[2], {true, true});
    set_involved(nodes[3], {false, true, true, true});  // entries past the topology's dimensions: true
    return nodes;
  });
  const SimulationResult res = simulate_files(traces, topo);
  ASSERT_EQ(res.collectives.size(), 32u);
  for (const CollectiveRecord& c : res.collectives) {
    switch (c.node_id) {
      case 1:
        EXPECT_EQ(c.group_size, 4u);
        EXPECT_EQ(res.groups[c.group].dims, (std::vector<std::uint32_t>{0}));
        EXPECT_EQ(c.duration, ring_phase(6, S / 4));
        break;
      case 2:
      case 4:
        EXPECT_EQ(c.group_size, 2u);
        EXPECT_EQ(res.groups[c.group].dims, (std::vector<std::uint32_t>{1}));
        EXPECT_EQ(c.duration, ring_phase(2, S / 2));
        break;
      default:
        EXPECT_EQ(c.group_size, 8u);
        EXPECT_EQ(res.groups[c.group].label, "all ranks");
        EXPECT_EQ(res.groups[c.group].dims, (std::vector<std::uint32_t>{0, 1}));
    }
  }
  EXPECT_EQ(res.groups[res.collectives[1].group].label, "involved_dim [false, true]");
}

TEST(InvolvedDim, ThreeUnequalDimensionsEachGroupAtItsClosedForm) {
  const Topology topo = rings("4, 2, 3", 3);
  const std::uint64_t S = 3 << 20;  // divisible by 2, 3 and 4
  const auto traces = make_traces(24, [&](int) {
    std::vector<et::Node> nodes{coll(1, S, ""), coll(2, S, "", {1}), coll(3, S, "", {2})};
    set_involved(nodes[0], {true, false, false});
    set_involved(nodes[1], {false, true, false});
    set_involved(nodes[2], {false, false, true});
    return nodes;
  });
  const SimulationResult res = simulate(traces, topo);
  const std::uint32_t sizes[] = {4, 2, 3};
  for (const CollectiveRecord& c : res.collectives) {
    const std::uint32_t d = static_cast<std::uint32_t>(c.node_id - 1);
    const std::uint32_t n = sizes[d];
    EXPECT_EQ(c.group_size, n);
    EXPECT_EQ(res.groups[c.group].dims, (std::vector<std::uint32_t>{d}));
    EXPECT_EQ(c.duration, ring_phase(2 * (n - 1), S / n)) << "rank " << c.rank << " dim " << d;
  }
}

TEST(InvolvedDim, HierarchicalAlgorithmRunsOnTheInvolvedDimensionsOnly) {
  const Topology topo = rings("4, 2, 3", 3);
  SystemConfig cfg;
  cfg.algorithms[CollectiveType::kAllReduce] = "ring,ring,ring";
  const auto traces = make_traces(24, [&](int) {
    std::vector<et::Node> nodes{coll(1, 3 << 20, "")};
    set_involved(nodes[0], {true, false, true});
    return nodes;
  });
  const SimulationResult res = simulate(traces, topo, cfg);
  for (const CollectiveRecord& c : res.collectives) {
    EXPECT_EQ(c.group_size, 12u);
    EXPECT_EQ(res.groups[c.group].dims, (std::vector<std::uint32_t>{0, 2}));
  }
  // No byte crosses dimension 1 (NPU ids differing in the coordinate (id / 4) % 2).
  for (const LinkRecord& l : res.links) {
    if (l.from < 24 && l.to < 24 && l.usage.bytes > 0) {
      EXPECT_EQ((l.from / 4) % 2, (l.to / 4) % 2) << l.from << "->" << l.to;
    }
  }
}

TEST(InvolvedDim, BadListsAndConflictsWithPgNameAreErrors) {
  const Topology topo = rings("4, 2", 2);
  auto run = [&](std::vector<bool> dims, const std::string& pg, SimulationOptions opts = {}) {
    const auto traces = make_traces(8, [&](int) {
      et::Node n = coll(5, 4096, pg, {}, "ar_dp");
      set_involved(n, dims);
      return std::vector<et::Node>{n};
    });
    return input_error([&] { simulate(traces, topo, {}, opts); });
  };
  EXPECT_EQ(run({true}, ""), "mem.0.et: rank 0, node 5 'ar_dp': involved_dim [true] has 1 entries but the network has 2 "
                             "dimensions (one entry each)");
  EXPECT_EQ(run({true, false, false}, ""),
            "mem.0.et: rank 0, node 5 'ar_dp': involved_dim [true, false, false] marks dimension 2 false, but the "
            "network has only 2 dimensions (entries past them must be true)");
  SimulationOptions opts;
  for (std::uint32_t i = 0; i < 4; ++i) opts.comm_groups[std::to_string(10 + i)] = {i, i + 4};
  opts.comm_groups["1"] = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto traces = make_traces(8, [&](int r) {
    et::Node n = coll(5, 4096, std::to_string(10 + r % 4), {}, "ar_dp");
    set_involved(n, {true, false});
    return std::vector<et::Node>{n};
  });
  EXPECT_EQ(input_error([&] { simulate(traces, topo, {}, opts); }),
            "mem.0.et: rank 0, node 5 'ar_dp': pg_name '10' names ranks [0, 4] but involved_dim [true, false] names "
            "ranks [0, 1, 2, 3] (those sharing this rank's coordinates in the dimensions marked false)");
  // Both naming the same ranks is fine.
  const auto agree = make_traces(8, [&](int r) {
    et::Node n = coll(5, 4096, std::to_string(10 + r % 4), {}, "ar_dp");
    set_involved(n, {false, true});
    return std::vector<et::Node>{n};
  });
  const SimulationResult agreed = simulate(agree, topo, {}, opts);
  EXPECT_EQ(agreed.groups[agreed.collectives[0].group].label, "pg_name '10'");
  // involved_dim must be a bool_list.
  auto wrong = make_traces(1, [](int) {
    et::Node n = coll(5, 4096, "", {}, "ar_dp");
    set_attr_int(n, "involved_dim", 1);
    return std::vector<et::Node>{n};
  });
  EXPECT_EQ(input_error([&] { RankGraph(wrong[0], 0, GraphOptions{}); }),
            "mem.0.et: rank 0, node 5 'ar_dp': attribute 'involved_dim' must be a bool_list (one entry per network "
            "dimension)");
}

// A deadlock inside a sub-group: rank 1 waits for a message rank 3 never
// sends, so it never joins the group's all-reduce that rank 0 started.
TEST(StuckRun, DeadlockInASubGroupIsDescribedInTheTracesTerms) {
  const Topology topo = testing::shape("Ring", 4);
  SimulationOptions opts;
  opts.comm_groups["1"] = {0, 1};
  const auto traces = make_traces(4, [&](int r) {
    if (r == 0) return std::vector<et::Node>{coll(2, 1 << 20, "1", {}, "ar_sub")};
    if (r == 1) {
      et::Node recv = testing::p2p_node(5, false, 3, 64, 7);
      recv.set_name("recv_from_3");
      return std::vector<et::Node>{recv, coll(6, 1 << 20, "1", {5}, "ar_sub")};
    }
    return std::vector<et::Node>{testing::comp_node(1, 1)};
  });
  try {
    simulate(traces, topo, {}, opts);
    FAIL();
  } catch (const IncompleteError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("  ALL_REDUCE of 1048576 B on pg_name '1' (ranks 0, 1; network dimensions [0]), collective "
                       "number 1 of that group:\n"
                       "    issued by: rank 0 node 2 'ar_sub'\n"
                       "    not issued by rank 1, which is in rank 1 node 5 'recv_from_3' (COMM_RECV from rank 3, tag 7, "
                       "64 B), which no send matched\n"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("  rank 1 node 5 'recv_from_3' (COMM_RECV from rank 3, tag 7, 64 B) waits for a message no send "
                       "matched; the sender rank 3 has finished all its nodes\n"),
              std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("communicator"), std::string::npos) << msg;  // no internal numbers
  }
}

// Two jobs on one network: each has its own ranks (p2p peers are job ranks)
// and groups; diagnoses name the job.
TEST(MultiJob, EachJobKeepsItsRanksAndDiagnosesNameTheJob) {
  const Topology topo = testing::shape("Ring", 4);
  const auto job_a = make_traces(2, [](int) { return std::vector<et::Node>{coll(1, 4096, "0")}; });
  auto job_b = make_traces(2, [](int r) { return std::vector<et::Node>{testing::p2p_node(1, r == 0, 1 - r, 64, 1)}; });
  SimulationOptions opts;
  opts.jobs = {JobSpec{"a", 2, {{"0", {0, 1}}}, "a.json"}, JobSpec{"b", 2, {}, ""}};
  opts.npu_of = {3, 2, 1, 0};
  std::vector<EtTrace> all = job_a;
  all.insert(all.end(), job_b.begin(), job_b.end());
  const SimulationResult res = simulate(all, topo, {}, opts);
  ASSERT_EQ(res.jobs.size(), 2u);
  EXPECT_EQ(res.jobs[1].name, "b");
  EXPECT_EQ(res.jobs[1].makespan, kLat + transfer_time(64, kBw));  // NPU 1 -> NPU 0: one hop
  EXPECT_EQ(res.groups[res.collectives[0].group].label, "pg_name '0'");
  EXPECT_EQ(res.collectives[0].npu, 3u);
  all[3].nodes[0] = testing::p2p_node(1, false, 0, 64, 2);  // job b's rank 1 waits on tag 2
  try {
    simulate(all, topo, {}, opts);
    FAIL();
  } catch (const IncompleteError& e) {
    EXPECT_NE(std::string(e.what()).find("  job 'b' rank 1 node 1 'recv' (COMM_RECV from rank 0, tag 2, 64 B) waits for "
                                         "a message no send matched; the sender job 'b' rank 0 has finished all its nodes"),
              std::string::npos)
        << e.what();
  }
}

// An injected algorithm written for 1 MiB that records no size: refused for
// 16 MiB; run with `@1MiB` it scales.
TEST(InjectedSize, UnrecordedSizeThatCannotFitIsRefusedAndAtSizeScales) {
  TempDir dir;
  std::vector<EtTrace> ets = ring_algorithm_ets(CollectiveType::kAllReduce, 8, 1, 1 << 20);
  for (EtTrace& t : ets) {
    t.metadata.clear_attr();
    for (et::Node& n : t.nodes) {
      for (int i = n.attr_size() - 1; i >= 0; --i) {
        const std::string& a = n.attr(i).name();
        if (a == "msg_chunk_cnt" || a == "msg_chunk_idx" || a == "total_chunk_cnt") n.mutable_attr()->DeleteSubrange(i, 1);
      }
    }
  }
  const std::string prefix = (dir.path / "ring").string();
  write_rank_ets(ets, prefix);
  const Topology topo = testing::shape("Ring", 8);
  const auto workload = [](std::uint64_t bytes) {
    return make_traces(8, [&](int) { return std::vector<et::Node>{testing::coll_node(1, CollectiveType::kAllReduce, bytes)}; });
  };
  SystemConfig cfg;
  cfg.algorithms[CollectiveType::kAllReduce] = prefix;
  const SimulationResult fits = simulate(workload(1 << 20), topo, cfg);  // written for this size: runs as written
  const std::string err = input_error([&] { simulate(workload(16 << 20), topo, cfg); });
  EXPECT_NE(err.find("collective algorithm '" + prefix + "' records no size it was written for and its messages total "
                     "14680064 B, less than any ALL_REDUCE of 16777216 B on 8 ranks must send (234881024 B)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(prefix + "@<size>"), std::string::npos) << err;
  cfg.algorithms[CollectiveType::kAllReduce] = prefix + "@1MiB";
  const SimulationResult scaled = simulate(workload(16 << 20), topo, cfg);
  const SimulationResult native = simulate(workload(16 << 20), topo);
  EXPECT_EQ(scaled.makespan, native.makespan);  // the ring scaled to 16 MiB is the native ring
  EXPECT_EQ(fits.makespan, simulate(workload(1 << 20), topo).makespan);
}

}  // namespace
}  // namespace sim
