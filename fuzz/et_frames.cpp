// ET protobuf frames (plain; gzip by content too): protobuf's parser and the
// hand-written wire decoder must accept the same inputs and see the same
// nodes, and the graph builder must turn either into a graph or an error.
#include <google/protobuf/stubs/logging.h>

#include "fuzz/harness.h"
#include "workload/et/et_io.h"
#include "workload/rank_graph.h"

namespace {

struct Seen {
  bool ok = false;
  std::size_t nodes = 0;
  std::uint64_t id_sum = 0;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);  // a rejected frame is not worth a log line per run
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  const std::string bytes = fuzz::text_of(data, size);
  Seen proto, wire;
  fuzz::expect_clean("et_frames", [&] {
    const EtTrace trace = parse_et(bytes, "fuzz.et");
    proto.ok = true;
    proto.nodes = trace.nodes.size();
    for (const et::Node& n : trace.nodes) proto.id_sum += n.id();
    RankGraph graph(trace, 0, GraphOptions{true, false, false});
  });
  fuzz::expect_clean("et_frames", [&] {
    et::GlobalMetadata md;
    scan_et_wire_nodes(bytes, "fuzz.et", md, [&](const WireNode& n) {
      ++wire.nodes;
      wire.id_sum += n.id;
    });
    wire.ok = true;
  });
  if (proto.ok != wire.ok || (proto.ok && (proto.nodes != wire.nodes || proto.id_sum != wire.id_sum))) {
    std::fprintf(stderr, "et_frames: protobuf %s %zu nodes, wire decoder %s %zu nodes\n",
                 proto.ok ? "accepts" : "rejects", proto.nodes, wire.ok ? "accepts" : "rejects", wire.nodes);
    std::abort();
  }
  return 0;
}
