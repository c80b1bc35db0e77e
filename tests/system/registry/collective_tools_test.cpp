// `sim collective gen` / `sim collective check`: the ring writer, the
// symbolic checker, and the CLI around them.
#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

#include "tests/common/run_sim.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "system/registry/collective_checker.h"
#include "system/registry/collective_tools.h"
#include "system/program/et_algorithm.h"
#include "system/collectives/ring.h"
#include "workload/et/et_io.h"
#include "system/registry/algorithm_source.h"

namespace sim {
namespace {

namespace fs = std::filesystem;

constexpr CollectiveType kAR = CollectiveType::kAllReduce;
constexpr CollectiveType kRS = CollectiveType::kReduceScatter;
constexpr CollectiveType kAG = CollectiveType::kAllGather;
constexpr CollectiveType kA2A = CollectiveType::kAllToAll;

// Every folder fresh_dir() handed out, removed when the test binary exits
// (ctest gives it a TMPDIR of its own; run directly, it would leave them in /tmp).
struct DirsToRemove {
  std::vector<fs::path> dirs;
  ~DirsToRemove() {
    std::error_code ec;
    for (const fs::path& d : dirs) fs::remove_all(d, ec);
  }
};

std::string fresh_dir(const std::string& name) {
  static DirsToRemove made;
  const fs::path dir = fs::path(::testing::TempDir()) / ("collective_tools_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  made.dirs.push_back(dir);
  return dir.string();
}

std::string coll_arg(CollectiveType t) {
  switch (t) {
    case kAR: return "allreduce";
    case kRS: return "reducescatter";
    case kAG: return "allgather";
    default: return "alltoall";
  }
}

std::string gen(CollectiveType t, std::uint32_t n, std::uint32_t k, const std::string& prefix,
                const std::string& size = "1MiB") {
  GenOptions o;
  o.collective = coll_arg(t);
  o.npus = n;
  o.chunks = k;
  o.size_text = size;
  o.prefix = prefix;
  std::ostringstream out;
  EXPECT_EQ(generate_algorithm(o, out), 0);
  return out.str();
}

std::string check(const std::string& prefix, const std::string& coll = "", const std::string& size = "1MiB") {
  CheckOptions o;
  o.prefix = prefix;
  o.collective = coll;
  o.size_text = size;
  std::ostringstream out;
  EXPECT_EQ(check_algorithm(o, out), 0);
  return out.str();
}

// Runs the checker expecting a violation; returns (exit code, message).
std::pair<int, std::string> check_fails(const std::string& prefix, const std::string& coll = "") {
  CheckOptions o;
  o.prefix = prefix;
  o.collective = coll;
  std::ostringstream out;
  try {
    check_algorithm(o, out);
  } catch (const SimError& e) {
    return {e.exit_code(), e.what()};
  }
  ADD_FAILURE() << "check passed:\n" << out.str();
  return {0, ""};
}

std::string rank_file(const std::string& prefix, std::uint32_t r) { return prefix + "." + std::to_string(r) + ".et"; }

// Rewrites rank r's file through `edit`.
template <typename F>
void edit_rank(const std::string& prefix, std::uint32_t r, F edit) {
  EtTrace t = read_et(rank_file(prefix, r));
  edit(t);
  write_et(t, rank_file(prefix, r));
}

et::Node& node_named(EtTrace& t, const std::string& name) {
  for (et::Node& n : t.nodes) {
    if (n.name() == name) return n;
  }
  throw std::runtime_error("no node " + name);
}

// Removes nodes by name, dropping data deps on them.
void remove_nodes(EtTrace& t, const std::vector<std::string>& names) {
  std::vector<std::uint64_t> gone;
  std::erase_if(t.nodes, [&](const et::Node& n) {
    if (std::find(names.begin(), names.end(), n.name()) == names.end()) return false;
    gone.push_back(n.id());
    return true;
  });
  for (et::Node& n : t.nodes) {
    std::vector<std::uint64_t> deps;
    for (std::uint64_t d : n.data_deps()) {
      if (std::find(gone.begin(), gone.end(), d) == gone.end()) deps.push_back(d);
    }
    n.clear_data_deps();
    for (std::uint64_t d : deps) n.add_data_deps(d);
  }
}

// --- writer -----------------------------------------------------------------

TEST(CollectiveGen, WritesOneFilePerRankWithTheRingsOps) {
  for (CollectiveType t : {kAR, kRS, kAG, kA2A}) {
    for (std::uint32_t n : {1u, 2u, 3u, 4u, 8u}) {
      for (std::uint32_t k : {1u, 2u, 3u}) {
        SCOPED_TRACE(coll_arg(t) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
        const std::string prefix = fresh_dir("shapes") + "/ring";
        gen(t, n, k, prefix);
        const RingProgram ring(t, n, 1 << 20, k);
        for (std::uint32_t r = 0; r < n; ++r) {
          ASSERT_TRUE(fs::exists(rank_file(prefix, r)));
          EXPECT_EQ(read_et(rank_file(prefix, r)).nodes.size(), ring.op_count(r));
        }
        EXPECT_FALSE(fs::exists(rank_file(prefix, n)));
        const std::string summary = check(prefix);
        if (t == kA2A) {
          EXPECT_NE(summary.find("data check skipped: ALL_TO_ALL is not modelled"),
                    std::string::npos)
              << summary;
        } else {
          EXPECT_NE(summary.find("data check passed"), std::string::npos) << summary;
        }
      }
    }
  }
}

TEST(CollectiveGen, SummaryLine) {
  const std::string prefix = fresh_dir("summary") + "/sub/ring";
  EXPECT_EQ(gen(kAR, 4, 1, prefix),
            "wrote 4 files " + prefix + ".{0..3}.et: ring ALL_REDUCE on 4 NPUs, 1 chunk, 15 nodes per rank, "
            "sized for 1 MiB (1048576 B)\n");
  // Rewriting a smaller ring under the same prefix removes the stale ranks.
  EXPECT_EQ(gen(kAG, 2, 3, prefix, "3000"),
            "wrote 2 files " + prefix + ".{0..1}.et: ring ALL_GATHER on 2 NPUs, 3 chunks, 6 nodes per rank, "
            "sized for 2.92 KiB (3000 B); removed 2 rank files of an earlier write of " + prefix + " (ranks 2, 3)\n");
  EXPECT_FALSE(fs::exists(rank_file(prefix, 2)));
}

TEST(CollectiveGen, NodeLayoutOfATwoRankAllReduce) {
  const std::string prefix = fresh_dir("layout") + "/ring";
  gen(kAR, 2, 1, prefix);
  const EtTrace t = read_et(rank_file(prefix, 0));
  EXPECT_EQ(t.metadata.version(), "0.0.4");
  EXPECT_EQ(metadata_string(t.metadata, "collective"), "ALL_REDUCE");
  EXPECT_EQ(metadata_int(t.metadata, "collective_size"), 1 << 20);
  EXPECT_EQ(metadata_string(t.metadata, "algorithm"), "ring");
  EXPECT_EQ(metadata_int(t.metadata, "npus"), 2);
  EXPECT_EQ(metadata_int(t.metadata, "chunks"), 1);
  ASSERT_EQ(t.nodes.size(), 5u);
  // id, name, type, deps, peer, tag, size, chunk idx
  struct Want {
    const char* name;
    et::NodeType type;
    std::vector<std::uint64_t> deps;
    std::int64_t peer, idx;
  };
  const Want want[] = {
      {"ring.send c0 s0", et::COMM_SEND_NODE, {}, 1, 0},
      {"ring.recv c0 s0", et::COMM_RECV_NODE, {}, 1, 1},
      {"ring.reduce c0 s0", et::COMP_NODE, {1}, -1, 1},
      {"ring.send c0 s1", et::COMM_SEND_NODE, {2}, 1, 1},  // rank 0 ends the reduce-scatter owning piece 1
      {"ring.recv c0 s1", et::COMM_RECV_NODE, {2}, 1, 0},
  };
  for (std::size_t i = 0; i < 5; ++i) {
    const et::Node& n = t.nodes[i];
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(n.id(), i);
    EXPECT_EQ(n.name(), want[i].name);
    EXPECT_EQ(n.type(), want[i].type);
    EXPECT_EQ(std::vector<std::uint64_t>(n.data_deps().begin(), n.data_deps().end()), want[i].deps);
    EXPECT_EQ(attr_bool(n, "is_cpu_op"), false);
    EXPECT_FALSE(find_attr(n, "comm_type"));
    EXPECT_EQ(attr_int(n, "msg_chunk_idx"), want[i].idx);
    EXPECT_EQ(attr_int(n, "msg_chunk_cnt"), 1);
    EXPECT_EQ(attr_int(n, "total_chunk_cnt"), 2);
    if (n.type() == et::COMP_NODE) {
      EXPECT_EQ(attr_int(n, "tensor_size"), 524288);
      EXPECT_EQ(n.duration_micros(), 0u);
      continue;
    }
    EXPECT_EQ(attr_int(n, n.type() == et::COMM_SEND_NODE ? "comm_dst" : "comm_src"), want[i].peer);
    EXPECT_EQ(attr_int(n, "comm_tag"), static_cast<std::int64_t>(i / 3));
    EXPECT_EQ(attr_int(n, "comm_size"), 524288);
  }
}

// The written ETs, run through EtProgram at any size, are the ring: same ops
// (kind, peer, bytes, tag) in the same issue order, and the same DAG.
void expect_same_program(const CollectiveProgram& ring, const CollectiveProgram& et, std::uint32_t pos) {
  ASSERT_EQ(et.op_count(pos), ring.op_count(pos));
  // Walk both: ET op ids are the ring's OpRefs in ascending order.
  RankCursor rc, ec;
  std::vector<OpRef> rr, er;
  ring.start(pos, rc, rr);
  et.start(pos, ec, er);
  std::vector<std::pair<OpRef, OpRef>> frontier;
  ASSERT_EQ(rr.size(), er.size());
  for (std::size_t i = 0; i < rr.size(); ++i) frontier.emplace_back(rr[i], er[i]);
  std::size_t seen = 0;
  while (!frontier.empty()) {
    const auto [r, e] = frontier.back();
    frontier.pop_back();
    ++seen;
    CollectiveOp a = ring.op(pos, r), b = et.op(pos, e);
    if (a.kind == OpKind::kCompute) a.peer = a.tag = 0;  // a reduce has no peer or tag of its own
    ASSERT_EQ(std::tie(a.kind, a.peer, a.bytes, a.tag), std::tie(b.kind, b.peer, b.bytes, b.tag))
        << "rank " << pos << " ring op " << r << " et op " << e;
    EXPECT_EQ(a.duration, b.duration);
    rr.clear();
    er.clear();
    ring.finish(pos, r, rc, rr);
    et.finish(pos, e, ec, er);
    ASSERT_EQ(rr.size(), er.size());
    for (std::size_t i = 0; i < rr.size(); ++i) frontier.emplace_back(rr[i], er[i]);
  }
  EXPECT_EQ(seen, ring.op_count(pos));
}

TEST(CollectiveGen, EtProgramReproducesTheRingAtAnySize) {
  for (CollectiveType t : {kAR, kRS, kAG}) {
    for (std::uint32_t n : {2u, 3u, 5u, 8u}) {
      for (std::uint32_t k : {1u, 3u}) {
        const std::string prefix = fresh_dir("sizes") + "/ring";
        gen(t, n, k, prefix);
        const auto algo = std::make_shared<const EtAlgorithm>(load_et_algorithm(prefix, std::nullopt));
        for (std::uint64_t s : {1ull << 20, 1000003ull, 7ull, 4096ull, 123456789ull}) {
          SCOPED_TRACE(coll_arg(t) + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " S=" + std::to_string(s));
          const RingProgram ring(t, n, s, k);
          const EtProgram et(algo, s);
          for (std::uint32_t pos = 0; pos < n; ++pos) expect_same_program(ring, et, pos);
        }
      }
    }
  }
}

TEST(CollectiveGen, AllToAllRescalesExactlyWhenSizesDivide) {
  // No chunk attributes: comm_size scales by S / collective_size, exact here.
  const std::string prefix = fresh_dir("a2a") + "/ring";
  gen(kA2A, 4, 2, prefix, "8KiB");
  EXPECT_FALSE(find_attr(read_et(rank_file(prefix, 0)).nodes[0], "msg_chunk_idx"));
  const auto algo = std::make_shared<const EtAlgorithm>(load_et_algorithm(prefix, std::nullopt));
  for (std::uint64_t s : {8192ull, 65536ull, 1ull << 20}) {
    const RingProgram ring(kA2A, 4, s, 2);
    const EtProgram et(algo, s);
    for (std::uint32_t pos = 0; pos < 4; ++pos) expect_same_program(ring, et, pos);
  }
}

TEST(CollectiveGen, HierarchicalOnATopologysDimensions) {
  // `collective gen ring,direct --network TOPO.yml`: the hierarchical
  // algorithm on the topology's dimensions, one ET per rank, which passes the
  // checker with its data check (all-reduce, both schemes' default
  // localBWAware; reduce-scatter), on 2-D and 3-D grids.
  const std::string dir = fresh_dir("hier");
  fs::create_directories(dir);
  struct Case {
    std::string dims, algorithm;
    std::uint32_t npus;
    CollectiveType type;
  };
  const std::vector<Case> cases = {
      {"[2, 4]", "ring,direct", 8, kAR},
      {"[4, 4]", "halvingDoubling,ring", 16, kAR},
      {"[2, 2, 2]", "ring,halvingDoubling,direct", 8, kAR},
      {"[3, 2, 2]", "hierarchical", 12, kRS},  // the type's default (ring) on every dimension
      {"[4, 2]", "hierarchical:optimization=baseline,chunks=2,ring,direct", 8, kAR},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string topo = dir + "/topo" + std::to_string(i) + ".yml";
    std::string ranks = c.dims, lat, kinds;
    const auto count = static_cast<std::size_t>(std::count(c.dims.begin(), c.dims.end(), ',')) + 1;
    for (std::size_t d = 0; d < count; ++d) kinds += std::string(d ? ", " : "") + "Ring";
    std::ofstream(topo) << "topology: [" << kinds << "]\nnpus_count: " << c.dims << "\nbandwidth: [" << [&] {
      std::string b;
      for (std::size_t d = 0; d < count; ++d) b += std::string(d ? ", " : "") + "50";
      return b;
    }() << "]\nlatency: [" << [&] {
      std::string b;
      for (std::size_t d = 0; d < count; ++d) b += std::string(d ? ", " : "") + "500";
      return b;
    }() << "]\n";
    GenOptions o;
    o.algorithm = c.algorithm;
    o.collective = coll_arg(c.type);
    o.npus = c.npus;
    o.prefix = dir + "/alg" + std::to_string(i);
    o.network = topo;
    std::ostringstream out;
    EXPECT_EQ(generate_algorithm(o, out), 0) << c.algorithm << " on " << c.dims;
    EXPECT_NE(out.str().find("hierarchical("), std::string::npos) << out.str();
    EXPECT_TRUE(fs::exists(rank_file(o.prefix, c.npus - 1)));
    const std::string report = check(o.prefix, coll_arg(c.type));
    EXPECT_NE(report.find("data check passed"), std::string::npos) << report;
    EXPECT_NE(report.find("verdict: ok"), std::string::npos) << report;
    // --npus must be the topology's NPU count.
    o.npus = c.npus + 1;
    EXPECT_THROW(generate_algorithm(o, out), InputError);
  }
  fs::remove_all(dir);
}

TEST(CollectiveGen, RejectsBadOptions) {
  const std::string prefix = fresh_dir("bad") + "/ring";
  GenOptions o;
  o.collective = "broadcast";
  o.npus = 4;
  o.prefix = prefix;
  std::ostringstream out;
  try {
    generate_algorithm(o, out);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "collective algorithm 'ring' does not implement BROADCAST (it implements ALL_REDUCE, "
                           "REDUCE_SCATTER, ALL_GATHER, ALL_TO_ALL)");
  }
  o.algorithm = "nosuch";
  o.collective = "allreduce";
  EXPECT_THROW(generate_algorithm(o, out), InputError);
  o.algorithm = "direct:speed=2";
  EXPECT_THROW(generate_algorithm(o, out), InputError);
  o.algorithm = "ring";
  o.size_text = "0";
  EXPECT_THROW(generate_algorithm(o, out), InputError);
  o.size_text = "lots";
  EXPECT_THROW(generate_algorithm(o, out), InputError);
}

// A rank too large to build in memory is refused before anything is built
// (1,024 ranks of 65,536 chunks: 335 M nodes a rank, 447 GiB; it used to
// build every rank before writing the first, at about 1 KB a node), and
// nothing is written.
TEST(CollectiveGen, ARankThatCannotFitInMemoryIsRefusedAtOnce) {
  const std::string prefix = fresh_dir("huge") + "/ring";
  GenOptions o;
  o.collective = "allreduce";
  o.npus = 1024;
  o.chunks = 65536;
  o.prefix = prefix;
  std::ostringstream out;
  try {
    generate_algorithm(o, out);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("collective gen: --npus 1024 and --chunks 65536: a rank of 335216640 nodes at 1400 B per "
                         "node while it is built (its DAG, its trace and its file) needs at least 447562 MiB but only ",
                         0),
              0u)
        << what;
    EXPECT_NE(what.find("give fewer chunks or ranks"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(rank_file(prefix, 0)));
}

// --- checker ----------------------------------------------------------------

TEST(CollectiveCheck, SummaryOfAGoodRing) {
  const std::string prefix = fresh_dir("good") + "/ring";
  gen(kAR, 4, 1, prefix);
  // The ring's parts are padded to one size: 6 messages of ceil(1,000,003 / 4) = 250,001 B per rank.
  EXPECT_EQ(check(prefix, "", "1000003"),
            prefix + ": ALL_REDUCE on 4 ranks, 60 ops, 24 messages\n"
            "at 976.56 KiB (1000003 B) each rank sends 1500006 B\n"
            "structure: ok (every send meets a receive of its size, FIFO per peer pair and tag; every rank finishes)\n"
            "data check passed: every rank holds all 4 contributions in each chunk (4 chunks)\n"
            "verdict: ok\n");
  const std::string rs = fresh_dir("good_rs") + "/ring";
  gen(kRS, 4, 3, rs);
  EXPECT_NE(check(rs).find("data check passed: each rank holds a distinct fully reduced block of 3 chunks (strided "
                           "blocks (chunk c in block c mod N); rank j holds block j+1, the ring's order)"),
            std::string::npos);
  const std::string ag = fresh_dir("good_ag") + "/ring";
  gen(kAG, 4, 3, ag);
  EXPECT_NE(check(ag).find("data check passed: every rank holds every chunk, each with its owner's data alone "
                           "(12 chunks)"),
            std::string::npos);
}

TEST(CollectiveCheck, DeletedReceiveLeavesASendUnreceived) {
  const std::string prefix = fresh_dir("norecv") + "/ring";
  gen(kAR, 4, 1, prefix);
  edit_rank(prefix, 2, [](EtTrace& t) { remove_nodes(t, {"ring.recv c0 s0"}); });
  EXPECT_EQ(check_fails(prefix),
            std::make_pair(3, std::string("rank 1 node 0 sends 262144 B to rank 2 (tag 0) that is never received")));
}

TEST(CollectiveCheck, UnreceivedSendsAreListedBySender) {
  // Several unreceived messages on different (src, dst, tag) keys: the report
  // lists them by sender and node, whatever order the matcher keeps them in.
  const std::string prefix = fresh_dir("norecv3") + "/ring";
  gen(kAR, 4, 1, prefix);
  for (std::uint32_t r : {3u, 1u, 2u}) edit_rank(prefix, r, [](EtTrace& t) { remove_nodes(t, {"ring.recv c0 s0"}); });
  EXPECT_EQ(check_fails(prefix),
            std::make_pair(3, std::string("rank 0 node 0 sends 262144 B to rank 1 (tag 0) that is never received\n"
                                          "  also: rank 1 node 0 sends 262144 B to rank 2 (tag 0) that is never "
                                          "received\n"
                                          "  also: rank 2 node 0 sends 262144 B to rank 3 (tag 0) that is never "
                                          "received")));
}

TEST(CollectiveCheck, DeletedSendLeavesItsReceiverStuck) {
  const std::string prefix = fresh_dir("nosend") + "/ring";
  gen(kAG, 3, 1, prefix);
  edit_rank(prefix, 0, [](EtTrace& t) { remove_nodes(t, {"ring.send c0 s1"}); });
  EXPECT_EQ(check_fails(prefix),
            std::make_pair(3, std::string("rank 1 node 3 waits for a message from rank 0 tag 1 that is never sent")));
}

TEST(CollectiveCheck, SizeMismatch) {
  // Chunk attributes size our ring's messages: claim two parts instead of one.
  const std::string prefix = fresh_dir("size") + "/ring";
  gen(kAR, 4, 1, prefix);
  edit_rank(prefix, 3, [](EtTrace& t) { set_attr_int(node_named(t, "ring.recv c0 s0"), "msg_chunk_cnt", 2); });
  EXPECT_EQ(check_fails(prefix),
            std::make_pair(2, std::string("rank 3 node 1 receives 524288 B from rank 2 (tag 0) but the matching "
                                          "send (rank 2 node 0) carries 262144 B")));
  // Without chunk attributes comm_size counts (scaled to the checked size).
  const std::string a2a = fresh_dir("size_a2a") + "/ring";
  gen(kA2A, 4, 1, a2a);
  edit_rank(a2a, 1, [](EtTrace& t) { set_attr_int(node_named(t, "ring.recv c0 s1"), "comm_size", 1000); });
  EXPECT_EQ(check_fails(a2a),
            std::make_pair(2, std::string("rank 1 node 3 receives 1000 B from rank 0 (tag 1) but the matching "
                                          "send (rank 0 node 2) carries 524288 B")));
}

TEST(CollectiveCheck, PeerOutOfRange) {
  const std::string prefix = fresh_dir("peer") + "/ring";
  gen(kAR, 4, 1, prefix);
  edit_rank(prefix, 1, [](EtTrace& t) { set_attr_int(node_named(t, "ring.send c0 s2"), "comm_dst", 4); });
  const auto [code, what] = check_fails(prefix);
  EXPECT_EQ(code, 2);
  EXPECT_EQ(what, rank_file(prefix, 1) + ": node 6: comm_dst 4 is outside the algorithm's 4 ranks");
}

// Chunk attributes that describe no share of the buffer: a total of 0 and a
// count without its total were passed over (comm_size taken instead), a
// negative index read as none.
TEST(CollectiveCheck, ChunkAttributesThatDescribeNoShareAreErrors) {
  const std::string suffix = " (chunk attributes: msg_chunk_cnt of total_chunk_cnt parts of the buffer, from msg_chunk_idx)";
  const std::vector<std::pair<std::function<void(et::Node&)>, std::string>> cases = {
      {[](et::Node& n) { set_attr_int(n, "total_chunk_cnt", 0); }, "total_chunk_cnt 0 must be > 0"},
      {[](et::Node& n) { set_attr_int(n, "msg_chunk_cnt", -1); }, "msg_chunk_cnt -1 is negative"},
      {[](et::Node& n) { set_attr_int(n, "msg_chunk_idx", -3); }, "msg_chunk_idx -3 is negative"},
      {[](et::Node& n) {
         auto* attrs = n.mutable_attr();
         for (int i = attrs->size() - 1; i >= 0; --i) {
           if (attrs->Get(i).name() == "total_chunk_cnt") attrs->DeleteSubrange(i, 1);
         }
       },
       "msg_chunk_cnt without total_chunk_cnt"},
  };
  int k = 0;
  for (const auto& c : cases) {
    const auto& edit = c.first;  // named, not bound: the lambda below captures it
    const std::string& what = c.second;
    const std::string prefix = fresh_dir("chunks" + std::to_string(k++)) + "/ring";
    gen(kAR, 4, 1, prefix);
    edit_rank(prefix, 1, [&](EtTrace& t) { edit(node_named(t, "ring.send c0 s2")); });
    const auto [code, message] = check_fails(prefix);
    EXPECT_EQ(code, 2) << what;
    EXPECT_EQ(message, rank_file(prefix, 1) + ": node 6: " + what + suffix);
  }
}

// An index at or past total_chunk_cnt names no part of the buffer: the run
// used to wrap it (another part, exit 0) while the checker failed its data
// check. Both now refuse it where it is read, naming file, node and attribute.
TEST(CollectiveCheck, ChunkIndexPastTheTotalIsRefusedByCheckAndRun) {
  const std::string prefix = fresh_dir("chunk_past_total") + "/ring";
  gen(kAR, 4, 1, prefix);  // total_chunk_cnt 4: parts 0..3
  edit_rank(prefix, 1, [](EtTrace& t) { set_attr_int(node_named(t, "ring.send c0 s2"), "msg_chunk_idx", 6); });
  const std::string what = rank_file(prefix, 1) +
                           ": node 6: msg_chunk_idx 6 is not below total_chunk_cnt 4 (it names one of the buffer's "
                           "parts 0..3; only an MSCCL-IR import's buffer offsets run past them)";
  EXPECT_EQ(check_fails(prefix), std::make_pair(2, what));
  const testing::SimRun run = testing::run_sim("--workload 'gen:collectives?npus=4&coll=allreduce&size=1MiB' --network " +
                             testing::shipped_config("switch8.yml") + " --collective allreduce=" + prefix + " -q");
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find(what), std::string::npos) << run.output;
}

TEST(CollectiveCheck, Cycle) {
  const std::string prefix = fresh_dir("cycle") + "/ring";
  gen(kAR, 4, 1, prefix);
  edit_rank(prefix, 0, [](EtTrace& t) { node_named(t, "ring.recv c0 s0").add_data_deps(14); });
  const auto [code, what] = check_fails(prefix);
  EXPECT_EQ(code, 3);
  EXPECT_NE(what.find(": lies on or behind a dependency cycle"), std::string::npos) << what;
}

TEST(CollectiveCheck, RedirectedSendDeadlocks) {
  // Rank 0's second all-gather send goes to rank 2 instead of rank 1.
  const std::string prefix = fresh_dir("redirect") + "/ring";
  gen(kAG, 4, 1, prefix);
  edit_rank(prefix, 0, [](EtTrace& t) { set_attr_int(node_named(t, "ring.send c0 s1"), "comm_dst", 2); });
  EXPECT_EQ(check_fails(prefix),
            std::make_pair(3, std::string("rank 1 node 3 waits for a message from rank 0 tag 1 that is never sent\n"
                                          "  also: rank 2 node 5 waits for a message from rank 1 tag 2 that its "
                                          "node 4 never gets to send (deadlock)\n"
                                          "  also: rank 0 node 2 sends 1048576 B to rank 2 (tag 1) that is never "
                                          "received\n"
                                          "  also: rank 0 node 4 sends 1048576 B to rank 1 (tag 2) that is never "
                                          "received")));
}

TEST(CollectiveCheck, MissingLastStepFailsTheDataCheck) {
  const auto drop_last = [](CollectiveType t, std::uint32_t n, const std::string& name) {
    const std::string prefix = fresh_dir(name) + "/ring";
    gen(t, n, 1, prefix);
    const std::string s = std::to_string(RingProgram(t, n, 1, 1).steps() - 1);
    for (std::uint32_t r = 0; r < n; ++r) {
      edit_rank(prefix, r, [&](EtTrace& tr) {
        remove_nodes(tr, {"ring.send c0 s" + s, "ring.recv c0 s" + s, "ring.reduce c0 s" + s});
      });
    }
    return check_fails(prefix);
  };
  EXPECT_EQ(drop_last(kAG, 4, "short_ag"),
            std::make_pair(2, std::string("all-gather incomplete: rank 0 chunk 1 never receives rank 1's data")));
  EXPECT_EQ(drop_last(kAR, 4, "short_ar"),
            std::make_pair(2, std::string("all-reduce incomplete: rank 0 chunk 2 holds the contributions of 3 of 4 "
                                          "ranks (rank 1's is missing)")));
  EXPECT_EQ(drop_last(kRS, 4, "short_rs"),
            std::make_pair(2, std::string("reduce-scatter incomplete: rank 0 holds no fully reduced block; its most "
                                          "reduced chunk 2 has 3 of 4 contributions (rank 1's is missing)")));
}

TEST(CollectiveCheck, DoubleReduction) {
  // Reducing what the all-gather phase delivers adds rank 0's contribution twice.
  const std::string prefix = fresh_dir("double") + "/ring";
  gen(kAR, 4, 1, prefix);
  edit_rank(prefix, 0, [](EtTrace& t) {
    et::Node& extra = t.nodes.emplace_back();
    extra.set_id(15);
    extra.set_name("extra reduce");
    extra.set_type(et::COMP_NODE);
    extra.add_data_deps(node_named(t, "ring.recv c0 s3").id());
  });
  EXPECT_EQ(check_fails(prefix),
            std::make_pair(2, std::string("rank 0 node 15 reduces chunk 0 twice with the contribution of rank 0 "
                                          "(received by node 10)")));
}

TEST(CollectiveCheck, WithoutChunkIndicesOnlyTheStructureIsChecked) {
  const std::string prefix = fresh_dir("nochunks") + "/ring";
  gen(kAR, 3, 1, prefix);
  for (std::uint32_t r = 0; r < 3; ++r) {
    edit_rank(prefix, r, [](EtTrace& t) {
      for (et::Node& n : t.nodes) {
        auto* attrs = n.mutable_attr();
        for (int i = attrs->size() - 1; i >= 0; --i) {
          if (attrs->Get(i).name() == "msg_chunk_idx") attrs->DeleteSubrange(i, 1);
        }
      }
    });
  }
  const std::string out = check(prefix);
  EXPECT_NE(out.find("\ndata check skipped: the ET carries no chunk indices (msg_chunk_idx/msg_chunk_cnt)\nverdict: ok\n"),
            std::string::npos)
      << out;
}

std::string custom_ring() {
  return std::string(SIM_SOURCE_DIR) + "/../shared/testdata/astrasim-custom-ring/custom_allreduce";
}

TEST(CollectiveCheck, AstraSimCustomRing) {
  const std::string prefix = custom_ring();
  if (!fs::exists(prefix + ".0.et")) GTEST_SKIP() << "no " << prefix << ".0.et";
  // MSCCL-converted, older converter: comm_size but no chunk indices; those
  // come from the source XML the converter keeps in the metadata.
  EXPECT_EQ(check(prefix),
            prefix + ": ALL_REDUCE on 8 ranks, 280 ops, 112 messages\n"
            "at 1 MiB (1048576 B) each rank sends 1835008 B\n"
            "structure: ok (every send meets a receive of its size, FIFO per peer pair and tag; every rank finishes)\n"
            "data check: chunk indices recovered from the MSCCL-IR XML in the metadata (input_file)\n"
            "data check passed: every rank holds all 8 contributions in each chunk (8 chunks)\n"
            "verdict: ok\n");
  const auto [code, what] = check_fails(prefix, "allgather");
  EXPECT_EQ(code, 2);
  EXPECT_EQ(what, prefix + ": the algorithm is a ALL_REDUCE but it was given for ALL_GATHER");

  // The recovered indices feed the checker only: sizes stay comm_size as written.
  const auto algo = std::make_shared<const EtAlgorithm>(load_et_algorithm(prefix, std::nullopt));
  EXPECT_NE(algo->msccl_xml.find("nchunksperloop=\"8\""), std::string::npos);
  const EtOpSpec& send = algo->ranks[0].ops[0];  // COMM_SEND_NODE_tb0_step0
  EXPECT_EQ(std::tie(send.xml_tb, send.xml_step, send.chunk_idx, send.chunk_cnt, send.total_chunks),
            std::make_tuple(0, 0, std::int64_t{-1}, std::int64_t{-1}, std::int64_t{-1}));
  EXPECT_EQ(EtProgram(algo, 1000).op(0, 0).bytes, 131072u);
}

// Copies the custom ring to a fresh folder, passing each rank's trace through
// `edit` (rank, trace); returns the new prefix.
template <typename F>
std::string edited_custom_ring(const std::string& name, F edit) {
  const std::string prefix = fresh_dir(name) + "/custom_allreduce";
  fs::create_directories(fs::path(prefix).parent_path());
  for (std::uint32_t r = 0; r < 8; ++r) {
    EtTrace t = read_et(rank_file(custom_ring(), r));
    edit(r, t);
    write_et(t, rank_file(prefix, r));
  }
  return prefix;
}

// Replaces, in every rank's metadata XML, the first `from` after `after`.
auto edit_xml(const std::string& after, const std::string& from, const std::string& to) {
  return [=](std::uint32_t, EtTrace& t) {
    for (et::AttributeProto& a : *t.metadata.mutable_attr()) {
      if (a.name() != "input_file") continue;
      std::string xml = a.string_val();
      const std::size_t at = xml.find(from, xml.find(after));
      ASSERT_NE(at, std::string::npos) << from;
      xml.replace(at, from.size(), to);
      a.set_string_val(xml);
    }
  };
}

std::string data_line(const std::string& summary) {
  const std::size_t at = summary.find("\ndata check");
  const std::size_t end = summary.find("\nverdict");
  return at == std::string::npos || end == std::string::npos ? summary : summary.substr(at + 1, end - at - 1);
}

TEST(CollectiveCheck, CustomRingWithACorruptedXml) {
  if (!fs::exists(custom_ring() + ".0.et")) GTEST_SKIP() << "no " << custom_ring() << ".0.et";
  // Rank 1 reduces what rank 0 sends at step 0 into chunk 7 instead of chunk 0:
  // chunk 7 later meets rank 0's contribution again.
  std::string prefix = edited_custom_ring(
      "xml_dstoff",
      edit_xml("<gpu id=\"1\"", "<step s=\"1\" type=\"rrc\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\"",
               "<step s=\"1\" type=\"rrc\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"7\""));
  EXPECT_EQ(check_fails(prefix),
            std::make_pair(2, std::string("rank 1 node 5 reduces chunk 7 twice with the contribution of rank 0 "
                                          "(received by node 4, tb 0 step 3)\n"
                                          "  note: chunk indices recovered from the MSCCL-IR XML in the metadata "
                                          "(input_file)")));

  // Rank 3's last send forwards its chunk 5, not yet complete there, instead
  // of the complete chunk 6: rank 4's chunk 6 lacks rank 4's own contribution.
  prefix = edited_custom_ring(
      "xml_srcoff", edit_xml("<gpu id=\"3\"", "<step s=\"26\" type=\"s\" srcbuf=\"i\" srcoff=\"6\"",
                             "<step s=\"26\" type=\"s\" srcbuf=\"i\" srcoff=\"5\""));
  EXPECT_EQ(check_fails(prefix),
            std::make_pair(2, std::string("all-reduce incomplete: rank 4 chunk 6 holds the contributions of 7 of 8 "
                                          "ranks (rank 4's is missing)\n"
                                          "  note: chunk indices recovered from the MSCCL-IR XML in the metadata "
                                          "(input_file)")));
}

TEST(CollectiveCheck, CustomRingWhoseXmlDoesNotMatchSkipsTheDataCheck) {
  if (!fs::exists(custom_ring() + ".0.et")) GTEST_SKIP() << "no " << custom_ring() << ".0.et";
  const std::string skipped =
      "data check skipped: the ET carries no chunk indices (msg_chunk_idx/msg_chunk_cnt) and the MSCCL-IR XML in "
      "the metadata (input_file) does not match it: ";
  const auto rename = [](std::uint32_t rank, const std::string& from, const std::string& to) {
    return [=](std::uint32_t r, EtTrace& t) {
      if (r == rank) node_named(t, from).set_name(to);
    };
  };
  // A send named for a recv-reduce-copy step.
  std::string prefix =
      edited_custom_ring("xml_type", rename(2, "COMM_SEND_NODE_tb0_step0", "COMM_SEND_NODE_tb0_step1"));
  EXPECT_EQ(data_line(check(prefix)),
            skipped + "rank 2 node 0 (tb 0 step 1) is a send but the step's type is 'rrc'");
  // A threadblock the XML lacks, and a step past the end of one.
  prefix = edited_custom_ring("xml_tb", rename(5, "COMM_RECV_NODE_tb0_step27", "COMM_RECV_NODE_tb1_step27"));
  EXPECT_EQ(data_line(check(prefix)), skipped + "rank 5 node 34 (tb 1 step 27): gpu 5 has no tb 1");
  prefix = edited_custom_ring("xml_step", rename(5, "COMM_RECV_NODE_tb0_step27", "COMM_RECV_NODE_tb0_step28"));
  EXPECT_EQ(data_line(check(prefix)), skipped + "rank 5 node 34 (tb 0 step 28): tb 0 of gpu 5 has no step 28");
  // A recv-reduce-copy step whose reduce is gone.
  prefix = edited_custom_ring("xml_rrc", [](std::uint32_t r, EtTrace& t) {
    if (r == 6) remove_nodes(t, {"COMP_NODE_tb0_step5"});
  });
  EXPECT_EQ(data_line(check(prefix)),
            skipped + "rank 6 node 7 (tb 0 step 5) has no reduce COMP though the step is 'rrc'");
  // A receive the converter did not name.
  prefix = edited_custom_ring("xml_name", rename(7, "COMM_RECV_NODE_tb0_step1", "recv"));
  EXPECT_EQ(data_line(check(prefix)),
            skipped + "rank 7 node 1 is not named like the converter's nodes (COMM_RECV_NODE_tb<t>_step<s>)");
  // An XML for another ring, and one that is not XML.
  prefix = edited_custom_ring("xml_gpus", edit_xml("<algo", "ngpus=\"8\"", "ngpus=\"16\""));
  EXPECT_EQ(data_line(check(prefix)), skipped + "the XML is for 16 GPUs, the ET has 8 ranks");
  prefix = edited_custom_ring("xml_garbled", edit_xml("<algo", "</algo>", "</alg>"));
  const std::string line = data_line(check(prefix));
  EXPECT_EQ(line.rfind("data check skipped: the ET carries no chunk indices (msg_chunk_idx/msg_chunk_cnt) and the "
                       "metadata's input_file is not MSCCL-IR XML (",
                       0),
            0u)
      << line;
}

// --- CLI ----------------------------------------------------------------------

using testing::SimRun;
using testing::run_sim;

TEST(CollectiveCli, GenAndCheckExitCodes) {
  if (!fs::exists(SIM_BINARY)) GTEST_SKIP() << "sim is not built";
  const std::string prefix = fresh_dir("cli") + "/ring";
  SimRun r = run_sim("collective gen ring --coll allreduce --npus 4 --chunks 2 -o " + prefix);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.output, "wrote 4 files " + prefix + ".{0..3}.et: ring ALL_REDUCE on 4 NPUs, 2 chunks, 30 nodes per "
                      "rank, sized for 1 MiB (1048576 B)\n");
  r = run_sim("collective check " + prefix + " --size 1000003");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("verdict: ok"), std::string::npos) << r.output;

  edit_rank(prefix, 3, [](EtTrace& t) { set_attr_int(node_named(t, "ring.recv c0 s0"), "msg_chunk_cnt", 2); });
  r = run_sim("collective check " + prefix);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.output, "sim: error: rank 3 node 1 receives 262144 B from rank 2 (tag 0) but the matching send "
                      "(rank 2 node 0) carries 131072 B\n");

  edit_rank(prefix, 3, [](EtTrace& t) {
    set_attr_int(node_named(t, "ring.recv c0 s0"), "msg_chunk_cnt", 1);
    remove_nodes(t, {"ring.send c1 s0"});
  });
  r = run_sim("collective check " + prefix);
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.output.rfind("sim: error: rank 0 node ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("waits for a message from rank 3 tag 6 that is never sent"), std::string::npos) << r.output;

  r = run_sim("collective gen ring --coll allreduce --npus 4 --size 1KB -o " + prefix + " --chunks 0");
  EXPECT_EQ(r.code, 2);
}

}  // namespace
}  // namespace sim
