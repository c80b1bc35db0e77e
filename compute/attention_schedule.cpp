#include "compute/attention_schedule.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <vector>

namespace sim {

double attention_tile_work(const KernelShape& s, int sms) {
  const std::int64_t heads = s.batch * s.heads;
  const std::int64_t blocks = (s.seq + kAttentionTile - 1) / kAttentionTile;
  const auto key_blocks = [&](std::int64_t row_block) { return s.causal ? row_block + 1 : blocks; };
  const double per_head = s.causal ? 0.5 * static_cast<double>(blocks) * static_cast<double>(blocks + 1)
                                   : static_cast<double>(blocks) * static_cast<double>(blocks);
  // Simulate at most ~2^18 CTAs (a few ms); past that every further head
  // adds its average share (the schedule is many waves deep by then).
  const std::int64_t simulated = std::min<std::int64_t>(heads, std::max<std::int64_t>(1, (1 << 18) / blocks));
  std::priority_queue<double, std::vector<double>, std::greater<>> load;
  for (int i = 0; i < sms; ++i) load.push(0);
  double makespan = 0;
  for (std::int64_t h = 0; h < simulated; ++h) {
    for (std::int64_t b = 0; b < blocks; ++b) {
      const double done = load.top() + static_cast<double>(key_blocks(b));
      load.pop();
      load.push(done);
      makespan = std::max(makespan, done);
    }
  }
  makespan += static_cast<double>(heads - simulated) * per_head / sms;
  const double block_cost =
      static_cast<double>(kAttentionTile * kAttentionTile) * (4.0 * static_cast<double>(s.head_dim) + kAttentionExpCost);
  return makespan * block_cost * sms;
}

}  // namespace sim
