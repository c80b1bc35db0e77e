// Random small workloads for exact step aggregation's property tests
// (aggregation_property_test.cpp, flow_aggregation_test.cpp), and running one
// with or without aggregation into its reports, link statistics and timeline.
#pragma once

#include <map>
#include <random>
#include <string>
#include <vector>

#include "report/report.h"
#include "report/timeline_writer.h"
#include "tests/common/temp_folder.h"
#include "stable_reports.h"
#include "tests/system/test_util.h"

namespace sim::testing {

struct Case {
  std::string topology;  // YAML
  std::string name;      // for failure messages
  SystemConfig config;
  std::map<std::string, std::vector<std::uint32_t>> groups;
  std::vector<EtTrace> traces;
};

inline et::Node with_deps(et::Node n, std::vector<std::uint64_t> deps, const std::string& pg = "") {
  for (auto d : deps) n.add_data_deps(d);
  if (!pg.empty()) set_attr_string(n, "pg_name", pg);
  return n;
}

// One random workload. `symmetric` keeps every rank identical (so many
// collectives are aggregated); otherwise late ranks, uneven sizes,
// sub-groups and point-to-point traffic break symmetry in places.
inline Case random_case(std::mt19937_64& rng, int index, bool flow_only = false) {
  auto pick = [&](std::uint64_t n) { return static_cast<std::uint64_t>(rng() % n); };
  Case c;
  static const char* kShapes[] = {"Switch", "Ring", "FullyConnected", "Torus"};
  const std::string shape = kShapes[pick(4)];
  std::uint32_t n;
  std::string dims;
  if (shape == "Torus") {
    const std::uint32_t a = 2 + static_cast<std::uint32_t>(pick(2)), b = 2 + static_cast<std::uint32_t>(pick(2));
    n = a * b;
    dims = "[" + std::to_string(a) + ", " + std::to_string(b) + "]";
  } else {
    static const std::uint32_t kSizes[] = {2, 3, 4, 6, 8};
    n = kSizes[pick(5)];
    dims = "[" + std::to_string(n) + "]";
  }
  static const char* kBw[] = {"50GB/s", "100GB/s", "25GB/s"};
  static const char* kLat[] = {"500ns", "1us", "0ns", "700ns"};
  std::string spare;  // NPUs that host no rank (flow_only: half the time on a switch)
  if (flow_only && shape == "Switch" && pick(2) == 0) {
    const std::uint32_t extra = 1 + static_cast<std::uint32_t>(pick(3));
    dims = "[" + std::to_string(n + extra) + "]";
    spare = ", " + std::to_string(extra) + " spare NPUs";
  }
  c.topology = "shape: " + shape + "\ndims: " + dims + "\nbandwidth: " + kBw[pick(3)] + "\nlatency: " + kLat[pick(4)] + "\n";
  c.config.collective_chunks = static_cast<std::uint32_t>(1 + pick(4));
  const int backend = flow_only ? 3 : static_cast<int>(pick(4));  // 0, 1: analytical; 2: analytical overlap; 3: flow
  if (backend == 2) c.config.network.options["egress"] = OptionValue{"overlap", "test"};
  if (backend == 3) c.config.network.backend = "flow";
  std::string flow_options;
  if (flow_only) {  // the flow backend's options: a per-NPU cap (every route shares its NIC links), pair order
    if (pick(4) == 0) {
      c.config.network.options["nic_bandwidth"] = OptionValue{"60GB/s", "test"};
      flow_options += ", nic 60GB/s";
    }
    if (pick(6) == 0) {
      c.config.network.options["pair_order"] = OptionValue{"shared", "test"};
      flow_options += ", pairs shared";
    }
  }
  if (pick(4) == 0) c.config.endpoint_delay = 10 * kNanosecond;
  if (pick(4) == 0) {
    c.config.reduction_bandwidth = 200'000'000'000;
  } else if (pick(4) == 0) {  // ASTRA-sim's system semantics: splits, one or all at a time, its reduction model
    c.config.dataset_splits = static_cast<std::uint32_t>(1 + pick(3));
    c.config.active_chunks = static_cast<std::uint32_t>(pick(2));
    c.config.local_reduction = 1'600'000'000'000;
    c.config.astrasim_quirks = pick(2) == 0;
  }
  const bool symmetric = pick(2) == 0;
  const bool use_groups = n % 2 == 0 && pick(3) == 0;
  if (use_groups) {
    for (std::uint32_t g = 0; g < n / 2; ++g) c.groups["pair" + std::to_string(g)] = {2 * g, 2 * g + 1};
  }
  const int layers = 2 + static_cast<int>(pick(4));
  struct Layer {
    std::uint64_t compute_us;
    CollectiveType type;
    std::uint64_t bytes;
    bool p2p;
    bool in_pairs;
    std::uint32_t late_rank;
    std::uint64_t late_us;
  };
  static const CollectiveType kTypes[] = {CollectiveType::kAllReduce, CollectiveType::kReduceScatter,
                                          CollectiveType::kAllGather, CollectiveType::kAllToAll};
  static const std::uint64_t kBytes[] = {1 << 20, 1 << 16, 3 << 14, 1000003, 4096, 1 << 22, 96};
  std::vector<Layer> plan;
  for (int l = 0; l < layers; ++l) {
    Layer L;
    L.compute_us = pick(3) * 5;
    L.type = kTypes[pick(4)];
    L.bytes = kBytes[pick(7)];
    L.p2p = !symmetric && pick(3) == 0;
    L.in_pairs = use_groups && pick(2) == 0;
    L.late_rank = symmetric || pick(2) == 0 ? n : static_cast<std::uint32_t>(pick(n));
    L.late_us = 1 + pick(3);
    plan.push_back(L);
  }
  c.traces = make_traces(static_cast<int>(n), [&](int r) {
    std::vector<et::Node> nodes;
    std::uint64_t id = 1, last = 0;
    int layer = 0;
    for (const Layer& L : plan) {
      ++layer;
      const std::uint64_t us = L.compute_us + (static_cast<std::uint32_t>(r) == L.late_rank ? L.late_us : 0);
      std::vector<std::uint64_t> deps;
      if (last) deps.push_back(last);
      nodes.push_back(comp_node(id, us, deps));  // (0 us: completes at once)
      deps = {id};
      ++id;
      const std::uint64_t coll = id++;
      nodes.push_back(with_deps(coll_node(coll, L.type, L.bytes), deps,
                                L.in_pairs ? "pair" + std::to_string(static_cast<std::uint32_t>(r) / 2) : ""));
      if (L.p2p) {  // to the next rank, alongside the collective (same start, same links)
        const int next = (r + 1) % static_cast<int>(n), prev = (r + static_cast<int>(n) - 1) % static_cast<int>(n);
        nodes.push_back(p2p_node(id, true, next, L.bytes / 2 + 1, layer, deps));
        nodes.push_back(p2p_node(id + 1, false, prev, L.bytes / 2 + 1, layer, deps));
        const std::uint64_t join = id + 2;
        nodes.push_back(with_deps(comp_node(join, 0), {coll, id, id + 1}));
        id += 3;
        last = join;
      } else {
        last = coll;
      }
    }
    return nodes;
  });
  c.name = "case " + std::to_string(index) + ": " + shape + " " + dims + ", " + std::to_string(layers) +
           " layers, chunks " + std::to_string(c.config.collective_chunks) + ", backend " + std::to_string(backend) +
           (symmetric ? ", symmetric" : "") + (use_groups ? ", pairs" : "") +
           (c.config.dataset_splits > 0 ? ", ASTRA-sim splits" : "") + flow_options + spare;
  return c;
}

struct Outputs {
  std::string json, csv, links, timeline;
  std::uint64_t aggregated = 0;
};

class AggregationRuns : public testing::TempFolderTest {
 protected:
  Outputs run(const Case& c, bool aggregate, const std::string& tag) {
    const Topology topo = parse_topology(c.topology, "test");
    SystemConfig config = c.config;
    config.aggregation = aggregate;
    SimulationOptions options;
    options.comm_groups = c.groups;
    const std::string timeline = path("t-" + tag + ".pftrace");
    TimelineWriter writer(timeline, TimelineFormat::kPerfetto);
    options.timeline = &writer;
    SimulationResult r = testing::simulate(c.traces, topo, config, std::move(options));
    writer.finish();
    Outputs out;
    out.aggregated = r.aggregated_collectives;
    const testing::StableReports reports =
        testing::stable_reports(r, RunInfo{"random", topo.description(), c.config.network.backend, 0, 0});
    out.json = reports.json;
    out.csv = reports.csv;
    out.links = reports.links;
    out.timeline = read(timeline);
    return out;
  }
  // Runs `c` with and without aggregation, expects the same outputs, and
  // returns how many collectives the aggregated run advanced as one.
  std::uint64_t same_with_and_without(const Case& c) {
    const Outputs with = run(c, true, "with");
    const Outputs without = run(c, false, "without");
    EXPECT_EQ(without.aggregated, 0u);
    EXPECT_EQ(with.json, without.json);
    EXPECT_EQ(with.csv, without.csv);
    EXPECT_EQ(with.links, without.links);
    EXPECT_TRUE(with.timeline == without.timeline) << "timelines differ";
    return with.aggregated;
  }
};

}  // namespace sim::testing
