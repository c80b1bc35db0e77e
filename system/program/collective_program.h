// A collective algorithm as a per-rank program of steps.
//
// Whatever its origin (a native generator such as the ring, or a Chakra ET
// written by another tool), a collective is, on each rank of its group, a DAG
// of operations: send k bytes to a peer, receive from a peer, reduce/copy.
// One executor (CollectiveEngine) runs any program on any network backend.
//
// Programs are immutable and shared by all instances of the same shape. The
// executor keeps per-instance, per-rank progress in a RankCursor that only the
// program interprets; a generator can thus compute its steps on demand instead
// of materializing them (a flat ring on 4,096 ranks has tens of millions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"

namespace sim {

// kSwitchReduce: the rank uploads `bytes` to switch `node`; once every group
//   member under that switch has uploaded with the same tag, the switch sends
//   one reduced message of `bytes` down to position `peer`, which receives it
//   with a kRecv from kSwitchPeer (N flows in, one out). With `peer` =
//   kSwitchPeer the sum goes down to every member under the switch (SHARP's
//   all-reduce: N flows in, N out); only a reducing switch on a backend that
//   carries switch operations does that (others refuse it).
//   With `peer` = kSwitchScatter the sum is cut into as many parts as there
//   are members under the switch (part_bytes, members in group order) and
//   part q goes down to the q-th (a reduce-scatter: N flows in, N parts out).
// kMulticast: the rank uploads `bytes` to switch `node`, which sends a copy
//   down to every group member under it (the sender too); each receives it with
//   a kRecv from kSwitchPeer (one flow in, N out). With `peer` = kSwitchGather
//   every member uploads its part with the same tag, and once all have, the
//   switch sends them all down to every member as one message of their summed
//   bytes (an all-gather: N flows in, N out). Scatter and gather need a
//   reducing switch on a backend that carries switch operations.
// A backend that cannot carry them, or a switch not marked
// in_network_reduction, gets them as plain sends: the uploads go to `peer`
// directly (reduce), the copies from the sender to each member (multicast).
enum class OpKind : std::uint8_t { kSend, kRecv, kCompute, kSwitchReduce, kMulticast };

// The `peer` of a receive that takes a message from a switch (kSwitchReduce, kMulticast).
inline constexpr std::uint32_t kSwitchPeer = 0xffffffffu;
// The `peer` of a switch reduce that scatters its sum, of a multicast that gathers.
inline constexpr std::uint32_t kSwitchScatter = 0xfffffffeu;
inline constexpr std::uint32_t kSwitchGather = 0xfffffffdu;
// Whether a switch op's `peer` names no member but what the switch does.
inline constexpr bool switch_sentinel(std::uint32_t peer) { return peer >= kSwitchGather; }

struct CollectiveOp {
  OpKind kind = OpKind::kCompute;
  // Channels (NCCL's, at most 64): a send or switch upload with rate > 0 goes
  // through its rank's pacer for `channel`, one after another at `rate`
  // bytes/s; it is delivered no earlier than its pacer is through with it,
  // nor than the network delivers it. A compute with rate > 0 is a copy of
  // `bytes` in the GPU's memory through that pacer (NCCL's copy warps): it
  // ends when its pacer is through with it (`duration` does not apply).
  // (Beside `kind`, so that an op is 48 bytes: explicit programs hold
  // millions of them.)
  std::uint16_t channel = 0;
  std::uint32_t peer = 0;    // group position of the peer (send/recv; switch reduce: who gets the sum)
  std::uint64_t bytes = 0;   // message bytes, or bytes reduced/copied by a compute op
  std::uint64_t tag = 0;     // send/recv match FIFO per (instance, src, dst, tag)
  Time duration = -1;        // compute: fixed duration, or -1 for the reduction model
  BytesPerSecond rate = 0;
  std::uint32_t node = 0;    // switch ops: the switch's node id in the topology
  // NCCL's proxy thread (docs/nccl.md, "The proxy"): a send with proxy_ns > 0
  // crosses the network through the sending rank's proxy, which posts it
  // proxy_ns after it is free (one message after another, whatever the
  // channel), and the receiving rank's proxy takes as long to complete it
  // before the receive sees it. A rank's proxy is one serialized resource
  // shared by all its collectives. 0: no proxy.
  std::uint32_t proxy_ns = 0;
};
static_assert(sizeof(CollectiveOp) == 48);

using OpRef = std::uint64_t;  // program-defined handle of one op on one rank

// Which parts of the collective buffer a message carries: parts [first,
// first + count) when the buffer is cut into CollectiveProgram::chunk_total()
// near-equal parts (part_cut). The buffer is S, or S*N for ALL_GATHER and
// GATHER (rank j's input is block j). count 0: not described. Only tools read
// it (the ET writer turns it into msg_chunk_idx/msg_chunk_cnt/total_chunk_cnt,
// which the checker's data model follows); the executor never asks.
struct ChunkRange {
  std::uint64_t first = 0, count = 0;
};

// Per-instance, per-rank progress; its meaning belongs to the program.
struct RankCursor {
  std::vector<std::uint32_t> pending;  // e.g. unfinished-parent counts of a DAG
  std::vector<RankCursor> children;    // cursors of wrapped programs (system/program/chunked_program.h)
  std::vector<RankCursor> sub;         // cursors of composed programs (hierarchical: one per chunk and phase)
};

class CollectiveProgram {
 public:
  virtual ~CollectiveProgram() = default;
  virtual std::uint32_t group_size() const = 0;
  // Short description for reports, e.g. "ring" or "et:algos/ring".
  virtual const std::string& name() const = 0;
  // Number of ops rank `pos` runs; it is done when all have finished.
  virtual std::uint64_t op_count(std::uint32_t pos) const = 0;
  // Prepares `cursor` and appends the ops ready at the start, in issue order.
  virtual void start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const = 0;
  virtual CollectiveOp op(std::uint32_t pos, OpRef ref) const = 0;
  // `ref` finished on rank `pos`: appends the ops that became ready, in issue order.
  virtual void finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const = 0;
  // Every OpRef of this program is below 2^ref_bits(), so a composing program
  // (hierarchical) can put its own fields above them.
  virtual unsigned ref_bits() const { return 64; }
  // Whether rank `pos` is through with the program once `ref` has finished,
  // though other ops of it (sends still in flight) may not be: what follows
  // the program on that rank may start then. ASTRA-sim's tree calls exit()
  // right after issuing its last sends. A composing program (hierarchical)
  // honours it; the engine completes a rank only when all its ops have.
  virtual bool leaves(std::uint32_t /*pos*/, OpRef /*ref*/) const { return false; }

  // --- rank symmetry: exact step aggregation (system/runner/aggregation/) ---
  // A program is rank-symmetric when every rank runs the same ops under the
  // same OpRefs (same kinds, bytes, tags and durations; start() and finish()
  // give the same ready lists), each op's peer on rank p being the origin's
  // peer for that op moved by a fixed permutation of the group that takes
  // the origin to p (symmetric_peer), and a receive's message coming from
  // the matching send (matched_send) of its peer. Then one rank's run stands
  // for all of them. Programs that cannot say so keep the default: no.
  virtual bool rank_symmetric() const { return false; }
  // The rank whose run stands for the others.
  virtual std::uint32_t symmetric_origin() const { return 0; }
  // Rank `pos`'s peer for an op where the origin's peer is `origin_peer`.
  virtual std::uint32_t symmetric_peer(std::uint32_t /*pos*/, std::uint32_t origin_peer) const { return origin_peer; }
  // The send (an OpRef, the same on every rank) whose message the receive
  // `recv` takes: a peer's send with this ref, addressed to this rank.
  virtual OpRef matched_send(OpRef recv) const { return recv; }

  // --- for tools (sim collective gen), not the executor ---
  // Native programs list ready ops in ascending OpRef order, so numbering a
  // rank's ops by ascending OpRef gives ET node ids the engine issues in the
  // same order. parents() is the op's full set of data dependencies (the
  // executor only ever sees the last one finish).
  virtual void parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const = 0;
  // Parts of the buffer each message cuts it into; 0 when messages carry no
  // chunk range (they are then written with comm_size only).
  virtual std::uint64_t chunk_total() const { return 0; }
  // Whether every one of those parts is ceil(buffer / chunk_total()) bytes
  // (equal_parts_bytes) rather than a near-equal cut (part_cut): the ring's
  // rule, which keeps it rank-symmetric when the buffer does not divide.
  virtual bool equal_parts() const { return false; }
  // A send's range, or for a receive (and its reduce) the range of the send it matches.
  virtual ChunkRange chunk_range(std::uint32_t /*pos*/, OpRef /*ref*/) const { return {}; }
  // Whether rank j's block is chunks {c : c mod N == j} (strided) rather than
  // [j*T/N, (j+1)*T/N) (contiguous); matters to ALL_GATHER, GATHER and SCATTER.
  virtual bool strided_blocks() const { return false; }
  // ET node name of an op, e.g. "ring.send c0 s3".
  virtual std::string label(std::uint32_t pos, OpRef ref) const;
};

// Bytes of part `index` when `total` bytes are cut into `parts` near-equal
// contiguous parts (sizes differ by at most one byte; they sum to `total`).
inline std::uint64_t part_cut(std::uint64_t total, std::uint64_t parts, std::uint64_t i) {
  // 64-bit arithmetic when the product fits (the common case); 128-bit otherwise.
  if (i == 0 || total <= UINT64_MAX / i) return total * i / parts;
  return static_cast<std::uint64_t>(static_cast<uint128>(total) * i / parts);
}
inline std::uint64_t part_bytes(std::uint64_t total, std::uint64_t parts, std::uint64_t index) {
  return part_cut(total, parts, index + 1) - part_cut(total, parts, index);
}
// Bytes of parts [first, first + count), no wrap.
inline std::uint64_t parts_bytes(std::uint64_t total, std::uint64_t parts, std::uint64_t first, std::uint64_t count) {
  return part_cut(total, parts, first + count) - part_cut(total, parts, first);
}

// Bytes of `count` parts when `total` bytes are cut into `parts` equal parts
// of ceil(total / parts) bytes each (the last ones padded: they sum to at
// most total + parts - 1). Every rank then moves the same sizes at every
// step, which near-equal cuts (parts a byte apart) do not give.
inline std::uint64_t equal_part_bytes(std::uint64_t total, std::uint64_t parts) {
  return total / parts + (total % parts != 0 ? 1 : 0);
}
inline std::uint64_t equal_parts_bytes(std::uint64_t total, std::uint64_t parts, std::uint64_t count) {
  return equal_part_bytes(total, parts) * count;
}

// Visits every op rank `pos` of `program` runs, each finished as soon as it
// is ready: what the rank does, not when (the set of peers, the kinds of op).
// `visit(ref, op)` returns false to stop early.
template <typename Visit>
void for_each_op(const CollectiveProgram& program, std::uint32_t pos, Visit&& visit) {
  RankCursor cursor;
  std::vector<OpRef> ready;
  program.start(pos, cursor, ready);
  while (!ready.empty()) {
    const OpRef ref = ready.back();
    ready.pop_back();
    if (!visit(ref, program.op(pos, ref))) return;
    program.finish(pos, ref, cursor, ready);
  }
}

}  // namespace sim
