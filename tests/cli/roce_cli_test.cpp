// `sim --backend ns3` with a system config selecting network.transport: roce
// (or ib) runs a collective over RDMA queue pairs and reports the transport's
// counters and per-link pause and ECN columns.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "../common/run_sim.h"
#include "../common/temp_workload.h"

namespace sim {
namespace {

using testing::run_sim;
using testing::SimRun;

class RoceCli : public testing::TempWorkload {};

TEST_F(RoceCli, AllReduceRunsOverRoce) {
#ifndef SIM_HAVE_NS3
  GTEST_SKIP() << "ns-3 not found at configure time: libsim_ns3.so is not built";
#endif
  ASSERT_EQ(run_sim("workload gen collectives --npus 8 --coll allreduce --size 4MiB -o " + path("w/w")).code, 0);
  std::ofstream(path("sys.yml")) << "network:\n  transport: roce\n  buffer_size: 1MB\n";
  const SimRun r = run_sim("--workload " + path("w/w") + " --network " + testing::shipped_config("switch8.yml") +
                           " --system " + path("sys.yml") + " --backend ns3 --link-stats " + path("links.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("queue pairs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" 0 packets dropped"), std::string::npos) << r.output;
  std::ifstream csv(path("links.csv"));
  std::string header;
  std::getline(csv, header);
  EXPECT_NE(header.find(",pauses_received,paused_ns,pauses_sent,ecn_marks,cnps"), std::string::npos) << header;

  // A TCP-only key under roce is an input error naming the key.
  std::ofstream(path("bad.yml")) << "network:\n  transport: roce\n  tcp_buffer: 1MiB\n";
  const SimRun bad = run_sim("--workload " + path("w/w") + " --network " + testing::shipped_config("switch8.yml") +
                             " --system " + path("bad.yml") + " --backend ns3");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("option 'tcp_buffer' is for transport: tcp only"), std::string::npos) << bad.output;
}

TEST_F(RoceCli, AllReduceRunsOverInfiniBandCredits) {
#ifndef SIM_HAVE_NS3
  GTEST_SKIP() << "ns-3 not found at configure time: libsim_ns3.so is not built";
#endif
  ASSERT_EQ(run_sim("workload gen collectives --npus 8 --coll allreduce --size 4MiB -o " + path("w/w")).code, 0);
  std::ofstream(path("sys.yml")) << "network:\n  transport: ib\n";
  const SimRun r = run_sim("--workload " + path("w/w") + " --network " + testing::shipped_config("switch8.yml") +
                           " --system " + path("sys.yml") + " --backend ns3");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find(" 0 packets dropped, 8 queue pairs, 0 PFC pauses"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace sim
