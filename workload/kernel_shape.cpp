#include "workload/kernel_shape.h"

#include <limits>
#include <string>

#include "core/error.h"
#include "workload/et/et_io.h"

namespace sim {

const char* kernel_kind_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::kGemm: return "gemm";
    case KernelKind::kAttention: return "attention";
    case KernelKind::kMembound: return "membound";
    default: return "none";
  }
}

std::uint32_t dtype_bytes(std::string_view dtype) {
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp8") return 1;
  if (dtype == "fp32" || dtype == "tf32") return 4;
  return 0;
}

double KernelShape::flops() const {
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  switch (kind) {
    case KernelKind::kGemm: return 2.0 * d(batch) * d(m) * d(n) * d(k);
    case KernelKind::kAttention: {
      // Q K^T and P V: 2 s^2 d FLOP each per head; causal does half of that.
      // The backward pass recomputes P and runs four more products (dV, dP,
      // dQ, dK): 2.5 times the forward's, FlashAttention's accounting.
      const double fwd = 4.0 * d(batch) * d(heads) * d(seq) * d(seq) * d(head_dim) * (causal ? 0.5 : 1.0);
      return backward ? 2.5 * fwd : fwd;
    }
    case KernelKind::kMembound: return d(elements);
    default: return 0;
  }
}

double KernelShape::bytes() const {
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  const double w = dtype_bytes(dtype);
  switch (kind) {
    case KernelKind::kGemm: return d(batch) * (d(m) * d(k) + d(k) * d(n) + d(m) * d(n)) * w;
    case KernelKind::kAttention: {
      // Forward reads Q, K, V and writes O; backward reads Q, K, V, O, dO and
      // writes dQ, dK, dV.
      const double tensor = d(batch) * d(heads) * d(seq) * d(head_dim) * w;
      return (backward ? 8.0 : 4.0) * tensor;
    }
    case KernelKind::kMembound:
      // add reads two operands and writes one (softmax's backward reads the
      // output and its gradient); the others read one and write one, but for Transformer Engine's fp8 casts, which read `dtype` and
      // write 1 B per element: once (fp8_cast, TE's cast_to_fp8) or twice, the
      // copy and its transpose (fp8_cast_transpose, fp8_cast_transpose_fused).
      if (op == "add" || op == "softmax_backward") return d(elements) * w * 3.0;
      // Dropout keeps its mask, 1 B per element (PyTorch's bool mask): the
      // forward writes it, the backward reads it; Megatron-LM's fused
      // bias-dropout-add reads the block's output and the residual.
      if (op == "dropout" || op == "dropout_backward") return d(elements) * (w * 2.0 + 1.0);
      if (op == "bias_dropout_add") return d(elements) * (w * 3.0 + 1.0);
      if (op == "fp8_cast") return d(elements) * (w + 1.0);
      if (op == "fp8_cast_transpose") return d(elements) * (w + 2.0);
      return d(elements) * w * 2.0;
    default: return 0;
  }
}

std::string KernelShape::describe() const {
  std::string s = kernel_kind_name(kind);
  s.append(" ").append(dtype);
  const auto kv = [&](const char* key, std::int64_t v) { s.append(" ").append(key).append("=").append(std::to_string(v)); };
  switch (kind) {
    case KernelKind::kGemm:
      if (batch != 1) kv("batch", batch);
      kv("m", m);
      kv("n", n);
      kv("k", k);
      break;
    case KernelKind::kAttention:
      kv("batch", batch);
      kv("heads", heads);
      kv("seq", seq);
      kv("head_dim", head_dim);
      s.append(causal ? " causal" : " full").append(backward ? " bwd" : " fwd");
      break;
    case KernelKind::kMembound:
      s.append(" ").append(op);
      kv("elements", elements);
      break;
    default: break;
  }
  return s;
}

namespace {

// One attribute by name (the first of a repeated name, as attr_int reads).
const WireAttr* find(const WireNode& node, std::string_view name) {
  for (const WireAttr& a : node.attrs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

}  // namespace

bool read_kernel_shape(const WireNode& node, KernelShape& out) {
  const WireAttr* kernel = find(node, "kernel");
  if (!kernel) return false;
  try {
    KernelShape s;
    const std::string_view kind = wire_attr_string(node, *kernel);
    if (kind == "gemm") s.kind = KernelKind::kGemm;
    else if (kind == "attention") s.kind = KernelKind::kAttention;
    else if (kind == "membound") s.kind = KernelKind::kMembound;
    else throw InputError("attribute 'kernel' is '" + std::string(kind) + "'; expected gemm, attention or membound");
    const std::string kind_name(kind);
    // A positive int64 dimension; `required` ones must be present.
    const auto dim = [&](std::string_view name, bool required, std::int64_t fallback) {
      const WireAttr* a = find(node, name);
      if (!a) {
        if (required) throw InputError("a '" + kind_name + "' kernel needs attribute '" + std::string(name) + "'");
        return fallback;
      }
      const std::int64_t v = wire_attr_int(node, *a);
      if (v < 1) {
        throw InputError("attribute '" + std::string(name) + "' is " + std::to_string(v) + "; expected a positive integer");
      }
      return v;
    };
    if (const WireAttr* a = find(node, "dtype")) {
      s.dtype = std::string(wire_attr_string(node, *a));
      if (dtype_bytes(s.dtype) == 0) {
        throw InputError("attribute 'dtype' is '" + s.dtype + "'; expected bf16, fp16, fp8, fp32 or tf32");
      }
    }
    switch (s.kind) {
      case KernelKind::kGemm:
        s.m = dim("gemm_m", true, 0);
        s.n = dim("gemm_n", true, 0);
        s.k = dim("gemm_k", true, 0);
        s.batch = dim("gemm_batch", false, 1);
        break;
      case KernelKind::kAttention: {
        s.batch = dim("attn_batch", true, 0);
        s.heads = dim("attn_heads", true, 0);
        s.seq = dim("attn_seq", true, 0);
        s.head_dim = dim("attn_head_dim", true, 0);
        if (const WireAttr* a = find(node, "attn_causal")) s.causal = wire_attr_bool(node, *a);
        if (const WireAttr* a = find(node, "attn_pass")) {
          const std::string_view pass = wire_attr_string(node, *a);
          if (pass != "fwd" && pass != "bwd") {
            throw InputError("attribute 'attn_pass' is '" + std::string(pass) + "'; expected fwd or bwd");
          }
          s.backward = pass == "bwd";
        }
        break;
      }
      case KernelKind::kMembound: {
        const WireAttr* a = find(node, "membound_op");
        if (!a) throw InputError("a 'membound' kernel needs attribute 'membound_op'");
        s.op = std::string(wire_attr_string(node, *a));
        if (s.op.empty()) throw InputError("attribute 'membound_op' is empty");
        s.elements = dim("elements", true, 0);
        break;
      }
      default: break;
    }
    out = std::move(s);
    return true;
  } catch (const AttrError& e) {
    throw InputError(e.detail());
  }
}

}  // namespace sim
