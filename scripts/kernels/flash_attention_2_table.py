#!/usr/bin/env python3
"""Writes configs/kernels/h100-flash-attention-2/attention.csv: FlashAttention-2 on one H100 SXM5,
from the speeds the FlashAttention-3 paper publishes for it.

    scripts/kernels/flash_attention_2_table.py [--out DIR] [--check]

Source: Shah, Bikshandi, Zhang, Thakkar, Ramani, Dao, "FlashAttention-3: Fast and Accurate
Attention with Asynchrony and Low-precision" (2024, arXiv:2407.08608), section 4.1: FP16/BF16 on
an H100 80GB SXM5, the FlashAttention-2 bars of the forward (with and without a causal mask) and
backward (without) speeds at head dimension 128, hidden 2,048 (16 heads), batch x sequence = 16k
tokens, sequence 512 to 16k. Speeds are TFLOP/s as FlashAttention counts them: forward
4 x batch x heads x seq^2 x head dim, halved under a causal mask; backward 2.5 times the forward.

Those bars were FlashAttention-2 on Hopper in 2024, the kernel of PyTorch's scaled_dot_product_attention
on H100 before its cuDNN backend; the shipped table builtin:h100 is today's (docs/compute.md).

The paper gives no causal backward. Assumed here: its speed is the non-causal backward's scaled
as the forward's is by the mask at the same sequence (the diagonal blocks' tail, which the
forward's ratio measures). `--check` exits 1 when the file differs from what this script writes.
"""
import argparse
import os
import sys

SEQ = (512, 1024, 2048, 4096, 8192, 16384)
TOKENS, HEADS, HEAD_DIM = 16384, 16, 128
# TFLOP/s of FlashAttention-2's bars, per sequence above.
FORWARD = (309, 350, 362, 368, 370, 370)         # no mask
FORWARD_CAUSAL = (191, 260, 298, 319, 333, 335)  # causal mask
BACKWARD = (214, 260, 291, 310, 318, 322)        # no mask


def rows():
    out = ["op,batch,heads,seq,head_dim,fwd_us,fwd_bwd_us,fwd_tflops,fwd_bwd_tflops_approx"]
    for s, fwd, fwd_causal, bwd in zip(SEQ, FORWARD, FORWARD_CAUSAL, BACKWARD):
        batch = TOKENS // s
        full = 4 * batch * HEADS * s * s * HEAD_DIM
        for op, flops, f_rate, b_rate in (("sdpa", full, fwd, bwd),
                                          ("sdpa_causal", full / 2, fwd_causal, bwd * fwd_causal / fwd)):
            fwd_us = flops / (f_rate * 1e6)
            fwd_bwd_us = fwd_us + 2.5 * flops / (b_rate * 1e6)
            out.append(f"{op},{batch},{HEADS},{s},{HEAD_DIM},{fwd_us:.4f},{fwd_bwd_us:.4f},{f_rate:.4f},"
                       f"{3.5 * flops / (fwd_bwd_us * 1e6):.4f}")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "..", "configs", "kernels", "h100-flash-attention-2"))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    path = os.path.join(args.out, "attention.csv")
    text = rows()
    if args.check:
        same = os.path.exists(path) and open(path).read() == text
        print(f"{path}: {'current' if same else 'differs from what the script writes'}")
        return 0 if same else 1
    os.makedirs(args.out, exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path} ({text.count(chr(10)) - 1} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
