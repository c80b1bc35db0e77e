#include "system/collectives/nccl/programs/nccl_ring_program.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "system/collectives/nccl/model/nccl_protocol.h"

namespace sim::nccl {

namespace {

// A channel's chunks fit one 64-bit mask (Lane::last_delay).
static_assert(kMaxLoops <= 64);

constexpr std::uint32_t kUnset = ~std::uint32_t{0};

// The chunks k bits of a mask cover: all of them set.
std::uint64_t all_of(std::uint64_t k) { return k >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << k) - 1; }

// Set bits of `mask` below bit j. Most masks are 0 or a run of low bits (every
// chunk's last step delayed), answered without counting: baseline x86-64 has
// no POPCNT instruction, and libgcc's function in its place was 5% of a large
// training run.
std::uint64_t below(std::uint64_t mask, std::uint64_t j) {
  if (j == 0 || mask == 0) return 0;
  if ((mask & (mask + 1)) == 0) return std::min<std::uint64_t>(j, static_cast<std::uint64_t>(std::countr_one(mask)));
  return static_cast<std::uint64_t>(std::popcount(mask << (64 - j)));
}

// Division of a 32-bit n by a divisor d >= 2 fixed in advance, as a
// multiply: with M = floor((2^64 - 1) / d) + 1, floor(n / d) = (M x n) >> 64
// for every n and d below 2^32 (Lemire, Kaser and Kurz, "Faster remainder by
// direct computation", 2019). decode divides once or twice for every op the
// event loop issues or finishes, and a 64-bit division was a fifth of it.
std::uint64_t reciprocal(std::uint64_t d) {
  return d >= 2 && d <= 0xffffffffu ? ~std::uint64_t{0} / d + 1 : 0;
}
std::uint64_t quotient(std::uint64_t n, std::uint64_t m) {
  return static_cast<std::uint64_t>((static_cast<uint128>(m) * n) >> 64);
}

}  // namespace

NcclRingProgram::NcclRingProgram(std::string name, CollectiveType type, std::uint64_t bytes,
                                 const AlgorithmContext& ctx, const StepModel& m)
    : name_(std::move(name)), n_(ctx.size()), reads_(m) {
  gather_ = type == CollectiveType::kAllGather;
  if (type != CollectiveType::kAllReduce && type != CollectiveType::kReduceScatter && !gather_) {
    throw std::invalid_argument("nccl ring: unsupported collective");
  }
  const std::uint32_t n = n_;
  steps_ = n <= 1 ? 0 : (type == CollectiveType::kAllReduce ? 2 * (n - 1) : n - 1);
  const std::uint64_t step = m.step_bytes ? m.step_bytes : step_payload(m.proto);
  window_ = m.window ? m.window : steps_in_flight(m.proto);
  proto_ = m.proto;
  rate_ = wire_rate(m);
  intra_rate_ = intra_wire_rate(m);
  base_ = m.base;
  hop_intra_ = m.hop_intra;
  hop_inter_ = m.hop_inter;
  has_base_ = steps_ > 0 && m.base > 0;
  proxy_ns_ = proxy_nanoseconds(m.proxy);
  step_wire_ = std::max<std::uint64_t>(1, wire_bytes(m.proto, step));
  writes_ = m.writes;
  domain_of_ = ctx.domain_of;
  reduces_ = !gather_ && reads_.charged() && rate_ > 0;
  reduced_steps_ = gather_ || n == 0 ? 0 : n - 1;
  last_sum_ = reduces_ && type == CollectiveType::kReduceScatter;
  channels_ = steps_ > 0 ? m.channels : 0;
  // Reduce-scatter and all-reduce cut each chunk into n pieces, one per
  // rank: when the buffer allows, every channel's share and every chunk is a
  // multiple of n bytes, so all pieces of a chunk are equal; otherwise they
  // differ by a byte, by ring position.
  even_ = !gather_ && n > 0 && bytes % n == 0;

  share_.resize(channels_);
  chunks_.resize(channels_);
  uniform_chunk_.assign(channels_, 0);
  uniform_piece_.assign(channels_, 0);
  ring_.resize(std::size_t{channels_} * n);
  index_.resize(std::size_t{channels_} * n);
  lanes_.resize(std::size_t{channels_} * n);
  delays_.resize(std::size_t{channels_} * n);
  firsts_.resize(std::size_t{channels_} * n);
  op_count_.assign(n, has_base_ ? 1 : 0);
  std::vector<std::uint64_t> count(op_count_.begin(), op_count_.end());
  for (std::uint32_t c = 0; c < channels_; ++c) {
    std::uint32_t* ring = &ring_[std::size_t{c} * n];
    for (const auto& d : chains(ctx, c)) ring = std::copy(d.begin(), d.end(), ring);
    for (std::uint32_t q = 0; q < n; ++q) index_[std::size_t{c} * n + ring_at(c, q)] = q;
    for (std::uint32_t pos = 0; pos < n; ++pos) delays_[std::size_t{pos} * channels_ + c] = hop(c, pos) > 0 ? 1 : 0;
    share_[c] = even_ ? n * part_bytes(bytes / n, channels_, c) : part_bytes(bytes, channels_, c);
    chunks_[c] = ceil_div(share_[c], gather_ ? step : step * n);
    const std::uint64_t k = chunks_[c];
    // chunk_bytes: n x part_bytes(share / n, k, j) when even, else part_bytes(share, k, j).
    if (k > 0 && (even_ ? (share_[c] / n) % k == 0 : share_[c] % k == 0)) {
      uniform_chunk_[c] = even_ ? n * (share_[c] / n / k) : share_[c] / k;
      // A chunk of n x v bytes has n pieces of v; an all-gather sends the chunk whole.
      if (gather_) {
        uniform_piece_[c] = uniform_chunk_[c];
      } else if (even_) {
        uniform_piece_[c] = uniform_chunk_[c] / n;
      }
    }
    const std::uint64_t all = all_of(k);
    for (std::uint32_t pos = 0; pos < n; ++pos) {
      Lane& l = lanes_[std::size_t{pos} * channels_ + c];
      const bool dh = hop_delays(c, pos);
      l.per_chunk = 2 * steps_ + (dh ? steps_ - 1 : 0);
      if (!last_sum_ || dh) {
        l.last_delay = dh ? all : 0;  // the hop alone, or the hop and a read (never shorter)
      } else {
        for (std::uint64_t j = 0; j < k; ++j) {
          if (delay_of(c, pos, j, steps_ - 1) > 0) l.last_delay |= std::uint64_t{1} << j;
        }
      }
      if (l.last_delay == 0 || l.last_delay == all) {
        l.chunk_reciprocal = reciprocal(l.per_chunk + (l.last_delay == 0 ? 0 : 1));
      }
      if (count[pos] > 0xffffffffu) throw std::length_error("nccl ring: more than 2^32 ops on a rank");
      firsts_[std::size_t{pos} * channels_ + c] = static_cast<std::uint32_t>(count[pos]);
      count[pos] += k * l.per_chunk + static_cast<std::uint64_t>(std::popcount(l.last_delay));
    }
  }
  // (b (i + 1) < n^2 stays below 2^32 in piece_bytes)
  n_reciprocal_ = n <= 0xffff ? reciprocal(n) : 0;
  channel_reciprocal_.assign(n, 0);
  for (std::uint32_t pos = 0; pos < n; ++pos) {
    if (count[pos] > 0xffffffffu) throw std::length_error("nccl ring: more than 2^32 ops on a rank");
    op_count_[pos] = static_cast<std::uint32_t>(count[pos]);
    if (channels_ < 2) continue;
    // Evenly spaced first ops: then channel c holds refs [f0 + c x d, f0 + (c + 1) x d)
    // (the last channel's up to the rank's end, longer or shorter).
    const std::uint32_t* f = &firsts_[std::size_t{pos} * channels_];
    const std::uint64_t d = f[1] - f[0];
    bool even_spacing = true;
    for (std::uint32_t c = 2; c < channels_ && even_spacing; ++c) even_spacing = f[c] - f[0] == c * d;
    if (even_spacing) channel_reciprocal_[pos] = reciprocal(d);
  }
  // The largest send's proxy time must fit CollectiveOp::proxy_ns (refused
  // here if not), so op() need not check: a piece is at most its chunk.
  if (proxy_ns_ > 0) {
    std::uint64_t largest = 0;
    for (std::uint32_t c = 0; c < channels_; ++c) {
      if (chunks_[c] > 0) largest = std::max(largest, ceil_div(share_[c], chunks_[c], ~std::uint64_t{0}) + n);
    }
    merged_proxy_ns(wire_bytes(proto_, largest), step_wire_, proxy_ns_);
  }
  symmetric_ = find_symmetry();
}

std::uint64_t NcclRingProgram::op_count(std::uint32_t pos) const { return op_count_[pos]; }

bool NcclRingProgram::same_node(std::uint32_t a, std::uint32_t b) const {
  return a >= domain_of_.size() || b >= domain_of_.size() || domain_of_[a] == domain_of_[b];
}

Time NcclRingProgram::hop(std::uint32_t c, std::uint32_t pos) const {
  return domain_of_[prev(c, pos)] == domain_of_[pos] ? hop_intra_ : hop_inter_;
}

std::uint64_t NcclRingProgram::chunk_bytes(std::uint32_t c, std::uint64_t j) const {
  if (const std::uint64_t u = uniform_chunk_[c]) return u;
  return even_ ? n_ * part_bytes(share_[c] / n_, chunks_[c], j) : part_bytes(share_[c], chunks_[c], j);
}

std::uint64_t NcclRingProgram::piece_bytes(std::uint32_t c, std::uint64_t j, std::int64_t q, std::uint32_t s) const {
  if (const std::uint64_t u = uniform_piece_[c]) return u;
  const std::uint64_t chunk = chunk_bytes(c, j);
  if (gather_) return chunk;
  // The piece ring index q sends at step s (reduce-scatter, then all-gather):
  // q is in [-1, n) and s in [0, 2 (n - 1)), so v is in [-(n - 1), n].
  const auto n = static_cast<std::int64_t>(n_);
  std::int64_t v = s < n_ - 1 ? q - s : q + 1 - (static_cast<std::int64_t>(s) - (n - 1));
  if (v < 0) v += n;
  if (v >= n) v -= n;
  const auto i = static_cast<std::uint64_t>(v);
  // part_bytes(chunk, n, i) = a + floor(b (i + 1) / n) - floor(b i / n) for
  // chunk = a n + b: by multiplies where every operand is below 2^32.
  if (n_reciprocal_ != 0 && chunk <= 0xffffffffu) {
    const std::uint64_t a = quotient(chunk, n_reciprocal_), b = chunk - a * n_;
    return a + quotient(b * (i + 1), n_reciprocal_) - quotient(b * i, n_reciprocal_);
  }
  return part_bytes(chunk, n_, i);
}

Time NcclRingProgram::delay_of(std::uint32_t c, std::uint32_t pos, std::uint64_t j, std::uint32_t s) const {
  const Time h = hop(c, pos);
  // Reduce-scatter's last step adds the piece into the output: a read with no send to pace it.
  if (last_sum_ && s + 1 == steps_) {
    return h + reads_.read_time(piece_bytes(c, j, static_cast<std::int64_t>(index_of(c, pos)) - 1, s));
  }
  return h;
}

std::uint64_t NcclRingProgram::chunk_first(std::uint32_t pos, std::uint32_t c, std::uint64_t j) const {
  const Lane& l = lane(pos, c);
  return firsts_[std::size_t{pos} * channels_ + c] + j * l.per_chunk + below(l.last_delay, j);
}

std::uint64_t NcclRingProgram::ref_of(std::uint32_t pos, Part part, std::uint32_t c, std::uint64_t j,
                                      std::uint32_t s) const {
  if (part == Part::kBase) return 0;
  const std::uint64_t per_step = hop_delays(c, pos) ? 3 : 2;
  const std::uint64_t at = chunk_first(pos, c, j) + s * per_step;
  return at + (part == Part::kSend ? 0 : part == Part::kRecv ? 1 : 2);
}

NcclRingProgram::Step NcclRingProgram::decode(std::uint32_t pos, OpRef ref) const {
  Step st;
  if (has_base_ && ref == 0) return st;
  // The channel: the last whose first op is at or before ref.
  const std::uint32_t* firsts = &firsts_[std::size_t{pos} * channels_];
  std::uint32_t lo = 0, hi = channels_;
  if (const std::uint64_t r = channel_reciprocal_[pos]) {
    lo = static_cast<std::uint32_t>(std::min<std::uint64_t>(channels_ - 1, quotient(ref - firsts[0], r)));
  } else {
    while (hi - lo > 1) {
      const std::uint32_t mid = lo + (hi - lo) / 2;
      (firsts[mid] <= ref ? lo : hi) = mid;
    }
  }
  st.c = lo;
  const Lane& l = lanes_[std::size_t{pos} * channels_ + lo];
  const std::uint64_t y = ref - firsts[lo];
  // The chunk: the last whose first op is at or before ref (chunks of
  // per_chunk ops, plus one for those whose last step has a delay): a
  // quotient when every chunk has as many ops, else a search.
  std::uint64_t j;
  if (l.chunk_reciprocal != 0) {
    j = quotient(y, l.chunk_reciprocal);
  } else {
    std::uint64_t a = 0, b = chunks_[lo];
    while (b - a > 1) {
      const std::uint64_t mid = a + (b - a) / 2;
      (mid * l.per_chunk + below(l.last_delay, mid) <= y ? a : b) = mid;
    }
    j = a;
  }
  st.j = j;
  const std::uint64_t z = y - (j * l.per_chunk + below(l.last_delay, j));
  // Steps of 2 or 3 ops: divisions by constants (a multiply), not by a variable.
  const bool three = hop_delays(lo, pos);
  std::uint64_t s = three ? z / 3 : z / 2;
  std::uint64_t w = three ? z % 3 : z % 2;
  if (s == steps_) {  // the last step's delay where the other steps have none
    s = steps_ - 1;
    w = 2;
  }
  st.s = static_cast<std::uint32_t>(s);
  st.part = w == 0 ? Part::kSend : w == 1 ? Part::kRecv : Part::kDelay;
  return st;
}

std::uint64_t NcclRingProgram::before_send(std::uint32_t pos, std::uint32_t c, std::uint64_t j, std::uint32_t s) const {
  const std::uint32_t p = s - 1;
  const bool delayed = p + 1 < steps_ ? hop_delays(c, pos) : (lane(pos, c).last_delay >> j & 1) != 0;
  return ref_of(pos, delayed ? Part::kDelay : Part::kRecv, c, j, p);
}

std::uint64_t NcclRingProgram::device_extra(std::uint32_t a, std::uint32_t b, std::uint64_t wire) const {
  if (!writes_.active() || a >= domain_of_.size() || b >= domain_of_.size() || domain_of_[a] == domain_of_[b]) return 0;
  return merged_write_extra(writes_, wire, step_wire_);
}

CollectiveOp NcclRingProgram::op(std::uint32_t pos, OpRef ref) const {
  const Step st = decode(pos, ref);
  CollectiveOp op;
  switch (st.part) {
    case Part::kBase:
      op.kind = OpKind::kCompute;
      op.duration = base_;
      break;
    case Part::kSend: {
      const auto q = static_cast<std::int64_t>(index_of(st.c, pos));
      const std::uint64_t out = piece_bytes(st.c, st.j, q, st.s);
      const std::uint64_t wire = wire_bytes(proto_, out);
      op.kind = OpKind::kSend;
      op.peer = next(st.c, pos);
      const std::uint64_t extra = device_extra(pos, op.peer, wire);
      op.bytes = wire + extra;
      op.tag = tag_of(st.c, st.j, st.s);
      op.channel = static_cast<std::uint16_t>(st.c);
      // Steps 1..n-1 send what step s-1 received and added in (all-reduce's step n-1: the full sum).
      const bool sum = st.s >= 1 && st.s <= reduced_steps_;
      const BytesPerSecond rate = same_node(pos, op.peer) ? intra_rate_ : rate_;
      op.rate = NetWrites::paced(sum && reduces_ ? reads_.summing_rate(rate, wire, out) : rate, wire, extra);
      if (proxy_ns_ > 0 && pos < domain_of_.size() && op.peer < domain_of_.size() &&
          domain_of_[pos] != domain_of_[op.peer]) {
        op.proxy_ns = merged_proxy_ns(wire, step_wire_, proxy_ns_);  // below 2^32: the constructor checked
      }
      break;
    }
    case Part::kRecv: {
      const auto q = static_cast<std::int64_t>(index_of(st.c, pos));
      op.kind = OpKind::kRecv;
      op.peer = prev(st.c, pos);
      const std::uint64_t wire = wire_bytes(proto_, piece_bytes(st.c, st.j, q - 1, st.s));
      op.bytes = wire + device_extra(op.peer, pos, wire);  // as its send carries it
      op.tag = tag_of(st.c, st.j, st.s);
      break;
    }
    case Part::kDelay:
      op.kind = OpKind::kCompute;
      op.duration = delay_of(st.c, pos, st.j, st.s);
      break;
  }
  return op;
}

void NcclRingProgram::start(std::uint32_t pos, RankCursor& /*cursor*/, std::vector<OpRef>& ready) const {
  // Roots in OpRef order: the base delay, or else the first sends of the
  // first `window` chunks; and every receive.
  if (has_base_) ready.push_back(0);
  for (std::uint32_t c = 0; c < channels_; ++c) {
    const std::uint64_t per_step = hop_delays(c, pos) ? 3 : 2;
    for (std::uint64_t j = 0; j < chunks_[c]; ++j) {
      const std::uint64_t first = chunk_first(pos, c, j);
      if (!has_base_ && j < window_) ready.push_back(first);
      for (std::uint32_t s = 0; s < steps_; ++s) ready.push_back(first + s * per_step + 1);
    }
  }
}

void NcclRingProgram::finish(std::uint32_t pos, OpRef ref, RankCursor& /*cursor*/, std::vector<OpRef>& ready) const {
  const Step st = decode(pos, ref);
  switch (st.part) {
    case Part::kBase:
      for (std::uint32_t c = 0; c < channels_; ++c) {
        const std::uint64_t w = std::min<std::uint64_t>(window_, chunks_[c]);
        for (std::uint64_t j = 0; j < w; ++j) ready.push_back(chunk_first(pos, c, j));
      }
      break;
    case Part::kSend:
      // The first send of the chunk `window` on (the base delay is through: it came before this one).
      if (st.s == 0 && st.j + window_ < chunks_[st.c]) ready.push_back(chunk_first(pos, st.c, st.j + window_));
      break;
    case Part::kRecv: {
      const bool delayed = st.s + 1 < steps_ ? hop_delays(st.c, pos) : (lane(pos, st.c).last_delay >> st.j & 1) != 0;
      if (delayed) {
        ready.push_back(ref + 1);
      } else if (st.s + 1 < steps_) {
        ready.push_back(ref_of(pos, Part::kSend, st.c, st.j, st.s + 1));
      }
      break;
    }
    case Part::kDelay:
      if (st.s + 1 < steps_) ready.push_back(ref_of(pos, Part::kSend, st.c, st.j, st.s + 1));
      break;
  }
}

void NcclRingProgram::parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const {
  const Step st = decode(pos, ref);
  switch (st.part) {
    case Part::kBase:
    case Part::kRecv: break;
    case Part::kSend:
      if (st.s > 0) {
        out.push_back(before_send(pos, st.c, st.j, st.s));
        break;
      }
      if (has_base_) out.push_back(0);
      if (st.j >= window_) out.push_back(chunk_first(pos, st.c, st.j - window_));
      break;
    case Part::kDelay: out.push_back(ref - 1); break;
  }
}

OpRef NcclRingProgram::matched_send(OpRef recv) const {
  // Rank 0's send of the receive's tag: the op just before it.
  if (n_ > 0 && recv < op_count_[0] && decode(0, recv).part == Part::kRecv) return recv - 1;
  return kUnset;
}

std::uint32_t NcclRingProgram::symmetric_peer(std::uint32_t pos, std::uint32_t origin_peer) const {
  const auto it = std::lower_bound(origin_peers_.begin(), origin_peers_.end(), origin_peer);
  if (it == origin_peers_.end() || *it != origin_peer) return origin_peer;  // not a peer of the origin
  const std::uint32_t at = origin_lane_[static_cast<std::size_t>(it - origin_peers_.begin())];
  return (at & 1) ? prev(at >> 1, pos) : next(at >> 1, pos);
}

// NcclDagProgram::find_symmetry's answer on the same ring, from its rules:
// every rank's ops and dependencies are rank 0's (kind, bytes, tag,
// duration, channel, rate, the proxy's time) with its peers
// renamed one to one, and every receive takes a send of its tag and size.
// A ring position q sends piece q - s of a chunk at step s: as the ranks take
// every position, each step's pieces must all look alike on the wire.
bool NcclRingProgram::find_symmetry() {
  const std::uint32_t n = n_;
  if (n < 2 || steps_ == 0) return false;  // no op
  if (channels_ == 0) return has_base_;    // the base delay alone
  // Tags (channel << 48 | chunk << 24 | step) unique on a rank.
  if (channels_ > (1u << 16) || steps_ >= (1u << 24)) return false;
  // Bytes and rates: a chunk of v bytes has pieces of v / n and v / n + 1 bytes when n does not divide it.
  if (!gather_) {
    for (std::uint32_t c = 0; c < channels_; ++c) {
      for (std::uint64_t j = 0; j < chunks_[c]; ++j) {
        const std::uint64_t v = chunk_bytes(c, j);
        if (v % n == 0) continue;
        const std::uint64_t a = v / n;
        const std::uint64_t wa = wire_bytes(proto_, a), wb = wire_bytes(proto_, a + 1);
        if (wa != wb) return false;
        // Steps 1..n-1 send sums (summing_rate), when there is such a step.
        for (const BytesPerSecond rate : {rate_, intra_rate_}) {
          if (reduces_ && steps_ >= 2 && reads_.summing_rate(rate, wa, a) != reads_.summing_rate(rate, wb, a + 1)) {
            return false;
          }
        }
      }
    }
  }
  // Hop delays: the same on every rank (or none on every rank), each channel's ring on its own.
  const auto lasting = [](Time t) { return std::max<Time>(t, 0); };
  for (std::uint32_t c = 0; c < channels_; ++c) {
    if (steps_ >= 2 || !last_sum_) {
      const Time h0 = lasting(hop(c, 0));
      for (std::uint32_t pos = 1; pos < n; ++pos) {
        if (lasting(hop(c, pos)) != h0) return false;
      }
    }
    if (last_sum_) {
      std::vector<std::uint64_t> seen;  // chunk sizes checked
      for (std::uint64_t j = 0; j < chunks_[c]; ++j) {
        const std::uint64_t v = chunk_bytes(c, j);
        if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
        seen.push_back(v);
        const Time d0 = lasting(delay_of(c, 0, j, steps_ - 1));
        for (std::uint32_t pos = 1; pos < n; ++pos) {
          if (lasting(delay_of(c, pos, j, steps_ - 1)) != d0) return false;
        }
      }
    }
  }
  // The proxy and the two paces: every rank's sends cross nodes in the
  // channels rank 0's do (a ring over nodes of different sizes crosses at
  // some positions only).
  if (proxy_ns_ > 0 || intra_rate_ != rate_) {
    const auto crosses = [&](std::uint32_t c, std::uint32_t pos) {
      const std::uint32_t to = next(c, pos);
      return pos < domain_of_.size() && to < domain_of_.size() && domain_of_[pos] != domain_of_[to];
    };
    for (std::uint32_t c = 0; c < channels_; ++c) {
      for (std::uint32_t pos = 1; pos < n; ++pos) {
        if (crosses(c, pos) != crosses(c, 0)) return false;
      }
    }
  }
  // Peers: rank 0's neighbours in every channel's ring, renamed one to one on every rank.
  for (std::uint32_t c = 0; c < channels_; ++c) {
    for (std::uint32_t side = 0; side < 2; ++side) {
      const std::uint32_t peer = side ? prev(c, 0) : next(c, 0);
      const auto it = std::lower_bound(origin_peers_.begin(), origin_peers_.end(), peer);
      if (it != origin_peers_.end() && *it == peer) continue;
      const auto at = it - origin_peers_.begin();
      origin_peers_.insert(it, peer);
      origin_lane_.insert(origin_lane_.begin() + at, c << 1 | side);
    }
  }
  std::vector<std::uint32_t> map(origin_peers_.size()), used(n, kUnset);
  for (std::uint32_t p = 0; p < n; ++p) {
    std::fill(map.begin(), map.end(), kUnset);
    for (std::uint32_t c = 0; c < channels_; ++c) {
      for (std::uint32_t side = 0; side < 2; ++side) {
        const std::uint32_t a = side ? prev(c, 0) : next(c, 0);
        const std::uint32_t b = side ? prev(c, p) : next(c, p);
        std::uint32_t& m = map[static_cast<std::size_t>(
            std::lower_bound(origin_peers_.begin(), origin_peers_.end(), a) - origin_peers_.begin())];
        if (m == kUnset) {
          if (b == p || used[b] == p) return false;
          used[b] = p;
          m = b;
        } else if (m != b) {
          return false;
        }
      }
    }
  }
  // (Rank p's receive from its previous rank in a ring then takes that
  // rank's send to its next one, p: every ring closes.)
  return true;
}

}  // namespace sim::nccl
