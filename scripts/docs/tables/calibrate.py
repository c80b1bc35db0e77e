#!/usr/bin/env python3
"""The tables of docs/calibrate.md: `sim calibrate` on the measured one-node H100 table.

    scripts/docs/tables/calibrate.py held-out   the dgx-h100 preset fitted on the 5 all-reduce rows of
                                                16 MiB to 256 MiB: the time error of the fitting rows,
                                                of the larger all-reduce rows and of every all-gather
                                                and reduce-scatter row of 16 MiB or more (sizes as the
                                                table gives them: an all-gather's gathered total)
    scripts/docs/tables/calibrate.py p5         the p5 preset fitted as it was, on the 8 two- and
                                                four-node all-reduce rows of 32-256 MiB of the p5 curve,
                                                with --trade-offs: each value beside its bounds, whether
                                                the rows pin it and, where not, where it went and the
                                                others with it
    scripts/docs/tables/calibrate.py p5-two-nodes
                                                the same fit on the 4 two-node rows alone, from the
                                                preset's values, with --trade-offs; and how many of the
                                                other rows each fit holds within 10% of busbw
    scripts/docs/tables/calibrate.py models     the same fit on variants of the preset's files: native
                                                ring or NCCL, other free parameters, reductions' memory
                                                reads charged or not; the fitted values and the time
                                                errors of the 18 judged rows (all-reduce 1 and 2 GiB,
                                                all-gather and reduce-scatter from 16 MiB)

Each fit is

    sim system gen dgx-h100 -o sys/dgx      (then, for a variant, its files edited as MODELS says)
    sim calibrate h100_sxm_x8_xla.csv --system sys/dgx --filter collective=allreduce \\
        --sizes 16MiB:256MiB -o sys/dgx-fit -q -j 1

in a temporary folder, reading the fitted values from what it prints and the errors from
sys/dgx-fit/errors.csv. A fit takes one to three minutes of CPU (held-out: one fit; models: five).
The measured table is ../shared/testdata/reference-curves/h100_sxm_x8_xla.csv (docs/public-data.md),
which a public clone lacks. Uses $SIM, else `sim` on the PATH; $SIM_SOURCE_DIR, else this script's
repository.
"""
import csv
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.environ.get("SIM_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SIM = os.environ.get("SIM", "sim")
REFERENCE = os.path.join(ROOT, "..", "shared", "testdata", "reference-curves", "h100_sxm_x8_xla.csv")
P5_REFERENCE = os.path.join(ROOT, "..", "shared", "testdata", "reference-curves", "p5_efa_allreduce_2-32nodes.csv")
MiB, GiB = 1 << 20, 1 << 30
RANKS = 8

# The free parameters of the dgx-a100 preset's calibration.yml, with the H100's 450 GB/s NVLink
# (0.4 to 1 x the spec sheet) for the bandwidth's bounds.
LINK_FREE = """free:
  - name: nvlink_bandwidth
    file: network
    key: bandwidth.0
    min: 180GB/s
    max: 450GB/s
  - name: nvlink_latency
    file: network
    key: latency.0
    min: 50ns
    max: 20us
  - name: message_overhead
    file: system
    key: collective.endpoint_delay
    min: 10ns
    max: 50us
"""


def native_ring(system):
    for coll in ("all_reduce", "all_gather", "reduce_scatter"):
        system, n = re.subn(rf"^(    {coll}: )nccl:\S+", r"\1ring", system, flags=re.M)
        if n != 1:
            sys.exit(f"calibrate table: no '{coll}: nccl:...' line in the preset's system.yml")
    return system


def without_compute(system):
    """No compute section: no memory bandwidth, so reductions are free."""
    a, b = system.index("\ncompute:\n"), system.index("\ncollective:\n")
    return system[:a] + system[b:]


def without_kernels(system):
    """No kernel model, so no L2 size: every reduction reads its addend from HBM."""
    out, n = re.subn(r"^  kernels: .*\n", "", system, flags=re.M)
    if n != 1:
        sys.exit("calibrate table: no 'kernels:' line in the preset's system.yml")
    return out


# (label, edit of system.yml, calibration.yml's free list or None for the preset's)
MODELS = [
    ("native `ring`; free: NVLink bandwidth and latency, message overhead", native_ring, LINK_FREE),
    ("`nccl`; free: the same", None, LINK_FREE),
    ("`nccl`; free: `nvls_efficiency`, `nccl_overhead`; reductions free (no `compute` section)", without_compute, None),
    ("the same; every reduction reads its addend from HBM (no `compute.kernels`, so no L2)", without_kernels, None),
    ("the same; reductions read from HBM beyond the L2 (the preset's files: `dgx-h100-calibrated`)", None, None),
]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"calibrate table: {' '.join(cmd)} exited {r.returncode}:\n{r.stderr[-2000:]}")
    return r.stdout


def fit(tmp, name, edit=None, free=None):
    """Fits a copy of the dgx-h100 preset's files; returns (printed fit summary, errors.csv rows)."""
    system_dir = os.path.join(tmp, name, "dgx")
    run([SIM, "system", "gen", "dgx-h100", "-o", system_dir])
    if edit:
        path = os.path.join(system_dir, "system.yml")
        with open(path) as f:
            text = edit(f.read())
        with open(path, "w") as f:
            f.write(text)
    if free:
        path = os.path.join(system_dir, "calibration.yml")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text[:text.index("\nfree:\n") + 1] + free)
    out_dir = os.path.join(tmp, name, "fit")
    printed = run([SIM, "calibrate", REFERENCE, "--system", system_dir, "--filter", "collective=allreduce",
                   "--sizes", "16MiB:256MiB", "-o", out_dir, "-q", "-j", "1"])
    with open(os.path.join(out_dir, "errors.csv")) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["bytes"] = int(r["bytes"])
        # The table's size: an all-gather's gathered total, each rank's buffer otherwise.
        r["table_bytes"] = r["bytes"] * RANKS if r["collective"] == "ALL_GATHER" else r["bytes"]
        r["error"] = float(r["time_error_pct"])
    return printed, rows


def fitted_values(printed):
    m = re.search(r"rms log error ([\d.]+) on the fitting rows", printed)
    values = re.findall(r"^  (\w+) +(\S+) +\[", printed, re.M)
    if not m or not values:
        sys.exit(f"calibrate table: no fitted values in what sim calibrate printed:\n{printed}")
    return m.group(1), values


def sizes_label(sizes):
    """[16 MiB, 32 MiB, 1 GiB] -> '16, 32 MiB, 1 GiB'."""
    groups = []
    for s in sizes:
        unit, n = ("GiB", s // GiB) if s >= GiB else ("MiB", s // MiB)
        if groups and groups[-1][0] == unit:
            groups[-1][1].append(n)
        else:
            groups.append((unit, [n]))
    return ", ".join(", ".join(str(n) for n in ns) + " " + unit for unit, ns in groups)


def errors_label(rows):
    return ", ".join(f"{r['error']:+.1f}" for r in rows) + "%"


def judged(rows):
    """The rows the acceptance criterion names: all-reduce 1-2 GiB, all-gather and reduce-scatter >= 16 MiB."""
    ar = [r for r in rows if r["collective"] == "ALL_REDUCE" and r["table_bytes"] >= GiB]
    ag = [r for r in rows if r["collective"] == "ALL_GATHER" and r["table_bytes"] >= 16 * MiB]
    rs = [r for r in rows if r["collective"] == "REDUCE_SCATTER" and r["table_bytes"] >= 16 * MiB]
    if (len(ar), len(ag), len(rs)) != (2, 8, 8):
        sys.exit(f"calibrate table: {len(ar)}, {len(ag)}, {len(rs)} judged rows, not 2, 8, 8")
    return ar, ag, rs


def held_out():
    with tempfile.TemporaryDirectory(prefix="calibrate_table.") as tmp:
        _, rows = fit(tmp, "preset")
    fitting = [r for r in rows if r["role"] == "fit"]
    big_ar = [r for r in rows if r["collective"] == "ALL_REDUCE" and r["role"] != "fit"
              and r["table_bytes"] > fitting[-1]["table_bytes"]]
    _, ag, rs = judged(rows)
    print("| rows | sizes (the table's) | time error |")
    print("|---|---|---|")
    for label, rs_ in (("all-reduce, fitted on", fitting), ("all-reduce", big_ar), ("all-gather", ag),
                       ("reduce-scatter", rs)):
        print(f"| {label} | {sizes_label([r['table_bytes'] for r in rs_])} | {errors_label(rs_)} |")


def spread(rows):
    lo, hi = min(r["error"] for r in rows), max(r["error"] for r in rows)
    return f"{lo:+.1f} to {hi:+.1f}%"


def models():
    print("| model | fitted | rms log error (fitting rows) | all-reduce 1, 2 GiB | all-gather >= 16 MiB "
          "| reduce-scatter >= 16 MiB | within 10% |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="calibrate_table.") as tmp:
        for i, (label, edit, free) in enumerate(MODELS):
            printed, rows = fit(tmp, f"model{i}", edit, free)
            rms, values = fitted_values(printed)
            ar, ag, rs = judged(rows)
            within = sum(abs(r["error"]) < 10 for r in ar + ag + rs)
            fitted = ", ".join(f"{name} {value}" for name, value in values)
            print(f"| {label} | {fitted} | {rms} | {errors_label(ar)} | {spread(ag)} | {spread(rs)} "
                  f"| {within} of {len(ar + ag + rs)} |")


def p5_fit(tmp, name, filters, trade_offs=True):
    """sim calibrate on the p5 curve (with --trade-offs); returns (stdout, stderr, errors.csv rows)."""
    out_dir = os.path.join(tmp, name)
    r = subprocess.run([SIM, "calibrate", P5_REFERENCE, "--preset", "p5", *filters, "--sizes", "32MiB:256MiB",
                        *(["--trade-offs"] if trade_offs else []), "-o", out_dir, "-q", "-j", "2"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"calibrate table: sim calibrate --preset p5 exited {r.returncode}:\n{r.stderr[-2000:]}")
    with open(os.path.join(out_dir, "errors.csv")) as f:
        rows = list(csv.DictReader(f))
    return r.stdout, r.stderr, rows


def trade_off_table(stdout, stderr):
    rms, _ = fitted_values(stdout)
    bounds = dict(re.findall(r"^  (\w+) +\S+ +(\[[^]]*\])", stdout, re.M))
    moved = {}
    for m in re.finditer(r"do not pin (\w+): at (\S+) \(fitted \S+\), (?:with (.*?)|the others as fitted),"
                         r" they fit with rms log error (\S+)", stderr):
        moved[m.group(1)] = (m.group(2), m.group(3) or "the others as fitted", m.group(4))
    print(f"| parameter | fitted (rms log error {rms}) | bounds | pinned by the rows | moved to, the others "
          "fitted again: rms log error |")
    print("|---|---|---|---|---|")
    for name, value in fitted_values(stdout)[1]:
        if name in moved:
            at, others, err = moved[name]
            print(f"| `{name}` | {value} | {bounds[name]} | no | {at}, with {others}: {err} |")
        else:
            print(f"| `{name}` | {value} | {bounds[name]} | yes | |")


def within(rows):
    """(rows not fitted on within 10% of busbw, rows not fitted on)."""
    held = [r for r in rows if r["role"] != "fit"]
    return sum(abs(float(r["busbw_error_pct"])) <= 10 for r in held), len(held)


P5_PRESET_FILTERS = ["--filter", "nodes=2", "--filter", "nodes=4"]


def p5():
    with tempfile.TemporaryDirectory(prefix="calibrate_table.") as tmp:
        stdout, stderr, _ = p5_fit(tmp, "p5-fit", P5_PRESET_FILTERS)
    trade_off_table(stdout, stderr)


def p5_two_nodes():
    with tempfile.TemporaryDirectory(prefix="calibrate_table.") as tmp:
        stdout, stderr, rows = p5_fit(tmp, "p5-two", ["--filter", "nodes=2"])
        _, _, preset_rows = p5_fit(tmp, "p5-fit", P5_PRESET_FILTERS, trade_offs=False)
    trade_off_table(stdout, stderr)
    ok, n = within(rows)
    ok24, n24 = within(preset_rows)
    print(f"| rows not fitted on within 10% of busbw | {ok} of {n} (the preset's fit: {ok24} of {n24}) | | | |")


TABLES = {"held-out": held_out, "models": models, "p5": p5, "p5-two-nodes": p5_two_nodes}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in TABLES:
        sys.exit(__doc__)
    needed = P5_REFERENCE if sys.argv[1].startswith("p5") else REFERENCE
    if not os.path.exists(needed):
        sys.exit(f"calibrate table: {needed} is absent (../shared/testdata)")
    TABLES[sys.argv[1]]()
