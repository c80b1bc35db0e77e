#include "system/collectives/halving_doubling.h"

#include <stdexcept>

#include "system/program/block_math.h"

namespace sim {

namespace {
std::uint32_t chunk_of(OpRef r) { return static_cast<std::uint32_t>(r >> 34); }
std::uint32_t step_of(OpRef r) { return static_cast<std::uint32_t>(r >> 2) & 0xffffffffu; }
std::uint32_t slot_of(OpRef r) { return static_cast<std::uint32_t>(r & 3); }
}  // namespace

bool HalvingDoublingProgram::supports(CollectiveType type) {
  return type == CollectiveType::kAllReduce || type == CollectiveType::kReduceScatter ||
         type == CollectiveType::kAllGather;
}

HalvingDoublingProgram::HalvingDoublingProgram(CollectiveType type, std::uint32_t group_size, std::uint64_t bytes,
                                               std::uint32_t chunks, bool nearest_first)
    : type_(type), n_(group_size), chunks_(chunks), bytes_(bytes), nearest_(nearest_first) {
  if (!supports(type)) throw std::invalid_argument("halvingDoubling: unsupported collective");
  if (nearest_ && type_ != CollectiveType::kAllReduce) {
    throw std::invalid_argument("halvingDoubling: order=nearest is for all-reduce only");
  }
  if (nearest_) name_ = "halvingDoubling:order=nearest";
  if (n_ == 0 || chunks_ == 0) throw std::invalid_argument("halvingDoubling: empty group or zero chunks");
  while (core_ * 2 <= n_) core_ *= 2, ++m_;
  r_ = n_ - core_;
  halving_ = type_ == CollectiveType::kAllGather ? 0 : m_;
  doubling_ = type_ == CollectiveType::kReduceScatter ? 0 : m_;
  steps_ = 2 + halving_ + doubling_;
  // All-reduce needs no per-rank result, so its core cuts the buffer in 2^m
  // equal pieces; the others keep one piece per rank.
  units_ = type_ == CollectiveType::kAllReduce ? core_ : n_;
  buffer_ = collectives::buffer_bytes(type_, bytes_, n_);
}

std::uint32_t HalvingDoublingProgram::unit_of(std::uint32_t core) const {
  if (type_ == CollectiveType::kAllReduce) return core;
  return core < r_ ? 2 * core : core + r_;
}

bool HalvingDoublingProgram::has_step(std::uint32_t pos, std::uint32_t g) const {
  if (g == 0 || g == steps_ - 1) return r_ > 0 && paired(pos);
  return !extra(pos);
}

std::uint32_t HalvingDoublingProgram::first_step(std::uint32_t pos) const {
  return r_ > 0 && paired(pos) ? 0 : 1;
}

std::uint32_t HalvingDoublingProgram::next_step(std::uint32_t pos, std::uint32_t g) const {
  for (std::uint32_t h = g + 1; h < steps_; ++h) {
    if (has_step(pos, h)) return h;
  }
  return kNoStep;
}

std::uint32_t HalvingDoublingProgram::prev_step(std::uint32_t pos, std::uint32_t g) const {
  for (std::uint32_t h = g; h-- > 0;) {
    if (has_step(pos, h)) return h;
  }
  return kNoStep;
}

HalvingDoublingProgram::Step HalvingDoublingProgram::step(std::uint32_t pos, std::uint32_t g) const {
  Step s;
  const bool reduce = type_ != CollectiveType::kAllGather;
  if (g == 0) {
    if (extra(pos)) s.send = true, s.peer = pos - 1;
    else s.recv = true, s.reduce = reduce, s.peer = pos + 1;
  } else if (g == steps_ - 1) {
    if (extra(pos)) s.recv = true, s.peer = pos - 1;
    else s.send = true, s.peer = pos + 1;
  } else {
    const std::uint32_t ci = core_index(pos);
    const bool halving = g <= halving_;
    const std::uint32_t d = distance(g);
    s.send = s.recv = true;
    s.reduce = halving;
    s.peer = core_rank(ci ^ d);
  }
  return s;
}

HalvingDoublingProgram::Units HalvingDoublingProgram::sent(std::uint32_t pos, std::uint32_t g) const {
  if (g == 0) return type_ == CollectiveType::kAllGather ? Units{pos, 1} : Units{0, units_};
  if (g == steps_ - 1) return type_ == CollectiveType::kReduceScatter ? Units{pos + 1, 1} : Units{0, units_};
  const std::uint32_t ci = core_index(pos);
  if (nearest_) {
    // Halving step g: the partner's range after g halvings; doubling: all
    // held, i.e. the range after the halvings not yet undone.
    if (g <= halving_) return held_nearest(ci ^ distance(g), g);
    return held_nearest(ci, m_ - (g - 1 - halving_));
  }
  std::uint32_t first, d;
  if (g <= halving_) {
    d = core_ >> g;  // send the half the partner keeps
    first = (ci ^ d) & ~(d - 1);
  } else {
    d = 1u << (g - 1 - halving_);  // send everything held
    first = ci & ~(d - 1);
  }
  return {unit_of(first), unit_of(first + d) - unit_of(first)};
}

std::uint32_t HalvingDoublingProgram::distance(std::uint32_t g) const {
  if (g <= halving_) return nearest_ ? 1u << (g - 1) : core_ >> g;
  const std::uint32_t h = g - 1 - halving_;  // doubling step index
  return nearest_ ? core_ >> (h + 1) : 1u << h;
}

HalvingDoublingProgram::Units HalvingDoublingProgram::held_nearest(std::uint32_t ci, std::uint32_t level) const {
  std::uint32_t rev = 0;  // the low `level` bits of ci, reversed
  for (std::uint32_t b = 0; b < level; ++b) rev |= ((ci >> b) & 1u) << (level - 1 - b);
  const std::uint32_t size = core_ >> level;
  return {rev * size, size};  // all-reduce: unit_of is the identity
}

std::uint64_t HalvingDoublingProgram::op_count(std::uint32_t pos) const {
  if (n_ <= 1) return 0;
  std::uint64_t per_chunk = 0;
  for (std::uint32_t g = 0; g < steps_; ++g) {
    if (!has_step(pos, g)) continue;
    const Step s = step(pos, g);
    per_chunk += static_cast<std::uint64_t>(s.send) + s.recv + s.reduce;
  }
  return per_chunk * chunks_;
}

void HalvingDoublingProgram::push_step(std::uint32_t pos, std::uint32_t chunk, std::uint32_t g,
                                       std::vector<OpRef>& ready) const {
  const Step s = step(pos, g);
  if (s.send) ready.push_back(ref(chunk, g, 0));
  if (s.recv) ready.push_back(ref(chunk, g, 1));
}

void HalvingDoublingProgram::start(std::uint32_t pos, RankCursor&, std::vector<OpRef>& ready) const {
  if (n_ <= 1) return;
  const std::uint32_t g = first_step(pos);
  for (std::uint32_t c = 0; c < chunks_; ++c) push_step(pos, c, g, ready);
}

CollectiveOp HalvingDoublingProgram::op(std::uint32_t pos, OpRef r) const {
  const std::uint32_t c = chunk_of(r), g = step_of(r), slot = slot_of(r);
  const Step s = step(pos, g);
  CollectiveOp op;
  op.kind = slot == 0 ? OpKind::kSend : slot == 1 ? OpKind::kRecv : OpKind::kCompute;
  op.peer = s.peer;
  const Units u = sent(slot == 0 ? pos : s.peer, g);
  op.bytes = parts_bytes(buffer_, chunk_total(), static_cast<std::uint64_t>(c) * units_ + u.first, u.count);
  op.tag = static_cast<std::uint64_t>(c) * steps_ + g;
  return op;
}

void HalvingDoublingProgram::finish(std::uint32_t pos, OpRef r, RankCursor&, std::vector<OpRef>& ready) const {
  const std::uint32_t c = chunk_of(r), g = step_of(r), slot = slot_of(r);
  const Step s = step(pos, g);
  if (slot == terminal_slot(s)) {
    if (const std::uint32_t next = next_step(pos, g); next != kNoStep) push_step(pos, c, next, ready);
  } else if (slot == 1) {
    ready.push_back(ref(c, g, 2));
  }
}

void HalvingDoublingProgram::parents(std::uint32_t pos, OpRef r, std::vector<OpRef>& out) const {
  const std::uint32_t c = chunk_of(r), g = step_of(r), slot = slot_of(r);
  if (slot == 2) {
    out.push_back(ref(c, g, 1));
  } else if (const std::uint32_t prev = prev_step(pos, g); prev != kNoStep) {
    out.push_back(ref(c, prev, terminal_slot(step(pos, prev))));
  }
}

ChunkRange HalvingDoublingProgram::chunk_range(std::uint32_t pos, OpRef r) const {
  const std::uint32_t g = step_of(r);
  return range(chunk_of(r), sent(slot_of(r) == 0 ? pos : step(pos, g).peer, g));
}

std::string HalvingDoublingProgram::label(std::uint32_t pos, OpRef r) const {
  static const char* const kSlot[] = {"send", "recv", "reduce"};
  return "halvingDoubling." + std::string(kSlot[slot_of(r)]) + " c" + std::to_string(chunk_of(r)) + " g" +
         std::to_string(step_of(r)) + (slot_of(r) == 0 ? " to " : " from ") +
         std::to_string(step(pos, step_of(r)).peer);
}

}  // namespace sim
