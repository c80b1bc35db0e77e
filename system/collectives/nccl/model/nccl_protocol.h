// NCCL's three protocols: what a step puts on the wire and how big a step is.
//
//   LL      8-byte lines, 4 bytes of data and a 4-byte flag: half the wire is payload.
//   LL128   128-byte lines carrying 120 bytes of data (an 8-byte flag per line).
//   Simple  whole buffers, synchronised by a separate flag: all payload.
//
// Step sizes are NCCL's buffer per step (src/include/device.h and
// src/init.cc defaults): Simple 4 MiB buffers in NCCL_STEPS = 8 slots, the
// ring all-reduce moving ALLREDUCE_CHUNKSTEPS = 4 slots per step (2 MiB) with
// two steps in flight; LL 256 KiB buffers (32 KiB of wire per slot, 16 KiB of
// payload); LL128 about 4.7 MiB (600 KiB of wire per slot, 562.5 KiB payload),
// eight steps in flight.
#pragma once

#include <algorithm>
#include <cstdint>

#include "system/collectives/nccl/model/nccl_tuner.h"

namespace sim::nccl {

// Bytes on the wire for `payload` bytes of data.
inline std::uint64_t wire_bytes(Proto p, std::uint64_t payload) {
  switch (p) {
    case Proto::kLL: return (payload + 3) / 4 * 8;
    case Proto::kLL128: return (payload + 119) / 120 * 128;
    case Proto::kSimple: break;
  }
  return payload;
}

// Wire bytes per payload byte (1 / efficiency).
inline double wire_ratio(Proto p) {
  switch (p) {
    case Proto::kLL: return 2.0;
    case Proto::kLL128: return 128.0 / 120.0;
    case Proto::kSimple: break;
  }
  return 1.0;
}


// Payload bytes one ring step moves per channel.
inline std::uint64_t step_payload(Proto p) {
  switch (p) {
    case Proto::kLL: return kLLStepPayload;
    case Proto::kLL128: return kLL128StepPayload;
    case Proto::kSimple: break;
  }
  return kSimpleStepPayload;
}

// Steps of one channel in flight at once (slots / slots per step).
inline std::uint32_t steps_in_flight(Proto p) { return p == Proto::kSimple ? 2 : kNcclSteps; }

// Broadcast and reduce (BROADCAST_CHUNKSTEPS = REDUCE_CHUNKSTEPS = 1,
// src/include/collectives.h): a Simple chunk is one slot of the 4 MiB buffer,
// 512 KiB, with all NCCL_STEPS = 8 slots in flight; LL and LL128 chunks are
// one step whatever the collective (src/enqueue.cc: chunkSteps only for ring Simple).
// `simple_buffer`: NCCL_BUFFSIZE where the platform sets it (Simple's buffer per connection).
inline std::uint64_t chain_step_payload(Proto p, std::uint64_t simple_buffer = kSimpleBuffer) {
  return p == Proto::kSimple ? simple_buffer / kNcclSteps : step_payload(p);
}
inline constexpr std::uint32_t kChainStepsInFlight = kNcclSteps;


// NCCL's NVLS chunk for a collective of `n_bytes` (nBytes) over `concurrent_ops`
// = channels x heads (src/enqueue.cc, calcCollChunking, the NCCL_ALGO_NVLS
// branch, which NCCL takes for every collective it runs as NVLS: all-reduce,
// all-gather and reduce-scatter alike): 128 KiB (NCCL_NVLS_CHUNKSIZE), capped
// at 32 KiB across nodes when NCCL's NVLS all-reduce bandwidth
// (`nvls_allreduce_bw`, GB/s of buffer) is below 150 GB/s; then halved to 64
// KiB below 64 x ops x 128 KiB, to 32 KiB below 8 x ops x 64 KiB, to 16 KiB
// below 2 x ops x 32 KiB (on a dgx-h100, 64 ops: 512 MiB, 32 MiB, 4 MiB).
// `nccl` applies it to NVLS all-gather and reduce-scatter and to NVLS
// all-reduce across nodes; NVLS all-reduce on one node keeps kNvlsChunk
// (nccl_algorithm.cpp says why).
// `nvls_chunk_size`: NCCL_NVLS_CHUNKSIZE where the platform sets it (0: its default, kNvlsChunk).
inline std::uint64_t nvls_chunk(std::uint64_t n_bytes, std::uint64_t concurrent_ops, int nodes = 1,
                                double nvls_allreduce_bw = 0, std::uint64_t nvls_chunk_size = 0) {
  std::uint64_t chunk = nvls_chunk_size ? nvls_chunk_size : kNvlsChunk;
  if (nodes > 1 && nvls_allreduce_bw < 150) chunk = 32768;
  if (n_bytes < 64 * concurrent_ops * chunk && chunk > 65536) chunk = 65536;
  if (n_bytes < 8 * concurrent_ops * chunk && chunk > 32768) chunk = 32768;
  if (n_bytes < 2 * concurrent_ops * chunk && chunk > 16384) chunk = 16384;
  return chunk;
}



// NCCL's NVLS-tree chunk (src/enqueue.cc, calcCollChunking, the
// NCCL_ALGO_NVLS_TREE branch) for nBytes over `concurrent_ops` = channels x
// heads. Its start changed with the release: a Simple slot (4 MiB buffer /
// NCCL_STEPS = 512 KiB) before 2.21, NCCL_NVLS_CHUNKSIZE (128 KiB) from 2.21
// on; from 2.19 on at most 64 KiB on 4 nodes or more (NCCL_NVLSTREE_MAX_CHUNKSIZE's
// default, -2). Then halved: to 256 KiB below 32 x ops x chunk, 128 KiB below
// 16 x ops x chunk, 64 KiB below 4 x ops x chunk, 32 KiB below 1 x ops x 64 KiB.
// On two H100 nodes, 2.21 (16 CTAs x 8 heads = 128 ops): 32 KiB below 8 MiB,
// 64 KiB below 64 MiB, 128 KiB above.
// A platform may set both starts (src/enqueue.cc reads them from the
// environment): `nvls_chunk_size` is NCCL_NVLS_CHUNKSIZE (0: 128 KiB), and
// `max_chunk` NCCL_NVLSTREE_MAX_CHUNKSIZE (0: its default, -2, the 64 KiB cap
// from 4 nodes on). aws-ofi-nccl sets both to 512 KiB on p5 (docs/nccl.md): on
// 16 nodes 512 KiB from 2 GiB, 256 KiB from 512 MiB, 128 KiB from 64 MiB.
// `simple_buffer` is NCCL_BUFFSIZE (the slot before 2.21 is an eighth of it).
inline std::uint64_t nvls_tree_chunk(std::uint64_t n_bytes, std::uint64_t concurrent_ops, int nodes,
                                     int version = kDefaultVersion, std::uint64_t nvls_chunk_size = 0,
                                     std::uint64_t max_chunk = 0, std::uint64_t simple_buffer = kSimpleBuffer) {
  std::uint64_t chunk =
      version >= 221 ? (nvls_chunk_size ? nvls_chunk_size : kNvlsChunk) : simple_buffer / kNcclSteps;
  if (max_chunk > 0) {
    chunk = std::min(chunk, max_chunk);
  } else if (version >= 219 && nodes >= 4) {
    chunk = std::min<std::uint64_t>(chunk, 65536);
  }
  if (n_bytes < 32 * concurrent_ops * chunk && chunk > 262144) chunk = 262144;
  if (n_bytes < 16 * concurrent_ops * chunk && chunk > 131072) chunk = 131072;
  if (n_bytes < 4 * concurrent_ops * chunk && chunk > 65536) chunk = 65536;
  if (n_bytes < 1 * concurrent_ops * chunk && chunk > 32768) chunk = 32768;
  return chunk;
}

// NCCL's tree chunk per channel for an all-reduce of `n_bytes` (nBytes) on
// `channels` channels, `ranks` ranks over `nodes` nodes (src/enqueue.cc,
// calcCollChunking): one step of the protocol's buffer (chunkSteps is 1 but
// for ring Simple): Simple 512 KiB (4 MiB / NCCL_STEPS), LL128 576,000 bytes
// of payload. LL128 is then halved while a channel gets fewer than
// nsteps x 64 / ppn chunks and the chunk is above 128 KiB, and while it gets
// fewer than nsteps x 16 / ppn and is above 32 KiB, where nsteps = 1 +
// log2i(nodes) + 0.1 ppn estimates the tree's depth in steps (ppn the ranks
// per node; integer chunk counts, as NCCL divides). On 4 nodes of 8 GPUs (16
// channels) 32 MiB gets 72,000-byte chunks, 8 times shorter than a step: the
// pipeline through 9 hops up and 9 down fills in an eighth of the time.
// Releases before 2.21 halve Simple too (src/enqueue.cc through 2.20;
// 2.21's calcCollChunking dropped it): while a channel gets
// fewer than 8 x depth chunks and the chunk is above 128 KiB, fewer than
// 4 x depth above 64 KiB, fewer than depth above 32 KiB, where depth is
// src/graph/connect.cc's estimate, ranks per node - 1 + log2i(nodes) (10 on
// 8 nodes of 8). LL keeps its step. `simple_buffer` is NCCL_BUFFSIZE.
inline std::uint64_t tree_chunk(Proto proto, std::uint64_t n_bytes, std::uint64_t channels, int ranks, int nodes,
                                std::uint64_t simple_buffer = kSimpleBuffer, int version = kDefaultVersion) {
  std::uint64_t chunk = proto == Proto::kSimple ? simple_buffer / kNcclSteps : step_payload(proto);
  if (proto == Proto::kLL || channels == 0 || nodes < 1 || ranks < nodes) return chunk;
  int log2_nodes = 0;
  for (int x = nodes; x > 1; x >>= 1) ++log2_nodes;
  const auto chunks = [&] { return n_bytes / (channels * chunk); };
  if (proto == Proto::kSimple) {
    if (version >= 221) return chunk;
    const std::uint64_t depth = static_cast<std::uint64_t>(ranks / nodes - 1 + log2_nodes);
    while (chunks() < depth * 8 && chunk > 131072) chunk /= 2;
    while (chunks() < depth * 4 && chunk > 65536) chunk /= 2;
    while (chunks() < depth && chunk > 32768) chunk /= 2;
    return chunk;
  }
  const double ppn = static_cast<double>(ranks) / nodes;
  const double nsteps = 1 + log2_nodes + 0.1 * ppn;
  while (static_cast<double>(chunks()) < nsteps * 64 / ppn && chunk > 131072) chunk /= 2;
  while (static_cast<double>(chunks()) < nsteps * 16 / ppn && chunk > 32768) chunk /= 2;
  return chunk;
}

// The channels a ring or tree collective of `n_bytes` (nBytes) runs on
// (src/enqueue.cc, topoGetAlgoInfo): from the communicator's `channels`, one
// fewer while nBytes < channels x threads x threshold, down to 1, where
// threads is the protocol's most per channel (LL 512, LL128 640, Simple 512:
// NCCL_*_MAX_NTHREADS) and threshold the bytes each thread must get (LL and
// LL128 8, Simple 64: NCCL_*_THREAD_THRESHOLD; a ring's LL x nRanks, as
// src/graph/tuning.cc sets it). So a 48 KiB all-reduce over 8 GPUs runs on
// one channel (ring LL: 512 x 64 = 32 KiB a channel), 1 MiB on every one.
// (Below one channel's worth NCCL halves the threads too; not modelled.)
inline std::uint32_t runtime_channels(Algo algo, Proto proto, std::uint64_t n_bytes, int ranks, std::uint32_t channels) {
  if (algo != Algo::kRing && algo != Algo::kTree) return channels;
  const std::uint64_t threads = proto == Proto::kLL128 ? 640 : 512;
  std::uint64_t threshold = proto == Proto::kSimple ? 64 : 8;
  if (algo == Algo::kRing && proto == Proto::kLL) threshold *= static_cast<std::uint64_t>(std::max(ranks, 1));
  std::uint32_t nc = channels;
  while (nc >= 2 && n_bytes < nc * threads * threshold) --nc;
  return nc;
}

}  // namespace sim::nccl
