// A Kineto device trace as `sim workload import pytorch --kineto` reads it:
// recorded_rank (the file's rank, from its head) and read_kineto_trace, then
// linked to a host trace made here of one operator per Kineto operator (its
// Record function id as rf_id), so that link_traces (duplicated and dangling
// ids), the process groups of distributedInfo.pg_config and build_rank_graph
// all see the fuzzed events.
#include "fuzz/harness.h"
#include "fuzz/pytorch_input_file.h"
#include "workload/pytorch/comm_ops.h"
#include "workload/pytorch/graph_builder.h"
#include "workload/pytorch/kineto_trace.h"
#include "workload/pytorch/process_group_sources.h"
#include "workload/pytorch/trace_linker.h"
#include "workload/pytorch/trace_rank.h"
#include "workload/rank_graph.h"

namespace {

sim::pytorch::HostTrace host_of(const sim::pytorch::KinetoTrace& kineto) {
  using sim::pytorch::HostOp;
  sim::pytorch::HostTrace host;
  host.path = "host.json";
  host.schema = sim::pytorch::kNewestSchema;
  HostOp root;
  root.id = 1;
  root.parent = 1;
  root.name = "[pytorch|profiler|execution_trace|process]";
  host.ops.push_back(root);
  std::uint64_t id = 2;
  for (const sim::pytorch::KinetoOp& k : kineto.ops) {
    if (!k.has_rf_id) continue;
    HostOp op;
    op.id = id++;
    op.parent = 1;
    op.name = k.name;
    op.rf_id = k.rf_id;
    op.has_rf_id = true;
    host.ops.push_back(std::move(op));
  }
  return host;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  using namespace sim::pytorch;
  if (fuzz::too_large_to_fuzz(data, size)) return 0;
  const fuzz::InputFile file(data, size, "kineto.json");
  fuzz::expect_clean("kineto_json", [&] { (void)recorded_rank(file.path()); });
  fuzz::expect_clean("kineto_json", [&] {
    const KinetoTrace kineto = read_kineto_trace(file.path(), 0);
    const HostTrace host = host_of(kineto);
    const TraceLinks links = link_traces(host, &kineto, 0);
    CommExtraction comm = extract_comm_ops(host, links, 0);
    const RankGroups groups = rank_groups(host, &kineto, 0);
    GroupInference inferred;
    assign_groups(comm.ops, groups, host, links, &kineto, 0, inferred);
    BuildStats stats;
    const EtTrace et = build_rank_graph(host, &kineto, links, comm, groups, 0, stats);
    RankGraph graph(et, 0, GraphOptions{true, true, false});
  });
  return 0;
}
