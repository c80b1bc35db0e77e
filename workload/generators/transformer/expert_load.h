// How many tokens each routed expert of an MoE layer computes in one
// micro-batch: the load that sizes the experts' GEMMs on each rank and the
// expert all-to-alls.
//
// The tokens of one expert-parallel group (ep ranks of T tokens each, T the
// rank's tokens after sequence parallelism) make N = ep x T x top_k
// assignments to the E routed experts, every token to top_k distinct experts.
//   uniform: N / E each (make_training_spec requires it whole);
//   zipf:s:seed: the expert of popularity rank i (1-based) gets a share
//     proportional to 1 / i^s; which expert has which rank is a permutation
//     drawn per layer from (seed, layer) by a fixed generator (splitmix64 and
//     Fisher-Yates), so every run and every rank sees the same loads. A share
//     is capped at 1 / top_k (an expert sees a token at most once) and the
//     excess spread over the others in proportion; the counts are the shares
//     of N rounded by largest remainder (ties to the lower expert), so they
//     sum to N exactly.
// With a capacity factor c each expert keeps at most ceil(c x N / E) of them
// (the rest are dropped: not dispatched, not computed), the capacity taken
// over the group's tokens. Each expert-parallel rank holds E / ep consecutive
// experts (Megatron-core's layout): rank j of a group experts j E/ep ...
// The same position in every group sees the same load, so groups, and the
// data-parallel copies made of them, stay alike.
#pragma once

#include <cstdint>
#include <vector>

#include "workload/generators/spec/training_spec.h"

namespace sim::gen {

// Tokens each routed expert computes in one micro-batch of MoE layer `layer`,
// summed over one expert-parallel group (capacity applied). Size E.
std::vector<std::uint64_t> expert_tokens(const TrainingSpec& spec, std::uint64_t layer);

// Per expert-parallel position j (0..ep-1): the tokens of its E/ep experts.
struct RankExpertLoad {
  std::vector<std::uint64_t> local;  // tokens of each local expert
  std::uint64_t total = 0;           // their sum
  std::uint64_t heaviest_rank = 0;   // the most tokens any position of the group receives
};
RankExpertLoad rank_expert_load(const TrainingSpec& spec, std::uint64_t layer, std::uint32_t ep_position);

}  // namespace sim::gen
