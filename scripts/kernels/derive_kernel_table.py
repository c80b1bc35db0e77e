#!/usr/bin/env python3
"""Derives a kernel table for configs/kernels/<gpu>/ from measured tables.

The measured tables (e.g. ../shared/testdata/h100-kernels/{gemm,attention,
membound}.csv, written by a measuring script on the GPU) are not copied into
the repository. Instead `sim compute time --smooth` fits the kernel model
(compute/kernel_model.h) to them and evaluates its fitted curves alone (no
per-row correction) on a regular grid of shapes; those predictions are
written in the same CSV formats. The result is a smoothed, regular table that
holds no measured number: a table derived by fitting.

    scripts/kernels/derive_kernel_table.py --sim build/sim \
        --from ../shared/testdata/h100-kernels --out configs/kernels/h100

Peaks (--peaks) are those of the GPU measured; defaults: H100 SXM, NVIDIA's
datasheet (dense): bf16/fp16 989.4, fp8 1978.9, tf32 494.7, fp32 66.9 TFLOP/s;
HBM3 3.35 TB/s. They only set the fallback's roofline and efficiency.
--sm-count and --l2-cache (defaults: the H100 SXM's 132 SMs and 50 MB, NVIDIA
H100 whitepaper) are the GPU's, used by the attention and memory-bound laws;
a config using the derived table must give the same values
(compute.kernel_sms, compute.kernel_l2_cache) when they are not the defaults.
Python 3 standard library only.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

GEMM_DIMS = [512, 1024, 2048, 4096, 8192, 16384]
GEMM_MAX_WORK = 16384 * 16384 * 8192  # as measured: the largest shapes are left out
ATTENTION = [(1, h, s, d) for h in (8, 16, 32, 64) for s in (2048, 4096, 8192) for d in (64, 128)] + \
            [(b, 16, s, 128) for b in (2, 4) for s in (2048, 4096)]
MEMBOUND_OPS = ["add", "copy", "layernorm", "gelu", "softmax"]
MEMBOUND_ELEMENTS = [1 << e for e in range(20, 29)]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s%s" % (p.returncode, " ".join(cmd), p.stdout, p.stderr))
    return p.stderr


def predict(sim, system, tmp, name, header, rows):
    grid = os.path.join(tmp, name + ".grid.csv")
    out = os.path.join(tmp, name + ".pred.csv")
    with open(grid, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    run([sim, "compute", "time", "--smooth", "--system", system, "--kernels", grid, "-o", out])
    with open(out) as f:
        return list(csv.DictReader(f))


def fmt(v):
    return "%.4f" % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sim", required=True, help="the sim binary")
    ap.add_argument("--from", dest="source", required=True, help="folder of measured gemm/attention/membound.csv")
    ap.add_argument("--out", required=True, help="folder to write the derived tables to")
    ap.add_argument("--peaks", default="bf16: 989.4, fp16: 989.4, fp8: 1978.9, tf32: 494.7, fp32: 66.9",
                    help="TFLOP/s per dtype, YAML map body")
    ap.add_argument("--bandwidth", default="3.35TB/s", help="memory bandwidth")
    ap.add_argument("--sm-count", type=int, default=132, help="SMs of the GPU measured")
    ap.add_argument("--l2-cache", default="50MB", help="L2 cache size of the GPU measured")
    a = ap.parse_args()
    source = os.path.abspath(a.source)
    os.makedirs(a.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        system = os.path.join(tmp, "system.yml")
        with open(system, "w") as f:
            f.write("compute:\n  peak_tflops: {%s}\n  memory_bandwidth: %s\n  kernels: %s\n"
                    "  kernel_sms: %d\n  kernel_l2_cache: %s\n" %
                    (a.peaks, a.bandwidth, source, a.sm_count, a.l2_cache))

        rows = [["gemm", dt, m, n, k, 1] for dt in ("bf16", "fp16") for m in GEMM_DIMS for n in GEMM_DIMS
                for k in GEMM_DIMS if m * n * k <= GEMM_MAX_WORK]
        pred = predict(a.sim, system, tmp, "gemm", ["op", "dtype", "m", "n", "k", "time_us"], rows)
        with open(os.path.join(a.out, "gemm.csv"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["op", "dtype", "m", "n", "k", "time_us", "tflops", "GBps"])
            for r in pred:
                m, n, k, t = int(r["m"]), int(r["n"]), int(r["k"]), float(r["predicted_us"])
                w.writerow(["gemm", r["dtype"], m, n, k, fmt(t), fmt(2.0 * m * n * k / t / 1e6),
                            fmt((m * k + k * n + m * n) * 2 / t / 1e3)])

        rows = [["sdpa_causal", b, h, s, d, 1, 2] for (b, h, s, d) in ATTENTION]
        pred = predict(a.sim, system, tmp, "attention",
                       ["op", "batch", "heads", "seq", "head_dim", "fwd_us", "fwd_bwd_us"], rows)
        with open(os.path.join(a.out, "attention.csv"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["op", "batch", "heads", "seq", "head_dim", "fwd_us", "fwd_bwd_us", "fwd_tflops",
                        "fwd_bwd_tflops_approx"])
            for r in pred:
                b, h, s, d = (int(r[c]) for c in ("batch", "heads", "seq", "head_dim"))
                fwd, both = float(r["predicted_us"]), float(r["predicted_fwd_bwd_us"])
                flops = 4.0 * b * h * s * s * d / 2  # causal forward
                w.writerow(["sdpa_causal", b, h, s, d, fmt(fwd), fmt(both), fmt(flops / fwd / 1e6),
                            fmt(3.5 * flops / both / 1e6)])

        rows = [[op, "bf16", e, 1] for e in MEMBOUND_ELEMENTS for op in MEMBOUND_OPS]
        pred = predict(a.sim, system, tmp, "membound", ["op", "dtype", "elements", "time_us"], rows)
        with open(os.path.join(a.out, "membound.csv"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["op", "dtype", "elements", "time_us", "GBps"])
            for r in pred:
                e, t = int(r["elements"]), float(r["predicted_us"])
                passes = 3 if r["op"] == "add" else 2
                w.writerow([r["op"], r["dtype"], e, fmt(t), fmt(passes * 2 * e / t / 1e3)])
    print("wrote %s/{gemm,attention,membound}.csv" % a.out)


if __name__ == "__main__":
    main()
