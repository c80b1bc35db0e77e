#include "system/program/chunked_program.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace sim {

ChunkedProgram::ChunkedProgram(std::vector<std::shared_ptr<const CollectiveProgram>> chunks, std::uint32_t active,
                               Time tail, std::uint32_t free_reductions, std::vector<std::uint64_t> block)
    : chunks_(std::move(chunks)), active_(std::max<std::uint32_t>(active, 1)), tail_(tail),
      free_reductions_(free_reductions), block_(std::move(block)) {
  if (chunks_.empty()) throw std::logic_error("ChunkedProgram needs at least one chunk");
  name_ = chunks_.front()->name();
  n_ = std::max<std::uint64_t>(group_size(), 1);
  if (!block_.empty()) extra_ops_.assign(n_, -1);
  // (The chunks are one algorithm on one group, so they share its symmetry.)
  symmetric_ = block_.empty();
  for (const auto& c : chunks_) {
    if (!c->rank_symmetric() || c->symmetric_origin() != chunks_.front()->symmetric_origin()) symmetric_ = false;
  }
}

std::uint64_t ChunkedProgram::segments(std::uint32_t c, const CollectiveOp& op) const {
  if (block_.empty() || op.kind == OpKind::kCompute || block_[c] == 0 || op.bytes <= block_[c]) return 1;
  return std::min<std::uint64_t>((op.bytes + block_[c] / 2) / block_[c], n_);
}

ChunkedProgram::Decoded ChunkedProgram::decode(OpRef ref) const {
  const std::uint64_t k = chunks_.size();
  const OpRef body = ref >> 1;
  if (body < k) return {true, static_cast<std::uint32_t>(body), 0, 0};
  const std::uint64_t seg = body % n_;
  const std::uint64_t rest = body / n_;
  return {false, static_cast<std::uint32_t>(rest % k), rest / k - 1, seg};
}

std::uint64_t ChunkedProgram::op_count(std::uint32_t pos) const {
  std::uint64_t n = chunks_.size();  // one tail op per chunk
  for (const auto& p : chunks_) n += p->op_count(pos);
  if (!block_.empty()) {
    if (extra_ops_[pos] < 0) {  // walk each chunk's ops once to count the extra messages
      std::int64_t extra = 0;
      for (std::uint32_t c = 0; c < chunks_.size(); ++c) {
        RankCursor cursor;
        std::vector<OpRef> ready;
        chunks_[c]->start(pos, cursor, ready);
        while (!ready.empty()) {
          const OpRef r = ready.back();
          ready.pop_back();
          extra += static_cast<std::int64_t>(segments(c, chunks_[c]->op(pos, r)) - 1);
          chunks_[c]->finish(pos, r, cursor, ready);
        }
      }
      extra_ops_[pos] = extra;
    }
    n += static_cast<std::uint64_t>(extra_ops_[pos]);
  }
  return n;
}

unsigned ChunkedProgram::ref_bits() const {
  // (((inner + 1) * k + chunk) * n + segment) << 1 | free, inner < 2^b.
  unsigned b = 0;
  for (const auto& c : chunks_) b = std::max(b, c->ref_bits());
  const unsigned bits = b + 2 + static_cast<unsigned>(std::bit_width(chunks_.size())) +
                        static_cast<unsigned>(std::bit_width(n_)) + 1;
  return std::min(bits, 64u);
}

OpRef ChunkedProgram::outer(std::uint32_t c, OpRef inner, bool free, std::uint64_t segment) const {
  const std::uint64_t k = chunks_.size();
  if (inner >= (UINT64_MAX >> 1) / (k * n_) - 1) throw std::overflow_error("ChunkedProgram: op ref out of range");
  return (((inner + 1) * k + c) * n_ + segment) << 1 | (free ? 1u : 0u);
}

void ChunkedProgram::start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const auto k = static_cast<std::uint32_t>(chunks_.size());
  cursor.pending.assign(3 * static_cast<std::size_t>(k) + 1, 0);
  cursor.children.assign(k, RankCursor{});
  const std::uint32_t first = std::min(active_, k);
  cursor.pending[3 * k] = first;
  for (std::uint32_t c = 0; c < first; ++c) start_chunk(pos, c, cursor, ready);
}

void ChunkedProgram::start_chunk(std::uint32_t pos, std::uint32_t c, RankCursor& cursor,
                                 std::vector<OpRef>& ready) const {
  const std::uint64_t ops = chunks_[c]->op_count(pos);
  cursor.pending[2 * c] = static_cast<std::uint32_t>(ops >> 32);
  cursor.pending[2 * c + 1] = static_cast<std::uint32_t>(ops);
  if (ops == 0) {
    ready.push_back(static_cast<OpRef>(c) << 1);
    return;
  }
  scratch_.clear();
  chunks_[c]->start(pos, cursor.children[c], scratch_);
  map_ready(pos, c, cursor, ready);
}

void ChunkedProgram::map_ready(std::uint32_t pos, std::uint32_t c, RankCursor& cursor,
                               std::vector<OpRef>& ready) const {
  const auto k = static_cast<std::uint32_t>(chunks_.size());
  for (const OpRef inner : scratch_) {
    bool free = false;
    if (cursor.pending[2 * k + c] < free_reductions_) {
      const CollectiveOp op = chunks_[c]->op(pos, inner);
      if (op.kind == OpKind::kCompute && op.duration < 0) {
        free = true;
        ++cursor.pending[2 * k + c];
      }
    }
    ready.push_back(outer(c, inner, free));
  }
}

CollectiveOp ChunkedProgram::op(std::uint32_t pos, OpRef ref) const {
  const std::uint64_t k = chunks_.size();
  const Decoded d = decode(ref);
  const std::uint32_t c = d.chunk;
  if (d.tail) {  // the chunk's tail
    CollectiveOp op;
    op.kind = OpKind::kCompute;
    op.duration = tail_;
    return op;
  }
  CollectiveOp op = chunks_[c]->op(pos, d.inner);
  if (const std::uint64_t j = segments(c, op); j > 1) op.bytes = part_bytes(op.bytes, j, d.segment);
  if (op.kind != OpKind::kCompute) {
    if (op.tag > (UINT64_MAX - c) / k) throw std::overflow_error("ChunkedProgram: tag out of range");
    op.tag = op.tag * k + c;
  } else if (ref & 1) {
    op.duration = 0;
  }
  return op;
}

void ChunkedProgram::finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const {
  const auto k = static_cast<std::uint32_t>(chunks_.size());
  const Decoded d = decode(ref);
  const std::uint32_t c = d.chunk;
  if (d.tail) {  // chunk c is done on this rank: start the next waiting one
    std::uint32_t& next = cursor.pending[3 * k];
    if (next < k) start_chunk(pos, next++, cursor, ready);
    return;
  }
  if (!block_.empty() && d.segment + 1 < segments(c, chunks_[c]->op(pos, d.inner))) {
    ready.push_back(outer(c, d.inner, false, d.segment + 1));  // the message's next block
    return;
  }
  scratch_.clear();
  chunks_[c]->finish(pos, d.inner, cursor.children[c], scratch_);
  map_ready(pos, c, cursor, ready);
  std::uint64_t left = static_cast<std::uint64_t>(cursor.pending[2 * c]) << 32 | cursor.pending[2 * c + 1];
  --left;
  cursor.pending[2 * c] = static_cast<std::uint32_t>(left >> 32);
  cursor.pending[2 * c + 1] = static_cast<std::uint32_t>(left);
  if (left == 0) {
    cursor.children[c] = RankCursor{};
    ready.push_back(static_cast<OpRef>(c) << 1);
  }
}

void ChunkedProgram::parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const {
  // For tools only: the chunk's own dependencies (not the chunk-to-chunk order).
  const Decoded d = decode(ref);
  if (d.tail) return;
  if (d.segment > 0) {
    out.push_back(outer(d.chunk, d.inner, false, d.segment - 1));
    return;
  }
  std::vector<OpRef> inner;
  chunks_[d.chunk]->parents(pos, d.inner, inner);
  for (const OpRef p : inner) out.push_back(outer(d.chunk, p, false));
}

std::string ChunkedProgram::label(std::uint32_t pos, OpRef ref) const {
  const Decoded d = decode(ref);
  if (d.tail) return "split" + std::to_string(d.chunk) + " end";
  return "split" + std::to_string(d.chunk) + " " + chunks_[d.chunk]->label(pos, d.inner) +
         (d.segment > 0 ? " block" + std::to_string(d.segment) : "");
}

}  // namespace sim
