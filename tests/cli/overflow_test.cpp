// Time and size arithmetic never wraps: runs whose simulated time would pass
// the largest representable time (2^63 - 1 ps, about 106.75 days) stop with a
// message naming the node or message and the limit, never a wrong answer.
#include <gtest/gtest.h>

#include "../common/run_sim.h"
#include "../common/temp_workload.h"

namespace sim {
namespace {

using testing::run_sim;
using testing::SimRun;

class Overflow : public testing::TempWorkload {};

using testing::shipped_config;

et::Node timed_comp(std::uint64_t id, std::uint64_t micros, std::vector<std::uint64_t> deps = {}) {
  et::Node n;
  n.set_id(id);
  n.set_name(std::string("layer").append(std::to_string(id)));
  n.set_type(et::COMP_NODE);
  n.set_duration_micros(micros);
  for (auto d : deps) n.add_data_deps(d);
  return n;
}

et::Node allreduce(std::uint64_t id, std::int64_t bytes) {
  et::Node n;
  n.set_id(id);
  n.set_name("grad_sync");
  n.set_type(et::COMM_COLL_NODE);
  set_attr_int(n, "comm_type", 0);
  set_attr_int(n, "comm_size", bytes);
  return n;
}

using testing::p2p;

void expect_limit(const SimRun& r, int code, const std::string& culprit) {
  EXPECT_EQ(r.code, code) << r.output;
  EXPECT_NE(r.output.find(culprit), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("9223372036854775807 ps"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("simulated time: 0"), std::string::npos) << r.output;
}

TEST_F(Overflow, DurationBeyondTheLimitIsAnInputError) {
  // 2^62 us is far past 2^63 ps on its own: rejected when the trace is read.
  const std::string w = workload("w", {{timed_comp(1, 1ULL << 62), timed_comp(2, 1ULL << 62, {1})}});
  expect_limit(run_sim("--workload " + w + " --network " + shipped_config("ring8.yml")), 2, "node 1 'layer1'");
}

TEST_F(Overflow, TwoChainedLongComputesStopAtTheLimit) {
  // 5e12 us = 58 days each: either fits, their sum does not.
  const std::string w = workload("w", {{timed_comp(1, 5'000'000'000'000), timed_comp(2, 5'000'000'000'000, {1})}});
  expect_limit(run_sim("--workload " + w + " --network " + shipped_config("ring8.yml")), 3,
               "rank 0 node 2 'layer2' (COMP");
}

TEST_F(Overflow, HugeCollectiveStopsNamingTheNode) {
  std::vector<std::vector<et::Node>> ranks(8, {allreduce(1, std::int64_t{1} << 62)});
  const std::string w = workload("w", ranks);
  for (const char* backend : {"analytical", "flow"}) {
    const SimRun r = run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " --backend " + backend);
    expect_limit(r, 3, "ALL_REDUCE");
  }
}

TEST_F(Overflow, HugeMessageOnASlowLinkStopsNamingTheMessage) {
  const std::string net = text_file("slow.yml", "shape: Ring\nnpus: 2\nbandwidth: 1B/s\nlatency: 1ns\n");
  const std::int64_t bytes = 100'000'000'000'000;  // 1e14 B at 1 B/s: 3.2 million years
  const std::string w = workload("w", {{p2p(1, true, 1, bytes)}, {p2p(1, false, 0, bytes)}});
  for (const char* backend : {"analytical", "flow"}) {
    const SimRun r = run_sim("--workload " + w + " --network " + net + " --backend " + backend);
    EXPECT_EQ(r.code, 3) << r.output;
    EXPECT_NE(r.output.find("100000000000000 B"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("9223372036854775807 ps"), std::string::npos) << r.output;
  }
}

TEST_F(Overflow, MemoryOpBeyondTheLimitStops) {
  et::Node load;
  load.set_id(1);
  load.set_name("load");
  load.set_type(et::MEM_LOAD_NODE);
  set_attr_int(load, "tensor_size", 1'000'000'000'000'000'000);
  const std::string sys = text_file("sys.yml", "memory:\n  bandwidth: 100GB/s\n");
  const std::string w = workload("w", {{load}});
  expect_limit(run_sim("--workload " + w + " --network " + shipped_config("ring8.yml") + " --system " + sys), 3,
               "node 1 'load' (MEM_LOAD");
}

}  // namespace
}  // namespace sim
