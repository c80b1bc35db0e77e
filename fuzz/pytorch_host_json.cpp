// A PyTorch host execution trace as `sim workload import pytorch --host-et`
// reads it without a device trace: read_host_trace -> link_traces (ctrl_deps
// checked as a tree: dangling parents, self-parents, cycles) ->
// extract_comm_ops -> rank_groups / assign_groups -> build_rank_graph ->
// RankGraph (what `--workload pytorch:DIR` runs).
#include "fuzz/harness.h"
#include "fuzz/pytorch_input_file.h"
#include "workload/pytorch/comm_ops.h"
#include "workload/pytorch/graph_builder.h"
#include "workload/pytorch/host_trace.h"
#include "workload/pytorch/process_group_sources.h"
#include "workload/pytorch/trace_linker.h"
#include "workload/rank_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  using namespace sim::pytorch;
  if (fuzz::too_large_to_fuzz(data, size)) return 0;
  const fuzz::InputFile file(data, size, "host.json");
  fuzz::expect_clean("pytorch_host_json", [&] {
    const HostTrace host = read_host_trace(file.path(), 0);
    const TraceLinks links = link_traces(host, nullptr, 0);
    CommExtraction comm = extract_comm_ops(host, links, 0);
    const RankGroups groups = rank_groups(host, nullptr, 0);
    GroupInference inferred;
    assign_groups(comm.ops, groups, host, links, nullptr, 0, inferred);
    BuildStats stats;
    const EtTrace et = build_rank_graph(host, nullptr, links, comm, groups, 0, stats);
    RankGraph graph(et, 0, GraphOptions{true, true, false});
  });
  return 0;
}
