// transport: roce on a leaf-spine: the N-to-1 incast of docs/network.md's
// 63-to-1 case (scripts/docs/ns3_roce_check.py runs that one) scaled down to
// 15-to-1 on 16 NPUs, against its bottleneck bound and against flow, with
// PFC, without it, and with DCQCN.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "../../common/sizes.h"
#include "network/backend_registry.h"
#include "tests/network/delivery_recorder.h"
#include "tests/network/ns3/ns3_test_util.h"
#include "tests/network/ns3/skip_without_ns3.h"

namespace sim {
namespace {

using testing::kMiB;
using testing_support::Recorder;
using testing_support::wire_bytes;

constexpr NodeId kNpus = 16;
using Options = std::map<std::string, OptionValue>;

// 4 leaves of 4 NPUs, 4 spines, 1:1, 50 GB/s and 500 ns everywhere.
Topology leaf_spine16() {
  return parse_topology("shape: FatTree\nleaves: 4\nnpus_per_leaf: 4\nspines: 4\nbandwidth: 50GB/s\nlatency: 500ns\n",
                        "ls16.yml");
}

struct Incast {
  Time last = 0;
  std::uint64_t drops = 0, pauses = 0, cnps = 0, resent = 0;
};

// 0 when the backend keeps no such counter.
std::uint64_t counter_or_zero(const Network& net, const std::string& name) {
  for (const auto& [k, v] : net.counters()) {
    if (k == name) return v;
  }
  return 0;
}

// Every NPU but 0 sends `bytes` to NPU 0 at time 0.
Incast incast(const std::string& backend, Options options, std::uint64_t bytes) {
  const Topology t = leaf_spine16();
  EventQueue q;
  Recorder r(q);
  NetworkConfig c;
  c.backend = backend;
  c.options = std::move(options);
  auto net = make_network(c, t, q);
  for (NodeId s = 1; s < kNpus; ++s) net->send(s, 0, bytes, r.to(s));
  q.run();
  EXPECT_EQ(r.seen.size(), kNpus - 1) << backend;
  Incast out;
  out.last = r.seen.empty() ? 0 : r.seen.back().at;
  for (const LinkUsage& u : net->link_usage()) {
    out.drops += u.drops;
    out.pauses += u.pauses_received;
  }
  out.cnps = counter_or_zero(*net, "CNP transmissions (all hops)");
  out.resent = counter_or_zero(*net, "retransmitted packets");
  return out;
}

Options with_roce(Options extra) {
  extra["transport"] = {"roce", "test"};
  return extra;
}

TEST(Ns3RoceLeafSpine, IncastIsLosslessAtTheBottleneckBoundAndLossyWithoutPfc) {
  SKIP_WITHOUT_NS3();
  const std::uint64_t bytes = 2 * kMiB;
  // Every frame through the one port into NPU 0, plus the nearest senders' two 500 ns hops.
  const double bound_ps = (kNpus - 1) * wire_bytes(bytes) / 50e9 * 1e12 + 2 * 500e3;
  const Incast pfc = incast("ns3", with_roce({{"dcqcn", {"false", "test"}}}), bytes);
  EXPECT_EQ(pfc.drops, 0u);
  EXPECT_GT(pfc.pauses, 0u);
  EXPECT_EQ(pfc.resent, 0u);
  EXPECT_GE(static_cast<double>(pfc.last), bound_ps);
  EXPECT_LE(static_cast<double>(pfc.last), 1.05 * bound_ps);

  const Incast lossy = incast(
      "ns3", with_roce({{"pfc", {"false", "test"}}, {"dcqcn", {"false", "test"}}, {"buffer_size", {"1MB", "test"}}}),
      bytes);
  EXPECT_GT(lossy.drops, 0u);
  EXPECT_GT(lossy.resent, 0u);
  EXPECT_EQ(lossy.pauses, 0u);
  EXPECT_GT(lossy.last, pfc.last);

  const Incast flow = incast("flow", {}, bytes);
  EXPECT_LE(std::abs(static_cast<double>(pfc.last) / static_cast<double>(flow.last) - 1), 0.10);
  std::printf(
      "[roce] 15-to-1 incast of 2 MiB on a 16-NPU leaf-spine: bound %.1f us; PFC alone %.1f us (%+.2f%%), "
      "%llu pauses, 0 drops; no PFC with 1 MB buffers %.1f us, %llu drops, %llu packets resent; flow %.1f us\n",
      bound_ps / 1e6, to_us(pfc.last), 100 * (static_cast<double>(pfc.last) / bound_ps - 1),
      static_cast<unsigned long long>(pfc.pauses), to_us(lossy.last), static_cast<unsigned long long>(lossy.drops),
      static_cast<unsigned long long>(lossy.resent), to_us(flow.last));
}

// With DCQCN on as well (the default) the incast stays lossless; at 2 MiB per
// sender DCQCN's cuts cost nothing measurable (docs/network.md has the 63-to-1
// case, where they do).
TEST(Ns3RoceLeafSpine, DcqcnIncastStaysLossless) {
  SKIP_WITHOUT_NS3();
  const std::uint64_t bytes = 2 * kMiB;
  const double bound_ps = (kNpus - 1) * wire_bytes(bytes) / 50e9 * 1e12 + 2 * 500e3;
  const Incast dcqcn = incast("ns3", with_roce({}), bytes);
  EXPECT_EQ(dcqcn.drops, 0u);
  EXPECT_GT(dcqcn.cnps, 0u);
  EXPECT_LE(static_cast<double>(dcqcn.last), 1.05 * bound_ps);
  std::printf(
      "[roce] 15-to-1 incast of 2 MiB with PFC and DCQCN: %.1f us (%+.2f%% over the bound), %llu pauses, "
      "%llu CNPs, 0 drops\n",
      to_us(dcqcn.last), 100 * (static_cast<double>(dcqcn.last) / bound_ps - 1),
      static_cast<unsigned long long>(dcqcn.pauses), static_cast<unsigned long long>(dcqcn.cnps));
}

}  // namespace
}  // namespace sim
