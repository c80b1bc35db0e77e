// What kind of kernel a COMP node runs, and its shape: the attributes a
// measured-kernel compute model (compute/kernel_model.h) times it by.
//
// The attribute names are shared by every producer of COMP nodes (the
// transformer generator, the PyTorch importer) and the compute models:
//
//   kernel         string  gemm | attention | membound
//   gemm_m, gemm_n, gemm_k, gemm_batch (default 1)                int64 > 0
//   attn_batch, attn_heads, attn_seq, attn_head_dim               int64 > 0
//   attn_causal    bool (default false)
//   attn_pass      string  fwd | bwd (default fwd)
//   membound_op    string  add, copy, layernorm, gelu, softmax, ... (any name)
//   elements       int64 > 0
//   dtype          string  bf16 | fp16 | fp8 | fp32 | tf32 (default bf16)
//
// A node without `kernel` has no shape (it is timed by num_ops/tensor_size or
// its duration, as before). A node with `kernel` must carry that kind's keys.
// Here, in workload/, because the rank graph keeps the shape of each node
// (workload/rank_graph.h) and the compute layer sits above it.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace sim {

struct WireNode;

enum class KernelKind : std::uint8_t { kNone = 0, kGemm = 1, kAttention = 2, kMembound = 3 };
const char* kernel_kind_name(KernelKind kind);  // "gemm", "attention", "membound", "none"

// Element types the models know the width of; others are errors.
// Returns the bytes per element, or 0 for an unknown name.
std::uint32_t dtype_bytes(std::string_view dtype);

struct KernelShape {
  KernelKind kind = KernelKind::kNone;
  std::string dtype = "bf16";
  // gemm: (batch x) m x k by k x n.
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  // attention: batch x heads sequences of seq tokens, head_dim per head.
  std::int64_t heads = 0, seq = 0, head_dim = 0;  // (batch above)
  bool causal = false;
  bool backward = false;  // attn_pass bwd
  // membound: an elementwise or row-wise op over `elements` values.
  std::string op;
  std::int64_t elements = 0;

  auto operator<=>(const KernelShape&) const = default;
  bool operator==(const KernelShape&) const = default;

  // FLOP the kernel performs and bytes it must move at least (each operand
  // read once, the result written once): the roofline's inputs.
  double flops() const;
  double bytes() const;
  // "gemm bf16 m=4096 n=4096 k=4096" (for messages and reports).
  std::string describe() const;
};

// Reads the attributes above from a node. Returns false (and leaves `out`
// alone) when the node has no `kernel` attribute. Throws InputError whose
// message names the attribute and the problem (a missing key, a wrong type,
// a value out of range, an unknown kernel kind, pass or dtype); the caller
// prefixes the file, rank and node.
bool read_kernel_shape(const WireNode& node, KernelShape& out);

}  // namespace sim
