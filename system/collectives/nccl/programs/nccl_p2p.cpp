#include "system/collectives/nccl/programs/nccl_p2p.h"

#include <algorithm>
#include <vector>

#include "system/collectives/nccl/model/nccl_constants.h"
#include "system/collectives/nccl/programs/nccl_dag.h"
#include "system/collectives/nccl/programs/nccl_program_parts.h"

namespace sim::nccl {

namespace {

constexpr std::uint32_t kNone = DagBuilder::kNone;
// At most this many sends per peer: a bigger part's chunks are carried
// several to a send (the network's pace is the same; its proxy time counts
// every NCCL chunk it stands for). An all-to-all keeps its links busy with
// its many peers at once, so finer pipelining per peer changes little, while
// an expert-parallel group of 64 over 8 nodes with 64 sends per peer would be
// 8,000 ops per rank and all-to-all.
constexpr std::uint64_t kMaxChunksPerPeer = 4;

CollectiveOp message(OpKind kind, std::uint32_t peer, std::uint64_t bytes, std::uint32_t round, std::uint64_t chunk) {
  CollectiveOp op;
  op.kind = kind;
  op.peer = peer;
  op.bytes = bytes;
  op.tag = std::uint64_t{round} << 24 | chunk;  // unique per send: the round, then the chunk
  return op;
}

CollectiveOp delay_op(Time t) {
  CollectiveOp op;
  op.kind = OpKind::kCompute;
  op.duration = t;
  return op;
}

std::uint32_t proxy_ns(Time per_message, std::uint64_t messages) {
  return proxy_time_ns(messages, proxy_nanoseconds(per_message));
}

}  // namespace

std::uint32_t p2p_channels(int comm_channels) {
  const int capped = std::clamp(comm_channels, 1, kRunChannelsMax);
  std::uint32_t p = 1;
  while (p < static_cast<std::uint32_t>(capped)) p <<= 1;
  return p;
}

std::shared_ptr<const CollectiveProgram> make_alltoall_program(std::string name, std::uint64_t bytes,
                                                               const AlgorithmContext& ctx, const P2pModel& m) {
  const std::uint32_t n = ctx.size();
  DagBuilder dag(n);
  const std::uint32_t channels = std::max<std::uint32_t>(1, m.channels);
  // The chunk of a's part for b (`part` bytes): the communicator's p2p chunk inside
  // a node (P2pModel::local_chunk), NCCL's tuned NCCL_P2P_NET_CHUNKSIZE across nodes (net_chunk_for).
  const bool spans_nodes = ctx.domains > 1;
  const auto chunk_of = [&](std::uint32_t a, std::uint32_t b, std::uint64_t part) {
    if (ctx.domain_of[a] == ctx.domain_of[b]) return m.local_chunk(spans_nodes);
    return m.net_chunk_for(part);
  };
  const auto chunks = [](std::uint64_t part, std::uint64_t chunk) {
    return std::min<std::uint64_t>(kMaxChunksPerPeer, (part + chunk - 1) / chunk);
  };
  // NCCL's p2p schedule (src/init.cc, p2pSchedule): round (node delta,
  // local delta), node delta outer; the peer is the GPU `local delta` places
  // on in its node `node delta` nodes on. With the same GPUs on every node,
  // every rank's rounds are rank 0's renamed (the program is rank-symmetric);
  // otherwise position + round.
  const std::vector<std::vector<std::uint32_t>> nodes = ctx.positions_by_domain();
  const bool uniform = ctx.ranks_per_domain() > 0;
  std::vector<std::uint32_t> local(n, 0);
  for (const auto& d : nodes) {
    for (std::uint32_t i = 0; i < d.size(); ++i) local[d[i]] = i;
  }
  const auto peer = [&](std::uint32_t p, std::uint32_t round, bool forward) {
    if (!uniform) return forward ? (p + round) % n : (p + n - round) % n;
    const auto N = static_cast<std::uint32_t>(nodes.size()), L = static_cast<std::uint32_t>(nodes.front().size());
    const std::uint32_t dn = round / L, dl = round % L, node = ctx.domain_of[p];
    return forward ? nodes[(node + dn) % N][(local[p] + dl) % L] : nodes[(node + N - dn) % N][(local[p] + L - dl) % L];
  };
  // NCCL's plan (src/include/channel.h, ncclP2pChannelBaseForRound; src/enqueue.cc,
  // addWorkBatchToPlan): a work batch holds NCCL_MAX_DEV_WORK_P2P_PER_BATCH (8) rounds of one node
  // delta, all run at once by the channel's CTA (each with its own warps); round (dn, dl) has base
  // dn x ceil(L / 8) + dl / 8 (i / 8 where nodes differ), its channel base mod `channels` and its
  // batch on that channel base / `channels`. A CTA runs its batches one after another. With 8 GPUs
  // a node on NCCL's 16 p2p channels across nodes, every round is in flight from the start up to 16
  // nodes; on 32, node deltas d and d + 16 share a channel in turn.
  const std::uint32_t per_batch = 8;
  const auto base_of = [&](std::uint32_t round) {
    if (!uniform) return round / per_batch;
    const auto L = static_cast<std::uint32_t>(nodes.front().size());
    return round / L * ((L + per_batch - 1) / per_batch) + round % L / per_batch;
  };
  const std::uint32_t used = std::min(channels, std::max<std::uint32_t>(1, base_of(n - 1) + 1));
  struct Channel {
    std::uint32_t batch = 0;
    std::vector<std::uint32_t> after, done;  // what the batch running waits for; what it has done
  };
  for (std::uint32_t p = 0; p < n; ++p) {
    std::uint32_t start = kNone;
    if (m.base > 0) {
      start = dag.add(p, delay_op(m.base), {});
    }
    std::vector<Channel> lanes(used, Channel{0, {start}, {}});
    for (std::uint32_t i = 1; i < n; ++i) {
      const std::uint32_t to = peer(p, i, true), from = peer(p, i, false);
      Channel& lane = lanes[base_of(i) % used];
      // A later batch on this channel waits for every send out and every receive in of the one before.
      if (const std::uint32_t batch = base_of(i) / used; batch != lane.batch) {
        if (!lane.done.empty()) lane.after = std::move(lane.done);
        lane.done.clear();
        lane.batch = batch;
      }
      // The part for `to`, in chunks, NCCL_STEPS of them in flight.
      const std::uint64_t out = part_bytes(bytes, n, to);
      if (out > 0) {
        const std::uint64_t chunk = chunk_of(p, to, out), k = chunks(out, chunk);
        const bool network = ctx.domain_of[p] != ctx.domain_of[to];
        std::vector<std::uint32_t> sent(k, kNone);
        for (std::uint64_t j = 0; j < k; ++j) {
          CollectiveOp op = message(OpKind::kSend, to, part_bytes(out, k, j), i, j);
          const std::uint64_t messages = (op.bytes + chunk - 1) / chunk;
          if (network && m.proxy > 0) op.proxy_ns = proxy_ns(m.proxy, messages);
          if (network) op.bytes += m.writes.extra(op.bytes, messages);
          std::vector<std::uint32_t> parents = lane.after;
          if (j >= m.window && m.window > 0) parents.push_back(sent[j - m.window]);
          sent[j] = dag.add(p, op, parents);
        }
        lane.done.push_back(sent[k - 1]);
      }
      // `from`'s part for this rank, posted at once; it is in a hop after its last chunk.
      const std::uint64_t in = part_bytes(bytes, n, p);
      if (in > 0) {
        const std::uint64_t chunk = chunk_of(from, p, in), k = chunks(in, chunk);
        const bool network = ctx.domain_of[from] != ctx.domain_of[p];
        std::uint32_t last = kNone;
        for (std::uint64_t j = 0; j < k; ++j) {
          CollectiveOp op = message(OpKind::kRecv, from, part_bytes(in, k, j), i, j);
          if (network) op.bytes += m.writes.extra(op.bytes, (op.bytes + chunk - 1) / chunk);  // as its send carries it
          last = dag.add(p, op, {});
        }
        const Time hop = ctx.domain_of[from] == ctx.domain_of[p] ? m.hop_intra : m.hop_inter;
        if (hop > 0) {
          last = dag.add(p, delay_op(hop), {last});
        }
        lane.done.push_back(last);
      }
    }
  }
  return dag.build(std::move(name));
}

}  // namespace sim::nccl
