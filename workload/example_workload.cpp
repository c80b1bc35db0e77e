#include "workload/example_workload.h"

#include <string>

namespace sim {

const char* const kExampleTopologyYaml =
    "# 8 NPUs on a bidirectional ring, 50 GB/s and 500 ns per link (Fig. 4 of Yoo et al., IEEE Micro 2025)\n"
    "shape: Ring\n"
    "dims: [8]\n"
    "bandwidth: 50GB/s\n"
    "latency: 500ns\n";

std::vector<EtTrace> example_workload(int ranks) {
  constexpr int kLayers = 4;
  constexpr std::uint64_t kForwardMicros[kLayers] = {120, 180, 180, 90};
  constexpr std::uint64_t kGradientBytes[kLayers] = {16ull << 20, 32ull << 20, 32ull << 20, 8ull << 20};
  std::vector<EtTrace> traces(ranks);
  for (int r = 0; r < ranks; ++r) {
    EtTrace& t = traces[r];
    t.path = "example." + std::to_string(r) + ".et";
    t.metadata.set_version("0.0.4");  // never an empty frame 0
    std::uint64_t id = 1;
    std::uint64_t prev = 0;
    auto comp = [&](const std::string& name, std::uint64_t micros) {
      et::Node n;
      n.set_id(id++);
      n.set_name(name);
      n.set_type(et::COMP_NODE);
      n.set_duration_micros(micros);
      set_attr_bool(n, "is_cpu_op", false);
      if (prev) n.add_data_deps(prev);
      prev = n.id();
      t.nodes.push_back(n);
    };
    for (int l = 0; l < kLayers; ++l) comp("forward.layer" + std::to_string(l), kForwardMicros[l]);
    for (int l = kLayers - 1; l >= 0; --l) {
      comp("backward.layer" + std::to_string(l), 2 * kForwardMicros[l]);
      et::Node ar;
      ar.set_id(id++);
      ar.set_name("all_reduce.grad.layer" + std::to_string(l));
      ar.set_type(et::COMM_COLL_NODE);
      set_attr_bool(ar, "is_cpu_op", false);
      set_attr_int(ar, "comm_type", 0);  // ALL_REDUCE
      set_attr_int(ar, "comm_size", static_cast<std::int64_t>(kGradientBytes[l]));
      ar.add_data_deps(prev);
      t.nodes.push_back(ar);
    }
  }
  return traces;
}

}  // namespace sim
