// Attention forward as a FlashAttention-style kernel schedules it, for the
// measured-kernel model's attention law (compute/kernel_model.h). Why: the
// rate of an attention kernel is set by how its blocks fill the SMs (few
// heads at a short sequence leave SMs idle; a causal mask gives blocks of
// unequal length, so the last wave has a tail), which FLOPs alone miss.
//
// Per head (batch x heads of them) the query rows are cut into blocks of 128
// rows, one thread block (CTA) each, launched head by head, row block by row
// block. A CTA walks the blocks of 128 keys its rows see: all of them, or for
// a causal mask those up to its own (1, 2, ..., ceil(s / 128)). Each SM runs
// one CTA at a time and takes the next when it is free (greedy list
// scheduling in launch order). A key block costs 4 * 128^2 * d FLOP of
// matrix products (Q K^T and P V) plus 128^2 exponentials, which run on the
// special-function units at 1/256 of the tensor-core rate and are not
// overlapped with them: an H100 SXM does 4,096 dense bf16 FLOP and 16 MUFU
// ops per SM per clock (NVIDIA H100 whitepaper; FlashAttention-3, Shah et
// al. 2024, sec. 3: 989 TFLOPS of matmul against 3.9 TFLOPS of exp).
//
// The result is the busiest SM's work times the SM count: what the GPU would
// do if every SM were as busy, so a rate fitted to it compares with the peak.
#pragma once

#include <cstdint>

#include "workload/kernel_shape.h"

namespace sim {

constexpr std::int64_t kAttentionTile = 128;  // rows and keys per block (Br = Bc)
constexpr double kAttentionExpCost = 256;     // FLOP-equivalents of one exponential

// The busiest SM's work in FLOP-equivalents times `sms` (see above): forward
// pass, causal or not, of `shape` (an attention shape) on `sms` SMs.
double attention_tile_work(const KernelShape& shape, int sms);

}  // namespace sim
