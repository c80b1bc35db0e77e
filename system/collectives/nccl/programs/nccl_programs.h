// NCCL's algorithms as collective programs (explicit per-rank DAGs; the
// ring's computed on demand).
//
// Every algorithm runs over `channels` channels, each with its share of the
// buffer, cut into steps of the protocol's size. What a step costs:
//
//  - its bytes on the wire are the protocol's (LL doubles them, LL128 adds
//    8/120), so the links carry what NCCL puts on them;
//  - a channel sends at most `channel_rate` of payload per second: its sends
//    (and switch uploads) go one after another through the channel's pacer in
//    the engine (CollectiveOp::channel / rate), the network's own time
//    counting when it is slower;
//  - a step received waits the protocol's per-hop latency (NCCL's hwLat of
//    the link class it crossed) before the next step that needs it goes;
//  - the collective starts with NCCL's base latency.
//
// Ring (all-reduce, reduce-scatter, all-gather): per channel, the ranks in a
// ring through every node (each node's GPUs rotated by the channel, so
// channels leave a node through different GPUs), NCCL's reduce-scatter then
// all-gather per loop of `ranks` steps, `window` steps in flight.
// Tree (all-reduce): per channel, a chain through each node's GPUs, the chains'
// heads joined by one of two binary trees over the nodes (the first half of
// the channels the first, their copies in the second half the mirrored one:
// every node is a leaf in one of them, and so is every chain head); chunks of
// NCCL's tree size (tree_chunk) are reduced up to the root and broadcast back
// down, pipelined, NCCL_STEPS in flight per connection, each slot free again
// two hops after its send (slot_cycle, nccl_program_parts.h).
// Ring broadcast / reduce: per channel, a chain along that channel's ring
// from the root (group position 0, as the other native algorithms take it):
// broadcast from the root to the rank before it, reduce from the rank after
// it to the root, each chunk forwarded (copied, or reduced into) as soon as it
// is received, `window` chunks in flight.
// NVLS (all-reduce inside one node): per channel and round, each GPU owns one
// shard; every GPU uploads its copy of every shard to the switch, which
// reduces them and sends the sum to the owner (kSwitchReduce), and the owner
// multicasts it back to every GPU through the switch (kMulticast). Across
// nodes whose rail switches reduce too (NCCL's NVLS with CollNet), the owner
// first uploads its node's sum to its rail switch, which sends every node's
// owner the total (kSwitchReduce to kSwitchPeer, SHARP), and multicasts that.
// NVLS-tree (all-reduce across nodes whose switches reduce): per channel and
// round each GPU owns one shard of its node's round; its node's switch reduces
// the node's copies into it (as NVLS), then the owners of the same shard in
// every node (one rail) reduce it up a binary tree over the nodes and
// broadcast it back down (even channels one tree, odd ones its mirror), its
// network connections' slots as the tree's, and each owner multicasts the
// total into its node.
// CollNet chain (all-reduce across nodes whose NICs' switches reduce, SHARP):
// per channel one GPU of each node heads the chain (channel c: rail c); each
// chunk is reduced up the node's chain to the head, which uploads it to its
// rail switch; the switch sends the sum of every node's copy down to every
// head (kSwitchReduce to kSwitchPeer), and each head broadcasts it back down
// its node's chain.
// "Its rail switch" (NVLS across nodes, both CollNets) is one switch when the rail's level joins
// every node, and a SHARP tree when the rail spans several reducing levels
// (leaf and spine): reduce-scatter below, all-reduce at the top, multicast
// back down (sharp_tree.h, docs/nccl.md).
// CollNet direct (the same fabric): per channel and loop, every GPU heads one
// shard (its rail's); each GPU sends its copy of every other shard to that
// shard's head in its node (scatter), the head adds its own and uploads the
// node's sum to its rail switch (kSwitchReduce to kSwitchPeer), which sends
// every node's total back to every head, and each head sends it to the other
// GPUs of its node (broadcast).
#pragma once

#include <memory>
#include <string>

#include "core/time.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/model/nccl_tuner.h"
#include "system/collectives/nccl/model/net_writes.h"
#include "system/program/collective_program.h"
#include "workload/rank_graph.h"

namespace sim::nccl {

struct StepModel {
  Proto proto = Proto::kSimple;
  std::uint32_t channels = 1;
  BytesPerSecond channel_rate = 0;  // payload bytes per second per channel (0: no pacing)
  // A ring's, a chain's or a tree's step between two GPUs of one node when the
  // group spans nodes: the channel's pace on NVLink, where channel_rate is its
  // share of the network (0: channel_rate everywhere).
  BytesPerSecond intra_rate = 0;
  Time base = 0;                    // once per rank at the start
  Time hop_intra = 0;               // after a step received from a GPU of the same node
  Time hop_inter = 0;               // after a step received from another node
  std::uint64_t step_bytes = 0;     // payload per step and channel (0: the protocol's)
  std::uint32_t window = 0;         // steps of one channel in flight (0: the protocol's)
  // Reductions on the GPU (the ring's reduce-scatter and all-reduce's first
  // half, the tree's reduce up, the CollNet chain's way up): each received
  // piece is added to the rank's own input, which the channel's threads read
  // from HBM before they send the sum on; a read of the payload at
  // memory_bandwidth / channels, paced with the send (NCCL's recvReduceSend:
  // two loads and one store per element where an all-gather's recvCopySend
  // has one load). 0: reductions free (NCCL's tuning model, which prices
  // none). NVLS and NVLS-tree ignore it: the switch sums the node's buffers.
  BytesPerSecond memory_bandwidth = 0;
  // NCCL's proxy thread (CollectiveOp::proxy_ns): the time a rank's proxy
  // spends on each network message it posts or completes, one after another
  // (rounded to the nanosecond). 0: no proxy (NCCL's tuning model has none).
  Time proxy = 0;
  // The network device's cost per write of a message across nodes (net_writes.h). Default: none.
  NetWrites writes;
  // NVLS's copy warps (NVLS-tree, NVLS across nodes: NCCL's scatter and
  // gather warps): each round a rank copies its part of the buffer into
  // NCCL's NVLS buffer before the switch reduces it, and the result out of
  // that buffer into its output once every shard's total has come down, each
  // copy on a pacer of its own at this rate per channel. 0: no copies.
  BytesPerSecond copy_rate = 0;
};

// The pacing rate of a channel's wire bytes for a payload rate.
BytesPerSecond wire_rate(const StepModel& m);
// The same between two GPUs of one node (intra_rate, else channel_rate).
BytesPerSecond intra_wire_rate(const StepModel& m);

// The ring's ops are computed on demand (NcclRingProgram, nccl_ring_program.h).
std::shared_ptr<const CollectiveProgram> make_ring_program(std::string name, CollectiveType type, std::uint64_t bytes,
                                                           const AlgorithmContext& ctx, const StepModel& model);
// The same ring built op by op as an explicit DAG (NcclDagProgram): the
// reference make_ring_program's program is tested against, op for op.
std::shared_ptr<const CollectiveProgram> make_ring_dag_program(std::string name, CollectiveType type,
                                                               std::uint64_t bytes, const AlgorithmContext& ctx,
                                                               const StepModel& model);
std::shared_ptr<const CollectiveProgram> make_chain_program(std::string name, CollectiveType type, std::uint64_t bytes,
                                                            const AlgorithmContext& ctx, const StepModel& model);
std::shared_ptr<const CollectiveProgram> make_tree_program(std::string name, std::uint64_t bytes,
                                                           const AlgorithmContext& ctx, const StepModel& model);
// Needs sharp_tree(ctx) (sharp_tree.h) non-empty.
std::shared_ptr<const CollectiveProgram> make_collnet_chain_program(std::string name, std::uint64_t bytes,
                                                                    const AlgorithmContext& ctx, const StepModel& model);
// Needs sharp_tree(ctx) non-empty and the same number of members in each domain.
std::shared_ptr<const CollectiveProgram> make_collnet_direct_program(std::string name, std::uint64_t bytes,
                                                                     const AlgorithmContext& ctx, const StepModel& m);
// Needs every domain's switch to reduce (ctx.domain_reduces) and the same number of members in each.
std::shared_ptr<const CollectiveProgram> make_nvls_tree_program(std::string name, std::uint64_t bytes,
                                                                const AlgorithmContext& ctx, const StepModel& model);
// One node: every member under one switch that reduces (ctx.domain_reduces);
// several nodes: every node's switch reducing, sharp_tree(ctx) non-empty and the same number of members in each.
std::shared_ptr<const CollectiveProgram> make_nvls_program(std::string name, std::uint64_t bytes,
                                                           const AlgorithmContext& ctx, const StepModel& model);

// NVLS all-gather / reduce-scatter inside one node whose switch reduces
// (NCCL's src/device/all_gather.h, reduce_scatter.h, NCCL_ALGO_NVLS): per
// channel and round, an all-gather's GPU stores its shard once to the
// switch, which multicasts it to every GPU (kMulticast: one flow in, n out);
// a reduce-scatter's GPU uploads its copy of every shard and the switch sends
// each shard's sum to its owner (kSwitchReduce: n flows in, one out). Needs
// what make_nvls_program needs.
std::shared_ptr<const CollectiveProgram> make_nvls_scatter_gather_program(std::string name, CollectiveType type,
                                                                         std::uint64_t bytes, const AlgorithmContext& ctx,
                                                                         const StepModel& model);

}  // namespace sim::nccl
