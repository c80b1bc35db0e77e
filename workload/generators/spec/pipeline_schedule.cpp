#include "workload/generators/spec/pipeline_schedule.h"

#include <algorithm>

namespace sim::gen {

std::vector<PipeStep> stage_schedule(std::uint32_t p, std::uint32_t m, std::uint32_t v, std::uint32_t s) {
  std::vector<PipeStep> out;
  const std::uint32_t total = m * v;
  out.reserve(2 * total);
  // Virtual micro-batch k: which micro-batch and chunk (Megatron's
  // get_model_chunk_id / microbatch id for the interleaved schedule; with
  // v == 1 it is micro-batch k on chunk 0).
  auto step = [&](std::uint32_t k, bool backward) {
    const std::uint32_t group = p * v;
    std::uint32_t chunk = (k % group) / p;
    if (backward) chunk = v - 1 - chunk;
    const std::uint32_t mb = v == 1 ? k : (k / group) * p + k % p;
    return PipeStep{backward, mb, chunk};
  };
  std::uint32_t warmup = v == 1 ? p - s - 1 : 2 * (p - s - 1) + (v - 1) * p;
  warmup = std::min(warmup, total);
  for (std::uint32_t k = 0; k < warmup; ++k) out.push_back(step(k, false));
  for (std::uint32_t i = 0; i < total - warmup; ++i) {
    out.push_back(step(warmup + i, false));
    out.push_back(step(i, true));
  }
  for (std::uint32_t k = total - warmup; k < total; ++k) out.push_back(step(k, true));
  return out;
}

}  // namespace sim::gen
