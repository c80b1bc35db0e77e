// JSON ETs, both forms: Chakra's legacy feeder form ({"workload_graph": ...})
// and ours ({"metadata": ..., "nodes": ...}), then the graph builder.
#include "fuzz/harness.h"
#include "workload/et/et_io.h"
#include "workload/rank_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  fuzz::expect_clean("et_json", [&] {
    const EtTrace trace = parse_et(fuzz::text_of(data, size), "fuzz.json");
    RankGraph graph(trace, 1, GraphOptions{true, true, false});
  });
  return 0;
}
