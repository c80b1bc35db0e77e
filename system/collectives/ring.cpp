#include "system/collectives/ring.h"

#include "core/error.h"
#include "system/program/collective_writer.h"

#include <stdexcept>

namespace sim {

namespace {
// v mod n for v in (-n, 2n): a compare instead of a division on the hot path.
std::uint32_t mod(std::int64_t v, std::uint32_t n) {
  if (v < 0) return static_cast<std::uint32_t>(v + n);
  if (v >= n) return static_cast<std::uint32_t>(v - n);
  return static_cast<std::uint32_t>(v);
}
}  // namespace

bool RingProgram::supports(CollectiveType type) {
  return type == CollectiveType::kAllReduce || type == CollectiveType::kReduceScatter ||
         type == CollectiveType::kAllGather || type == CollectiveType::kAllToAll;
}

RingProgram::RingProgram(CollectiveType type, std::uint32_t group_size, std::uint64_t bytes, std::uint32_t chunks)
    : type_(type), n_(group_size), bytes_(bytes), chunks_(chunks) {
  if (!supports(type)) throw std::invalid_argument("ring: unsupported collective");
  if (n_ == 0 || chunks_ == 0) throw std::invalid_argument("ring: empty group or zero chunks");
  steps_ = n_ <= 1 ? 0 : (type == CollectiveType::kAllReduce ? 2 * (n_ - 1) : n_ - 1);
  // All-gather cuts each rank's input into chunks; the others cut the buffer into N * chunks parts.
  const std::uint64_t parts = type == CollectiveType::kAllGather ? chunks_ : static_cast<std::uint64_t>(n_) * chunks_;
  // Equal parts, padded where they do not divide (see the header): every rank
  // sends the same sizes at every step.
  part_ = equal_part_bytes(bytes_, parts);
  // Every rank runs the same number of ops (counted once: the engine asks at every join).
  std::uint64_t per_chunk = 2ull * steps_;
  for (std::uint32_t st = 0; st < steps_; ++st) per_chunk += reduces(st) ? 1 : 0;
  op_count_ = per_chunk * chunks_;
}

bool RingProgram::reduces(std::uint32_t s) const {
  return type_ == CollectiveType::kReduceScatter || (type_ == CollectiveType::kAllReduce && s < n_ - 1);
}

std::uint64_t RingProgram::send_bytes(std::uint32_t /*pos*/, std::uint32_t /*chunk*/, std::uint32_t step) const {
  switch (type_) {
    case CollectiveType::kAllGather:       // one chunk of a rank's input
    case CollectiveType::kAllReduce:       // one part of the buffer (which one: chunk_range)
    case CollectiveType::kReduceScatter:
      return range_bytes(1);
    case CollectiveType::kAllToAll:
      // Step s forwards the N-1-s blocks still travelling, one part each.
      return range_bytes(n_ - 1 - step);
    default:
      return 0;
  }
}

std::uint64_t RingProgram::op_count(std::uint32_t) const { return op_count_; }

void RingProgram::start(std::uint32_t, RankCursor&, std::vector<OpRef>& ready) const {
  if (steps_ == 0) return;
  for (std::uint32_t c = 0; c < chunks_; ++c) {
    ready.push_back(ref(c, 0, 0));
    ready.push_back(ref(c, 0, 1));
  }
}

CollectiveOp RingProgram::op(std::uint32_t pos, OpRef r) const {
  const std::uint32_t slot = slot_of(r);
  const std::uint32_t chunk = chunk_of(r);
  const std::uint32_t step = step_of(r);
  CollectiveOp op;
  if (slot == 0) {
    op.kind = OpKind::kSend;
    op.peer = mod(static_cast<std::int64_t>(pos) + 1, n_);
    op.bytes = send_bytes(pos, chunk, step);
  } else {
    const std::uint32_t left = mod(static_cast<std::int64_t>(pos) - 1, n_);
    op.kind = slot == 1 ? OpKind::kRecv : OpKind::kCompute;
    op.peer = left;
    op.bytes = send_bytes(left, chunk, step);
  }
  op.tag = tag(chunk, step);
  return op;
}

void RingProgram::finish(std::uint32_t, OpRef r, RankCursor&, std::vector<OpRef>& ready) const {
  const std::uint32_t slot = slot_of(r);
  const std::uint32_t step = step_of(r);
  if (slot == 0) return;  // a send enables nothing: the next step waits for data
  const std::uint32_t chunk = chunk_of(r);
  if (slot == 1 && reduces(step)) {
    ready.push_back(ref(chunk, step, 2));
    return;
  }
  if (step + 1 < steps_) {
    ready.push_back(ref(chunk, step + 1, 0));
    ready.push_back(ref(chunk, step + 1, 1));
  }
}

void RingProgram::parents(std::uint32_t, OpRef r, std::vector<OpRef>& out) const {
  const std::uint32_t slot = slot_of(r), chunk = chunk_of(r), step = step_of(r);
  if (slot == 2) {
    out.push_back(ref(chunk, step, 1));
  } else if (step > 0) {
    out.push_back(ref(chunk, step - 1, reduces(step - 1) ? 2 : 1));
  }
}

ChunkRange RingProgram::chunk_range(std::uint32_t pos, OpRef r) const {
  if (chunk_total() == 0) return {};
  // A receive (and its reduce) moves what the left neighbour sends.
  const std::uint32_t from = slot_of(r) == 0 ? pos : mod(static_cast<std::int64_t>(pos) - 1, n_);
  const std::uint32_t chunk = chunk_of(r), step = step_of(r);
  if (type_ == CollectiveType::kAllGather) {
    // The buffer is the S*N output; rank j's input is parts j*k .. j*k+k-1,
    // and step s forwards the input of rank from - s.
    return {static_cast<std::uint64_t>(mod(static_cast<std::int64_t>(from) - step, n_)) * chunks_ + chunk, 1};
  }
  const std::uint32_t piece = step < n_ - 1 ? mod(static_cast<std::int64_t>(from) - step, n_)
                                            : mod(static_cast<std::int64_t>(from) + 1 - (step - (n_ - 1)), n_);
  return {static_cast<std::uint64_t>(chunk) * n_ + piece, 1};
}

std::string RingProgram::label(std::uint32_t, OpRef r) const {
  static const char* const kSlot[] = {"send", "recv", "reduce"};
  return "ring." + std::string(kSlot[slot_of(r)]) + " c" + std::to_string(chunk_of(r)) + " s" +
         std::to_string(step_of(r));
}

std::vector<EtTrace> ring_algorithm_ets(CollectiveType type, std::uint32_t npus, std::uint32_t chunks,
                                        std::uint64_t bytes) {
  if (!RingProgram::supports(type)) {
    throw InputError(std::string("collective gen ring: no ring for ") + collective_name(type) +
                     " (allreduce, allgather, reducescatter, alltoall)");
  }
  return program_ets(RingProgram(type, npus, bytes, chunks), type, bytes, chunks);
}

}  // namespace sim

