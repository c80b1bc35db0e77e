#!/usr/bin/env python3
"""The accuracy table of docs/compute.md: the kernel model against the kernels measured on one H100.

    scripts/docs/tables/compute.py accuracy
    scripts/docs/tables/compute.py variants    the GEMM proxies with the curves fitted by a squared loss,
                                               by Huber's (the model's), and with the sustained-load term

Each row fits the model on some rows of a measured table and predicts others, as
tests/compute/h100_accuracy_test.cpp does: a folder FIT holding the fitting rows as TABLE.csv, a
system file whose compute section is the H100's roofline (the test's peaks: bf16 and fp16 989.4,
fp8 1978.9, tf32 494.7, fp32 66.9 TFLOP/s; 3.35 TB/s) with `kernels: FIT`, and

    sim compute time --system sys.yml --kernels HELD.csv -o OUT.csv [--smooth]

on the rows held out; the errors are predicted_us / time_us - 1 (attention: the forward, and the
backward as fwd_bwd_us - fwd_us). Columns: rows, median and largest |error|, rows within 10%. "40 us
or more" splits by the measured time (under it, the launch floor). About 170 fits, a minute in
Release. The measured tables are ../shared/testdata/h100-kernels/{gemm,attention,membound}.csv
(docs/compute.md), which a public clone lacks. Uses $SIM, else `sim` on the PATH; $SIM_SOURCE_DIR,
else this script's repository.
"""
import csv
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.environ.get("SIM_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SIM = os.environ.get("SIM", "sim")
MEASURED = os.path.join(ROOT, "..", "shared", "testdata", "h100-kernels")
SYSTEM = """compute:
  peak_tflops: {bf16: 989.4, fp16: 989.4, fp8: 1978.9, tf32: 494.7, fp32: 66.9}
  memory_bandwidth: 3.35TB/s
  kernels: fit
"""
LAUNCH_FLOOR_US = 40


class Table:
    def __init__(self, name):
        self.name = name
        with open(os.path.join(MEASURED, name + ".csv")) as f:
            lines = f.read().splitlines()
        self.header = lines[0]
        self.lines = [ln for ln in lines[1:] if ln.strip()]
        self.rows = list(csv.DictReader([self.header] + self.lines))
        for r, ln in zip(self.rows, self.lines):
            r["_line"] = ln


class Fits:
    """Runs `sim compute time` in a temporary folder, one fit at a time."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.count = 0

    def errors(self, table, fit, held, smooth=False, system=""):
        """Fits on the rows `fit` of `table`, returns the relative errors on the rows `held`
        (attention: the forward's and the backward's of each row); `system`: more lines of the
        compute section (the fit's options)."""
        self.count += 1
        work = os.path.join(self.tmp, str(self.count))
        os.makedirs(os.path.join(work, "fit"))
        with open(os.path.join(work, "fit", table.name + ".csv"), "w") as f:
            f.write("\n".join([table.header] + [r["_line"] for r in fit]) + "\n")
        with open(os.path.join(work, "held.csv"), "w") as f:
            f.write("\n".join([table.header] + [r["_line"] for r in held]) + "\n")
        with open(os.path.join(work, "sys.yml"), "w") as f:
            f.write(SYSTEM + system)
        cmd = [SIM, "compute", "time", "--system", os.path.join(work, "sys.yml"), "--kernels",
               os.path.join(work, "held.csv"), "-o", os.path.join(work, "out.csv")] + (["--smooth"] if smooth else [])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"compute table: {' '.join(cmd)} exited {r.returncode}:\n{r.stderr[-2000:]}")
        with open(os.path.join(work, "out.csv")) as f:
            out = list(csv.DictReader(f))
        if len(out) != len(held):
            sys.exit(f"compute table: {len(out)} rows predicted of {len(held)}")
        e = []
        for row in out:
            if table.name == "attention":
                fwd, fwd_bwd = float(row["fwd_us"]), float(row["fwd_bwd_us"])
                p_fwd, p_fwd_bwd = float(row["predicted_us"]), float(row["predicted_fwd_bwd_us"])
                e += [p_fwd / fwd - 1, (p_fwd_bwd - p_fwd) / (fwd_bwd - fwd) - 1]
            else:
                e.append(float(row["predicted_us"]) / float(row["time_us"]) - 1)
        return e


def cell(errors):
    a = sorted(abs(e) for e in errors)
    return f"{100 * statistics.median(a):.1f}% / {100 * a[-1]:.1f}% / {sum(e <= 0.1 for e in a)}"


def line(label, errors):
    a = sorted(abs(e) for e in errors)
    within = sum(e <= 0.1 for e in a)
    print(f"| {label} | {len(a)} | {100 * statistics.median(a):.1f}% | {100 * a[-1]:.1f}% | {within} |")


def held_out(fits, table, held, options=None, rows=None):
    rows = table.rows if rows is None else rows
    return fits.errors(table, [r for r in rows if not held(r)], [r for r in rows if held(r)], **(options or {}))


def split(label, errors, measured_us):
    """The row, then those of 40 us or more and those under."""
    line(label, errors)
    line("... of them 40 us or more", [e for e, t in zip(errors, measured_us) if t >= LAUNCH_FLOOR_US])
    line(f"... under 40 us{' (launch floor)' if 'every row with a 4,096' in label else ''}",
         [e for e, t in zip(errors, measured_us) if t < LAUNCH_FLOOR_US])


def accuracy():
    gemm, attention, membound = Table("gemm"), Table("attention"), Table("membound")
    print("| relative error vs the H100 measurements | rows | median | max | within 10% |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="compute_table.") as tmp:
        fits = Fits(tmp)
        line("gemm, fitted rows (model on the measured tables)", fits.errors(gemm, gemm.rows, gemm.rows))
        line("attention, fitted rows (fwd and bwd samples)", fits.errors(attention, attention.rows, attention.rows))
        line("membound, fitted rows", fits.errors(membound, membound.rows, membound.rows))
        line("gemm, fitted curves alone (= the derived table)", fits.errors(gemm, gemm.rows, gemm.rows, smooth=True))
        line("attention, fitted laws alone", fits.errors(attention, attention.rows, attention.rows, smooth=True))
        line("membound, fitted law alone", fits.errors(membound, membound.rows, membound.rows, smooth=True))

        def dims(r):
            return int(r["m"]), int(r["n"]), int(r["k"])

        not_tf32 = [r for r in gemm.rows if r["dtype"] != "tf32"]
        for dim in (4096, 1024):
            held = lambda r, d=dim: r["dtype"] != "tf32" and d in dims(r)  # noqa: E731
            times = [float(r["time_us"]) for r in gemm.rows if held(r)]
            split(f"**gemm, held out: every row with a {dim:,}{' (both dtypes)' if dim == 4096 else ''}**",
                  held_out(fits, gemm, held), times)
        # Each row alone, fitted on the other rows of its dtype.
        each, times = [], []
        for r in not_tf32:
            same = [s for s in gemm.rows if s["dtype"] == r["dtype"] and s is not r]
            each += fits.errors(gemm, same, [r])
            times.append(float(r["time_us"]))
        split("**gemm, held out: each row alone**", each, times)
        # Per dtype and (m, n), one inner k (1024 or 4096, alternating over the (m, n) grid).
        index = {512: 0, 1024: 1, 4096: 2, 16384: 3}
        for dtype, label in (("bf16", "gemm bf16, held out: one inner k (1024 or 4096) per (m, n)"),
                             ("fp16", "gemm fp16, held out: the same")):
            subset = [r for r in gemm.rows if r["dtype"] in (dtype, "tf32")]

            def one_k(r):
                m, n, k = dims(r)
                return r["dtype"] != "tf32" and k == (1024 if (index[m] + index[n]) % 2 == 0 else 4096)

            line(label, held_out(fits, gemm, one_k, rows=subset))
        line("gemm, held out: the whole m = 1024 plane (both dtypes)",
             held_out(fits, gemm, lambda r: r["dtype"] != "tf32" and dims(r)[0] == 1024))
        line("gemm, held out: the whole k = 4096 plane",
             held_out(fits, gemm, lambda r: r["dtype"] != "tf32" and dims(r)[2] == 4096))

        fwd, bwd = [], []
        for r in attention.rows:
            e = fits.errors(attention, [s for s in attention.rows if s is not r], [r])
            fwd.append(e[0])
            bwd.append(e[1])
        line("attention forward, held out one row at a time", fwd)
        line("attention backward, held out one row at a time", bwd)

        for log2 in (24, 28, 22, 20):
            line(f"membound, held out 2^{log2} elements (every op at once)",
                 held_out(fits, membound, lambda r, n=1 << log2: int(r["elements"]) == n))
        one = []
        for r in membound.rows:
            one += fits.errors(membound, [s for s in membound.rows if s is not r], [r])
        line("membound, held out one row at a time", one)


# The fit's options compared: the curves' loss and the sustained-load term (docs/compute.md).
VARIANTS = (("squared loss", "  kernel_curve_loss: squared\n"), ("Huber loss (used)", ""),
            ("with the load term", "  kernel_sustained_load: true\n"))


def variants():
    gemm = Table("gemm")
    print("| proxy | " + " | ".join(f"{name}: median / max / within 10%" if i == 0 else name
                                     for i, (name, _) in enumerate(VARIANTS)) + " |")
    print("|---" * (len(VARIANTS) + 1) + "|")

    def dims(r):
        return int(r["m"]), int(r["n"]), int(r["k"])

    def us(rows):
        return [float(r["time_us"]) for r in rows]

    not_tf32 = [r for r in gemm.rows if r["dtype"] != "tf32"]
    held_by_dim = {d: [r for r in not_tf32 if d in dims(r)] for d in (4096, 1024)}
    rows = []  # (label, errors per variant, measured times or None)
    with tempfile.TemporaryDirectory(prefix="compute_table.") as tmp:
        fits = Fits(tmp)
        per = {name: {} for name, _ in VARIANTS}
        for name, system in VARIANTS:
            e = per[name]
            for d in (4096, 1024):
                e[d] = held_out(fits, gemm, lambda r, d=d: r["dtype"] != "tf32" and d in dims(r),
                                options={"system": system})
            e["each"] = []
            for r in not_tf32:
                same = [x for x in gemm.rows if x["dtype"] == r["dtype"] and x is not r]
                e["each"] += fits.errors(gemm, same, [r], system=system)
            e["curves"] = fits.errors(gemm, gemm.rows, gemm.rows, smooth=True, system=system)
            e["k"] = held_out(fits, gemm, lambda r: r["dtype"] != "tf32" and dims(r)[2] == 4096,
                              options={"system": system})
            e["m"] = held_out(fits, gemm, lambda r: r["dtype"] != "tf32" and dims(r)[0] == 1024,
                              options={"system": system})
    for key, label, times in ((4096, "every 4,096 row held out", us(held_by_dim[4096])),
                              (1024, "every 1,024 row held out", us(held_by_dim[1024])),
                              ("each", "each row alone", us(not_tf32)),
                              ("curves", "fitted curves alone", None),
                              ("k", "whole k = 4,096 plane", None),
                              ("m", "whole m = 1,024 plane", None)):
        n = len(per[VARIANTS[0][0]][key])
        print(f"| {label} ({n}) | " + " | ".join(cell(per[name][key]) for name, _ in VARIANTS) + " |")
        if times is not None:
            big = [i for i, t in enumerate(times) if t >= LAUNCH_FLOOR_US]
            print(f"| ... {LAUNCH_FLOOR_US} us or more ({len(big)}) | " +
                  " | ".join(cell([per[name][key][i] for i in big]) for name, _ in VARIANTS) + " |")


if __name__ == "__main__":
    if sys.argv[1:] not in (["accuracy"], ["variants"]):
        sys.exit(__doc__)
    for t in ("gemm", "attention", "membound"):
        if not os.path.exists(os.path.join(MEASURED, t + ".csv")):
            sys.exit(f"compute table: {os.path.join(MEASURED, t + '.csv')} is absent (../shared/testdata)")
    accuracy() if sys.argv[1] == "accuracy" else variants()
