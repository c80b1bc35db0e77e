#!/usr/bin/env python3
"""Every 8-NPU congestion-aware row of ASTRA-sim's reference sample, on our backends.

For each `congestion_aware` row of results_sample.csv with 8 NPUs (Ring_8,
FullyConnected_8, Switch_8; 4 collectives x ring/direct/halvingDoubling/
doubleBinaryTree x 64 KiB and 16 MiB), runs `sim` on the row's own ASTRA-sim
files, exactly as ASTRA-sim was run:

    workload   one collective of S bytes per rank (`sim workload gen collectives`)
    system     system/<algorithm>_1d.json           (its splits, endpoint delay,
                                                     local-mem-bw, the algorithm)
    network    network/<topology>.yml + `bandwidth_unit: GiB/s` (its "GB/s" is 2^30 B/s)

once per backend (analytical, flow, ns3 by default), and prints a markdown
table (ASTRA-sim's time, ours, ratios) and how many rows each backend has within
1%, 5% and 20% of ASTRA-sim. docs/network.md's table is this script's output:

    python3 scripts/docs/astrasim_congestion_rows.py > rows.md
    python3 scripts/docs/astrasim_congestion_rows.py --backends analytical,flow   # no ns-3 (about 2 s)

Options: --sim PATH (default build/sim), --testdata DIR (default
../shared/testdata/astrasim-reference), --backends LIST, --csv FILE (the raw
numbers). Only the Python standard library is used. ns3 rows take up to a few
seconds each (about 2 minutes for all 72 on this machine).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIZES = {65536: "64KiB", 16777216: "16MiB"}
COLL = {"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reducescatter", "all_to_all": "alltoall"}


def fail(msg):
    print("astrasim_congestion_rows: " + msg, file=sys.stderr)
    sys.exit(2)


def run(cmd):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        fail("failed (exit %d): %s\n%s%s" % (out.returncode, " ".join(cmd), out.stdout, out.stderr))
    return out.stdout


def rows_of(testdata):
    path = os.path.join(testdata, "results_sample.csv")
    if not os.path.exists(path):
        fail("no %s (the shared testdata is absent)" % path)
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["backend"] == "congestion_aware" and r["npus"] == "8"]


def workload(sim, tmp, row):
    prefix = os.path.join(tmp, "wl", "%s_%s" % (row["collective"], row["size_bytes"]))
    if not os.path.exists(prefix + ".0.et"):
        size = SIZES.get(int(row["size_bytes"]), row["size_bytes"])
        run([sim, "workload", "gen", "collectives", "--npus", row["npus"], "--coll", COLL[row["collective"]],
             "--size", size, "-o", prefix])
    return prefix


def network(testdata, tmp, topology):
    path = os.path.join(tmp, topology + ".yml")
    if not os.path.exists(path):
        with open(os.path.join(testdata, "network", topology + ".yml")) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text + "\nbandwidth_unit: GiB/s\n")
    return path


def simulate(sim, tmp, testdata, row, backend):
    report = os.path.join(tmp, "report.json")
    run([sim, "--quiet", "--workload", workload(sim, tmp, row),
         "--system", os.path.join(testdata, "system", row["algorithm"] + "_1d.json"),
         "--network", network(testdata, tmp, row["topology"]), "--backend", backend, "--report", report])
    with open(report) as f:
        return float(json.load(f)["sim_time_ns"])


def pct(ours, theirs):
    return "%+.2f%%" % (100.0 * (ours / theirs - 1.0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sim", default=os.path.join(ROOT, "build", "sim"))
    ap.add_argument("--testdata", default=os.path.join(ROOT, "..", "shared", "testdata", "astrasim-reference"))
    ap.add_argument("--backends", default="analytical,flow,ns3")
    ap.add_argument("--csv", help="also write the numbers here")
    args = ap.parse_args()
    backends = [b for b in args.backends.split(",") if b]
    for b in backends:
        if b not in ("analytical", "flow", "ns3"):
            fail("--backends: unknown backend '%s' (analytical, flow, ns3)" % b)
    if not os.access(args.sim, os.X_OK):
        fail("no sim binary at %s (--sim)" % args.sim)
    rows = rows_of(args.testdata)
    results = []
    with tempfile.TemporaryDirectory(prefix="astra_rows_%d_" % os.getpid()) as tmp:
        for r in rows:
            results.append((r, {b: simulate(args.sim, tmp, args.testdata, r, b) for b in backends}))

    head = ["topology", "collective", "algorithm", "S (B)", "ASTRA-sim (ns)"] + ["%s (ns)" % b for b in backends]
    head += ["%s vs ASTRA-sim" % b for b in backends]
    if "flow" in backends and "ns3" in backends:
        head.append("ns3 vs flow")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r, t in results:
        theirs = float(r["sim_time_ns"])
        cells = [r["topology"], r["collective"], r["algorithm"], r["size_bytes"], r["sim_time_ns"]]
        cells += ["%.1f" % t[b] for b in backends] + [pct(t[b], theirs) for b in backends]
        if "flow" in backends and "ns3" in backends:
            cells.append(pct(t["ns3"], t["flow"]))
        print("| " + " | ".join(cells) + " |")
    print()
    print("Rows within 1%%, 5%%, 20%% of ASTRA-sim (of %d):" % len(results))
    print()
    for b in backends:
        err = [abs(t[b] / float(r["sim_time_ns"]) - 1.0) for r, t in results]
        print("- %s: %d, %d, %d" % (b, sum(e <= 0.01 for e in err), sum(e <= 0.05 for e in err),
                                      sum(e <= 0.20 for e in err)))
    if args.csv:
        tmpname = args.csv + ".tmp"
        with open(tmpname, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["topology", "collective", "algorithm", "size_bytes", "astrasim_ns"] + ["%s_ns" % b for b in backends])
            for r, t in results:
                w.writerow([r["topology"], r["collective"], r["algorithm"], r["size_bytes"], r["sim_time_ns"]] +
                           ["%.3f" % t[b] for b in backends])
        os.replace(tmpname, args.csv)


if __name__ == "__main__":
    main()
