#include "system/collectives/nccl/programs/nccl_programs.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "system/collectives/nccl/model/nccl_protocol.h"
#include "system/collectives/nccl/programs/nccl_dag.h"
#include "system/collectives/nccl/programs/nccl_program_parts.h"
#include "system/collectives/nccl/programs/nccl_ring_program.h"
#include "system/collectives/nccl/model/nccl_system.h"
#include "system/collectives/nccl/model/sharp_tree.h"
#include "system/collectives/tree.h"

namespace sim::nccl {

namespace {

constexpr std::uint32_t kNone = DagBuilder::kNone;

// Per-rank op lists, with the kinds of op NCCL's steps use.
class Builder {
 public:
  // Sends between GPUs of different nodes go through NCCL's proxy threads
  // when the model has one (StepModel::proxy).
  // A send across nodes stands for as many of NCCL's network messages as it
  // has steps of `step` payload (programs cap their loops, so one send may
  // carry several of NCCL's steps, or one and a part): its proxy time and its
  // writes are that many (merged_proxy_ns).
  Builder(const AlgorithmContext& ctx, const StepModel& m, std::uint64_t step)
      : dag_(ctx.size()),
        domain_of_(ctx.domain_of),
        proxy_ns_(proxy_nanoseconds(m.proxy)),
        step_wire_(std::max<std::uint64_t>(1, wire_bytes(m.proto, step))),
        writes_(m.writes) {}

  std::uint32_t add(std::uint32_t r, const CollectiveOp& op, std::initializer_list<std::uint32_t> parents) {
    return dag_.add(r, op, parents);
  }
  std::uint32_t add(std::uint32_t r, const CollectiveOp& op, const std::vector<std::uint32_t>& parents) {
    return dag_.add(r, op, parents);
  }
  // A fixed delay after `parent`; none when zero (the parent stands for it).
  std::uint32_t delay(std::uint32_t r, Time t, std::uint32_t parent) {
    if (t <= 0) return parent;
    CollectiveOp op;
    op.kind = OpKind::kCompute;
    op.duration = t;
    return add(r, op, {parent});
  }
  std::uint32_t send(std::uint32_t r, std::uint32_t peer, std::uint64_t wire, std::uint64_t tag, std::uint32_t channel,
                     BytesPerSecond rate, const std::vector<std::uint32_t>& parents) {
    CollectiveOp op;
    op.kind = OpKind::kSend;
    op.peer = peer;
    op.tag = tag;
    op.channel = static_cast<std::uint16_t>(channel);  // at most 64 (nccl_algorithm.cpp checks `channels`)
    const std::uint64_t extra = device_extra(r, peer, wire);
    op.bytes = wire + extra;
    op.rate = NetWrites::paced(rate, wire, extra);
    if (proxy_ns_ > 0 && across(r, peer)) op.proxy_ns = merged_proxy_ns(wire, step_wire_, proxy_ns_);
    return add(r, op, parents);
  }
  // A send of chunk j on a connection of `window` slots (slot_cycle): after
  // `parents` and the slot chunk j - window took, which comes back the
  // connection's two hops after that send. `slots` holds each of the
  // connection's chunks' slot (one entry per chunk).
  std::uint32_t send_in_slot(std::vector<std::uint32_t>& slots, std::uint64_t j, std::uint32_t window, Time hop,
                             std::uint32_t r, std::uint32_t peer, std::uint64_t wire, std::uint64_t tag,
                             std::uint32_t channel, BytesPerSecond rate, std::vector<std::uint32_t> parents) {
    if (j >= window) parents.push_back(slots[j - window]);
    const std::uint32_t sent = send(r, peer, wire, tag, channel, rate, parents);
    slots[j] = slot_free(r, hop, wire, sent, j + window < slots.size());
    return sent;
  }
  // A receive, posted at the start or after `posted`: an op of r's own
  // without which the message cannot come (r's upload of what a switch sends
  // back), or the receive of the same peer's chunk a window earlier (its
  // chunks arrive in order). Timing is the same either way; posted late, a
  // long pipeline's receives do not all wait in the matcher from the start.
  std::uint32_t recv(std::uint32_t r, std::uint32_t peer, std::uint64_t wire, std::uint64_t tag,
                     std::uint32_t posted = kNone) {
    CollectiveOp op;
    op.kind = OpKind::kRecv;
    op.peer = peer;
    op.bytes = wire + device_extra(peer, r, wire);  // as its send carries it
    op.tag = tag;
    return add(r, op, {posted});
  }
  void reserve(std::uint32_t r, std::uint64_t ops, std::uint64_t parents) { dag_.reserve(r, ops, parents); }
  // Rank r has all its ops (DagBuilder::seal).
  void seal(std::uint32_t r) { dag_.seal(r); }
  std::shared_ptr<const CollectiveProgram> build(std::string name) { return dag_.build(std::move(name)); }

 private:
  bool across(std::uint32_t r, std::uint32_t peer) const {
    return r < domain_of_.size() && peer < domain_of_.size() && domain_of_[r] != domain_of_[peer];
  }
  // The bytes a message from r to peer carries for the network device's writes (none inside a node).
  std::uint64_t device_extra(std::uint32_t r, std::uint32_t peer, std::uint64_t wire) const {
    return writes_.active() && across(r, peer) ? merged_write_extra(writes_, wire, step_wire_) : 0;
  }

  // When the slot `sent` took takes another chunk. `waited`: a later send
  // waits for it; the last window's sends get an op of no time, so that every
  // loop has the same ops (the store packs them, NcclDagProgram) and a rank
  // is done with its last send.
  std::uint32_t slot_free(std::uint32_t r, Time hop, std::uint64_t wire, std::uint32_t sent, bool waited) {
    if (hop <= 0) return sent;
    CollectiveOp op;
    op.kind = OpKind::kCompute;
    op.duration = waited ? slot_cycle(hop, wire, step_wire_) : 0;
    return add(r, op, {sent});
  }

  DagBuilder dag_;
  std::vector<std::uint32_t> domain_of_;
  std::uint32_t proxy_ns_;
  std::uint64_t step_wire_;
  NetWrites writes_;
};

// NVLS pipelines 18 ops a round per rank and channel against a ring's 42
// per loop: it may have more rounds (4 GiB on 8 GPUs is 512 rounds of 128 KiB).
constexpr std::uint64_t kMaxNvlsRounds = 256;
// A chain (broadcast, reduce) has 3 ops a chunk per rank: NCCL's own 512 KiB
// Simple chunks up to 6 GiB on 24 channels, so the pipeline's fill is NCCL's.
constexpr std::uint64_t kMaxChainLoops = 512;
// CollNet direct's smallest chunk per head (src/enqueue.cc: halved while above 131072 bytes).
constexpr std::uint64_t kCollNetDirectMinChunk = 128 * 1024;

// An op at switch `node` (NVLS, CollNet: docs/nccl.md): a reduce or a
// multicast for member `peer` (kSwitchPeer: every member under the switch),
// paced at `rate` on channel `channel` (0: unpaced).
CollectiveOp switch_op(OpKind kind, std::uint32_t peer, NodeId node, std::uint64_t bytes, std::uint64_t tag,
                       std::uint32_t channel, BytesPerSecond rate) {
  CollectiveOp op;
  op.kind = kind;
  op.peer = peer;
  op.node = node;
  op.bytes = bytes;
  op.tag = tag;
  op.channel = static_cast<std::uint16_t>(channel);
  op.rate = rate;
  return op;
}

// Rank x's part in its rail's all-reduce of `wire` bytes through the fabric's
// reducing switches (SHARP, sharp_tree.h), after `ready`: each level below
// the top reduce-scatters (kSwitchScatter: x uploads its buffer, gets its
// part of the sum), the top all-reduces x's part, and each level below
// gathers the totals back (kSwitchGather: x uploads its part, gets every
// member's). The lowest level's upload goes through x's pacer for `channel`
// at `rate` (the sender's read of its addend; 0: unpaced), the others are
// unpaced (the NIC sets their pace). The top's tag is `tag`; a lower level's
// carries the level and the way above bit 20.
struct SharpOps {
  std::uint32_t upload = kNone;  // the lowest level's
  std::uint32_t total = kNone;   // x holds the total, `hop` (NCCL's network step) after it came down
};

std::uint64_t sharp_tag(std::uint64_t tag, std::size_t level, bool down) {
  return tag | (std::uint64_t{2 * level + down + 1} << 21);
}

SharpOps sharp_all_reduce(Builder& b, const SharpTree& t, std::uint32_t x, std::uint64_t wire, std::uint64_t tag,
                          std::uint32_t channel, BytesPerSecond rate, Time hop, std::vector<std::uint32_t> after) {
  if ((tag & 0xffffff) >> 21) throw std::invalid_argument("nccl sharp: a tag's low bits above 20 are the tree's");
  SharpOps s;
  const std::size_t top = t.depth() - 1;
  std::vector<std::uint64_t> held(t.depth());  // bytes x holds at each level before its reduce-scatter
  std::uint64_t bytes = wire;
  for (std::size_t k = 0; k <= top; ++k) {
    const bool all = k == top;
    const std::uint64_t k_tag = all ? tag : sharp_tag(tag, k, false);
    const CollectiveOp up = switch_op(OpKind::kSwitchReduce, all ? kSwitchPeer : kSwitchScatter, t.levels[k][x], bytes,
                                      k_tag, channel, k == 0 ? rate : 0);
    const std::uint32_t id = b.add(x, up, after);
    if (k == 0) s.upload = id;
    held[k] = bytes;
    if (!all) bytes = part_bytes(bytes, t.under(k, x).size(), t.index[k][x]);
    after = {b.recv(x, kSwitchPeer, bytes, k_tag, id)};
  }
  for (std::size_t k = top; k-- > 0;) {
    const std::uint64_t k_tag = sharp_tag(tag, k, true);
    const std::uint64_t mine = part_bytes(held[k], t.under(k, x).size(), t.index[k][x]);
    const std::uint32_t gather =
        b.add(x, switch_op(OpKind::kMulticast, kSwitchGather, t.levels[k][x], mine, k_tag, channel, 0), after);
    after = {b.recv(x, kSwitchPeer, held[k], k_tag, gather)};
  }
  s.total = b.delay(x, hop, after[0]);
  return s;
}

// NVLS across nodes (NVLS-tree, or NVLS with SHARP); defined with NVLS-tree below.
std::shared_ptr<const CollectiveProgram> nvls_across_nodes(std::string name, std::uint64_t bytes,
                                                           const AlgorithmContext& ctx, const StepModel& m,
                                                           const SharpTree& fabric);

}  // namespace

BytesPerSecond wire_rate(const StepModel& m) {
  if (m.channel_rate == 0) return 0;
  return static_cast<BytesPerSecond>(std::llround(static_cast<double>(m.channel_rate) * wire_ratio(m.proto)));
}

BytesPerSecond intra_wire_rate(const StepModel& m) {
  if (m.intra_rate == 0 || m.channel_rate == 0) return wire_rate(m);
  return static_cast<BytesPerSecond>(std::llround(static_cast<double>(m.intra_rate) * wire_ratio(m.proto)));
}

std::shared_ptr<const CollectiveProgram> make_ring_program(std::string name, CollectiveType type, std::uint64_t bytes,
                                                           const AlgorithmContext& ctx, const StepModel& m) {
  return std::make_shared<const NcclRingProgram>(std::move(name), type, bytes, ctx, m);
}

std::shared_ptr<const CollectiveProgram> make_ring_dag_program(std::string name, CollectiveType type,
                                                               std::uint64_t bytes, const AlgorithmContext& ctx,
                                                               const StepModel& m) {
  const std::uint32_t n = ctx.size();
  Builder b(ctx, m, m.step_bytes ? m.step_bytes : step_payload(m.proto));
  const bool gather = type == CollectiveType::kAllGather;
  if (type != CollectiveType::kAllReduce && type != CollectiveType::kReduceScatter && !gather) {
    throw std::invalid_argument("nccl ring: unsupported collective");
  }
  const std::uint32_t steps = n <= 1 ? 0 : (type == CollectiveType::kAllReduce ? 2 * (n - 1) : n - 1);
  const std::uint64_t step = m.step_bytes ? m.step_bytes : step_payload(m.proto);
  const std::uint32_t window = m.window ? m.window : steps_in_flight(m.proto);
  const BytesPerSecond inter_rate = wire_rate(m), intra_rate = intra_wire_rate(m);
  std::vector<std::uint32_t> base(n, kNone);
  if (steps > 0) {
    for (std::uint32_t r = 0; r < n; ++r) base[r] = b.delay(r, m.base, kNone);
  }
  // Piece of a chunk that ring index q sends at step s (reduce-scatter, then all-gather).
  const auto piece = [n](std::int64_t q, std::uint32_t s) -> std::uint32_t {
    const std::int64_t v = s < n - 1 ? q - s : q + 1 - (static_cast<std::int64_t>(s) - (n - 1));
    return static_cast<std::uint32_t>(((v % n) + n) % n);
  };
  // A send that carries a sum is paced for its wire bytes and its addend's read.
  const AddendReads reads(m);
  const bool reduces = !gather && reads.charged() && inter_rate > 0;
  const std::uint32_t reduced_steps = gather ? 0 : n - 1;  // steps whose received piece is added in
  for (std::uint32_t c = 0; c < m.channels && steps > 0; ++c) {
    std::vector<std::uint32_t> ring;
    for (const auto& d : chains(ctx, c)) ring.insert(ring.end(), d.begin(), d.end());
    // Reduce-scatter and all-reduce cut each chunk into n pieces, one per
    // rank: when the buffer allows, every channel's share and every chunk is
    // a multiple of n bytes, so all pieces of a chunk are equal and every
    // rank moves the same bytes at each step (the ring is then rank-symmetric,
    // collective_program.h, and can be advanced as one). Otherwise pieces
    // differ by a byte, by ring position.
    const bool even = !gather && bytes % n == 0;
    const std::uint64_t share = even ? n * part_bytes(bytes / n, m.channels, c) : part_bytes(bytes, m.channels, c);
    const std::uint64_t k = ceil_div(share, gather ? step : step * n);
    const auto chunk_of = [&](std::uint64_t j) { return even ? n * part_bytes(share / n, k, j) : part_bytes(share, k, j); };
    for (std::uint32_t q = 0; q < n; ++q) {
      const std::uint32_t r = ring[q], next = ring[(q + 1) % n], prev = ring[(q + n - 1) % n];
      const Time hop = ctx.domain_of[prev] == ctx.domain_of[r] ? m.hop_intra : m.hop_inter;
      const BytesPerSecond rate = ctx.domain_of[next] == ctx.domain_of[r] ? intra_rate : inter_rate;
      std::vector<std::uint32_t> first_send(k, kNone);
      for (std::uint64_t j = 0; j < k; ++j) {
        const std::uint64_t chunk = chunk_of(j);
        std::uint32_t last = kNone;
        for (std::uint32_t s = 0; s < steps; ++s) {
          const std::uint64_t out = gather ? chunk : part_bytes(chunk, n, piece(q, s));
          const std::uint64_t in = gather ? chunk : part_bytes(chunk, n, piece(static_cast<std::int64_t>(q) - 1, s));
          std::vector<std::uint32_t> parents;
          if (s == 0) {
            parents = {base[r], j >= window ? first_send[j - window] : kNone};
          } else {
            parents = {last};
          }
          // Steps 1..n-1 send what step s-1 received and added in (all-reduce's step n-1: the full sum).
          const bool sum = s >= 1 && s <= reduced_steps;
          const std::uint64_t wire_out = wire_bytes(m.proto, out);
          const std::uint32_t sent = b.send(r, next, wire_out, tag_of(c, j, s), c,
                                            sum && reduces ? reads.summing_rate(rate, wire_out, out) : rate, parents);
          if (s == 0) first_send[j] = sent;
          const std::uint32_t got = b.recv(r, prev, wire_bytes(m.proto, in), tag_of(c, j, s));
          // Reduce-scatter's last step adds the piece into the output: a read with no send to pace it.
          const bool last_sum = reduces && type == CollectiveType::kReduceScatter && s + 1 == steps;
          last = b.delay(r, last_sum ? hop + reads.read_time(in) : hop, got);
        }
      }
    }
  }
  return b.build(std::move(name));
}

std::shared_ptr<const CollectiveProgram> make_chain_program(std::string name, CollectiveType type, std::uint64_t bytes,
                                                            const AlgorithmContext& ctx, const StepModel& m) {
  const std::uint32_t n = ctx.size();
  Builder b(ctx, m, m.step_bytes ? m.step_bytes : chain_step_payload(m.proto));
  if (type != CollectiveType::kBroadcast && type != CollectiveType::kReduce) {
    throw std::invalid_argument("nccl chain: unsupported collective");
  }
  if (n <= 1) return b.build(std::move(name));
  const std::uint64_t step = m.step_bytes ? m.step_bytes : chain_step_payload(m.proto);
  const std::uint32_t window = m.window ? m.window : kChainStepsInFlight;
  const BytesPerSecond inter_rate = wire_rate(m), intra_rate = intra_wire_rate(m);
  const auto rate = [&](std::uint32_t from, std::uint32_t to) {
    return ctx.domain_of[from] == ctx.domain_of[to] ? intra_rate : inter_rate;
  };
  std::vector<std::uint32_t> base(n);
  for (std::uint32_t r = 0; r < n; ++r) base[r] = b.delay(r, m.base, kNone);
  constexpr std::uint32_t kRoot = 0;
  for (std::uint32_t c = 0; c < m.channels; ++c) {
    std::vector<std::uint32_t> ring;
    for (const auto& d : chains(ctx, c)) ring.insert(ring.end(), d.begin(), d.end());
    // NCCL's kernels (src/device/broadcast.h, reduce.h): broadcast starts at
    // the root and stops at the rank before it; reduce starts at the rank
    // after the root and ends at the root.
    const auto at = static_cast<std::uint32_t>(std::find(ring.begin(), ring.end(), kRoot) - ring.begin());
    const std::uint32_t first = type == CollectiveType::kBroadcast ? at : (at + 1) % n;
    std::vector<std::uint32_t> chain(n);
    for (std::uint32_t i = 0; i < n; ++i) chain[i] = ring[(first + i) % n];
    const std::uint64_t share = part_bytes(bytes, m.channels, c);
    const std::uint64_t k = ceil_div(share, step, kMaxChainLoops);
    std::vector<std::uint32_t> head_send(k, kNone);
    for (std::uint64_t j = 0; j < k; ++j) {
      const std::uint64_t w = wire_bytes(m.proto, part_bytes(share, k, j));
      const std::uint64_t tag = tag_of(c, j, 0);
      head_send[j] = b.send(chain[0], chain[1], w, tag, c, rate(chain[0], chain[1]),
                            {base[chain[0]], j >= window ? head_send[j - window] : kNone});
      for (std::uint32_t i = 1; i < n; ++i) {
        const std::uint32_t r = chain[i], prev = chain[i - 1];
        const Time hop = ctx.domain_of[prev] == ctx.domain_of[r] ? m.hop_intra : m.hop_inter;
        const std::uint32_t ready = b.delay(r, hop, b.recv(r, prev, w, tag));
        if (i + 1 < n) b.send(r, chain[i + 1], w, tag, c, rate(r, chain[i + 1]), {base[r], ready});
      }
    }
  }
  return b.build(std::move(name));
}

std::shared_ptr<const CollectiveProgram> make_tree_program(std::string name, std::uint64_t bytes,
                                                           const AlgorithmContext& ctx, const StepModel& m) {
  const std::uint32_t n = ctx.size();
  Builder b(ctx, m, m.step_bytes ? m.step_bytes : step_payload(m.proto));
  if (n <= 1) return b.build(std::move(name));
  const std::uint64_t step = m.step_bytes ? m.step_bytes : step_payload(m.proto);
  const std::uint32_t window = m.window ? m.window : steps_in_flight(m.proto);
  const BytesPerSecond inter_rate = wire_rate(m), intra_rate = intra_wire_rate(m);
  const AddendReads reads(m);
  std::vector<std::uint32_t> base(n);
  for (std::uint32_t r = 0; r < n; ++r) base[r] = b.delay(r, m.base, kNone);
  const std::uint32_t D = ctx.domains;
  // Each channel's tree: a parent per rank (-1 at the root).
  std::vector<std::vector<std::int64_t>> parents_of(m.channels);
  for (std::uint32_t c = 0; c < m.channels; ++c) {
    // NCCL's double binary tree over the nodes (src/graph/trees.cc,
    // ncclGetDtree; TreeProgram::dtree): NCCL duplicates its channels
    // (ncclTopoPostset) and gives a channel's copy, c + channels / 2, the
    // second tree, so each node is a leaf in one of them.
    const std::uint32_t tree = D > 1 && (m.channels % 2 == 0 ? c >= m.channels / 2 : c % 2 == 1) ? 1 : 0;
    const auto chain = chains(ctx, c);
    std::vector<std::int64_t>& parent = parents_of[c];
    parent.assign(n, -1);
    // NCCL's tree graph is a balanced tree (NCCL_TOPO_PATTERN_BALANCED_TREE,
    // src/init.cc; src/graph/connect.cc, connectTrees): a node's chain head
    // links to its parent node and to its second child, the chain's second
    // GPU to its first child, so no GPU links to more than two other nodes.
    for (std::uint32_t d = 0; d < D; ++d) {
      const auto& L = chain[d];
      for (std::size_t i = 1; i < L.size(); ++i) parent[L[i]] = L[i - 1];
      const std::int64_t pd = TreeProgram::dtree(D, d, tree).parent;
      if (pd < 0) continue;
      const auto& P = chain[static_cast<std::size_t>(pd)];
      const bool first_child = TreeProgram::dtree(D, static_cast<std::uint32_t>(pd), tree).child[0] == d;
      parent[L[0]] = first_child && P.size() > 1 ? P[1] : P[0];
    }
  }
  // At most, per chunk: a receive, a delay, a send down and its slot's
  // return per child, and a send up, its slot's return, a receive and a delay
  // when the rank has a parent; a delay has one parent, a send up its
  // children's delays, the base and the window's slot, a send down the
  // receive from above (or, at the root, what the send up would have had) and
  // its window's slot.
  {
    std::vector<std::uint64_t> ops(n, 1), links(n, 1);
    std::vector<std::uint64_t> child_count(n);
    for (std::uint32_t c = 0; c < m.channels; ++c) {
      std::fill(child_count.begin(), child_count.end(), 0);
      for (std::uint32_t r = 0; r < n; ++r) {
        if (parents_of[c][r] >= 0) ++child_count[static_cast<std::size_t>(parents_of[c][r])];
      }
      const std::uint64_t k = ceil_div(part_bytes(bytes, m.channels, c), step);
      for (std::uint32_t r = 0; r < n; ++r) {
        const std::uint64_t ch = child_count[r];
        const bool up = parents_of[c][r] >= 0;
        ops[r] += k * (4 * ch + (up ? 4 : 0));
        links[r] += k * (3 * ch + (up ? ch + 4 : 0) + ch * (ch + 1));
      }
    }
    for (std::uint32_t r = 0; r < n; ++r) b.reserve(r, ops[r], links[r]);
  }
  for (std::uint32_t c = 0; c < m.channels; ++c) {
    const std::vector<std::int64_t>& parent = parents_of[c];
    std::vector<std::vector<std::uint32_t>> children(n);
    for (std::uint32_t r = 0; r < n; ++r) {
      if (parent[r] >= 0) children[static_cast<std::size_t>(parent[r])].push_back(r);
    }
    const std::uint64_t share = part_bytes(bytes, m.channels, c);
    const std::uint64_t k = ceil_div(share, step);
    for (std::uint32_t r = 0; r < n; ++r) {
      const auto hop = [&](std::uint32_t from) { return ctx.domain_of[from] == ctx.domain_of[r] ? m.hop_intra : m.hop_inter; };
      // Each connection's slots (Builder::send_in_slot): up, and down to each child.
      std::vector<std::uint32_t> up_slot(k, kNone);
      std::vector<std::vector<std::uint32_t>> down_slot(children[r].size(), std::vector<std::uint32_t>(k, kNone));
      // Each child's receives, posted a window behind the last: a child's
      // chunks arrive in order, so a receive is up before its chunk and the
      // matcher holds a window of them, not every chunk of the call.
      std::vector<std::uint32_t> kid_recv(children[r].size() * k, kNone);
      for (std::uint64_t j = 0; j < k; ++j) {
        const std::uint64_t payload = part_bytes(share, k, j);
        const std::uint64_t w = wire_bytes(m.proto, payload);
        // A rank with children adds its own addend to theirs (NCCL's tree,
        // src/device/all_reduce.h: recvReduceSend up, recvReduceCopySend at
        // the root, whose sum goes down); a leaf only sends its input.
        // A step to a GPU of the node goes at the channel's NVLink pace, one
        // to another node at its share of the network (StepModel::intra_rate).
        const auto rate_to = [&](std::uint32_t to, bool sums) {
          const BytesPerSecond rate = ctx.domain_of[to] == ctx.domain_of[r] ? intra_rate : inter_rate;
          return sums ? reads.summing_rate(rate, w, payload) : rate;
        };
        std::vector<std::uint32_t> up = {base[r]};
        for (std::size_t i = 0; i < children[r].size(); ++i) {
          const std::uint32_t ch = children[r][i];
          std::uint32_t& got = kid_recv[j * children[r].size() + i];
          got = b.recv(r, ch, w, tag_of(c, j, 0), j >= window ? kid_recv[(j - window) * children[r].size() + i] : kNone);
          up.push_back(b.delay(r, hop(ch), got));
        }
        std::vector<std::uint32_t> down_after = up;
        if (parent[r] >= 0) {
          const auto p = static_cast<std::uint32_t>(parent[r]);
          const std::uint32_t up_send =
              b.send_in_slot(up_slot, j, window, hop(p), r, p, w, tag_of(c, j, 0), c, rate_to(p, !children[r].empty()), up);
          // The sum comes down after my part went up.
          down_after = {b.delay(r, hop(p), b.recv(r, p, w, tag_of(c, j, 1), up_send))};
        }
        // The root's first send down carries its read (once, whatever the children).
        for (std::size_t i = 0; i < children[r].size(); ++i) {
          const std::uint32_t kid = children[r][i];
          b.send_in_slot(down_slot[i], j, window, hop(kid), r, kid, w, tag_of(c, j, 1), c,
                         rate_to(kid, parent[r] < 0 && i == 0), down_after);
        }
      }
    }
  }
  return b.build(std::move(name));
}

std::shared_ptr<const CollectiveProgram> make_nvls_program(std::string name, std::uint64_t bytes,
                                                           const AlgorithmContext& ctx, const StepModel& m) {
  const std::uint32_t n = ctx.size();
  Builder b(ctx, m, m.step_bytes ? m.step_bytes : kNvlsChunk);
  if (n <= 1) return b.build(std::move(name));
  if (ctx.domains > 1) {
    const SharpTree fabric = sharp_tree(ctx);
    if (fabric.empty()) throw std::invalid_argument("nccl nvls: across nodes needs reducing switches above every node");
    return nvls_across_nodes(std::move(name), bytes, ctx, m, fabric);
  }
  if (!ctx.domain_reduces) throw std::invalid_argument("nccl nvls: needs the group under one reducing switch");
  const NodeId sw = ctx.domain_switch[0];
  const std::uint64_t step = m.step_bytes ? m.step_bytes : kNvlsChunk;
  const std::uint32_t window = m.window ? m.window : 4;
  const BytesPerSecond rate = wire_rate(m);
  for (std::uint32_t x = 0; x < n; ++x) {
    const std::uint32_t base = b.delay(x, m.base, kNone);
    for (std::uint32_t c = 0; c < m.channels; ++c) {
      const std::uint64_t share = part_bytes(bytes, m.channels, c);
      const std::uint64_t k = ceil_div(share, step * n, kMaxNvlsRounds);
      std::vector<std::uint32_t> contrib(k * n, kNone);
      for (std::uint64_t j = 0; j < k; ++j) {
        const std::uint64_t round = part_bytes(share, k, j);
        for (std::uint32_t i = 0; i < n; ++i) {
          const CollectiveOp op = switch_op(OpKind::kSwitchReduce, i, sw,
                                            wire_bytes(m.proto, part_bytes(round, n, i)),
                                            tag_of(c, j, std::uint64_t{i} << 1), c, rate);
          contrib[j * n + i] = b.add(x, op, {base, j >= window ? contrib[(j - window) * n + i] : kNone});
        }
        const std::uint64_t mine = wire_bytes(m.proto, part_bytes(round, n, x));
        const std::uint32_t reduced =
            b.recv(x, kSwitchPeer, mine, tag_of(c, j, std::uint64_t{x} << 1), contrib[j * n + x]);
        const CollectiveOp mc = switch_op(OpKind::kMulticast, x, sw, mine, tag_of(c, j, std::uint64_t{x} << 1 | 1),
                                          c, rate);
        b.add(x, mc, {reduced});
        for (std::uint32_t i = 0; i < n; ++i) {  // shard i's total needs my copy of it
          b.recv(x, kSwitchPeer, wire_bytes(m.proto, part_bytes(round, n, i)), tag_of(c, j, std::uint64_t{i} << 1 | 1),
                 contrib[j * n + i]);
        }
      }
    }
    b.seal(x);
  }
  return b.build(std::move(name));
}

std::shared_ptr<const CollectiveProgram> make_nvls_scatter_gather_program(std::string name, CollectiveType type,
                                                                         std::uint64_t bytes, const AlgorithmContext& ctx,
                                                                         const StepModel& m) {
  const std::uint32_t n = ctx.size();
  Builder b(ctx, m, m.step_bytes ? m.step_bytes : kNvlsChunk);
  if (n <= 1) return b.build(std::move(name));
  const bool gather = type == CollectiveType::kAllGather;
  if (!gather && type != CollectiveType::kReduceScatter) throw std::invalid_argument("nccl nvls: unsupported collective");
  if (ctx.domains != 1 || !ctx.domain_reduces) {
    throw std::invalid_argument("nccl nvls: needs the group under one reducing switch");
  }
  const NodeId sw = ctx.domain_switch[0];
  const std::uint64_t step = m.step_bytes ? m.step_bytes : kNvlsChunk;
  const std::uint32_t window = m.window ? m.window : 4;
  const BytesPerSecond rate = wire_rate(m);
  // All-gather: `bytes` is each rank's shard, cut by channel and round alike
  // on every rank. Reduce-scatter: `bytes` is the whole input, each channel's
  // round cut into n shards, shard i rank i's (as NVLS all-reduce cuts it).
  for (std::uint32_t x = 0; x < n; ++x) {
    const std::uint32_t base = b.delay(x, m.base, kNone);
    for (std::uint32_t c = 0; c < m.channels; ++c) {
      const std::uint64_t share = part_bytes(bytes, m.channels, c);
      const std::uint64_t k = ceil_div(share, gather ? step : step * n, kMaxNvlsRounds);
      std::vector<std::uint32_t> sent(gather ? k : k * n, kNone);
      for (std::uint64_t j = 0; j < k; ++j) {
        const std::uint64_t round = part_bytes(share, k, j);
        if (gather) {
          // My shard, stored once to the multicast address: the switch copies it to every GPU.
          const CollectiveOp mc = switch_op(OpKind::kMulticast, x, sw,
                                            wire_bytes(m.proto, round), tag_of(c, j, std::uint64_t{x} << 1 | 1),
                                            c, rate);
          sent[j] = b.add(x, mc, {base, j >= window ? sent[j - window] : kNone});
          for (std::uint32_t i = 0; i < n; ++i) {
            b.recv(x, kSwitchPeer, wire_bytes(m.proto, round), tag_of(c, j, std::uint64_t{i} << 1 | 1));
          }
          continue;
        }
        // My copy of every shard up to the switch, which sums the n copies
        // into the shard's owner (multimem.ld_reduce); mine comes down.
        for (std::uint32_t i = 0; i < n; ++i) {
          const CollectiveOp op = switch_op(OpKind::kSwitchReduce, i, sw,
                                            wire_bytes(m.proto, part_bytes(round, n, i)),
                                            tag_of(c, j, std::uint64_t{i} << 1), c, rate);
          sent[j * n + i] = b.add(x, op, {base, j >= window ? sent[(j - window) * n + i] : kNone});
        }
        b.recv(x, kSwitchPeer, wire_bytes(m.proto, part_bytes(round, n, x)), tag_of(c, j, std::uint64_t{x} << 1),
               sent[j * n + x]);
      }
    }
    b.seal(x);
  }
  return b.build(std::move(name));
}

namespace {

// NVLS across nodes: each node's switch reduces its GPUs' copies of every
// shard into the shard's owner, the owners of one shard in every node (a
// rail) all-reduce it, and each owner multicasts the total into its node.
// The all-reduce across the nodes is NVLS-tree's binary tree over the network
// when `fabric` is empty, else the fabric's switches' own reduction (SHARP,
// NCCL's NVLS with CollNet): the owner uploads its node's sum to its rail's
// switches and gets every node's total from them (sharp_all_reduce).
std::shared_ptr<const CollectiveProgram> nvls_across_nodes(std::string name, std::uint64_t bytes,
                                                           const AlgorithmContext& ctx, const StepModel& m,
                                                           const SharpTree& fabric) {
  const std::uint32_t n = ctx.size();
  Builder b(ctx, m, m.step_bytes ? m.step_bytes : kNvlsChunk);
  if (n <= 1) return b.build(std::move(name));
  if (!ctx.domain_reduces) throw std::invalid_argument("nccl nvls across nodes: needs every node's switch to reduce");
  const std::uint32_t D = ctx.domains;
  const bool sharp = !fabric.empty();
  const auto nodes = chains(ctx, 0);  // each node's GPUs by rail: local index = shard
  const auto local = static_cast<std::uint32_t>(nodes[0].size());
  for (const auto& d : nodes) {
    if (d.size() != local) throw std::invalid_argument("nccl nvlstree: nodes of different sizes");
  }
  std::vector<std::uint32_t> index(n);
  for (const auto& d : nodes) {
    for (std::uint32_t i = 0; i < local; ++i) index[d[i]] = i;
  }
  const std::uint64_t step = m.step_bytes ? m.step_bytes : kNvlsChunk;
  const std::uint32_t window = m.window ? m.window : 4;
  const BytesPerSecond rate = wire_rate(m);
  // Tags' low bits: shard << 2 | 0 switch reduce, 1 multicast, 2 tree up (or SHARP), 3 tree down.
  const auto low = [](std::uint32_t shard, std::uint32_t what) { return std::uint64_t{shard} << 2 | what; };
  // The copy warps (StepModel::copy_rate), each group on pacers of its own.
  const bool copies = m.copy_rate > 0;
  const auto copy = [&m](std::uint64_t bytes, std::uint32_t pacer) {
    CollectiveOp op;
    op.kind = OpKind::kCompute;
    op.bytes = bytes;
    op.rate = m.copy_rate;
    op.channel = static_cast<std::uint16_t>(pacer);
    return op;
  };
  const auto scatter_pacer = [&m](std::uint32_t c) { return c + m.channels; };
  const auto gather_pacer = [&m](std::uint32_t c) { return c + 2 * m.channels; };
  for (std::uint32_t x = 0; x < n; ++x) {
    const std::uint32_t d = ctx.domain_of[x], me = index[x];
    const NodeId sw = ctx.domain_switch[d];
    const std::uint32_t base = b.delay(x, m.base, kNone);
    for (std::uint32_t c = 0; c < m.channels; ++c) {
      // NCCL's double binary tree over the nodes, alternating by channel
      // (src/graph/connect.cc, connectNvls: treeUp[c % 2]; ncclGetDtree).
      const TreeProgram::Node tn = TreeProgram::dtree(D, d, c % 2);
      const std::int64_t pd = tn.parent;
      std::vector<std::uint32_t> kids;
      for (const std::int64_t e : tn.child) {
        if (e >= 0) kids.push_back(nodes[static_cast<std::size_t>(e)][me]);
      }
      const std::uint64_t share = part_bytes(bytes, m.channels, c);
      const std::uint64_t k = ceil_div(share, step * local, kMaxNvlsRounds);
      std::vector<std::uint32_t> contrib(k * local, kNone);
      std::vector<std::uint32_t> kid_recv(k * kids.size(), kNone);  // posted a window behind (make_tree_program)
      // The network connections' slots (Builder::send_in_slot): up, and down to each child.
      std::vector<std::uint32_t> up_slot(k, kNone);
      std::vector<std::vector<std::uint32_t>> down_slot(kids.size(), std::vector<std::uint32_t>(k, kNone));
      std::vector<std::uint32_t> gathered(copies ? k : 0, kNone);
      for (std::uint64_t j = 0; j < k; ++j) {
        const std::uint64_t round = part_bytes(share, k, j);
        // My copy of the round into the NVLS buffer's slot, once the switch has read the slot's last round.
        const std::uint32_t scattered =
            copies ? b.add(x, copy(round, scatter_pacer(c)),
                           {base, j >= window ? contrib[(j - window) * local + local - 1] : kNone})
                   : base;
        for (std::uint32_t i = 0; i < local; ++i) {
          const CollectiveOp op = switch_op(OpKind::kSwitchReduce, nodes[d][i], sw,
                                            wire_bytes(m.proto, part_bytes(round, local, i)),
                                            tag_of(c, j, low(i, 0)), c, rate);
          contrib[j * local + i] = b.add(x, op, {scattered, j >= window ? contrib[(j - window) * local + i] : kNone});
        }
        // The multicast into every GPU's slot waits until I have copied out the slot's last round.
        const std::uint32_t buffer_free = copies && j >= window ? gathered[j - window] : kNone;
        // Shard i's total comes down (it needs my copy of it), then the round is copied out.
        const auto come_down = [&] {
          std::vector<std::uint32_t> down;
          for (std::uint32_t i = 0; i < local; ++i) {
            down.push_back(b.recv(x, kSwitchPeer, wire_bytes(m.proto, part_bytes(round, local, i)),
                                  tag_of(c, j, low(i, 1)), contrib[j * local + i]));
          }
          if (copies) gathered[j] = b.add(x, copy(round, gather_pacer(c)), down);
        };
        const std::uint64_t mine = wire_bytes(m.proto, part_bytes(round, local, me));
        // The node's sum of my shard, then the tree over the nodes (or SHARP).
        std::vector<std::uint32_t> sum = {b.recv(x, kSwitchPeer, mine, tag_of(c, j, low(me, 0)), contrib[j * local + me])};
        if (sharp) {
          // Up to my rail's switches, which sum every node's and send the
          // total to every owner (NCCL's directRecvDirectSend to nvls->out,
          // then recv from it; unpaced: the NIC sets the pace).
          const std::uint32_t total = sharp_all_reduce(b, fabric, x, mine, tag_of(c, j, low(me, 2)), c, 0, m.hop_inter, sum).total;
          b.add(x, switch_op(OpKind::kMulticast, x, sw, mine, tag_of(c, j, low(me, 1)), c, rate), {total, buffer_free});
          come_down();
          continue;
        }
        for (std::size_t i = 0; i < kids.size(); ++i) {
          std::uint32_t& got = kid_recv[j * kids.size() + i];
          got = b.recv(x, kids[i], mine, tag_of(c, j, low(me, 2)), j >= window ? kid_recv[(j - window) * kids.size() + i] : kNone);
          sum.push_back(b.delay(x, m.hop_inter, got));
        }
        std::vector<std::uint32_t> total = sum;
        if (pd >= 0) {
          const std::uint32_t up = nodes[static_cast<std::size_t>(pd)][me];
          const std::uint32_t sent_up =
              b.send_in_slot(up_slot, j, window, m.hop_inter, x, up, mine, tag_of(c, j, low(me, 2)), c, 0, sum);
          total = {b.delay(x, m.hop_inter, b.recv(x, up, mine, tag_of(c, j, low(me, 3)), sent_up))};
        }
        for (std::size_t i = 0; i < kids.size(); ++i) {
          b.send_in_slot(down_slot[i], j, window, m.hop_inter, x, kids[i], mine, tag_of(c, j, low(me, 3)), c, 0, total);
        }
        const CollectiveOp mc = switch_op(OpKind::kMulticast, x, sw, mine, tag_of(c, j, low(me, 1)),
                                          c, rate);
        total.push_back(buffer_free);
        b.add(x, mc, total);
        come_down();
      }
    }
    b.seal(x);
  }
  return b.build(std::move(name));
}

}  // namespace

std::shared_ptr<const CollectiveProgram> make_nvls_tree_program(std::string name, std::uint64_t bytes,
                                                                const AlgorithmContext& ctx, const StepModel& m) {
  return nvls_across_nodes(std::move(name), bytes, ctx, m, SharpTree{});
}

std::shared_ptr<const CollectiveProgram> make_collnet_chain_program(std::string name, std::uint64_t bytes,
                                                                    const AlgorithmContext& ctx, const StepModel& m) {
  const std::uint32_t n = ctx.size();
  Builder b(ctx, m, m.step_bytes ? m.step_bytes : chain_step_payload(m.proto));
  if (n <= 1) return b.build(std::move(name));
  const SharpTree fabric = sharp_tree(ctx);
  if (fabric.empty()) throw std::invalid_argument("nccl collnetchain: needs reducing switches above every node");
  const std::uint64_t step = m.step_bytes ? m.step_bytes : chain_step_payload(m.proto);
  const std::uint32_t window = m.window ? m.window : kChainStepsInFlight;
  const BytesPerSecond rate = wire_rate(m);
  const AddendReads reads(m);
  std::vector<std::uint32_t> base(n);
  for (std::uint32_t r = 0; r < n; ++r) base[r] = b.delay(r, m.base, kNone);
  for (std::uint32_t c = 0; c < m.channels; ++c) {
    // Each node's GPUs by rail, rotated so that rail c % local heads the chain (comes last).
    const auto nodes = chains(ctx, 0);
    const std::uint64_t share = part_bytes(bytes, m.channels, c);
    const std::uint64_t k = ceil_div(share, step, kMaxChainLoops);
    for (auto chain : nodes) {
      const auto L = static_cast<std::uint32_t>(chain.size());
      std::rotate(chain.begin(), chain.begin() + (c + 1) % L, chain.end());
      const std::uint32_t head = chain[L - 1];
      std::vector<std::uint32_t> leaf_send(k, kNone);
      for (std::uint64_t j = 0; j < k; ++j) {
        const std::uint64_t payload = part_bytes(share, k, j);
        const std::uint64_t w = wire_bytes(m.proto, payload);
        const std::uint64_t up = tag_of(c, j, 0), down = tag_of(c, j, 1), sharp = tag_of(c, j, 2);
        // Up the chain: the leaf sends, each next rank adds its addend and
        // forwards (NCCL's recvReduceSend, the head's to the network).
        std::vector<std::uint32_t> ready = {base[chain[0]], j >= window ? leaf_send[j - window] : kNone};
        std::vector<std::uint32_t> sent_up(L, kNone);
        for (std::uint32_t i = 0; i + 1 < L; ++i) {
          const BytesPerSecond paced = i == 0 ? rate : reads.summing_rate(rate, w, payload);
          const std::uint32_t sent = b.send(chain[i], chain[i + 1], w, up, c, paced, ready);
          sent_up[i] = sent;
          if (i == 0) leaf_send[j] = sent;
          ready = {base[chain[i + 1]], b.delay(chain[i + 1], m.hop_intra, b.recv(chain[i + 1], chain[i], w, up))};
        }
        // The head's sum of its node to the rail's switches; every node's head gets the total.
        if (L == 1) ready.push_back(j >= window ? leaf_send[j - window] : kNone);
        // Unpaced (the NIC sets the upload's pace) but for the head's read of its addend.
        const SharpOps up_and_down = sharp_all_reduce(b, fabric, head, w, sharp, c,
                                                      L > 1 ? reads.summing_rate(0, w, payload) : 0, m.hop_inter, ready);
        if (L == 1) leaf_send[j] = up_and_down.upload;
        std::uint32_t got = up_and_down.total;
        // Down the chain (the total comes down after my sum went up).
        for (std::uint32_t i = L - 1; i > 0; --i) {
          b.send(chain[i], chain[i - 1], w, down, c, rate, {got});
          got = b.delay(chain[i - 1], m.hop_intra, b.recv(chain[i - 1], chain[i], w, down, sent_up[i - 1]));
        }
      }
    }
  }
  return b.build(std::move(name));
}

std::shared_ptr<const CollectiveProgram> make_collnet_direct_program(std::string name, std::uint64_t bytes,
                                                                     const AlgorithmContext& ctx, const StepModel& m) {
  const std::uint32_t n = ctx.size();
  Builder b(ctx, m, m.step_bytes ? m.step_bytes : chain_step_payload(m.proto));
  if (n <= 1) return b.build(std::move(name));
  const SharpTree fabric = sharp_tree(ctx);
  if (fabric.empty()) throw std::invalid_argument("nccl collnetdirect: needs reducing switches above every node");
  const auto nodes = chains(ctx, 0);  // each node's GPUs by rail: local index = the shard it heads
  const auto local = static_cast<std::uint32_t>(nodes[0].size());
  for (const auto& d : nodes) {
    if (d.size() != local) throw std::invalid_argument("nccl collnetdirect: nodes of different sizes");
  }
  std::vector<std::uint32_t> index(n);
  for (const auto& d : nodes) {
    for (std::uint32_t i = 0; i < local; ++i) index[d[i]] = i;
  }
  // NCCL's chunk per head (src/enqueue.cc, calcCollChunking): a Simple slot
  // (512 KiB), halved while the loops per channel are fewer than 64 x depth
  // (depth 2 when the node has other GPUs, src/transport/coll_net.cc) and it
  // is above 128 KiB: 128 KiB below about 1 GiB on 8 channels of 8 GPUs.
  std::uint64_t step = m.step_bytes ? m.step_bytes : chain_step_payload(m.proto);
  const std::uint64_t depth_loops = local > 1 ? 128 : 64;
  while (step > kCollNetDirectMinChunk && bytes / (std::uint64_t{m.channels} * local * step) < depth_loops) step /= 2;
  const std::uint32_t window = m.window ? m.window : kChainStepsInFlight;
  const BytesPerSecond rate = wire_rate(m);
  const AddendReads reads(m);
  // Tags' low bits: head << 2 | 0 scatter to the head, 1 SHARP, 2 the head's broadcast.
  const auto low = [](std::uint32_t head, std::uint32_t what) { return std::uint64_t{head} << 2 | what; };
  // NCCL's kernel runs the scatter, the head's reduce and its broadcast in
  // separate warps of the channel's block (src/device/all_reduce.h). The
  // scatter and the broadcast share the GPU's NVLink sends: one pacer, which
  // the one that has work uses whole. The reduce warps' read of the head's
  // addend is paced apart (a second pacer per channel), so it does not queue
  // behind the scatter of the loops in flight.
  const auto reduce_pacer = [&m](std::uint32_t c) { return c + m.channels; };
  for (std::uint32_t x = 0; x < n; ++x) {
    const std::uint32_t me = index[x];
    const auto& node = nodes[ctx.domain_of[x]];
    const std::uint32_t base = b.delay(x, m.base, kNone);
    for (std::uint32_t c = 0; c < m.channels; ++c) {
      const std::uint64_t share = part_bytes(bytes, m.channels, c);
      const std::uint64_t k = ceil_div(share, step * local, kMaxChainLoops);
      std::vector<std::uint32_t> scattered(k * local, kNone);
      for (std::uint64_t j = 0; j < k; ++j) {
        const std::uint64_t loop = part_bytes(share, k, j);
        // Scatter: my copy of every other head's shard, to it (the next rails first).
        for (std::uint32_t s = 1; s < local; ++s) {
          const std::uint32_t h = (me + s) % local;
          const std::uint64_t w = wire_bytes(m.proto, part_bytes(loop, local, h));
          scattered[j * local + h] = b.send(x, node[h], w, tag_of(c, j, low(h, 0)), c, rate,
                                            {base, j >= window ? scattered[(j - window) * local + h] : kNone});
        }
        // As the head of my shard: the node's copies, plus my addend, up to my rail's switch (SHARP).
        const std::uint64_t payload = part_bytes(loop, local, me);
        const std::uint64_t mine = wire_bytes(m.proto, payload);
        std::vector<std::uint32_t> ready = {base};
        for (std::uint32_t s = 1; s < local; ++s) {
          const std::uint32_t from = node[(me + local - s) % local];
          ready.push_back(b.delay(x, m.hop_intra, b.recv(x, from, mine, tag_of(c, j, low(me, 0)))));
        }
        if (local == 1) ready.push_back(j >= window ? scattered[(j - window) * local + me] : kNone);
        // Unpaced (the NIC sets the upload's pace) but for the head's read of its addend.
        const SharpOps up_and_down = sharp_all_reduce(b, fabric, x, mine, tag_of(c, j, low(me, 1)), reduce_pacer(c),
                                                      local > 1 ? reads.summing_rate(0, mine, payload) : 0, m.hop_inter,
                                                      ready);
        if (local == 1) scattered[j * local + me] = up_and_down.upload;
        const std::uint32_t total = up_and_down.total;
        // The total to every other GPU of the node; theirs to me.
        for (std::uint32_t s = 1; s < local; ++s) {
          b.send(x, node[(me + s) % local], mine, tag_of(c, j, low(me, 2)), c, rate, {total});
        }
        for (std::uint32_t s = 1; s < local; ++s) {  // head h's total needs my copy of its shard
          const std::uint32_t h = (me + local - s) % local;
          b.delay(x, m.hop_intra,
                  b.recv(x, node[h], wire_bytes(m.proto, part_bytes(loop, local, h)), tag_of(c, j, low(h, 2)),
                         scattered[j * local + h]));
        }
      }
    }
    b.seal(x);
  }
  return b.build(std::move(name));
}

}  // namespace sim::nccl
