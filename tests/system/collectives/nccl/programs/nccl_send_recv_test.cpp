// COMM_SEND / COMM_RECV as NCCL's send and receive (collective.algorithms.send_recv):
// the call's overhead, NCCL's chunks across nodes through the sending and the
// receiving rank's proxy thread (the one collectives use), the device's cost
// per write, and the protocol's hop. Closed forms on two nodes of two GPUs,
// g0 g1 | g2 g3, links without latency, the analytical backend.
#include <gtest/gtest.h>

#include <string>

#include "tests/common/sizes.h"
#include "../nccl_test_cluster.h"
#include "core/error.h"
#include "system/config/system_config.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;

Topology two_nodes() { return nccl_cluster(2, 2, "100GB/s", "50GB/s", "0ns", "0ns", false, false); }

SystemConfig send_recv(const std::string& text) {
  SystemConfig c;
  c.point_to_point = text;
  return c;
}

// Rank 0 sends `bytes` to rank `to`; `to` receives it.
std::vector<EtTrace> one_message(int to, std::uint64_t bytes) {
  return make_traces(4, [&](int r) {
    if (r == 0) return std::vector<et::Node>{p2p_node(1, true, to, bytes)};
    if (r == to) return std::vector<et::Node>{p2p_node(1, false, 0, bytes)};
    return std::vector<et::Node>{};
  });
}

TEST(NcclSendRecv, AcrossNodesTheCallTheProxyAtBothEndsAndTheHop) {
  // 1 MiB in NCCL_P2P_NET_CHUNKSIZE (128 KiB) chunks: 8 messages. The first
  // leaves one proxy time after the call's overhead; the last is completed by
  // the receiving proxy one proxy time after it arrives; then the network hop.
  const Time plain = simulate(one_message(2, kMiB), two_nodes()).makespan;
  EXPECT_EQ(plain, 20'971'520);  // 1 MiB at 50 GB/s
  const Time nccl =
      simulate(one_message(2, kMiB), two_nodes(), send_recv("nccl:overhead=10us,proxy=2us,net_latency=20us")).makespan;
  EXPECT_EQ(nccl, plain + 10 * kMicrosecond + 2 * 2 * kMicrosecond + 20 * kMicrosecond);
}

TEST(NcclSendRecv, InsideANodeNoProxyAndNvLinksHop) {
  // Inside a node: the call, the transfer, NCCL's NVLink hop (hwLat NVLink
  // ring Simple, 3.4 us); the proxy does not take part.
  const Time plain = simulate(one_message(1, kMiB), two_nodes()).makespan;
  EXPECT_EQ(plain, 10'485'760);  // 1 MiB at 100 GB/s
  const Time nccl =
      simulate(one_message(1, kMiB), two_nodes(), send_recv("nccl:overhead=10us,proxy=2us,net_latency=20us")).makespan;
  EXPECT_EQ(nccl, plain + 10 * kMicrosecond + 3'400'000);
}

TEST(NcclSendRecv, ASendAndAReceiveOfOneRankShareItsProxy) {
  // g0 and g2 send 1 MiB to each other (8 chunks each way, opposite links).
  // Each proxy first posts its own 8 chunks (16 us), so the message it
  // receives, in after 2 + 20.97 us, is completed by 16 + 16 us: the call,
  // 32 us, the hop. With a proxy per direction it would be 2 + 20.97 + 2 us.
  const auto traces = make_traces(4, [](int r) {
    if (r != 0 && r != 2) return std::vector<et::Node>{};
    const int peer = 2 - r;
    return std::vector<et::Node>{p2p_node(1, true, peer, kMiB), p2p_node(2, false, peer, kMiB)};
  });
  const Time t =
      simulate(traces, two_nodes(), send_recv("nccl:overhead=10us,proxy=2us,net_latency=20us")).makespan;
  EXPECT_EQ(t, 10 * kMicrosecond + 32 * kMicrosecond + 20 * kMicrosecond);
}

TEST(NcclSendRecv, TheDevicesWritesRideOnTheMessage) {
  // net_write_cost 2 us over 4 rails of the 50 GB/s NIC: each 128 KiB chunk
  // is one write (OFI_NCCL_MIN_STRIPE_SIZE 128 KiB), 2 us x 12.5 GB/s =
  // 25,000 bytes more on the wire, 8 x 25,000 for the message.
  const Time t = simulate(one_message(2, kMiB), two_nodes(),
                          send_recv("nccl:net_write_cost=2us,net_rails=4,net_latency=0us"))
                     .makespan;
  EXPECT_EQ(t, transfer_time(kMiB + 8 * 25'000, 50'000'000'000));
  // With the EFA plugin's 512 KiB chunk (p2p_net_chunk): 1 MiB is below 8
  // chunks, so NCCL halves it: four 256 KiB chunks of two 128 KiB writes each.
  const Time big = simulate(one_message(2, kMiB), two_nodes(),
                            send_recv("nccl:net_write_cost=2us,net_rails=4,net_latency=0us,p2p_net_chunk=512KiB"))
                       .makespan;
  EXPECT_EQ(big, transfer_time(kMiB + 4 * 2 * 25'000, 50'000'000'000));
}

TEST(NcclSendRecv, AReceivePostedAfterTheDataCameIsACallOfItsOwn) {
  // g2 posts its receive after 1 ms of compute, long after the message came:
  // it ends one overhead after it is posted.
  const auto traces = make_traces(4, [](int r) {
    if (r == 0) return std::vector<et::Node>{p2p_node(1, true, 2, kMiB)};
    if (r == 2) return std::vector<et::Node>{comp_node(1, 1000), p2p_node(2, false, 0, kMiB, 0, {1})};
    return std::vector<et::Node>{};
  });
  const Time t = simulate(traces, two_nodes(), send_recv("nccl:overhead=10us,proxy=2us")).makespan;
  EXPECT_EQ(t, 1000 * kMicrosecond + 10 * kMicrosecond);
}

TEST(NcclSendRecv, OnlyNcclsPointToPointKeysAreTaken) {
  const std::string head = "collective:\n  algorithms:\n";
  const auto refused = [&](const std::string& value, const std::string& says) {
    const Topology topo = two_nodes();
    try {
      simulate(one_message(2, kMiB), topo,
               parse_system_config(head + "    send_recv: " + value + "\n", "sys.yml"));
      ADD_FAILURE() << value << " was taken";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("sys.yml:3"), std::string::npos) << msg;
      EXPECT_NE(msg.find(says), std::string::npos) << msg;
    }
  };
  refused("ring", "not NCCL's");
  refused("nccl:algo=ring", "algo does not apply");
  refused("nccl:proxy=fast", "proxy must be a time");
  // A config without the key, or with `network`, keeps one message on the network.
  EXPECT_TRUE(parse_system_config(head + "    all_reduce: ring\n", "sys.yml").point_to_point.empty());
  EXPECT_EQ(simulate(one_message(2, kMiB), two_nodes(), parse_system_config(head + "    send_recv: network\n", "sys.yml"))
                .makespan,
            simulate(one_message(2, kMiB), two_nodes()).makespan);
}

}  // namespace
}  // namespace sim
