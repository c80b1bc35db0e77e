// Helpers shared by system tests: build workloads in memory and run them.
#pragma once

#include <string>
#include <vector>

#include "network/topology.h"
#include "system/runner/simulation.h"
#include "workload/et/et_io.h"

namespace sim::testing {

inline std::string source_dir() { return SIM_SOURCE_DIR; }
inline std::string testdata(const std::string& rel) { return source_dir() + "/../shared/testdata/" + rel; }

inline Topology shape(const std::string& name, std::uint32_t n, const std::string& bw = "50GB/s",
                      const std::string& lat = "500ns") {
  return parse_topology("shape: " + name + "\ndims: [" + std::to_string(n) + "]\nbandwidth: " + bw +
                            "\nlatency: " + lat + "\n",
                        "test-" + name);
}

// configs/ring8.yml: 8 NPUs on a ring of 50 GB/s, 500 ns links.
inline Topology ring8() { return load_topology(source_dir() + "/configs/ring8.yml"); }

// shape()'s links by default: 50 GB/s and 500 ns.
inline constexpr BytesPerSecond kBw = 50'000'000'000;
inline constexpr Time kLat = 500 * kNanosecond;

// A message's time on one such link, its latency aside.
inline Time tt(std::uint64_t bytes) { return transfer_time(bytes, kBw); }

// One ring phase of `steps` steps of m bytes each on such links (one chunk, one hop per step).
inline Time ring_phase(std::uint32_t steps, std::uint64_t m) { return steps * (kLat + transfer_time(m, kBw)); }

// A config that runs on `backend`, each collective in `chunks` chunks.
inline SystemConfig on(const std::string& backend, std::uint32_t chunks = 1) {
  SystemConfig c;
  c.network.backend = backend;
  c.collective_chunks = chunks;
  return c;
}

inline et::Node coll_node(std::uint64_t id, CollectiveType type, std::uint64_t bytes) {
  et::Node n;
  n.set_id(id);
  n.set_name("coll");
  n.set_type(et::COMM_COLL_NODE);
  set_attr_bool(n, "is_cpu_op", false);
  set_attr_int(n, "comm_type", static_cast<int>(type));
  set_attr_int(n, "comm_size", static_cast<std::int64_t>(bytes));
  return n;
}

inline et::Node comp_node(std::uint64_t id, std::uint64_t micros, std::vector<std::uint64_t> deps = {}) {
  et::Node n;
  n.set_id(id);
  n.set_name("comp");
  n.set_type(et::COMP_NODE);
  n.set_duration_micros(micros);
  for (auto d : deps) n.add_data_deps(d);
  return n;
}

inline et::Node p2p_node(std::uint64_t id, bool send, int peer, std::uint64_t bytes, int tag = 0,
                         std::vector<std::uint64_t> deps = {}) {
  et::Node n;
  n.set_id(id);
  n.set_name(send ? "send" : "recv");
  n.set_type(send ? et::COMM_SEND_NODE : et::COMM_RECV_NODE);
  set_attr_int(n, send ? "comm_dst" : "comm_src", peer);
  set_attr_int(n, "comm_size", static_cast<std::int64_t>(bytes));
  set_attr_int(n, "comm_tag", tag);
  for (auto d : deps) n.add_data_deps(d);
  return n;
}

// One trace per rank; `per_rank(r)` gives rank r's nodes.
template <typename F>
std::vector<EtTrace> make_traces(int ranks, F&& per_rank) {
  std::vector<EtTrace> traces(ranks);
  for (int r = 0; r < ranks; ++r) {
    traces[r].path = "mem." + std::to_string(r) + ".et";
    traces[r].metadata.set_version("0.0.4");
    traces[r].nodes = per_rank(r);
  }
  return traces;
}

inline SimulationResult simulate(const std::vector<EtTrace>& traces, const Topology& topo,
                                 const SystemConfig& config = {}, SimulationOptions options = {},
                                 GraphOptions graph = {}) {
  std::vector<RankGraph> graphs;
  for (std::size_t r = 0; r < traces.size(); ++r) graphs.emplace_back(traces[r], static_cast<int>(r), graph);
  Simulation s(std::move(graphs), topo, config, std::move(options));
  return s.run();
}

inline SimulationResult simulate_collective(const Topology& topo, CollectiveType type, std::uint64_t bytes,
                                            const SystemConfig& config = {}) {
  const auto traces = make_traces(static_cast<int>(topo.npu_count()),
                                  [&](int) { return std::vector<et::Node>{coll_node(1, type, bytes)}; });
  return simulate(traces, topo, config);
}

}  // namespace sim::testing
