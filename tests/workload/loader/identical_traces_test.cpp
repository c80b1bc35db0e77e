// Loading decodes a trace once when the next rank's file holds the same bytes
// (workload/loader/workload_loader.h): the shared graph must be the one decoding
// would build, under the rank's own number and path, held once (the ranks'
// storage() is the same), and files that differ in any byte must each be
// decoded into their own.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/temp_folder.h"
#include "workload/et/et_io.h"
#include "workload/loader/workload_loader.h"

namespace sim {
namespace {

class IdenticalTraces : public testing::TempFolderTest {};

void add_int(et::Node& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

// A random small trace: COMP, collective, send and receive nodes with data
// (and some control) dependencies on earlier nodes, numbered names and tags.
EtTrace random_trace(std::mt19937_64& rng) {
  EtTrace t;
  t.metadata.set_version("0.0.4");
  const int nodes = 1 + static_cast<int>(rng() % 12);
  for (int i = 1; i <= nodes; ++i) {
    et::Node n;
    n.set_id(static_cast<std::uint64_t>(i));
    switch (rng() % 4) {
      case 0:
        n.set_type(et::COMP_NODE);
        n.set_name("gemm" + std::to_string(rng() % 5));
        n.set_duration_micros(1 + rng() % 100);
        break;
      case 1:
        n.set_type(et::COMM_COLL_NODE);
        n.set_name("allreduce");
        add_int(n, "comm_type", static_cast<std::int64_t>(rng() % 2 ? 0 : 2));
        add_int(n, "comm_size", static_cast<std::int64_t>(1 + rng() % 4096));
        break;
      case 2:
        n.set_type(et::COMM_SEND_NODE);
        n.set_name("send." + std::to_string(i));
        add_int(n, "comm_dst", 0);
        add_int(n, "comm_size", 64);
        add_int(n, "comm_tag", i);
        break;
      default:
        n.set_type(et::COMM_RECV_NODE);
        n.set_name("recv." + std::to_string(i));
        add_int(n, "comm_src", 0);
        add_int(n, "comm_size", 64);
        add_int(n, "comm_tag", i);
        break;
    }
    if (i > 1 && rng() % 3 != 0) n.add_data_deps(1 + rng() % static_cast<std::uint64_t>(i - 1));
    if (i > 2 && rng() % 4 == 0) n.add_ctrl_deps(1 + rng() % static_cast<std::uint64_t>(i - 2));
    t.nodes.push_back(n);
  }
  return t;
}

// Everything a graph holds, but its rank and path.
std::string contents(const RankGraph& g) {
  std::ostringstream s;
  s << g.size() << " nodes;";
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const TaskNode n = g.node(i);
    s << ' ' << n.id << ':' << static_cast<int>(n.kind) << ':' << g.name(i) << ':' << n.duration_micros << ':'
      << n.comm_size << ':' << n.comm_src << ':' << n.comm_dst << ':' << n.comm_tag << ':' << n.group << ':'
      << static_cast<int>(n.coll) << ':' << n.num_parents << " ->";
    for (const std::uint32_t c : g.children(i)) s << ' ' << c;
    s << ';';
  }
  for (const std::uint32_t r : g.roots()) s << " root " << r;
  s << " communicators " << g.communicators().size() << " dangling " << g.dangling_ctrl_deps() << " self "
    << g.self_ctrl_deps();
  return s.str();
}

TEST_F(IdenticalTraces, SameBytesDecodedOnceDifferentBytesEach) {
  std::mt19937_64 rng(7);
  const EtTrace a = random_trace(rng);
  EtTrace b = a;  // a byte longer: another name
  b.nodes[0].set_name(b.nodes[0].name() + "x");
  // Ranks 0-2 a, 3 b, 4-5 a, 6 b: decoded are 0, 3, 4 and 6 (each compared with the rank before).
  const std::vector<const EtTrace*> of_rank = {&a, &a, &a, &b, &a, &a, &b};
  std::vector<std::string> files;
  for (std::size_t r = 0; r < of_rank.size(); ++r) {
    files.push_back(path("w." + std::to_string(r) + ".et"));
    write_et(*of_rank[r], files.back());
  }
  LoadStats stats;
  const std::vector<RankGraph> graphs = load_rank_graphs(files, {}, 1, &stats);
  EXPECT_EQ(stats.decoded, 4u);
  ASSERT_EQ(graphs.size(), files.size());
  for (std::size_t r = 0; r < files.size(); ++r) {
    EXPECT_EQ(graphs[r].rank(), static_cast<int>(r));
    EXPECT_EQ(graphs[r].path(), files[r]);
    EXPECT_EQ(contents(graphs[r]), contents(RankGraph(files[r], static_cast<int>(r), {})));
  }
  EXPECT_NE(contents(graphs[2]), contents(graphs[3]));
  // One body per decoding: 0-2 share, 3 alone, 4-5 share, 6 alone.
  const std::vector<std::size_t> decoded_as = {0, 0, 0, 3, 4, 4, 6};
  for (std::size_t r = 0; r < files.size(); ++r) {
    for (std::size_t q = 0; q < files.size(); ++q) {
      EXPECT_EQ(graphs[r].storage() == graphs[q].storage(), decoded_as[r] == decoded_as[q]) << r << " " << q;
    }
  }

  // The protobuf decoder reads each file itself: every rank decoded.
  GraphOptions protobuf;
  protobuf.protobuf_decoder = true;
  load_rank_graphs(files, protobuf, 1, &stats);
  EXPECT_EQ(stats.decoded, files.size());
}

// Random workloads whose ranks repeat a few traces in random order, binary
// and JSON, with and without control dependencies, on 1 and 3 threads: each
// loaded graph equals the one decoded from its own file alone.
TEST_F(IdenticalTraces, CopiesEqualDecodingOnRandomWorkloads) {
  std::mt19937_64 rng(2026);
  for (int round = 0; round < 40; ++round) {
    std::vector<EtTrace> distinct;
    const int kinds = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < kinds; ++k) distinct.push_back(random_trace(rng));
    const int ranks = 2 + static_cast<int>(rng() % 9);
    const bool json = rng() % 2 == 0;
    std::vector<std::string> files;
    std::vector<int> kind_of;
    for (int r = 0; r < ranks; ++r) {
      // Runs of the same trace, as per-rank files usually come.
      kind_of.push_back(r > 0 && rng() % 3 != 0 ? kind_of.back() : static_cast<int>(rng() % kinds));
      files.push_back(path("r" + std::to_string(round) + ".w." + std::to_string(r) + (json ? ".json" : ".et")));
      const EtTrace& trace = distinct[static_cast<std::size_t>(kind_of.back())];
      json ? write_et_json(trace, files.back()) : write_et(trace, files.back());
    }
    std::size_t runs = 1;
    for (int r = 1; r < ranks; ++r) runs += kind_of[r] != kind_of[r - 1];
    GraphOptions options;
    options.ctrl_deps = rng() % 2 == 0;
    for (const unsigned threads : {1u, 3u}) {
      LoadStats stats;
      const std::vector<RankGraph> graphs = load_rank_graphs(files, options, threads, &stats);
      if (threads == 1) {
        EXPECT_EQ(stats.decoded, runs) << "round " << round;
      }
      EXPECT_LE(stats.decoded, static_cast<std::size_t>(ranks));
      ASSERT_EQ(graphs.size(), files.size());
      std::vector<const void*> bodies;
      for (const RankGraph& g : graphs) bodies.push_back(g.storage());
      std::sort(bodies.begin(), bodies.end());
      EXPECT_EQ(static_cast<std::size_t>(std::unique(bodies.begin(), bodies.end()) - bodies.begin()), stats.decoded)
          << "round " << round << " threads " << threads;
      for (int r = 0; r < ranks; ++r) {
        const RankGraph alone(files[static_cast<std::size_t>(r)], r, options);
        EXPECT_EQ(graphs[static_cast<std::size_t>(r)].rank(), r);
        EXPECT_EQ(graphs[static_cast<std::size_t>(r)].path(), files[static_cast<std::size_t>(r)]);
        EXPECT_EQ(contents(graphs[static_cast<std::size_t>(r)]), contents(alone))
            << "round " << round << " rank " << r << " threads " << threads;
      }
    }
  }
}

}  // namespace
}  // namespace sim
