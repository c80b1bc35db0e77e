// Process groups of one rank, and the group of each communication op.
//
// Groups come from Kineto's distributedInfo.pg_config (explicit ranks) and the
// host trace's `## process_group:init ##` record (ranks [] = every rank; in
// 1.0.x traces also each group's backend_id, which 1.0.x record_param_comms
// names instead of pg_name). They are written into the imported ETs as a
// METADATA node, so sim's one process-group rule applies (docs/traces.md).
//
// An op whose record does not name its group (gloo: c10d passes the group as
// an opaque object) gets it, in order:
//  1. the rank's only group, when it has one;
//  2. gloo: the worker thread that ran its work record. ProcessGroupGloo gives
//     each group instance its own `pt_gloo_runloop` threads, started when the
//     group is created; groups are created in pg_name order, so the threads'
//     ids, sorted and cut at their largest gaps, fall into the groups in that
//     order;
//  3. otherwise the default group "0", counted in a warning.
// The importer then checks every group across ranks (same count, types and
// bytes on each member) and warns, naming the group, where they differ.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workload/pytorch/comm_ops.h"
#include "workload/pytorch/host_trace.h"
#include "workload/pytorch/kineto_trace.h"
#include "workload/pytorch/trace_linker.h"

namespace sim::pytorch {

struct PgDef {
  std::string name;
  std::vector<std::int64_t> ranks;  // empty: every rank
  std::string desc;
  std::int64_t backend_id = -1;
};

struct RankGroups {
  std::vector<PgDef> groups;  // creation order (numeric pg_name ascending)
  std::string source;         // "Kineto distributedInfo.pg_config", "host process_group:init", ""
};

// Throws InputError (file, rank, field) when a pg record is not the JSON list
// of objects PyTorch writes.
RankGroups rank_groups(const HostTrace& host, const KinetoTrace* kineto, int rank);

struct GroupInference {
  std::size_t by_backend_id = 0, only_group = 0, by_thread = 0, by_default = 0;
};

// Fills pg_name of ops that have none (see above). Throws InputError when a
// named group is not one the rank's records define.
void assign_groups(std::vector<CommOp>& ops, const RankGroups& groups, const HostTrace& host, const TraceLinks& links,
                   const KinetoTrace* kineto, int rank, GroupInference& counts);

// The METADATA node's inputs.values: a JSON list of {"pg_name", "ranks", "pg_desc"}.
std::string metadata_values(const RankGroups& groups);

}  // namespace sim::pytorch
