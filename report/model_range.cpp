#include "report/model_range.h"

#include "core/units.h"
#include "system/collectives/nccl/programs/nccl_p2p.h"

namespace sim {

std::vector<std::string> model_range_warnings(const SimulationResult& result) {
  const CollectiveRecord* smallest = nullptr;
  std::uint64_t smallest_part = 0, below = 0;
  for (const CollectiveRecord& c : result.collectives) {
    if (c.type != CollectiveType::kAllToAll || c.algorithm != nccl::kAllToAllProgramName || c.group_size <= 1) continue;
    if (c.group >= result.groups.size() || result.groups[c.group].hosts <= 1) continue;
    const std::uint64_t part = c.bytes / c.group_size;
    if (part >= nccl::kMeasuredFromPartBytes) continue;
    ++below;
    if (!smallest || part < smallest_part) smallest = &c, smallest_part = part;
  }
  if (!smallest) return {};
  return {std::to_string(below) + " of the ranks' all-to-alls across nodes [" + nccl::kAllToAllProgramName +
          "] have parts below " + format_bytes(nccl::kMeasuredFromPartBytes) + " a peer (the smallest " +
          format_bytes(smallest_part) + ", " + format_bytes(smallest->bytes) + " on " +
          std::to_string(smallest->group_size) + " ranks over " + std::to_string(result.groups[smallest->group].hosts) +
          " nodes): there measured all-to-alls mostly take longer than NCCL's model gives, so read their times as "
          "lower bounds (docs/nccl.md, \"Against a measured all-to-all across p5 nodes\")"};
}

}  // namespace sim
