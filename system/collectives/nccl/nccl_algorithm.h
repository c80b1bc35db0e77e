// `nccl`: NCCL's collectives as one native algorithm.
//
//   nccl                                   NCCL's own choice per size (its tuning model)
//   nccl:algo=ring|tree|nvls|nvlstree|collnet,proto=ll|ll128|simple,channels=N,arch=sm70|sm80|sm90
//   nccl:overhead=20us                     a fixed cost per call (launch, framework), 0 in NCCL's model
//   nccl:nvls_efficiency=0.85,nvls_latency=23us   NVLS's bandwidth factor and latency (calibration)
//
// Any key left out is NCCL's choice (channels: the search's count; arch:
// sm90). The program's name says what ran: "nccl:ring/simple".
// docs/nccl.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/programs/nccl_p2p.h"
#include "system/collectives/nccl/programs/nccl_programs.h"
#include "system/collectives/nccl/model/nccl_system.h"
#include "system/collectives/nccl/model/nccl_tuner.h"
#include "system/program/collective_program.h"

namespace sim::nccl {

using Params = std::map<std::string, std::uint64_t>;

// The parameter names `nccl` accepts, and a value's code (throws InputError naming the key).
const std::vector<std::string>& param_names();
std::uint64_t param_value(const std::string& key, const std::string& value);
// The collectives `nccl` implements: ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER,
// BROADCAST, REDUCE, and ALL_TO_ALL as NCCL's grouped sends (nccl_p2p.h).
const std::vector<CollectiveType>& supported_types();

// What would run: NCCL's view, its table, the pair chosen and the step model.
struct Plan {
  NcclSystem system;
  TuneInput input;
  TuneTable table;
  Algo algo = Algo::kRing;
  Proto proto = Proto::kSimple;
  std::uint32_t channels = 0;
  double predicted_us = 0;  // NCCL's predicted time
  StepModel model;
  std::string name;  // "nccl:ring/simple"
};
// Throws InputError for a forced algorithm the group cannot run (NVLS without
// a reducing switch, ...) or one this simulator does not model yet.
Plan plan(CollectiveType type, std::uint64_t bytes, const Params& params, const AlgorithmContext& ctx);

// ALL_TO_ALL's point-to-point model from `nccl`'s keys (throws InputError for
// keys that choose among NCCL's collective algorithms).
P2pModel p2p_model(const Params& params);
// The same with the network device's writes (net_write_cost), whose rate is
// the NIC's in NCCL's view of `ctx`: what a point-to-point send or receive
// (ncclSend, ncclRecv) runs on.
P2pModel p2p_model(const Params& params, const AlgorithmContext& ctx);
// The all-to-all's: the same, on NCCL's p2p channels for the group (p2p_channels).
P2pModel all_to_all_model(const Params& params, const AlgorithmContext& ctx);
// Refuses keys that never apply to `type` (the all-to-all's point-to-point
// sends take none of the collective algorithms' keys, and p2p_net_chunk is
// theirs alone): called when a choice is read, and again by plan and p2p_model.
void check_keys(CollectiveType type, const Params& params);

std::shared_ptr<const CollectiveProgram> make_program(CollectiveType type, std::uint64_t bytes, const Params& params,
                                                      const AlgorithmContext& ctx);

}  // namespace sim::nccl
