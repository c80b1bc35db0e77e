#include "system/collectives/direct.h"

#include <stdexcept>

#include "system/program/block_math.h"

namespace sim {

using collectives::wrap;

namespace {
std::uint32_t chunk_of(OpRef r) { return static_cast<std::uint32_t>(r >> 40); }
std::uint32_t phase_of(OpRef r) { return static_cast<std::uint32_t>(r >> 38) & 3; }
std::uint64_t index_of(OpRef r) { return (r >> 2) & ((1ull << 36) - 1); }
std::uint32_t slot_of(OpRef r) { return static_cast<std::uint32_t>(r & 3); }
}  // namespace

bool DirectProgram::supports(CollectiveType type) {
  return type != CollectiveType::kReduceScatterBlock;
}

DirectProgram::DirectProgram(CollectiveType type, std::uint32_t group_size, std::uint64_t bytes, std::uint32_t chunks,
                             std::uint32_t window)
    : type_(type), n_(group_size), chunks_(chunks), bytes_(bytes) {
  if (!supports(type)) throw std::invalid_argument("direct: unsupported collective");
  if (n_ == 0 || chunks_ == 0) throw std::invalid_argument("direct: empty group or zero chunks");
  if (type_ == CollectiveType::kBarrier) chunks_ = 1;  // 1-byte messages: nothing to cut
  switch (type_) {
    case CollectiveType::kScatter:
    case CollectiveType::kBroadcast:
      pattern_ = Pattern::kFromRoot;
      break;
    case CollectiveType::kGather:
    case CollectiveType::kReduce:
      pattern_ = Pattern::kToRoot;
      break;
    default:
      pattern_ = Pattern::kAll;
  }
  phases_ = type_ == CollectiveType::kAllReduce ? 2 : 1;
  window_ = window == 0 || window > n_ - 1 ? (n_ > 1 ? n_ - 1 : 1) : window;
  buffer_ = collectives::buffer_bytes(type_, bytes_, n_);
  name_ = window == 0 ? "direct" : "direct(window=" + std::to_string(window) + ")";
  const bool equal_parts = type_ == CollectiveType::kAllGather || type_ == CollectiveType::kBarrier ||
                           buffer_ % (static_cast<std::uint64_t>(n_) * chunks_) == 0;
  symmetric_ = n_ >= 2 && pattern_ == Pattern::kAll && equal_parts;
}

std::uint64_t DirectProgram::chunk_total() const {
  switch (type_) {
    case CollectiveType::kBarrier:
    case CollectiveType::kAllToAll:
      // All-to-all: a block lands at another index than it left (rank o's
      // block for d is o's part d but d's part o), which a chunk range cannot say.
      return 0;
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
      return chunks_;
    default:
      return static_cast<std::uint64_t>(n_) * chunks_;
  }
}

bool DirectProgram::sends(std::uint32_t pos, std::uint64_t i) const {
  switch (pattern_) {
    case Pattern::kAll: return true;
    case Pattern::kFromRoot: return pos == 0;
    default: return pos != 0 && i == n_ - pos;
  }
}
bool DirectProgram::recvs(std::uint32_t pos, std::uint64_t i) const {
  switch (pattern_) {
    case Pattern::kAll: return true;
    case Pattern::kFromRoot: return pos != 0 && i == pos;
    default: return pos == 0;
  }
}
bool DirectProgram::reduces(std::uint32_t phase) const {
  return type_ == CollectiveType::kReduceScatter || type_ == CollectiveType::kReduce ||
         (type_ == CollectiveType::kAllReduce && phase == 0);
}

// Part of the buffer (chunk_total() parts) the message src -> dst of (phase, chunk) carries.
std::uint64_t DirectProgram::part(std::uint32_t src, std::uint32_t dst, std::uint32_t phase,
                                  std::uint32_t chunk) const {
  const std::uint64_t c = chunk;
  switch (type_) {
    case CollectiveType::kAllGather:
    case CollectiveType::kGather:
      return static_cast<std::uint64_t>(src) * chunks_ + c;  // the sender's input, contiguous blocks
    case CollectiveType::kScatter:
      return static_cast<std::uint64_t>(dst) * chunks_ + c;  // the receiver's block of the root's buffer
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
      return c;
    case CollectiveType::kAllReduce:
      return c * n_ + (phase == 0 ? dst : src);  // reduce-scatter: the receiver's piece; then the sender's
    default:
      return c * n_ + dst;
  }
}

std::uint64_t DirectProgram::message_bytes(std::uint32_t src, std::uint32_t dst, std::uint32_t phase,
                                           std::uint32_t chunk) const {
  if (type_ == CollectiveType::kBarrier) return 1;
  const std::uint64_t parts =
      type_ == CollectiveType::kBroadcast || type_ == CollectiveType::kReduce ? chunks_
                                                                               : static_cast<std::uint64_t>(n_) * chunks_;
  return parts_bytes(buffer_, parts, part(src, dst, phase, chunk), 1);
}

std::uint64_t DirectProgram::op_count(std::uint32_t pos) const {
  if (n_ <= 1) return 0;
  const std::uint64_t others = n_ - 1;
  std::uint64_t per_chunk = 0;
  for (std::uint32_t p = 0; p < phases_; ++p) {
    switch (pattern_) {
      case Pattern::kAll: per_chunk += 2 * others + (reduces(p) ? others : 0); break;
      case Pattern::kFromRoot: per_chunk += pos == 0 ? others : 1; break;
      default: per_chunk += pos == 0 ? others * (reduces(p) ? 2 : 1) : 1;
    }
  }
  return per_chunk * chunks_;
}

void DirectProgram::start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const {
  if (n_ <= 1) return;
  if (type_ == CollectiveType::kAllReduce) cursor.pending.assign(chunks_, n_ - 1);  // reduces left per chunk
  for (std::uint32_t c = 0; c < chunks_; ++c) {
    if (pattern_ == Pattern::kFromRoot && pos != 0) {
      ready.push_back(ref(c, 0, pos, 1));
      continue;
    }
    if (pattern_ == Pattern::kToRoot && pos != 0) {
      ready.push_back(ref(c, 0, n_ - pos, 0));
      continue;
    }
    for (std::uint32_t p = 0; p < phases_; ++p) {
      for (std::uint64_t i = 1; i < n_; ++i) {
        if (p == 0 && i <= window_ && sends(pos, i)) ready.push_back(ref(c, p, i, 0));
        if (recvs(pos, i)) ready.push_back(ref(c, p, i, 1));
      }
    }
  }
}

CollectiveOp DirectProgram::op(std::uint32_t pos, OpRef r) const {
  const std::uint32_t c = chunk_of(r), p = phase_of(r), slot = slot_of(r);
  const std::uint64_t i = index_of(r);
  CollectiveOp op;
  op.tag = static_cast<std::uint64_t>(c) * phases_ + p;
  if (slot == 0) {
    op.kind = OpKind::kSend;
    op.peer = wrap(static_cast<std::int64_t>(pos) + static_cast<std::int64_t>(i), n_);
    op.bytes = message_bytes(pos, op.peer, p, c);
  } else {
    op.kind = slot == 1 ? OpKind::kRecv : OpKind::kCompute;
    op.peer = wrap(static_cast<std::int64_t>(pos) - static_cast<std::int64_t>(i), n_);
    op.bytes = message_bytes(op.peer, pos, p, c);
  }
  return op;
}

void DirectProgram::push_sends(std::uint32_t pos, std::uint32_t c, std::uint32_t p, std::vector<OpRef>& ready) const {
  for (std::uint64_t i = 1; i < n_ && i <= window_; ++i) {
    if (sends(pos, i)) ready.push_back(ref(c, p, i, 0));
  }
}

void DirectProgram::finish(std::uint32_t pos, OpRef r, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const std::uint32_t c = chunk_of(r), p = phase_of(r), slot = slot_of(r);
  const std::uint64_t i = index_of(r);
  switch (slot) {
    case 0:
      // The window slides: a delivered send lets the one w places later go.
      if (pattern_ != Pattern::kToRoot && i + window_ < n_) ready.push_back(ref(c, p, i + window_, 0));
      return;
    case 1:
      if (reduces(p)) ready.push_back(ref(c, p, i, 2));
      return;
    default:
      // All-reduce: once a chunk's piece holds every contribution, all-gather it.
      if (type_ == CollectiveType::kAllReduce && p == 0 && --cursor.pending[c] == 0) push_sends(pos, c, 1, ready);
  }
}

void DirectProgram::parents(std::uint32_t, OpRef r, std::vector<OpRef>& out) const {
  const std::uint32_t c = chunk_of(r), p = phase_of(r), slot = slot_of(r);
  const std::uint64_t i = index_of(r);
  if (slot == 2) {
    out.push_back(ref(c, p, i, 1));
  } else if (slot == 0 && pattern_ != Pattern::kToRoot) {
    if (i > window_) {
      out.push_back(ref(c, p, i - window_, 0));
    } else if (p == 1) {
      for (std::uint64_t j = 1; j < n_; ++j) out.push_back(ref(c, 0, j, 2));
    }
  }
}

ChunkRange DirectProgram::chunk_range(std::uint32_t pos, OpRef r) const {
  if (chunk_total() == 0) return {};
  const std::uint32_t c = chunk_of(r), p = phase_of(r), slot = slot_of(r);
  const std::uint64_t i = index_of(r);
  if (slot == 0) return {part(pos, wrap(static_cast<std::int64_t>(pos) + static_cast<std::int64_t>(i), n_), p, c), 1};
  return {part(wrap(static_cast<std::int64_t>(pos) - static_cast<std::int64_t>(i), n_), pos, p, c), 1};
}

std::string DirectProgram::label(std::uint32_t pos, OpRef r) const {
  static const char* const kSlot[] = {"send", "recv", "reduce"};
  const CollectiveOp o = op(pos, r);
  return "direct." + std::string(kSlot[slot_of(r)]) + " c" + std::to_string(chunk_of(r)) + " p" +
         std::to_string(phase_of(r)) + (slot_of(r) == 0 ? " to " : " from ") + std::to_string(o.peer);
}

}  // namespace sim
