#include "system/producers/synthesizer.h"

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>

#include "core/error.h"
#include "core/units.h"
#include "system/producers/dag_program.h"

namespace sim {

namespace {

constexpr std::uint32_t kNone = 0xffffffffu;

// The NPUs u reaches without passing another NPU: its direct NPU neighbours,
// and every NPU behind the switches it is wired to.
std::vector<NodeId> channel_candidates(const Topology& topo, const std::vector<std::vector<LinkId>>& out, NodeId u,
                                       std::vector<std::uint32_t>& stamp) {
  std::vector<NodeId> found, frontier{u};
  stamp[u] = u;
  while (!frontier.empty()) {
    const NodeId x = frontier.back();
    frontier.pop_back();
    for (LinkId l : out[x]) {
      const NodeId y = topo.links()[l].to;
      if (stamp[y] == u) continue;
      stamp[y] = u;
      if (y < topo.npu_count()) found.push_back(y);
      else frontier.push_back(y);  // a switch: keep walking
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

// One chunk move in real time: over `channel`, from its src to its dst.
struct Move {
  std::uint32_t channel, chunk, phase;  // phase: 0 reduce-scatter, 1 all-gather (all-reduce), else 0
  Time start, end;
  bool reduce;  // the receiver reduces it into its own
};

// The all-gather moves of `schedule`, shifted by `offset`.
void add_gather(const TenSchedule& schedule, std::uint32_t phase, Time offset, std::vector<Move>& moves) {
  for (const TenTransfer& t : schedule.transfers) {
    moves.push_back(Move{t.channel, t.chunk, phase, offset + t.start, offset + t.end, false});
  }
}

// The moves of an all-gather synthesized on the transposed channels, run
// backwards: channel i of the transposed network is real channel i reversed,
// so the reversed transfer goes the real way; each chunk's broadcast tree
// becomes its reduction tree.
void add_reduce_scatter(const TenSchedule& transposed, std::vector<Move>& moves) {
  for (const TenTransfer& t : transposed.transfers) {
    moves.push_back(Move{t.channel, t.chunk, 0, transposed.finish - t.end, transposed.finish - t.start, true});
  }
}

struct Names {
  std::uint32_t n, k;
  CollectiveType type;
  std::uint64_t buffer;  // bytes of the buffer the chunk ranges cut: S*N for all-gather, S otherwise
};

class DagBuilder {
 public:
  DagBuilder(const Names& names, const std::vector<TenChannel>& channels, std::vector<Move> moves)
      : names_(names), channels_(channels), moves_(std::move(moves)), total_(names.n * names.k) {
    std::sort(moves_.begin(), moves_.end(), [](const Move& a, const Move& b) {
      return std::tie(a.start, a.end, a.channel, a.chunk) < std::tie(b.start, b.end, b.channel, b.chunk);
    });
  }

  std::vector<std::vector<DagProgramOp>> build() {
    number_ops();
    ops_.assign(names_.n, {});
    for (std::uint32_t r = 0; r < names_.n; ++r) ops_[r].resize(count_[r]);
    collect_reductions();
    chained_.assign(channels_.size() == 0 ? 0 : max_link() + 1, kNone);
    for (std::uint32_t r = 0; r < names_.n; ++r) fill_rank(r);
    return std::move(ops_);
  }

 private:
  struct Slot {
    Time key;
    int order;  // at equal times: receives, then reductions, then sends
    std::uint32_t move;
  };

  std::uint32_t owner(std::uint32_t chunk) const { return chunk / names_.k; }
  std::uint64_t tag(const Move& m) const { return static_cast<std::uint64_t>(m.phase) * total_ + m.chunk; }
  std::uint64_t bytes(std::uint32_t chunk) const { return part_bytes(names_.buffer, total_, chunk); }
  std::uint32_t max_link() const {
    std::uint32_t m = 0;
    for (const TenChannel& c : channels_) {
      for (LinkId l : c.links) m = std::max(m, l);
    }
    return m;
  }

  // Node ids in time order per rank: a receive is posted when its transfer
  // starts, a reduction runs when it lands, a send starts with its transfer.
  void number_ops() {
    std::vector<std::vector<Slot>> slots(names_.n);
    for (std::uint32_t i = 0; i < moves_.size(); ++i) {
      const Move& m = moves_[i];
      const TenChannel& c = channels_[m.channel];
      slots[c.src].push_back(Slot{m.start, 2, i});
      slots[c.dst].push_back(Slot{m.start, 0, i});
      if (m.reduce) slots[c.dst].push_back(Slot{m.end, 1, i});
    }
    send_.assign(moves_.size(), kNone), recv_.assign(moves_.size(), kNone), comp_.assign(moves_.size(), kNone);
    count_.assign(names_.n, 0);
    order_.assign(names_.n, {});
    for (std::uint32_t r = 0; r < names_.n; ++r) {
      std::sort(slots[r].begin(), slots[r].end(), [](const Slot& a, const Slot& b) {
        return std::tie(a.key, a.order, a.move) < std::tie(b.key, b.order, b.move);
      });
      for (const Slot& s : slots[r]) {
        std::vector<std::uint32_t>& index = s.order == 2 ? send_ : s.order == 0 ? recv_ : comp_;
        index[s.move] = count_[r]++;
        order_[r].push_back(s);
      }
    }
  }

  // (rank, chunk) -> the reductions of chunk at rank, sorted for lookup.
  void collect_reductions() {
    for (std::uint32_t i = 0; i < moves_.size(); ++i) {
      if (moves_[i].reduce) reductions_.emplace_back(channels_[moves_[i].channel].dst, moves_[i].chunk, comp_[i]);
    }
    std::sort(reductions_.begin(), reductions_.end());
  }

  void add_reductions(std::uint32_t rank, std::uint32_t chunk, std::vector<std::uint32_t>& parents) const {
    auto it = std::lower_bound(reductions_.begin(), reductions_.end(), std::make_tuple(rank, chunk, 0u));
    for (; it != reductions_.end() && std::get<0>(*it) == rank && std::get<1>(*it) == chunk; ++it) {
      parents.push_back(std::get<2>(*it));
    }
  }

  void fill_rank(std::uint32_t r) {
    std::vector<LinkId> touched;
    for (const Slot& s : order_[r]) {
      const Move& m = moves_[s.move];
      const TenChannel& c = channels_[m.channel];
      if (s.order == 0) {
        DagProgramOp& op = ops_[r][recv_[s.move]];
        op.op = CollectiveOp{.kind = OpKind::kRecv, .peer = c.src, .bytes = bytes(m.chunk), .tag = tag(m)};
        op.range = ChunkRange{m.chunk, 1};
      } else if (s.order == 1) {
        DagProgramOp& op = ops_[r][comp_[s.move]];
        op.op = CollectiveOp{.kind = OpKind::kCompute, .bytes = bytes(m.chunk)};
        op.range = ChunkRange{m.chunk, 1};
        op.parents.push_back(recv_[s.move]);
      } else {
        DagProgramOp& op = ops_[r][send_[s.move]];
        op.op = CollectiveOp{.kind = OpKind::kSend, .peer = c.dst, .bytes = bytes(m.chunk), .tag = tag(m)};
        op.range = ChunkRange{m.chunk, 1};
        send_parents(r, s.move, op.parents, touched);
      }
    }
    for (LinkId l : touched) chained_[l] = kNone;
  }

  // A send waits for its data (the receive that brought the chunk, or every
  // reduction into it) and for the previous send of this rank on any link it
  // shares, so each link carries one chunk at a time as in the schedule.
  void send_parents(std::uint32_t r, std::uint32_t move, std::vector<std::uint32_t>& parents,
                    std::vector<LinkId>& touched) {
    const Move& m = moves_[move];
    if (m.reduce || (r == owner(m.chunk) && names_.type == CollectiveType::kAllReduce)) {
      add_reductions(r, m.chunk, parents);
    } else if (r != owner(m.chunk)) {
      parents.push_back(gathered(r, m.chunk, m.phase));
    }
    for (LinkId l : channels_[m.channel].links) {
      if (chained_[l] == kNone) touched.push_back(l);
      else parents.push_back(chained_[l]);
      chained_[l] = send_[move];
    }
    std::sort(parents.begin(), parents.end());
    parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
  }

  // The receive that brought `chunk` to rank r in the all-gather phase.
  std::uint32_t gathered(std::uint32_t r, std::uint32_t chunk, std::uint32_t phase) {
    if (gathered_.empty()) {
      gathered_.assign(static_cast<std::size_t>(names_.n) * total_, kNone);
      for (std::uint32_t i = 0; i < moves_.size(); ++i) {
        const Move& m = moves_[i];
        if (!m.reduce && m.phase == phase) gathered_[std::size_t{channels_[m.channel].dst} * total_ + m.chunk] = recv_[i];
      }
    }
    return gathered_[std::size_t{r} * total_ + chunk];
  }

  Names names_;
  const std::vector<TenChannel>& channels_;
  std::vector<Move> moves_;
  std::uint32_t total_;
  std::vector<std::uint32_t> send_, recv_, comp_, count_, chained_, gathered_;
  std::vector<std::vector<Slot>> order_;
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> reductions_;
  std::vector<std::vector<DagProgramOp>> ops_;
};

std::vector<TenChannel> transposed(const std::vector<TenChannel>& channels) {
  std::vector<TenChannel> out = channels;
  for (TenChannel& c : out) std::swap(c.src, c.dst);
  return out;
}

}  // namespace

bool synthesizer_supports(CollectiveType type) {
  return type == CollectiveType::kAllGather || type == CollectiveType::kReduceScatter ||
         type == CollectiveType::kAllReduce;
}

std::vector<TenChannel> npu_channels(const Topology& topo, std::uint64_t chunk_bytes) {
  std::vector<std::vector<LinkId>> out(topo.node_count());
  for (LinkId l = 0; l < topo.links().size(); ++l) out[topo.links()[l].from].push_back(l);
  std::vector<std::uint32_t> stamp(topo.node_count(), kNone);
  std::vector<TenChannel> channels;
  std::vector<LinkId> route;
  for (NodeId u = 0; u < topo.npu_count(); ++u) {
    for (NodeId v : channel_candidates(topo, out, u, stamp)) {
      route.clear();
      topo.route(u, v, route);
      // The router may take another way (through an NPU) than the walk found.
      bool through_npu = false;
      Time latency = 0;
      BytesPerSecond bottleneck = std::numeric_limits<BytesPerSecond>::max();
      for (std::size_t i = 0; i < route.size(); ++i) {
        const Link& l = topo.links()[route[i]];
        through_npu = through_npu || (i + 1 < route.size() && l.to < topo.npu_count());
        latency += l.latency;
        bottleneck = std::min(bottleneck, l.bandwidth);
      }
      if (route.empty() || through_npu) continue;
      channels.push_back(TenChannel{u, v, route, latency + transfer_time(chunk_bytes, bottleneck)});
    }
  }
  return channels;
}

BytesPerSecond min_npu_ingress(const Topology& topology) {
  std::vector<BytesPerSecond> in(topology.npu_count(), 0);
  for (const Link& l : topology.links()) {
    if (l.to < topology.npu_count()) in[l.to] += l.bandwidth;
  }
  return in.empty() ? 0 : *std::min_element(in.begin(), in.end());
}

Synthesis synthesize(const Topology& topology, const SynthOptions& o) {
  if (!synthesizer_supports(o.type)) {
    throw InputError(std::string("collective synth: cannot synthesize ") + collective_name(o.type) +
                     " (allgather, reducescatter, allreduce)");
  }
  if (o.chunks == 0) throw InputError("collective synth: --chunks must be >= 1");
  if (o.bytes == 0) throw InputError("collective synth: --size must be > 0");
  const std::uint32_t n = topology.npu_count();
  if (static_cast<std::uint64_t>(n) * o.chunks > (1u << 26)) {
    throw InputError("collective synth: " + std::to_string(n) + " NPUs x " + std::to_string(o.chunks) +
                     " chunks is too many chunks (at most 2^26)");
  }
  // The schedule's size is known before any search: an all-gather (or
  // reduce-scatter) moves exactly N(N-1)k chunks, an all-reduce twice that,
  // and each move becomes two or three ET nodes. Its cost grows faster (each
  // offer scans the N k chunks' bits), so a count past kMaxSynthTransfers is
  // refused at once with the largest --chunks that fits, not left to run for
  // minutes without a word.
  const std::uint64_t phases = o.type == CollectiveType::kAllReduce ? 2 : 1;
  const std::uint64_t per_chunk = phases * n * (n > 0 ? n - 1 : 0);
  if (per_chunk > 0 && per_chunk * o.chunks > kMaxSynthTransfers) {
    const std::uint64_t most = kMaxSynthTransfers / per_chunk;
    throw InputError("collective synth: --chunks " + std::to_string(o.chunks) + " on " + std::to_string(n) +
                     " NPUs is a schedule of " + std::to_string(per_chunk * o.chunks) + " chunk transfers (" +
                     (phases == 2 ? "2 x " : "") + std::to_string(n) + " x " + std::to_string(n - 1) + " x " +
                     std::to_string(o.chunks) + " for " + collective_name(o.type) + "), past the " +
                     std::to_string(kMaxSynthTransfers) + " a synthesis is bounded to; " +
                     (most >= 1 ? "give --chunks " + std::to_string(most) + " or fewer"
                                : std::string("this topology has too many NPUs to synthesize for")) +
                     " (docs/synthesizer.md, limits)");
  }
  const bool gather = o.type == CollectiveType::kAllGather;
  // A chunk is S/k of an all-gather's per-rank input, S/(N k) of a reduced buffer.
  const std::uint64_t chunk = std::max<std::uint64_t>(1, gather ? o.bytes / o.chunks : o.bytes / (std::uint64_t{n} * o.chunks));
  const std::vector<TenChannel> channels = npu_channels(topology, chunk);
  const auto links = static_cast<std::uint32_t>(topology.links().size());

  std::vector<Move> moves;
  Time predicted = 0;
  if (o.type != CollectiveType::kAllGather) {
    const TenSchedule rs = match_all_gather(n, o.chunks, transposed(channels), links, o.seed);
    add_reduce_scatter(rs, moves);
    predicted = rs.finish;
  }
  if (o.type != CollectiveType::kReduceScatter) {
    const TenSchedule ag = match_all_gather(n, o.chunks, channels, links, o.seed + 1);
    add_gather(ag, o.type == CollectiveType::kAllReduce ? 1 : 0, predicted, moves);
    predicted += ag.finish;
  }
  Synthesis out;
  out.predicted = predicted;
  out.transfers = moves.size();
  out.channels = channels.size();
  const Names names{n, o.chunks, o.type, gather ? o.bytes * n : o.bytes};
  std::string name = "synth(chunks=" + std::to_string(o.chunks) + ",seed=" + std::to_string(o.seed) + ")";
  out.program = std::make_shared<DagProgram>(std::move(name), DagBuilder(names, channels, std::move(moves)).build(),
                                             std::uint64_t{n} * o.chunks);
  return out;
}

}  // namespace sim
