#include "system/collectives/one_member.h"

#include "core/error.h"

namespace sim {

Time one_member_time(CollectiveType type, std::uint64_t bytes, BytesPerSecond memory_bandwidth) {
  switch (type) {
    case CollectiveType::kAllReduce:
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
    case CollectiveType::kBarrier: return 0;
    default: break;
  }
  if (memory_bandwidth == 0 || bytes == 0) return 0;
  const Time once = transfer_time(bytes, memory_bandwidth);
  if (once > kMaxTime / 2) {
    throw TimeLimitError("copying " + std::to_string(bytes) + " B in a GPU's memory takes longer than the largest "
                         "representable time, " + describe_time_limit());
  }
  return 2 * once;
}

OneMemberProgram::OneMemberProgram(const std::string& algorithm, CollectiveType type, std::uint64_t bytes,
                                   BytesPerSecond memory_bandwidth)
    : name_(algorithm + " (one rank)"), bytes_(bytes), duration_(one_member_time(type, bytes, memory_bandwidth)) {}

CollectiveOp OneMemberProgram::op(std::uint32_t, OpRef) const {
  CollectiveOp op;
  op.kind = OpKind::kCompute;
  op.bytes = bytes_;
  op.duration = duration_;
  return op;
}

}  // namespace sim
