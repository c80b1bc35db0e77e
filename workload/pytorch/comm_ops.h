// Communication in a host trace, for any backend:
//  - `c10d::*` operators (what torch.distributed calls; gloo writes nothing
//    else): collective type and bytes from the operator's own tensor
//    arguments, peers and tags of send / recv, async_op;
//  - `record_param_comms` (NCCL's record, under the c10d operator or alone):
//    the collective name and the process group (a pg_name, or in 1.0.x
//    traces the backend id that `## process_group:init ##` lists);
//  - `_c10d_functional::*` (functional collectives): the group name argument;
//  - the backend's own work record (`gloo:*`, `nccl:*`): which worker thread
//    ran it (process_group_sources.h uses that for gloo's unnamed groups).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workload/pytorch/host_trace.h"
#include "workload/pytorch/trace_linker.h"
#include "workload/rank_graph.h"

namespace sim::pytorch {

enum class CommKind : std::uint8_t { kCollective, kSend, kRecv };

struct CommOp {
  std::size_t op = 0;  // host op index (the c10d / functional operator, or a lone record_param_comms)
  CommKind kind = CommKind::kCollective;
  CollectiveType coll = CollectiveType::kAllReduce;
  std::uint64_t bytes = 0;  // Chakra's comm_size: the buffer; ALL_GATHER / GATHER: one rank's input
  std::string pg_name;      // "" while unknown
  std::string pg_source;    // where pg_name came from (for messages): "record_param_comms", ...
  std::int64_t backend_id = -1;  // record_param_comms of 1.0.x traces: the group's backend id
  std::int64_t peer = -1;   // send / recv: the peer's rank within the group
  std::int64_t tag = 0;
  std::optional<bool> async_op;
  std::int32_t work_op = -1;  // host op index of the backend's work record (gloo:* / nccl:*), -1 if none
  std::string backend;        // "gloo", "nccl" when a work record says
};

struct CommExtraction {
  std::vector<CommOp> ops;        // in rf_id (issue) order
  std::vector<bool> in_comm;      // per host op: the op is a communication record or inside one
  Unlinked unsupported;           // c10d operators the importer does not know (kept as CPU time)
};

// `rank` and the path only name things in messages. Throws InputError (file,
// rank, op id, field) for a known collective whose arguments are not what its
// schema says (no tensor list where the bytes are, a peer that is not an int).
CommExtraction extract_comm_ops(const HostTrace& host, const TraceLinks& links, int rank);

// "ALL_REDUCE" for logs.
std::string describe_comm(const CommOp& c);

}  // namespace sim::pytorch
