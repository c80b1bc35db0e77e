// NCCL's all-to-all: point-to-point sends in one group (every rank's
// ncclSend and ncclRecv to every peer between ncclGroupStart and
// ncclGroupEnd; NCCL has no all-to-all algorithm of its own).
//
// Per rank, the peers come in rounds as NCCL's p2p schedule pairs them
// (round i = node delta x GPUs per node + local delta: send to the GPU that
// many places on in the node that many nodes on, receive from the one as far
// back; position + i where nodes hold different numbers of GPUs). A work batch
// of a p2p channel holds up to 8 rounds of one node delta and runs them at
// once; a channel runs its batches one after another, the next once every send
// of the last is out and every receive in (with 8 GPUs a node and NCCL's 16 p2p
// channels across nodes, one batch a channel up to 16 nodes: every peer in flight
// from the start). A peer's
// part is cut into NCCL's p2p chunks (NCCL_P2P_NET_CHUNKSIZE 128 KiB across
// nodes, a quarter of it for a part below one chunk and half below 8;
// NCCL_P2P_NVL_CHUNKSIZE 512 KiB inside one, the network's untuned for peers
// in a node once the group spans nodes), NCCL_STEPS in flight per
// connection; every chunk across nodes is a network message that the
// sending and the receiving rank's proxy threads each spend `proxy` on
// (CollectiveOp::proxy_ns), so an all-to-all over many remote peers is capped
// by the proxy when its chunks are small. Sends are not paced: the network
// sets their pace. A received chunk waits the hop latency before its round
// counts as done. docs/nccl.md, "All-to-all".
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "core/time.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/model/net_writes.h"
#include "system/program/collective_program.h"

namespace sim::nccl {

struct P2pModel {
  // NCCL's p2pnChannels: the communicator's channels rounded up to a power of
  // two (src/graph/paths.cc, ncclTopoComputeP2pChannels), p2p_channels(); 32
  // where no system is described.
  std::uint32_t channels = 32;
  std::uint64_t net_chunk = 128 * 1024;            // NCCL_P2P_NET_CHUNKSIZE
  std::uint64_t nvl_chunk = 512 * 1024;            // NCCL_P2P_NVL_CHUNKSIZE
  std::uint32_t window = 8;                        // NCCL_STEPS
  Time base = 0;                                   // once per rank at the start (the per-call overhead)
  Time hop_intra = 0;                              // after a chunk received from a GPU of the same node
  Time hop_inter = 0;                              // after a chunk received from another node
  Time proxy = 0;                                  // per network message, at each end (0: no proxy)
  NetWrites writes;                                // the network device's cost per write (net_writes.h)

  // NCCL's chunk for a peer's part of `part` bytes across nodes: NCCL_P2P_NET_CHUNKSIZE,
  // tuned by the part's size (src/enqueue.cc, addP2pToPlan): a quarter of it for a part
  // smaller than one chunk, half for one smaller than 8 chunks.
  // NCCL's chunk for a peer in the same node: the communicator's p2pChunkSize, which is
  // NCCL_P2P_NET_CHUNKSIZE once it spans nodes (src/init.cc, computeBuffSizes), untuned.
  std::uint64_t local_chunk(bool spans_nodes) const { return std::max<std::uint64_t>(1, spans_nodes ? net_chunk : nvl_chunk); }
  std::uint64_t net_chunk_for(std::uint64_t part) const {
    const std::uint64_t chunk = net_chunk > 0 ? net_chunk : 1;
    if (part < chunk) return chunk / 4 > 0 ? chunk / 4 : 1;
    if (part < 8 * chunk) return chunk / 2 > 0 ? chunk / 2 : 1;
    return chunk;
  }
};

// The all-to-all program's name in a run's records.
inline constexpr const char* kAllToAllProgramName = "nccl:p2p";

// Across nodes, from this many bytes a peer on, every row of the all-to-all
// measured on 2 to 32 p5 nodes is within 10% of this program; below it most
// rows take longer, by a cost per peer that no part of the model holds
// (docs/nccl.md, "Against a measured all-to-all across p5 nodes"). A run
// below it says so (report/model_range.h).
inline constexpr std::uint64_t kMeasuredFromPartBytes = std::uint64_t{8} << 20;

// `bytes` is each rank's whole send buffer; the part for position d is
// part_bytes(bytes, size, d), as the native all-to-all programs cut it.
// NCCL's p2pnChannels for a communicator running `comm_channels` channels:
// at most MAXCHANNELS, rounded up to a power of two (a log of two p5 nodes:
// "16 coll channels, ... 16 p2p channels"; of one: "24 coll channels, ... 32 p2p channels").
std::uint32_t p2p_channels(int comm_channels);

std::shared_ptr<const CollectiveProgram> make_alltoall_program(std::string name, std::uint64_t bytes,
                                                               const AlgorithmContext& ctx, const P2pModel& m);

}  // namespace sim::nccl
