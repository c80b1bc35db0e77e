// The network plugin's writes. AWS's EFA plugin (aws-ofi-nccl, RDMA protocol)
// writes a message across nodes in stripes over the rails of the GPU's network
// device: at least `min_stripe` bytes each (OFI_NCCL_MIN_STRIPE_SIZE, 128 KiB),
// at most one per rail, their count a divisor of the rails
// (src/nccl_ofi_scheduler.cpp). Each write costs its rail `cost` beyond its
// bytes: the device's work per RDMA write, not hidden behind the next one
// (AWS's own p5 model, tuner/nccl_ofi_model.cpp, charges 3 us per completion:
// about 2 us in the device, 1 us to the host). The programs carry that cost as
// bytes at a rail's rate on the message, so every backend keeps the NIC busy
// that long; the pacer of a GPU's channel does not see it (docs/nccl.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/time.h"

namespace sim::nccl {

struct NetWrites {
  Time cost = 0;                          // per write (0: none)
  std::uint32_t rails = 1;                // rails of one GPU's network device
  std::uint64_t min_stripe = 128 * 1024;  // a write's least bytes
  BytesPerSecond device_rate = 0;         // the GPU's network device, all its rails

  bool active() const { return cost > 0 && device_rate > 0; }
  // The writes of one message of `bytes`.
  std::uint64_t stripes(std::uint64_t bytes) const {
    const std::uint64_t r = std::max<std::uint32_t>(1, rails);
    std::uint64_t k = std::min(r, std::max<std::uint64_t>(1, (bytes + min_stripe - 1) / std::max<std::uint64_t>(1, min_stripe)));
    while (r % k != 0) --k;
    return k;
  }
  // The bytes `messages` messages of `bytes` in all carry for their writes' cost.
  std::uint64_t extra(std::uint64_t bytes, std::uint64_t messages) const {
    if (!active() || bytes == 0) return 0;
    messages = std::max<std::uint64_t>(1, messages);
    const double per_write = static_cast<double>(cost) * 1e-12 * static_cast<double>(device_rate) /
                             std::max<std::uint32_t>(1, rails);
    return messages * stripes((bytes + messages - 1) / messages) * static_cast<std::uint64_t>(std::llround(per_write));
  }
  // A pacing rate for the message with its extra bytes that takes the time
  // `rate` takes for `bytes`: the GPU's channel does not do the device's work.
  static BytesPerSecond paced(BytesPerSecond rate, std::uint64_t bytes, std::uint64_t extra) {
    if (rate == 0 || extra == 0 || bytes == 0) return rate;
    return static_cast<BytesPerSecond>(
        std::llround(static_cast<double>(rate) * static_cast<double>(bytes + extra) / static_cast<double>(bytes)));
  }
};

}  // namespace sim::nccl
