// MSCCL-IR import: the golden pair (ASTRA-sim's shipped ring and the ETs an
// older converter made of it), every shipped XML through the checker's data
// check and a run, hand-written XMLs for the fused step types, and the error
// messages for bad files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/run_sim.h"
#include "core/error.h"
#include "system/registry/collective_checker.h"
#include "system/producers/msccl_import.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;
namespace fs = std::filesystem;

// Folders removed when the test binary exits, so that a run outside ctest
// (whose TMPDIR is a folder of its own) leaves nothing in /tmp.
struct TempDirs {
  std::vector<fs::path> dirs;
  ~TempDirs() {
    std::error_code ec;
    for (const fs::path& d : dirs) fs::remove_all(d, ec);
  }
};

std::string temp_dir(const std::string& name) {
  static TempDirs made;
  const fs::path dir = fs::path(::testing::TempDir()) / ("msccl_import_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  made.dirs.push_back(dir);
  return dir.string();
}

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kGoldenXml = testdata("astrasim-custom-ring/custom_allreduce.xml");
const std::string kGoldenEts = testdata("astrasim-custom-ring/custom_allreduce");

// --- the golden pair ---------------------------------------------------------

TEST(MscclImport, GoldenPairImportsToTheShippedDag) {
  if (!fs::exists(kGoldenXml) || !fs::exists(kGoldenEts + ".0.et")) GTEST_SKIP() << "testdata absent: " << kGoldenXml;
  const MscclImport imp = import_msccl(load_msccl_ir(kGoldenXml), std::nullopt, std::nullopt);
  ASSERT_EQ(imp.traces.size(), 8u);
  for (std::uint32_t r = 0; r < 8; ++r) {
    const EtTrace golden = read_et(kGoldenEts + "." + std::to_string(r) + ".et");
    const std::vector<et::Node>& ours = imp.traces[r].nodes;
    ASSERT_EQ(ours.size(), golden.nodes.size()) << "rank " << r;
    for (std::size_t k = 0; k < ours.size(); ++k) {
      const et::Node& a = ours[k];
      const et::Node& b = golden.nodes[k];
      SCOPED_TRACE("rank " + std::to_string(r) + " node " + std::to_string(b.id()) + " " + b.name());
      EXPECT_EQ(a.id(), b.id());
      EXPECT_EQ(a.name(), b.name());
      EXPECT_EQ(a.type(), b.type());
      std::vector<std::uint64_t> da(a.data_deps().begin(), a.data_deps().end());
      std::vector<std::uint64_t> db(b.data_deps().begin(), b.data_deps().end());
      std::sort(da.begin(), da.end());
      std::sort(db.begin(), db.end());
      EXPECT_EQ(da, db);
      for (const char* key : {"comm_src", "comm_dst", "comm_tag"}) EXPECT_EQ(attr_int(a, key), attr_int(b, key)) << key;
      // The golden COMPs are the rrc steps' reductions; ours say so.
      if (b.type() == et::COMP_NODE) {
        EXPECT_EQ(attr_string(a, "msccl_op"), "recv_reduce");
      }
    }
  }
  // Sized at the golden's 1 MiB, every message is its comm_size, 131072 B.
  const auto algo = std::make_shared<const EtAlgorithm>(load_msccl_algorithm(kGoldenXml, std::nullopt));
  const EtProgram program(algo, 1 << 20);
  for (std::uint32_t r = 0; r < 8; ++r) {
    for (std::uint32_t k = 0; k < algo->ranks[r].ops.size(); ++k) {
      if (algo->ranks[r].ops[k].kind != OpKind::kCompute) {
        EXPECT_EQ(program.op(r, k).bytes, 131072u);
      }
    }
  }
}

TEST(MscclImport, GoldenPairGivesTheSameSimulatedTime) {
  if (!fs::exists(kGoldenXml) || !fs::exists(kGoldenEts + ".0.et")) GTEST_SKIP() << "testdata absent: " << kGoldenXml;
  // The shipped ETs carry 7 us per reduction (the old converter's duration
  // rule); ours leave reductions to the system model, set here to 7 us each.
  // 14 ring steps of 500 ns + 131072 B / 50 GB/s, plus 7 reductions on the
  // critical path: 14 x 3121.44 ns + 7 x 7 us = 92,700.16 ns.
  const Topology ring = load_topology(source_dir() + "/configs/ring8.yml");
  SystemConfig golden_cfg;
  golden_cfg.algorithms[CollectiveType::kAllReduce] = kGoldenEts;
  SystemConfig xml_cfg;
  xml_cfg.algorithms[CollectiveType::kAllReduce] = kGoldenXml;
  xml_cfg.reduction_latency = 7 * kMicrosecond;
  const Time golden = simulate_collective(ring, CollectiveType::kAllReduce, 1 << 20, golden_cfg).makespan;
  const Time ours = simulate_collective(ring, CollectiveType::kAllReduce, 1 << 20, xml_cfg).makespan;
  EXPECT_EQ(golden, 14 * (500 * kNanosecond + 2'621'440) + 7 * 7 * kMicrosecond);
  EXPECT_EQ(ours, golden);
  // With reductions free, the imported ring is the native ring, step for step.
  SystemConfig native_cfg, free_cfg;
  native_cfg.algorithms[CollectiveType::kAllReduce] = "ring";
  free_cfg.algorithms[CollectiveType::kAllReduce] = kGoldenXml;
  EXPECT_EQ(simulate_collective(ring, CollectiveType::kAllReduce, 1 << 20, free_cfg).makespan,
            simulate_collective(ring, CollectiveType::kAllReduce, 1 << 20, native_cfg).makespan);
}

TEST(MscclImport, CliWritesEtsWithSymbolicAndResolvedSizes) {
  if (!fs::exists(kGoldenXml)) GTEST_SKIP() << "testdata absent: " << kGoldenXml;
  if (!fs::exists(SIM_BINARY)) GTEST_SKIP() << "sim is not built";
  const std::string prefix = temp_dir("cli") + "/ring";
  SimRun r = run_sim("collective import msccl " + kGoldenXml + " -o " + prefix + " --size 1MiB");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output, "wrote 8 files " + prefix + ".{0..7}.et: MSCCL-IR 'allreduce_ring_1channelsperring' ALL_REDUCE on 8 "
                      "GPUs (proto LL128, 8 chunks per loop), 224 steps -> 112 sends, 112 receives, 56 COMPs; sizes "
                      "resolved for 1 MiB (1048576 B) (comm_size) and symbolic (chunk attributes)\n");
  const EtTrace t = read_et(prefix + ".3.et");
  for (const et::Node& n : t.nodes) {
    if (n.type() == et::COMP_NODE) {
      EXPECT_EQ(attr_int(n, "tensor_size"), 131072);
    } else {
      EXPECT_EQ(attr_int(n, "comm_size"), 131072) << n.name();
      EXPECT_EQ(attr_int(n, "msg_chunk_cnt"), 1);
      EXPECT_EQ(attr_int(n, "total_chunk_cnt"), 8);
    }
  }
  // The written files check, and run at another size than --size.
  r = run_sim("collective check " + prefix + " --size 1000003");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("data check passed: every rank's output chunk c holds chunk c of all 8 ranks' inputs"),
            std::string::npos)
      << r.output;
  // And inside a workload, both as ETs and as the XML itself.
  const std::string wl = fs::path(prefix).parent_path().string() + "/wl";
  ASSERT_EQ(run_sim("workload gen collectives --npus 8 --coll allreduce --size 1MiB -o " + wl).code, 0);
  for (const std::string& algo : {prefix, kGoldenXml}) {
    r = run_sim("--workload " + wl + " --network " + source_dir() + "/configs/ring8.yml --collective allreduce=" + algo);
    EXPECT_EQ(r.code, 0) << r.output;
    // 14 ring steps, reductions free: 14 x 3121.44 ns.
    EXPECT_NE(r.output.find("simulated time: 43.70016 us"), std::string::npos) << r.output;
  }
  r = run_sim("--workload " + wl + " --network " + source_dir() + "/configs/ring8.yml --collective " + kGoldenXml);
  EXPECT_NE(r.output.find("simulated time: 43.70016 us"), std::string::npos) << r.output;
}

// --- every shipped XML ---------------------------------------------------------

std::vector<std::string> shipped_xmls() {
  std::vector<std::string> out;
  const fs::path dir = testdata("msccl");
  if (fs::exists(dir)) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".xml") out.push_back(e.path().string());
    }
  }
  if (fs::exists(kGoldenXml)) out.push_back(kGoldenXml);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(MscclImport, EveryShippedXmlImportsPassesTheDataCheckAndRuns) {
  const std::vector<std::string> files = shipped_xmls();
  if (files.size() < 7) GTEST_SKIP() << "testdata absent: " << testdata("msccl");
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const auto algo = std::make_shared<const EtAlgorithm>(load_msccl_algorithm(file, std::nullopt));
    for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{1'000'003}}) {
      const AlgorithmCheck c = check_et_algorithm(algo, true, bytes);
      EXPECT_TRUE(c.data_checked);
      EXPECT_EQ(c.data_note.rfind("data check passed: ", 0), 0u) << c.data_note;
    }
    const auto n = static_cast<std::uint32_t>(algo->ranks.size());
    SystemConfig cfg;
    cfg.algorithms[algo->type] = file;
    const SimulationResult res = simulate_collective(shape("Switch", n), algo->type, 1 << 20, cfg);
    // Physics: the busiest rank pushes its bytes through its one 50 GB/s
    // link (20 ps per byte) and every message crosses two 500 ns links.
    const AlgorithmCheck c = check_et_algorithm(algo, true, 1 << 20);
    EXPECT_GE(res.makespan, static_cast<Time>(c.max_rank_bytes) * 20 + 1000 * kNanosecond);
    EXPECT_GT(c.max_rank_bytes, 0u);
  }
}

// The data check's memory bound: one byte below what the model needs, the
// check is skipped with the reason (and the structure is still checked).
TEST(MscclImport, DataCheckSkippedPastItsMemoryBound) {
  const std::string file = testdata("msccl/rccl__allgather-allpairs-8n-ll.xml");
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "testdata absent: " << file;
  const auto algo = std::make_shared<const EtAlgorithm>(load_msccl_algorithm(file, std::nullopt));
  EXPECT_TRUE(check_et_algorithm(algo, true, 1 << 20).data_checked);
  // In place: 8 ranks x 8 slots (one buffer of 8 chunks) x 8 contributions
  // (one 64-bit word): 8 x 8 x 8 B = 512 B.
  EXPECT_TRUE(check_et_algorithm(algo, true, 1 << 20, 512).data_checked);
  const AlgorithmCheck c = check_et_algorithm(algo, true, 1 << 20, 511);
  EXPECT_FALSE(c.data_checked);
  EXPECT_NE(c.data_note.find("8 ranks x 8 chunk slots x 8 contributions are too large to track (over 511 B"),
            std::string::npos)
      << c.data_note;
  EXPECT_EQ(c.messages, check_et_algorithm(algo, true, 1 << 20).messages);
}

TEST(MscclImport, AllPairsTimesMatchTheSwitchClosedForm) {
  // On a switch every message of a rank leaves through its one link, one
  // after the other: the all-pairs all-gather sends 7 messages of S (chunk =
  // S*8/8), the all-to-all 7 of S/8 (its own block is a local copy, free).
  const std::string ag = testdata("msccl/rccl__allgather-allpairs-8n-ll.xml");
  const std::string a2a = testdata("msccl/rccl__alltoall-8n-0-1kb.xml");
  if (!fs::exists(ag) || !fs::exists(a2a)) GTEST_SKIP() << "testdata absent: " << ag;
  const std::uint64_t s = 1 << 20;
  const Time t_full = static_cast<Time>(s) * 20;  // 50 GB/s = 20 ps per byte
  SystemConfig cfg;
  cfg.algorithms[CollectiveType::kAllGather] = ag;
  cfg.algorithms[CollectiveType::kAllToAll] = a2a;
  const Topology sw = shape("Switch", 8);
  const Time latency = 2 * 500 * kNanosecond;  // two links through the switch
  EXPECT_EQ(simulate_collective(sw, CollectiveType::kAllGather, s, cfg).makespan, 7 * t_full + latency);
  EXPECT_EQ(simulate_collective(sw, CollectiveType::kAllToAll, s, cfg).makespan, 7 * (t_full / 8) + latency);
}

TEST(MscclImport, HierarchicalAllReduceKeepsEveryLinkBusy) {
  // msccl-scheduler's 24-channel all-reduce on 4 GPUs sends 2(N-1)/N x S per
  // rank (the all-reduce minimum) and, on a switch, keeps every NPU's link
  // busy from start to end: T = 1.5 S / 50 GB/s + the last message's two
  // 500 ns links, the bandwidth lower bound plus one latency.
  const std::string ar = testdata("msccl/mscclscheduler__tools_msccl-algorithms_ncv4_ar_hier_12_Simple.xml");
  if (!fs::exists(ar)) GTEST_SKIP() << "testdata absent: " << ar;
  const std::uint64_t s = 16 << 20;
  SystemConfig cfg;
  cfg.algorithms[CollectiveType::kAllReduce] = ar;
  EXPECT_EQ(simulate_collective(shape("Switch", 4), CollectiveType::kAllReduce, s, cfg).makespan,
            static_cast<Time>(s * 3 / 2) * 20 + 1000 * kNanosecond);
}

TEST(MscclImport, TheDataCheckCatchesMisplacedAndMissingChunks) {
  const std::string a2a = testdata("msccl/rccl__alltoall-8n-0-1kb.xml");
  const std::string ar = testdata("msccl/rccl__allreduce_1step_mccl_4_2_2048_LL.xml");
  if (!fs::exists(a2a) || !fs::exists(ar)) GTEST_SKIP() << "testdata absent: " << a2a;
  const std::string dir = temp_dir("corrupt");
  const auto corrupt = [&](const std::string& src, const std::string& from, const std::string& to) {
    std::string text = read_text(src);
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    return write_file(dir + "/" + fs::path(src).filename().string(), text);
  };
  const auto fails = [](const std::string& file) {
    try {
      check_et_algorithm(std::make_shared<const EtAlgorithm>(load_msccl_algorithm(file, std::nullopt)), true, 1 << 20);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("passed");
  };
  // Rank 1 stores rank 0's block in its output chunk 2 instead of 0: the transpose breaks.
  std::string bad = corrupt(a2a, "type=\"r\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"0\"",
                            "type=\"r\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"2\"");
  EXPECT_EQ(fails(bad), "all-to-all incomplete: rank 1 output chunk 0 lacks rank 0's input chunk 1 (holds 0 of 1)");
  // Rank 0 reduces scratch chunk 0 (rank 1's chunk 0) into its chunk 0 twice.
  bad = corrupt(ar, "type=\"re\" srcbuf=\"s\" srcoff=\"4\" dstbuf=\"i\" dstoff=\"0\"",
                "type=\"re\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\"");
  const std::string what = fails(bad);
  EXPECT_EQ(what.rfind("rank 0 node ", 0), 0u) << what;
  EXPECT_NE(what.find(" (re) reduces a contribution twice"), std::string::npos) << what;
}

// --- hand-written XMLs: the fused step types -------------------------------------

// One step's attributes: "type srcbuf srcoff dstbuf dstoff", offsets mod 3.
struct Step {
  const char* type;
  char sb;
  int so;
  char db;
  int dof;
};

// A ring on 3 GPUs, one threadblock each (send r+1, recv r-1), GPU r's steps
// given by `steps(r)`.
template <typename F>
std::string ring3(const char* coll, int i_chunks, int o_chunks, F steps) {
  const auto m3 = [](int v) { return (v % 3 + 3) % 3; };
  std::ostringstream x;
  x << "<algo name=\"ring3\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"3\" ngpus=\"3\" coll=\"" << coll
    << "\" inplace=\"" << (o_chunks == 0 ? 1 : 0) << "\">\n";
  for (int r = 0; r < 3; ++r) {
    x << "  <gpu id=\"" << r << "\" i_chunks=\"" << i_chunks << "\" o_chunks=\"" << o_chunks
      << "\" s_chunks=\"0\">\n    <tb id=\"0\" send=\"" << (r + 1) % 3 << "\" recv=\"" << (r + 2) % 3
      << "\" chan=\"0\">\n";
    const std::vector<Step> list = steps(r);
    for (std::size_t s = 0; s < list.size(); ++s) {
      const Step& st = list[s];
      x << "      <step s=\"" << s << "\" type=\"" << st.type << "\" srcbuf=\"" << st.sb << "\" srcoff=\""
        << m3(st.so) << "\" dstbuf=\"" << st.db << "\" dstoff=\"" << m3(st.dof)
        << "\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n";
    }
    x << "    </tb>\n  </gpu>\n";
  }
  x << "</algo>\n";
  return x.str();
}

TEST(MscclImport, FusedStepsRingAllReduceAndReduceScatter) {
  const std::string dir = temp_dir("fused");
  // All-reduce, in place: chunk c starts at rank c+1, is reduced on the way
  // (rrs: reduce and forward without storing), completed at rank c (rrcs),
  // and travels back round (rcs, then r).
  const std::string ar = write_file(dir + "/ar.xml", ring3("allreduce", 3, 0, [](int r) {
    return std::vector<Step>{{"s", 'i', r - 1, 'i', r - 1},
                             {"rrs", 'i', r - 2, 'i', r - 2},
                             {"rrcs", 'i', r, 'i', r},
                             {"rcs", 'i', r - 1, 'i', r - 1},
                             {"r", 'i', r - 2, 'i', r - 2}};
  }));
  // Reduce-scatter, out of place: rank c ends with chunk c reduced in o[0] (rrc).
  const std::string rs = write_file(dir + "/rs.xml", ring3("reduce_scatter", 3, 1, [](int r) {
    return std::vector<Step>{{"s", 'i', r - 1, 'o', 0}, {"rrs", 'i', r - 2, 'o', 0}, {"rrc", 'i', r, 'o', 0}};
  }));
  for (const std::string& file : {ar, rs}) {
    SCOPED_TRACE(file);
    const auto algo = std::make_shared<const EtAlgorithm>(load_msccl_algorithm(file, std::nullopt));
    const AlgorithmCheck c = check_et_algorithm(algo, true, 3 << 20);
    EXPECT_EQ(c.data_note.rfind("data check passed", 0), 0u) << c.data_note;
    // rrs: RECV -> COMP -> SEND, each waiting for the one before.
    const EtRankProgram& p = algo->ranks[0];
    EXPECT_EQ(p.ops[1].kind, OpKind::kRecv);
    EXPECT_EQ(p.ops[2].comp, MscclComp::kRecvReduce);
    EXPECT_EQ(p.ops[2].dst_buf, 't');
    EXPECT_EQ(p.ops[3].kind, OpKind::kSend);
    EXPECT_EQ(p.ops[3].src_buf, 't');
    EXPECT_EQ(p.children[p.child_begin[1]], 2u);
    EXPECT_EQ(p.children[p.child_begin[2]], 3u);
  }
  // Ring steps of S/3 on a 3-NPU ring, 50 GB/s, 500 ns, reductions free:
  // the all-reduce takes 2(N-1) = 4 steps, the reduce-scatter 2.
  const Topology ring = shape("Ring", 3);
  const std::uint64_t s = 3 << 20;
  const Time step = 500 * kNanosecond + static_cast<Time>(s / 3) * 20;
  SystemConfig cfg;
  cfg.algorithms[CollectiveType::kAllReduce] = ar;
  cfg.algorithms[CollectiveType::kReduceScatter] = rs;
  EXPECT_EQ(simulate_collective(ring, CollectiveType::kAllReduce, s, cfg).makespan, 4 * step);
  EXPECT_EQ(simulate_collective(ring, CollectiveType::kReduceScatter, s, cfg).makespan, 2 * step);

  // Forwarding the unreduced input instead of the rrs result leaves chunks short.
  const std::string bad = write_file(dir + "/rs_bad.xml", ring3("reduce_scatter", 3, 1, [](int r) {
    return std::vector<Step>{{"s", 'i', r - 1, 'o', 0}, {"rcs", 'i', r - 2, 'i', r - 2}, {"rrc", 'i', r, 'o', 0}};
  }));
  try {
    check_et_algorithm(std::make_shared<const EtAlgorithm>(load_msccl_algorithm(bad, std::nullopt)), true, 3 << 20);
    ADD_FAILURE() << "a reduce-scatter that skips a reduction passed";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "reduce-scatter incomplete: rank 0 output chunk 0 lacks rank 2's input chunk 0 "
                                     "(holds 2 of 3)");
  }
}

// --- errors name the file, line and step -------------------------------------------

const std::string kPair =
    "<algo name=\"pair\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" coll=\"allgather\" "
    "inplace=\"1\">\n"                                                                                          // 1
    "  <gpu id=\"0\" i_chunks=\"0\" o_chunks=\"2\" s_chunks=\"0\">\n"                                             // 2
    "    <tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n"                                                        // 3
    "      <step s=\"0\" type=\"s\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"  // 4
    "      <step s=\"1\" type=\"r\" srcbuf=\"o\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"1\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"  // 5
    "    </tb>\n"                                                                                              // 6
    "    <tb id=\"1\" send=\"-1\" recv=\"-1\" chan=\"0\">\n"                                                      // 7
    "      <step s=\"0\" type=\"nop\" srcbuf=\"o\" srcoff=\"-1\" dstbuf=\"o\" dstoff=\"-1\" cnt=\"0\" depid=\"0\" deps=\"1\" hasdep=\"0\"/>\n"  // 8
    "    </tb>\n"                                                                                              // 9
    "  </gpu>\n"                                                                                               // 10
    "  <gpu id=\"1\" i_chunks=\"0\" o_chunks=\"2\" s_chunks=\"0\">\n"                                             // 11
    "    <tb id=\"0\" send=\"0\" recv=\"0\" chan=\"0\">\n"                                                        // 12
    "      <step s=\"0\" type=\"s\" srcbuf=\"o\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"1\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"  // 13
    "      <step s=\"1\" type=\"r\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"  // 14
    "    </tb>\n"
    "  </gpu>\n"
    "</algo>\n";

TEST(MscclImport, ErrorsNameFileLineAndStep) {
  if (!fs::exists(SIM_BINARY)) GTEST_SKIP() << "sim is not built";
  const std::string dir = temp_dir("errors");
  // The base file is fine.
  const std::string good = write_file(dir + "/good.xml", kPair);
  SimRun r = run_sim("collective import msccl " + good + " -o " + dir + "/good");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(run_sim("collective check " + dir + "/good").code, 0);

  const auto fails = [&](const std::string& name, const std::string& from, const std::string& to) {
    std::string text = kPair;
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    const std::string file = write_file(dir + "/" + name + ".xml", text);
    const SimRun run = run_sim("collective import msccl " + file + " -o " + dir + "/" + name);
    EXPECT_EQ(run.code, 2) << run.output;
    // The first line, with the file's path shortened to F.
    const std::string line = run.output.substr(0, run.output.find('\n'));
    const std::string head = std::string("sim: error: ").append(file);
    return line.rfind(head, 0) == 0 ? std::string("F").append(line.substr(head.size())) : line;
  };
  // Without tb 0's </tb>, the </gpu> (line 10, now 9) closes an open <tb>.
  EXPECT_EQ(fails("malformed", "    </tb>\n    <tb id=\"1\"", "    <tb id=\"1\""),
            "F:9: malformed XML (Start-end tags mismatch)");
  EXPECT_EQ(fails("type", "type=\"r\" srcbuf=\"o\" srcoff=\"1\"", "type=\"rx\" srcbuf=\"o\" srcoff=\"1\""),
            "F:5: gpu 0 tb 0 step 1: unknown step type 'rx' (s, r, rrc, rcs, rrs, rrcs, cpy, re, nop)");
  EXPECT_EQ(fails("dep_tb", "depid=\"0\" deps=\"1\"", "depid=\"4\" deps=\"1\""),
            "F:8: gpu 0 tb 1 step 0: depends on tb 4, which gpu 0 lacks");
  EXPECT_EQ(fails("dep_step", "depid=\"0\" deps=\"1\"", "depid=\"0\" deps=\"2\""),
            "F:8: gpu 0 tb 1 step 0: depends on step 2 of tb 0, which has steps 0..1");
  EXPECT_EQ(fails("cycle",
                  "type=\"s\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\"",
                  "type=\"s\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"1\" deps=\"0\""),
            "F:4: gpu 0 tb 0 step 0: dependency cycle: tb 0 step 0 waits for tb 1 step 0 waits for tb 0 step 1 "
            "waits for tb 0 step 0");
  EXPECT_EQ(fails("peer", "<tb id=\"0\" send=\"0\" recv=\"0\"", "<tb id=\"0\" send=\"2\" recv=\"0\""),
            "F:12: gpu 1 tb 0: send peer 2 is outside 0..1 (or -1 for none)");
  EXPECT_EQ(fails("unmatched", "type=\"r\" srcbuf=\"o\" srcoff=\"0\"", "type=\"nop\" srcbuf=\"o\" srcoff=\"0\""),
            "F:4: gpu 0 tb 0 step 0: send number 1 to gpu 1 on channel 0 is never received (gpu 1 tb 0 receives 0)");
  EXPECT_EQ(fails("range", "srcoff=\"1\" dstbuf=\"o\" dstoff=\"1\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n      <step s=\"1\" type=\"r\" srcbuf=\"o\" srcoff=\"0\"",
                  "srcoff=\"1\" dstbuf=\"o\" dstoff=\"1\" cnt=\"2\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n      <step s=\"1\" type=\"r\" srcbuf=\"o\" srcoff=\"0\""),
            "F:13: gpu 1 tb 0 step 0: srcoff 1 with cnt 2 is outside buffer 'o' of 2 chunks");
  EXPECT_EQ(fails("shared", "<tb id=\"1\" send=\"-1\"", "<tb id=\"1\" send=\"1\""),
            "F:7: gpu 0 tb 1 and tb 0 both send to the same peer on channel 0 (MSCCL has one connection per peer and "
            "channel)");
  EXPECT_EQ(fails("cnt", "srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\"", "srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"2\""),
            "F:14: gpu 1 tb 0 step 1: receives cnt 1 but the matching send (gpu 0 tb 0 step 0) sends cnt 2");
  // Run directly, a bad XML is reported the same way.
  const std::string wl = dir + "/wl";
  ASSERT_EQ(run_sim("workload gen collectives --npus 2 --coll allgather --size 1KiB -o " + wl).code, 0);
  const std::string bad = write_file(dir + "/bad.xml", "<algo ngpus=\"2\">\n  <gpu>\n</algo>\n");
  r = run_sim("--workload " + wl + " --network " + source_dir() + "/configs/switch8.yml --collective allgather=" + bad);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find(bad + ":3: malformed XML"), std::string::npos) << r.output;
  // The good one runs: each GPU sends its S = 1 KiB once, 1024 B x 20 ps + 2 x 500 ns.
  r = run_sim("--workload " + wl + " --network " + source_dir() + "/configs/switch8.yml --collective allgather=" + good);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("simulated time: 1.02048 us"), std::string::npos) << r.output;
  ASSERT_EQ(run_sim("workload gen collectives --npus 8 --coll allgather --size 1KiB -o " + wl + "8").code, 0);
  r = run_sim("--workload " + wl + "8 --network " + source_dir() + "/configs/switch8.yml --collective allgather=" + good);
  EXPECT_EQ(r.code, 2);  // a 2-GPU algorithm for 8 ranks
  EXPECT_NE(r.output.find("is written for 2 ranks but a ALL_GATHER runs on a group of 8 ranks"), std::string::npos)
      << r.output;
  EXPECT_EQ(fails("coll", "coll=\"allgather\"", "coll=\"custom\""),
            "F:1: <algo> coll 'custom' is not a collective the simulator knows (allreduce, allgather, reducescatter, "
            "alltoall, ...): give it (--coll, or --collective <type>=file.xml)");
}

}  // namespace
}  // namespace sim
