#include "system/collectives/hierarchical.h"

#include <algorithm>
#include <bit>
#include <deque>
#include <numeric>
#include <set>
#include <stdexcept>

#include "core/error.h"

namespace sim {

bool HierarchicalProgram::supports(CollectiveType type) {
  return type == CollectiveType::kAllReduce || type == CollectiveType::kReduceScatter ||
         type == CollectiveType::kAllGather || type == CollectiveType::kAllToAll;
}

std::vector<HierarchicalProgram::PhaseInfo> HierarchicalProgram::phase_list() const {
  std::vector<PhaseInfo> out;
  for (const Phase& ph : phase_) out.push_back({ph.dim, ph.type});
  return out;
}

HierarchicalProgram::HierarchicalProgram(CollectiveType type, std::uint64_t bytes, std::uint32_t chunks,
                                         std::uint32_t active, HierarchicalOptimization optimization,
                                         std::vector<HierarchicalDimension> dims, std::vector<std::uint32_t> grid,
                                         bool dimension_queue)
    : type_(type),
      bytes_(bytes),
      chunks_(chunks),
      active_(active),
      optimization_(optimization),
      dims_(std::move(dims)),
      grid_(std::move(grid)) {
  queue_ = dimension_queue && active_ != 0;
  using T = CollectiveType;
  if (!supports(type_)) throw std::invalid_argument("hierarchical: unsupported collective");
  if (chunks_ == 0) throw std::invalid_argument("hierarchical: zero chunks");
  n_ = static_cast<std::uint32_t>(grid_.size());
  std::uint64_t product = 1;
  for (const HierarchicalDimension& d : dims_) {
    if (d.size < 2) throw std::invalid_argument("hierarchical: a dimension of fewer than 2 ranks");
    if (d.variants < 1 || d.variants > 2) throw std::invalid_argument("hierarchical: 1 or 2 variants per dimension");
    stride_.push_back(static_cast<std::uint32_t>(product));
    product *= d.size;
  }
  if (product != n_) throw std::invalid_argument("hierarchical: the dimensions do not multiply to the group size");
  pos_of_grid_.assign(n_, 0xffffffffu);
  for (std::uint32_t p = 0; p < n_; ++p) {
    if (grid_[p] >= n_ || pos_of_grid_[grid_[p]] != 0xffffffffu) {
      throw std::invalid_argument("hierarchical: the grid is not a permutation");
    }
    pos_of_grid_[grid_[p]] = p;
  }
  small_ = part_bytes(bytes_, chunks_, 0);
  uniform_ = bytes_ % chunks_ == 0;

  // The phases, with whether each shrinks the data (a reduce-scatter) or grows it back.
  const auto D = static_cast<std::uint32_t>(dims_.size());
  struct Plan {
    std::uint32_t dim;
    T type;
    bool relabel;
  };
  std::vector<Plan> plan;
  std::string opt;
  if (type_ == T::kAllReduce) {
    if (optimization_ == HierarchicalOptimization::kBaseline || D <= 1) {
      for (std::uint32_t i = 0; i < D; ++i) plan.push_back({i, T::kAllReduce, false});
    } else {
      const auto shrinks = [&](std::uint32_t i) {
        return dims_[i].supports(T::kReduceScatter) && dims_[i].supports(T::kAllGather);
      };
      for (std::uint32_t i = 0; i + 1 < D; ++i) plan.push_back({i, shrinks(i) ? T::kReduceScatter : T::kAllReduce, false});
      plan.push_back({D - 1, T::kAllReduce, false});
      for (std::uint32_t i = D - 1; i-- > 0;) {
        if (shrinks(i)) plan.push_back({i, T::kAllGather, true});
        else if (dims_[i].gather_by_allreduce) plan.push_back({i, T::kAllReduce, false});
      }
    }
    opt = optimization_ == HierarchicalOptimization::kBaseline ? ";baseline" : ";localBWAware";
  } else if (type_ == T::kAllGather) {
    for (std::uint32_t i = D; i-- > 0;) plan.push_back({i, T::kAllGather, false});
  } else {
    for (std::uint32_t i = 0; i < D; ++i) plan.push_back({i, type_, false});
  }
  phases_ = static_cast<std::uint32_t>(plan.size());
  per_chunk_.assign(D, 0);

  // Phase programs, per chunk size class, sized for the chunk's first region.
  std::map<std::tuple<std::uint32_t, int, std::uint64_t, std::uint32_t>, std::shared_ptr<const CollectiveProgram>> made;
  const auto make = [&](std::uint32_t dim, T t, std::uint64_t b, std::uint32_t v) {
    auto& slot = made[{dim, static_cast<int>(t), b, v}];
    if (!slot) {
      if (!dims_[dim].supports(t)) {
        throw InputError("hierarchical " + std::string(collective_name(type_)) + ": '" + dims_[dim].name +
                         "' (dimension of " + std::to_string(dims_[dim].size) + " ranks) does not implement " +
                         collective_name(t));
      }
      slot = dims_[dim].make(t, dims_[dim].size, b, v);
    }
    return slot;
  };
  phase_.resize(phases_);
  for (std::uint32_t k = 0; k < 2; ++k) {
    const std::uint64_t x = small_ + k;
    std::uint64_t cur = x;
    std::vector<std::uint64_t> before;  // data before each reduce-scatter still to be undone
    for (std::uint32_t p = 0; p < phases_; ++p) {
      const Plan& pl = plan[p];
      const std::uint32_t n = dims_[pl.dim].size;
      Phase& ph = phase_[p];
      ph.dim = pl.dim;
      ph.type = pl.type;
      ph.relabel = pl.relabel;
      if (k == 0) ph.ordinal = per_chunk_[pl.dim]++;
      std::uint64_t b = cur;
      if (type_ == T::kAllGather) {
        cur *= n;  // the input, then the growing gathered data
      } else if (pl.type == T::kReduceScatter) {
        before.push_back(cur);
        cur = part_bytes(cur, n, 0);
      } else if (pl.type == T::kAllGather) {
        b = cur;  // each rank's input: its reduce-scatter piece
        cur = before.back();
        before.pop_back();
      }
      for (std::uint32_t v = 0; v < 2; ++v) ph.prog[k][v] = make(pl.dim, pl.type, b, v < dims_[pl.dim].variants ? v : 0);
    }
  }
  for (std::uint32_t p = 0; p < phases_; ++p) {
    for (const auto& by_variant : phase_[p].prog) {
      for (const auto& pr : by_variant) {
        bits_ = std::max(bits_, pr->ref_bits());
        for (std::uint32_t l = 0; l < pr->group_size(); ++l) {
          if (pr->op_count(l) == 0) throw std::logic_error("hierarchical: a phase program with a rank without ops");
        }
      }
    }
  }
  // The phase programs' tags, when some do not fit 32 bits: a dense index of
  // every tag any of them uses (a message's tag must stay distinct from the
  // other messages between its two ranks, and fit beside the phase's index).
  {
    std::set<const CollectiveProgram*> seen;
    std::vector<std::uint64_t> tags;
    bool wide = false;
    for (const Phase& ph : phase_) {
      for (const auto& by_variant : ph.prog) {
        for (const auto& pr : by_variant) {
          if (!seen.insert(pr.get()).second) continue;
          for (std::uint32_t l = 0; l < pr->group_size(); ++l) {
            for_each_op(*pr, l, [&](OpRef, const CollectiveOp& o) {
              if (o.kind == OpKind::kCompute) return true;
              tags.push_back(o.tag);
              wide = wide || o.tag > 0xffffffffu;
              return true;
            });
          }
        }
      }
    }
    if (wide) {
      std::sort(tags.begin(), tags.end());
      tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
      if (tags.size() > 0xffffffffu) throw InputError("hierarchical: more than 2^32 distinct message tags in its phases");
      for (std::size_t i = 0; i < tags.size(); ++i) dense_tag_.emplace(tags[i], static_cast<std::uint32_t>(i));
    }
  }
  pbits_ = phases_ <= 1 ? 1 : static_cast<unsigned>(std::bit_width(phases_ - 1));
  if (bits_ + pbits_ >= 64 || static_cast<unsigned>(std::bit_width(chunks_)) > 64 - bits_ - pbits_) {
    throw InputError("hierarchical: " + std::to_string(chunks_) + " chunks of " + std::to_string(phases_) +
                     " phases do not fit an op reference; use fewer chunks");
  }
  mask_ = bits_ == 0 ? 0 : (~OpRef{0} >> (64 - bits_));

  // Exact shares of a common grid: every reduce-scatter / all-gather piece is
  // one whole part of its phase program, and all-reduce phases cut their
  // region into parts that divide it.
  if (type_ == T::kAllReduce || type_ == T::kReduceScatter) {
    ranged_ = true;
    std::uint64_t shrink = 1, l = 1;
    for (std::uint32_t p = 0; p < phases_ && ranged_; ++p) {
      const Phase& ph = phase_[p];
      for (const auto& by_variant : ph.prog) {
        const std::uint64_t t = by_variant[0]->chunk_total();
        if (ph.type == T::kAllReduce) {
          ranged_ = ranged_ && t > 0;
          if (t > 0) l = std::lcm(l, t);
        } else {
          ranged_ = ranged_ && t == dims_[ph.dim].size;
        }
      }
      if (ph.type == T::kReduceScatter) shrink *= dims_[ph.dim].size;
    }
    units_ = shrink * l;
    if (!ranged_ || units_ > (1ull << 40) / chunks_) ranged_ = false;
    const std::uint64_t total = static_cast<std::uint64_t>(chunks_) * units_;
    // Phase programs that pad their parts to one size (rings: the buffer need
    // not divide) make the grid's parts one size as well, so that every rank's
    // pieces are equal at any size, as in a single ring.
    equal_ = ranged_;
    for (const Phase& ph : phase_) {
      for (const auto& by_variant : ph.prog) {
        for (const auto& pr : by_variant) equal_ = equal_ && pr->equal_parts();
      }
    }
    if (equal_) equal_part_ = equal_part_bytes(bytes_, total);
    if (ranged_ && !equal_ && total <= (1u << 20)) {
      cuts_.resize(total + 1);
      for (std::uint64_t i = 0; i <= total; ++i) cuts_[i] = part_cut(bytes_, total, i);
    }
  }

  // Per (position, phase): line position, line base, region base.
  line_pos_.assign(static_cast<std::size_t>(n_) * phases_, 0);
  line_base_.assign(line_pos_.size(), 0);
  base_.assign(line_pos_.size(), 0);
  for (std::uint32_t pos = 0; pos < n_; ++pos) {
    std::uint64_t base = 0, region = units_;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> stack;
    for (std::uint32_t p = 0; p < phases_; ++p) {
      Phase& ph = phase_[p];
      const HierarchicalDimension& d = dims_[ph.dim];
      const std::uint32_t a = grid_[pos] / stride_[ph.dim] % d.size;
      const std::size_t at = static_cast<std::size_t>(pos) * phases_ + p;
      line_pos_[at] = ph.relabel ? (a + d.rs_shift) % d.size : a;
      line_base_[at] = grid_[pos] - a * stride_[ph.dim];
      if (!ranged_) continue;
      if (ph.type == T::kReduceScatter) {
        base_[at] = base;
        ph.mult = region / d.size;
        stack.emplace_back(base, region);
        base += (a + d.rs_shift) % d.size * (region / d.size);
        region /= d.size;
      } else if (ph.type == T::kAllGather) {
        std::tie(base, region) = stack.back();
        stack.pop_back();
        base_[at] = base;
        ph.mult = region / d.size;
      } else {
        base_[at] = base;
        ph.mult = region / ph.prog[0][0]->chunk_total();
      }
    }
  }

  std::string names;
  for (const HierarchicalDimension& d : dims_) names += (names.empty() ? "" : ",") + d.name;
  name_ = "hierarchical(" + names + opt + (queue_ ? ";dimension_queue" : "") + ")";
  if (queue_) build_sequences();
  // Rank-symmetric (exact step aggregation) under translations of the grid
  // when every phase program is (a ring line is the same for every offset)
  // and every rank's pieces have one size: all parts of the buffer equal
  // (padded, or dividing it).
  symmetric_ = n_ >= 2 && (!ranged_ || equal_ || bytes_ % (static_cast<std::uint64_t>(chunks_) * units_) == 0);
  for (const Phase& ph : phase_) {
    for (std::uint32_t k = 0; k < (uniform_ ? 1u : 2u); ++k) {  // the size classes in use
      for (std::uint32_t v = 0; v < dims_[ph.dim].variants; ++v) {
        if (!ph.prog[k][v]->rank_symmetric()) symmetric_ = false;
      }
    }
  }
}

std::uint32_t HierarchicalProgram::symmetric_peer(std::uint32_t pos, std::uint32_t origin_peer) const {
  // The origin is grid index 0: its peer's grid offset, added to pos's coordinates dimension by dimension.
  const std::uint32_t a = grid_[pos], b = grid_[origin_peer];
  std::uint32_t g = 0;
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    const std::uint32_t n = dims_[d].size;
    g += (a / stride_[d] % n + b / stride_[d] % n) % n * stride_[d];
  }
  return pos_of_grid_[g];
}

OpRef HierarchicalProgram::matched_send(OpRef recv) const {
  const std::uint32_t chunk = chunk_of(recv), phase = phase_of(recv);
  return prefix(chunk, phase) | prog(chunk, phase).matched_send(recv & mask_);
}

void HierarchicalProgram::build_sequences() {
  // Estimated time of each phase (per size class): the sends of line position 0, one after another.
  std::vector<double> est(static_cast<std::size_t>(phases_) * 2, 0);
  for (std::uint32_t p = 0; p < phases_; ++p) {
    const HierarchicalDimension& d = dims_[phase_[p].dim];
    for (std::uint32_t k = 0; k < 2; ++k) {
      const CollectiveProgram& pr = *phase_[p].prog[k][0];
      RankCursor cursor;
      std::vector<OpRef> ready;
      pr.start(0, cursor, ready);
      std::deque<OpRef> frontier(ready.begin(), ready.end());
      double t = 0;
      while (!frontier.empty()) {
        const OpRef r = frontier.front();
        frontier.pop_front();
        const CollectiveOp o = pr.op(0, r);
        if (o.kind == OpKind::kSend) t += d.latency_ns + static_cast<double>(o.bytes) * d.ns_per_byte;
        ready.clear();
        pr.finish(0, r, cursor, ready);
        frontier.insert(frontier.end(), ready.begin(), ready.end());
      }
      est[p * 2 + k] = t;
    }
  }
  // FIFO per dimension by estimated arrival (ties: chunk, then phase); item i
  // of a dimension starts once it arrived and item i - a ended.
  const auto D = static_cast<std::uint32_t>(dims_.size());
  seq_.assign(D, {});
  seq_index_.assign(static_cast<std::size_t>(chunks_) * phases_, 0);
  std::vector<std::vector<double>> ends(D);
  using Arrival = std::tuple<double, std::uint32_t, std::uint32_t>;
  std::set<Arrival> arrivals;
  for (std::uint32_t c = 0; c < chunks_; ++c) arrivals.emplace(0.0, c, 0);
  while (!arrivals.empty()) {
    const auto [t, c, p] = *arrivals.begin();
    arrivals.erase(arrivals.begin());
    const std::uint32_t d = phase_[p].dim;
    const std::size_t i = seq_[d].size();
    seq_index_[c * phases_ + p] = static_cast<std::uint32_t>(i);
    seq_[d].push_back(c * phases_ + p);
    const double start = i >= active_ ? std::max(t, ends[d][i - active_]) : t;
    const double end = start + est[p * 2 + klass(c)];
    ends[d].push_back(end);
    if (p + 1 < phases_) arrivals.emplace(end, c, p + 1);
  }
}

std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> HierarchicalProgram::dimension_sequences() const {
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> out(seq_.size());
  for (std::size_t d = 0; d < seq_.size(); ++d) {
    for (std::uint32_t idx : seq_[d]) out[d].emplace_back(idx / phases_, idx % phases_);
  }
  return out;
}

void HierarchicalProgram::try_begin(std::uint32_t pos, std::uint32_t chunk, std::uint32_t phase, RankCursor& cursor,
                                    std::vector<OpRef>& ready) const {
  const std::uint32_t idx = chunk * phases_ + phase;
  if (cursor.pending[idx] != kNotStarted) return;
  if (phase > 0 && !done(cursor, chunk, phase - 1)) return;
  const std::uint32_t i = seq_index_[idx];
  if (i >= active_ && !released(cursor, seq_[phase_[phase].dim][i - active_])) return;
  begin(pos, chunk, phase, cursor, ready);
}

std::uint32_t HierarchicalProgram::peer_pos(std::uint32_t pos, std::uint32_t phase, std::uint32_t q) const {
  const Phase& ph = phase_[phase];
  const std::uint32_t n = dims_[ph.dim].size;
  const std::uint32_t coord = ph.relabel ? (q + n - dims_[ph.dim].rs_shift % n) % n : q;
  return pos_of_grid_[line_base_[static_cast<std::size_t>(pos) * phases_ + phase] + coord * stride_[ph.dim]];
}

std::uint64_t HierarchicalProgram::op_count(std::uint32_t pos) const {
  const std::uint64_t big = bytes_ % chunks_;  // chunks one byte larger than the first
  std::uint64_t total = 0;
  for (std::uint32_t p = 0; p < phases_; ++p) {
    const std::uint32_t l = line_pos(pos, p);
    if (dims_[phase_[p].dim].variants == 1) {
      total += (chunks_ - big) * phase_[p].prog[0][0]->op_count(l) + big * phase_[p].prog[1][0]->op_count(l);
    } else {
      for (std::uint32_t c = 0; c < chunks_; ++c) total += prog(c, p).op_count(l);
    }
  }
  return total;
}

void HierarchicalProgram::begin(std::uint32_t pos, std::uint32_t chunk, std::uint32_t phase, RankCursor& cursor,
                                std::vector<OpRef>& ready) const {
  const std::uint32_t idx = chunk * phases_ + phase;
  const CollectiveProgram& pr = prog(chunk, phase);
  const std::uint32_t l = line_pos(pos, phase);
  cursor.pending[idx] = static_cast<std::uint32_t>(pr.op_count(l));
  const std::size_t at = ready.size();
  pr.start(l, cursor.sub[idx], ready);
  const OpRef pre = prefix(chunk, phase);
  for (std::size_t i = at; i < ready.size(); ++i) ready[i] |= pre;
}

void HierarchicalProgram::start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const {
  if (phases_ == 0) return;
  // Ops left per (chunk, phase), then whether the phase is over (released) on this rank.
  cursor.pending.assign(static_cast<std::size_t>(chunks_) * phases_, kNotStarted);
  cursor.pending.resize(static_cast<std::size_t>(chunks_) * phases_ * 2, 0);
  cursor.sub.resize(static_cast<std::size_t>(chunks_) * phases_);
  if (queue_) {
    for (std::uint32_t c = 0; c < chunks_; ++c) try_begin(pos, c, 0, cursor, ready);
    return;
  }
  const std::uint32_t first = active_ == 0 ? chunks_ : std::min(active_, chunks_);
  for (std::uint32_t c = 0; c < first; ++c) begin(pos, c, 0, cursor, ready);
}

CollectiveOp HierarchicalProgram::op(std::uint32_t pos, OpRef ref) const {
  const std::uint32_t chunk = chunk_of(ref), phase = phase_of(ref);
  const std::uint32_t idx = chunk * phases_ + phase;
  const OpRef sub = ref & mask_;
  const Phase& ph = phase_[phase];
  const CollectiveProgram& pr = prog(chunk, phase);
  const std::uint32_t l = line_pos(pos, phase);
  CollectiveOp o = pr.op(l, sub);
  if (!switch_sentinel(o.peer)) o.peer = peer_pos(pos, phase, o.peer);
  if ((o.kind == OpKind::kSwitchReduce || o.kind == OpKind::kMulticast) && dims_[ph.dim].switch_of_line) {
    o.node = dims_[ph.dim].switch_of_line(line_base_[static_cast<std::size_t>(pos) * phases_ + phase], o.node);
  }
  o.tag = static_cast<std::uint64_t>(idx) << 32 | (dense_tag_.empty() ? o.tag & 0xffffffffu : dense_tag_.at(o.tag));
  if (ranged_) {
    const ChunkRange r = pr.chunk_range(l, sub);
    if (r.count > 0) {
      const std::uint64_t first = static_cast<std::uint64_t>(chunk) * units_ +
                                  base_[static_cast<std::size_t>(pos) * phases_ + phase] + r.first * ph.mult;
      o.bytes = parts(first, r.count * ph.mult);
    }
  }
  return o;
}

void HierarchicalProgram::finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const std::uint32_t chunk = chunk_of(ref), phase = phase_of(ref);
  const std::uint32_t idx = chunk * phases_ + phase;
  const std::size_t at = ready.size();
  const CollectiveProgram& pr = prog(chunk, phase);
  const std::uint32_t l = line_pos(pos, phase);
  pr.finish(l, ref & mask_, cursor.sub[idx], ready);
  const OpRef pre = prefix(chunk, phase);
  for (std::size_t i = at; i < ready.size(); ++i) ready[i] |= pre;
  if (pr.leaves(l, ref & mask_)) release(pos, chunk, phase, cursor, ready);
  if (--cursor.pending[idx] != 0) return;
  cursor.sub[idx] = RankCursor{};  // the phase is over here: free its state
  if (!released(cursor, idx)) release(pos, chunk, phase, cursor, ready);
}

void HierarchicalProgram::release(std::uint32_t pos, std::uint32_t chunk, std::uint32_t phase, RankCursor& cursor,
                                  std::vector<OpRef>& ready) const {
  const std::uint32_t idx = chunk * phases_ + phase;
  cursor.pending[static_cast<std::size_t>(chunks_) * phases_ + idx] = 1;
  if (queue_) {
    // This chunk's next phase, then the item `active` later in this dimension's sequence.
    if (phase + 1 < phases_) try_begin(pos, chunk, phase + 1, cursor, ready);
    const std::vector<std::uint32_t>& seq = seq_[phase_[phase].dim];
    const std::size_t later = static_cast<std::size_t>(seq_index_[idx]) + active_;
    if (later < seq.size()) try_begin(pos, seq[later] / phases_, seq[later] % phases_, cursor, ready);
    return;
  }
  // In ascending OpRef order: this chunk's next phase, then the chunk `active` later in this phase.
  if (phase + 1 < phases_ && (active_ == 0 || chunk < active_ || done(cursor, chunk - active_, phase + 1))) {
    begin(pos, chunk, phase + 1, cursor, ready);
  }
  if (active_ != 0 && chunk + active_ < chunks_ && (phase == 0 || done(cursor, chunk + active_, phase - 1))) {
    begin(pos, chunk + active_, phase, cursor, ready);
  }
}

const std::vector<OpRef>& HierarchicalProgram::terminals(std::uint32_t chunk, std::uint32_t phase,
                                                         std::uint32_t lpos) const {
  const auto key = std::make_tuple(phase, klass(chunk), variant(chunk, phase), lpos);
  if (auto it = terminals_.find(key); it != terminals_.end()) return it->second;
  const CollectiveProgram& pr = prog(chunk, phase);
  RankCursor cursor;
  std::vector<OpRef> ready, parents, all;
  pr.start(lpos, cursor, ready);
  std::deque<OpRef> frontier(ready.begin(), ready.end());
  std::set<OpRef> waited_on;
  while (!frontier.empty()) {
    const OpRef r = frontier.front();
    frontier.pop_front();
    all.push_back(r);
    parents.clear();
    pr.parents(lpos, r, parents);
    waited_on.insert(parents.begin(), parents.end());
    ready.clear();
    pr.finish(lpos, r, cursor, ready);
    frontier.insert(frontier.end(), ready.begin(), ready.end());
  }
  std::vector<OpRef> out;
  for (OpRef r : all) {
    if (pr.leaves(lpos, r)) {  // what follows waits for this op only (sends may still be in flight)
      out.assign(1, r);
      break;
    }
    if (!waited_on.count(r)) out.push_back(r);
  }
  std::sort(out.begin(), out.end());
  return terminals_.emplace(key, std::move(out)).first->second;
}

void HierarchicalProgram::parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const {
  const std::uint32_t chunk = chunk_of(ref), phase = phase_of(ref);
  const OpRef own = prefix(chunk, phase);
  const std::size_t at = out.size();
  prog(chunk, phase).parents(line_pos(pos, phase), ref & mask_, out);
  for (std::size_t i = at; i < out.size(); ++i) out[i] |= own;
  if (out.size() != at) return;
  // A first op of its phase: it waits for the chunk's previous phase and for
  // the chunk `active` earlier in this phase, all their ops (their terminal ones).
  const auto add = [&](std::uint32_t c, std::uint32_t p) {
    const OpRef pre = prefix(c, p);
    for (OpRef r : terminals(c, p, line_pos(pos, p))) out.push_back(pre | r);
  };
  if (phase > 0) add(chunk, phase - 1);
  if (queue_) {
    const std::uint32_t i = seq_index_[chunk * phases_ + phase];
    if (i >= active_) {
      const std::uint32_t other = seq_[phase_[phase].dim][i - active_];
      add(other / phases_, other % phases_);
    }
  } else if (active_ != 0 && chunk >= active_) {
    add(chunk - active_, phase);
  }
}

ChunkRange HierarchicalProgram::chunk_range(std::uint32_t pos, OpRef ref) const {
  if (!ranged_) return {};
  const std::uint32_t chunk = chunk_of(ref), phase = phase_of(ref);
  const Phase& ph = phase_[phase];
  const ChunkRange r = prog(chunk, phase).chunk_range(line_pos(pos, phase), ref & mask_);
  if (r.count == 0) return {};
  return {static_cast<std::uint64_t>(chunk) * units_ + base_[static_cast<std::size_t>(pos) * phases_ + phase] +
              r.first * ph.mult,
          r.count * ph.mult};
}

std::string HierarchicalProgram::label(std::uint32_t pos, OpRef ref) const {
  const std::uint32_t chunk = chunk_of(ref), phase = phase_of(ref);
  std::string s = "c";  // appended piecewise: GCC 12 -Wrestrict false positive on "x" + std::string
  s.append(std::to_string(chunk)).append(" p").append(std::to_string(phase)).append(" dim");
  s.append(std::to_string(phase_[phase].dim)).append(" ");
  return s.append(prog(chunk, phase).label(line_pos(pos, phase), ref & mask_));
}

}  // namespace sim
