#include "workload/generators/workload_generator.h"

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "core/error.h"

namespace sim {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::uint64_t> deps(const et::Node& n) { return {n.data_deps().begin(), n.data_deps().end()}; }

// A fresh folder per test, removed afterwards.
class OutputDir {
 public:
  OutputDir()
      : path_(fs::temp_directory_path() / ("workload_gen_test." + std::to_string(::getpid()) + "." +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::remove_all(path_);
  }
  ~OutputDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string gen_error(const WorkloadGenOptions& o) {
  std::ostringstream out;
  try {
    generate_workload(o, out);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

TEST(CollectivesWorkload, ChainOfCollectives) {
  const auto traces = collectives_workload({4, {CollectiveType::kAllReduce, CollectiveType::kAllGather}, 1 << 20, 0});
  ASSERT_EQ(traces.size(), 4u);
  for (const EtTrace& t : traces) {
    EXPECT_EQ(t.metadata.version(), "0.0.4");
    ASSERT_EQ(t.nodes.size(), 2u);
    const et::Node& ar = t.nodes[0];
    const et::Node& ag = t.nodes[1];
    EXPECT_EQ(ar.id(), 1u);
    EXPECT_EQ(ar.type(), et::COMM_COLL_NODE);
    EXPECT_EQ(attr_int(ar, "comm_type"), static_cast<int>(CollectiveType::kAllReduce));
    EXPECT_EQ(attr_int(ar, "comm_size"), 1 << 20);
    EXPECT_EQ(attr_bool(ar, "is_cpu_op"), false);
    EXPECT_TRUE(deps(ar).empty());
    EXPECT_EQ(ag.id(), 2u);
    EXPECT_EQ(attr_int(ag, "comm_type"), static_cast<int>(CollectiveType::kAllGather));
    EXPECT_THAT(deps(ag), ElementsAre(1u));
  }
}

TEST(CollectivesWorkload, ComputeBeforeEachCollective) {
  const EtTrace t = collectives_trace({2, {CollectiveType::kAllReduce, CollectiveType::kAllReduce}, 64, 10}, 1);
  ASSERT_EQ(t.nodes.size(), 4u);
  EXPECT_EQ(t.nodes[0].type(), et::COMP_NODE);
  EXPECT_EQ(t.nodes[0].duration_micros(), 10u);
  EXPECT_EQ(t.nodes[1].type(), et::COMM_COLL_NODE);
  EXPECT_EQ(t.nodes[2].type(), et::COMP_NODE);
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    EXPECT_EQ(t.nodes[i].id(), i + 1);
    if (i > 0) {
      EXPECT_THAT(deps(t.nodes[i]), ElementsAre(i));
    }
  }
  // The generated graph is one the simulator accepts.
  const RankGraph g(t, 1, {});
  EXPECT_EQ(g.size(), 4u);
  EXPECT_EQ(g.roots().size(), 1u);
}

TEST(ChainWorkload, DependentComputeNodes) {
  const auto traces = chain_workload({3, 1000, 10});
  ASSERT_EQ(traces.size(), 3u);
  const EtTrace& t = traces[2];
  ASSERT_EQ(t.nodes.size(), 1000u);
  EXPECT_TRUE(deps(t.nodes[0]).empty());
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    EXPECT_EQ(t.nodes[i].id(), i + 1);
    EXPECT_EQ(t.nodes[i].type(), et::COMP_NODE);
    EXPECT_EQ(t.nodes[i].duration_micros(), 10u);
    EXPECT_EQ(attr_bool(t.nodes[i], "is_cpu_op"), false);
    if (i > 0) {
      ASSERT_THAT(deps(t.nodes[i]), ElementsAre(i));
    }
  }
}

TEST(P2PRingWorkload, SendsToNextReceivesFromPrevious) {
  const auto traces = p2p_ring_workload({4, 4096, 3});
  ASSERT_EQ(traces.size(), 4u);
  const EtTrace& t = traces[0];
  ASSERT_EQ(t.nodes.size(), 6u);
  for (int k = 0; k < 3; ++k) {
    const et::Node& s = t.nodes[2 * k];
    const et::Node& r = t.nodes[2 * k + 1];
    EXPECT_EQ(s.type(), et::COMM_SEND_NODE);
    EXPECT_EQ(attr_int(s, "comm_src"), 0);
    EXPECT_EQ(attr_int(s, "comm_dst"), 1);
    EXPECT_EQ(attr_int(s, "comm_tag"), k);
    EXPECT_EQ(attr_int(s, "comm_size"), 4096);
    EXPECT_EQ(r.type(), et::COMM_RECV_NODE);
    EXPECT_EQ(attr_int(r, "comm_src"), 3);
    EXPECT_EQ(attr_int(r, "comm_dst"), 0);
    EXPECT_EQ(attr_int(r, "comm_tag"), k);
    // Round k waits for round k-1's receive.
    if (k == 0) {
      EXPECT_TRUE(deps(s).empty());
      EXPECT_TRUE(deps(r).empty());
    } else {
      EXPECT_THAT(deps(s), ElementsAre(2u * k));
      EXPECT_THAT(deps(r), ElementsAre(2u * k));
    }
  }
  EXPECT_EQ(attr_int(traces[3].nodes[0], "comm_dst"), 0);  // wraps round
}

TEST(GenerateWorkload, WritesEveryRankAndRoundTrips) {
  OutputDir dir;
  WorkloadGenOptions o;
  o.kind = "collectives";
  o.npus = 3;
  o.collectives = "allreduce,all_gather";
  o.size_text = "1MiB";
  o.compute_text = "5us";
  o.prefix = dir / "nested/wl";  // the parent folder does not exist yet
  std::ostringstream out;
  EXPECT_EQ(generate_workload(o, out), 0);
  EXPECT_THAT(out.str(), HasSubstr("wrote"));

  const auto paths = resolve_rank_files(o.prefix);
  ASSERT_EQ(paths.size(), 3u);
  const auto expected = collectives_workload({3, {CollectiveType::kAllReduce, CollectiveType::kAllGather}, 1 << 20, 5});
  for (std::size_t r = 0; r < paths.size(); ++r) {
    const EtTrace back = read_et(paths[r]);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back.metadata, expected[r].metadata));
    ASSERT_EQ(back.nodes.size(), expected[r].nodes.size());
    for (std::size_t i = 0; i < back.nodes.size(); ++i) {
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back.nodes[i], expected[r].nodes[i]))
          << "rank " << r << " node " << i;
    }
  }
}

TEST(GenerateWorkload, ChainAndP2PWrite) {
  OutputDir dir;
  WorkloadGenOptions o;
  o.npus = 2;
  o.kind = "chain";
  o.nodes = 7;
  o.prefix = dir / "chain";
  std::ostringstream out;
  EXPECT_EQ(generate_workload(o, out), 0);
  EXPECT_EQ(read_et(dir / "chain.1.et").nodes.size(), 7u);
  o.kind = "p2p-ring";
  o.iterations = 2;
  o.prefix = dir / "p2p";
  EXPECT_EQ(generate_workload(o, out), 0);
  EXPECT_EQ(read_et(dir / "p2p.0.et").nodes.size(), 4u);
}

TEST(GenerateWorkload, BadOptionsAreInputErrors) {
  OutputDir dir;
  WorkloadGenOptions o;
  o.npus = 4;
  o.prefix = dir / "x";
  o.kind = "pipeline";
  EXPECT_THAT(gen_error(o), HasSubstr("unknown kind 'pipeline'"));
  o.kind = "collectives";
  o.collectives = "allreduce,allscatter";
  EXPECT_THAT(gen_error(o), HasSubstr("unknown collective 'allscatter'"));
  o.collectives = "allreduce";
  o.size_text = "12 parsecs";
  EXPECT_THAT(gen_error(o), HasSubstr("--size"));
  o.size_text = "0";
  EXPECT_THAT(gen_error(o), HasSubstr("at least 1 byte"));
  o.size_text = "1MiB";
  o.compute_text = "1500ns";
  EXPECT_THAT(gen_error(o), HasSubstr("whole number of microseconds"));
  o.kind = "p2p-ring";
  o.npus = 1;
  EXPECT_THAT(gen_error(o), HasSubstr("at least 2"));
  EXPECT_FALSE(fs::exists(dir / "x.0.et"));
}

}  // namespace
}  // namespace sim
