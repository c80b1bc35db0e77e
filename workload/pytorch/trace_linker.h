// Ties a rank's host trace to its device trace, the way Chakra's trace_link
// does (written from its documented behaviour, not its code):
//   host op --rf_id == "Record function id"--> Kineto operator (ts, dur, tid)
//   Kineto operator --"External id"--> the CUDA runtime calls it made
//   runtime call --"correlation"--> the GPU kernel / copy / set it launched
// A GPU activity whose launch is not recorded falls back to its own
// "External id". Whatever cannot be tied is counted (with its first names) so
// the caller reports it instead of dropping it silently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workload/pytorch/host_trace.h"
#include "workload/pytorch/kineto_trace.h"

namespace sim::pytorch {

struct Unlinked {
  std::size_t count = 0;
  std::vector<std::string> first_names;  // up to 5
  void add(const std::string& name);
  std::string describe(const std::string& what) const;  // "12 host ops without ... (first: a, b, ...)"
};

struct TraceLinks {
  std::vector<std::int32_t> parent;        // per host op: index of its ctrl_deps parent, -1 for roots
  std::vector<std::int32_t> kineto_of;     // per host op: index into kineto.ops, -1 when not found
  std::vector<std::int32_t> runtime_owner; // per runtime call: host op index, -1 when not found
  std::vector<std::int32_t> gpu_owner;     // per GPU activity: host op index, -1 when not found
  std::vector<double> gpu_launch_ts;       // per GPU activity: its launch call's ts (else its own ts)
  Unlinked host_without_device;            // host ops (not roots) Kineto does not have
  Unlinked device_without_host;            // Kineto operators with no host op
  Unlinked gpu_without_host;               // GPU activities with no launching host op
};

// True for the trace's structural records: process / thread roots.
bool is_root_op(const HostOp& op);

// Links host ops among themselves (parents) and, when `kineto` is given, to it.
// Both are checked as graphs first; `rank` names the rank in messages. Throws
// InputError naming the file, rank and ids:
//  - host trace: a ctrl_deps naming no node (dangling parent), a node that is
//    its own parent (only the process root may be), a cycle of parents (the
//    ids on it), two operators with one rf_id;
//  - Kineto trace: two operators with one "Record function id" or one
//    "External id", two runtime calls with one "correlation", a GPU activity
//    whose "correlation" names no runtime call.
// Linear in the number of ops and events.
TraceLinks link_traces(const HostTrace& host, const KinetoTrace* kineto, int rank);

}  // namespace sim::pytorch
