// Exact step aggregation on the flow backend (system/runner/aggregation/
// flow_carrier.h): random small workloads give the same reports, link
// statistics and timelines with and without it, and it does happen where
// every flow is alone on its links (so the comparison is not vacuous).
#include <gtest/gtest.h>

#include <cstdio>

#include "network/flow/flow_network.h"
#include "random_workloads.h"

namespace sim {
namespace {

using testing::Case;
using testing::Outputs;
using testing::random_case;

using FlowAggregationProperty = testing::AggregationRuns;

TEST_F(FlowAggregationProperty, RandomWorkloadsAreIdenticalWithAndWithout) {
  std::mt19937_64 rng(20261127);
  std::uint64_t aggregated = 0;
  int cases_aggregated = 0, nic_aggregated = 0, spare_aggregated = 0;
  constexpr int kCases = 300;
  for (int i = 0; i < kCases; ++i) {
    const Case c = random_case(rng, i, /*flow_only=*/true);
    SCOPED_TRACE(c.name);
    const std::uint64_t n = same_with_and_without(c);
    aggregated += n;
    cases_aggregated += n > 0 ? 1 : 0;
    if (c.config.network.options.count("nic_bandwidth") && n > 0) ++nic_aggregated;
    if (c.name.find("spare NPUs") != std::string::npos && n > 0) ++spare_aggregated;
  }
  // Not vacuous: many cases aggregated collectives on the flow backend, with a NIC cap too.
  EXPECT_GT(cases_aggregated, kCases / 6);
  EXPECT_GT(aggregated, 80u);
  EXPECT_GT(nic_aggregated, 0);
  EXPECT_GT(spare_aggregated, 0);  // on switches with NPUs that host no rank
  std::printf("flow backend: aggregated %llu collectives in %d of %d cases (%d with a NIC cap, %d with spare NPUs)\n",
              static_cast<unsigned long long>(aggregated), cases_aggregated, kCases, nic_aggregated, spare_aggregated);
}

SystemConfig flow_config(std::uint32_t chunks, bool aggregate) {
  SystemConfig config;
  config.network.backend = "flow";
  config.collective_chunks = chunks;
  config.aggregation = aggregate;
  return config;
}

// A ring all-reduce on a switch: every flow alone on its NPU's up and down
// links, so aggregated, and equal to the per-message run and to the
// analytical backend (a message alone on its route costs what it charges; the
// ring's only peer is the next rank, so the pair FIFO is the egress rule).
TEST(FlowAggregation, RingOnASwitchIsAggregatedAndEqualsEveryMessage) {
  const Topology sw = testing::shape("Switch", 16);
  for (const std::uint32_t chunks : {1u, 4u}) {
    SCOPED_TRACE(chunks);
    const SimulationResult with =
        testing::simulate_collective(sw, CollectiveType::kAllReduce, 1 << 24, flow_config(chunks, true));
    const SimulationResult without =
        testing::simulate_collective(sw, CollectiveType::kAllReduce, 1 << 24, flow_config(chunks, false));
    SystemConfig analytical;
    analytical.collective_chunks = chunks;
    analytical.aggregation = false;
    const SimulationResult closed = testing::simulate_collective(sw, CollectiveType::kAllReduce, 1 << 24, analytical);
    EXPECT_EQ(with.aggregated_collectives, 1u);
    EXPECT_EQ(without.aggregated_collectives, 0u);
    EXPECT_EQ(with.makespan, without.makespan);
    EXPECT_EQ(with.makespan, closed.makespan);
    EXPECT_EQ(with.messages, without.messages);
    EXPECT_LT(with.events, without.events / 4);
    ASSERT_EQ(with.links.size(), without.links.size());
    for (std::size_t l = 0; l < with.links.size(); ++l) {
      EXPECT_EQ(with.links[l].usage.bytes, without.links[l].usage.bytes) << "link " << l;
      EXPECT_EQ(with.links[l].usage.busy, without.links[l].usage.busy) << "link " << l;
      EXPECT_EQ(with.links[l].usage.peak_flows, without.links[l].usage.peak_flows) << "link " << l;
    }
  }
}

// Where flows would share a link, or something else could, every message is
// simulated (and the results are those of --no-aggregation).
TEST(FlowAggregation, OnlyWhereEveryFlowIsAlone) {
  const Topology sw = testing::shape("Switch", 8);
  auto both = [&](const SystemConfig& config, const std::vector<EtTrace>& traces,
                  const std::map<std::string, std::vector<std::uint32_t>>& groups = {}) {
    SystemConfig off = config;
    off.aggregation = false;
    SimulationOptions a, b;
    a.comm_groups = groups;
    b.comm_groups = groups;
    const SimulationResult with = testing::simulate(traces, sw, config, std::move(a));
    const SimulationResult without = testing::simulate(traces, sw, off, std::move(b));
    EXPECT_EQ(with.makespan, without.makespan);
    EXPECT_EQ(with.messages, without.messages);
    return with.aggregated_collectives;
  };
  const auto all = testing::make_traces(8, [](int) {
    return std::vector<et::Node>{testing::coll_node(1, CollectiveType::kAllReduce, 1 << 20)};
  });
  EXPECT_EQ(both(flow_config(4, true), all), 1u);
  // Messages of one pair sharing links (pair_order: shared) with 4 chunks in flight.
  SystemConfig shared = flow_config(4, true);
  shared.network.options["pair_order"] = OptionValue{"shared", "test"};
  EXPECT_EQ(both(shared, all), 0u);
  // A NIC cap with a single chunk: one flow per NIC link at a time, aggregated.
  SystemConfig nic = flow_config(1, true);
  nic.network.options["nic_bandwidth"] = OptionValue{"20GB/s", "test"};
  EXPECT_EQ(both(nic, all), 1u);
  // Fewer ranks than NPUs: the spare NPUs send nothing.
  const auto four = testing::make_traces(4, [](int) {
    return std::vector<et::Node>{testing::coll_node(1, CollectiveType::kAllReduce, 1 << 20)};
  });
  EXPECT_EQ(both(flow_config(4, true), four), 1u);
  // A pair's all-reduce after every other rank has finished: aggregated (with the world's before it).
  const auto tail = testing::make_traces(8, [](int r) {
    std::vector<et::Node> nodes{testing::coll_node(1, CollectiveType::kAllReduce, 1 << 20)};
    if (r < 2) {
      et::Node n = testing::coll_node(2, CollectiveType::kAllReduce, 1 << 20);
      n.add_data_deps(1);
      set_attr_string(n, "pg_name", "pair0");
      nodes.push_back(n);
    }
    return nodes;
  });
  EXPECT_EQ(both(flow_config(1, true), tail, {{"pair0", {0, 1}}}), 2u);
  // Groups that leave NPUs out while the other groups run: their traffic could cross the links.
  const auto pairs = testing::make_traces(8, [](int r) {
    et::Node n = testing::coll_node(1, CollectiveType::kAllReduce, 1 << 20);
    set_attr_string(n, "pg_name", "pair" + std::to_string(r / 2));
    return std::vector<et::Node>{n};
  });
  std::map<std::string, std::vector<std::uint32_t>> groups;
  for (std::uint32_t g = 0; g < 4; ++g) groups["pair" + std::to_string(g)] = {2 * g, 2 * g + 1};
  EXPECT_EQ(both(flow_config(1, true), pairs, groups), 0u);
}

// What aggregation asks of the flow backend: a message taken back leaves no
// trace, and a batch recorded leaves the links as the messages sent one by one.
TEST(FlowAggregation, TakeBackAndRecordBatchLeaveTheLinksAsMessagesWould) {
  const Topology sw = testing::shape("Switch", 4);
  struct Sink final : EventHandler {
    void on_event(const Event&) override { ++delivered; }
    int delivered = 0;
  } sink;
  EventQueue q1, q2;
  FlowNetwork sent(sw, q1), batched(sw, q2);
  for (int i = 0; i < 3; ++i) sent.send(0, 1, 1000 + i, Delivery{&sink, 0, 0});
  q1.run();
  EXPECT_EQ(sink.delivered, 3);
  // Sent, taken back (last first: two wait in the pair's queue), then recorded.
  for (int i = 0; i < 3; ++i) batched.send(0, 1, 1000 + i, Delivery{&sink, 0, 0});
  EXPECT_EQ(batched.messages_in_network(), 3u);
  for (int i = 2; i >= 0; --i) batched.take_back(0, 1, 0, 1000 + i);
  EXPECT_EQ(batched.messages_in_network(), 0u);
  EXPECT_EQ(batched.messages_sent(), 0u);
  const FlowNetwork::SoloRoute route = batched.solo_route(0, 1, 0);
  Time busy = 0;
  for (int i = 0; i < 3; ++i) busy += FlowNetwork::drain_time(1000 + i, route.bottleneck);
  batched.record_batch(0, 1, 0, 3, 3003, busy);
  q2.run();
  EXPECT_EQ(sink.delivered, 3);  // the taken-back messages were never delivered
  EXPECT_EQ(batched.messages_sent(), sent.messages_sent());
  const auto a = sent.link_usage(), b = batched.link_usage();
  for (std::size_t l = 0; l < a.size(); ++l) {
    EXPECT_EQ(a[l].bytes, b[l].bytes) << "link " << l;
    EXPECT_EQ(a[l].busy, b[l].busy) << "link " << l;
    EXPECT_EQ(a[l].peak_flows, b[l].peak_flows) << "link " << l;
  }
  // 1 kB at 50 GB/s: 20 ns on each of the route's two links.
  EXPECT_EQ(FlowNetwork::drain_time(1000, 50'000'000'000), 20'000);
  EXPECT_EQ(route.links.size(), 2u);
}

}  // namespace
}  // namespace sim
