// NCCL's programs shared between groups of one shape.
//
// A large run issues the same collective on many groups that differ only in
// which GPUs and switches they run on: the 128 data-parallel groups of a
// 16,384-GPU run, each on its own rail's leaves and spines. NCCL plans the
// same for each, and a program built op by op (NcclDagProgram) has the same
// ops in each but for the switches its switch ops name. Such a program is
// built once per shape, and every group of that shape runs its ops on its
// own switches (NcclDagProgram::with_switches).
//
// A shape is everything the programs' builders read (nccl_programs.h): the
// collective and its size, the parameters, the plan (algorithm, protocol,
// channels, step model, name), the members' nodes and the order of their rails, whether the
// nodes' switches reduce, the SHARP tree's groups (sharp_tree.h), and which
// members share a switch (the pattern of the nodes' switches and of the
// tree's levels, not their ids). Two groups of one shape get the same ops,
// so sharing changes no result; a test builds every group's program both ways.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/program/collective_program.h"

namespace sim::nccl {

// `build()`'s program, or the program already built for a group of the same
// shape on this group's switches. Only programs built op by op are shared
// (the others, such as the ring computed on demand, are built each time);
// the programs kept are held weakly: a shape whose programs are all gone is
// built again. Safe to call from several threads.
std::shared_ptr<const CollectiveProgram> shared_program(
    CollectiveType type, std::uint64_t bytes, const Params& params, const Plan& plan, const AlgorithmContext& ctx,
    const std::function<std::shared_ptr<const CollectiveProgram>()>& build);

}  // namespace sim::nccl
