// The order in which one pipeline stage runs its micro-batches' forward and
// backward passes: Megatron-LM's 1F1B (PipeDream-Flush) schedule and its
// interleaved variant with v model chunks per stage.
//
// 1F1B: stage s of p runs min(p - s - 1, m) forward passes (warm-up), then
// alternates one forward and one backward, then drains the remaining
// backward passes. Its bubble is (p - 1) / m of the ideal time when stages
// take equal time (Narayanan et al., SC'21, section 2.2.1).
//
// Interleaved: each stage holds v chunks of layers; the m micro-batches run
// in groups of p through chunk 0, then chunk 1, ... (virtual micro-batch k is
// micro-batch (k / (p v)) p + k mod p on chunk (k mod p v) / p; backward
// passes visit the chunks in reverse). Warm-up is 2 (p - s - 1) + (v - 1) p
// forward passes. m must be a multiple of p. Bubble (p - 1) / (v m).
#pragma once

#include <cstdint>
#include <vector>

namespace sim::gen {

struct PipeStep {
  bool backward = false;
  std::uint32_t microbatch = 0;
  std::uint32_t chunk = 0;  // model chunk on this stage (0 for 1F1B)
};

// Every forward and backward pass of `stage`, in the order it runs them.
// chunks == 1 is 1F1B. Preconditions (checked by the caller): stage < stages,
// m >= 1, and with chunks > 1, m % stages == 0.
std::vector<PipeStep> stage_schedule(std::uint32_t stages, std::uint32_t microbatches, std::uint32_t chunks,
                                     std::uint32_t stage);

}  // namespace sim::gen
