#!/usr/bin/env python3
"""The p5 preset against the public p5 curves, every row (docs/nccl.md).

    scripts/docs/nccl_p5_table.py SIM CURVE.csv              # print the table
    scripts/docs/nccl_p5_table.py SIM CURVE.csv --write-docs # put it into docs/nccl.md's marked block

CURVE.csv is either p5_efa_allreduce_2-32nodes.csv (all-reduce, columns
system,nodes,ranks,collective,size_bytes,...) or the benchmark's all-to-all file as published
(`data/nccl_alltoall.csv`, columns Nodes,GPUs,size(MB),...,out busbw(GB/s),...; sizes in MiB,
out-of-place busbw); docs/public-data.md says where both come from. Each row is simulated on
`sim system gen p5 --nodes N`'s files as generated, in a temporary folder removed at exit. Rows
the preset was fitted on are marked "fit".
"""
import csv
import os
import shutil
import sys
import tempfile

from preset_runs import simulate, write_block

MARKERS = {
    "allreduce": ("<!-- p5-table: begin (scripts/docs/nccl_p5_table.py --write-docs) -->", "<!-- p5-table: end -->"),
    "alltoall": ("<!-- p5-alltoall-table: begin (scripts/docs/nccl_p5_table.py --write-docs) -->",
                 "<!-- p5-alltoall-table: end -->"),
}


# The rows the p5 preset is fitted on (presets/catalog.cpp): all-reduce on 2 and 4 nodes, 32-256 MiB.
FIT_NODES = (2, 4)
FIT_SIZES = (32 << 20, 256 << 20)


def read_curve(path):
    """(collective, [(nodes, bytes, measured busbw)]) of either file's layout."""
    rows = list(csv.DictReader(open(path)))
    if rows and "size(MB)" in rows[0]:
        return "alltoall", [(int(r["Nodes"]), int(r["size(MB)"]) << 20, float(r["out busbw(GB/s)"])) for r in rows]
    return "allreduce", [(int(r["nodes"]), int(r["size_bytes"]), float(r["busbw_GBps"])) for r in rows]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    sim, curve = os.path.abspath(args[0]), args[1]
    coll, rows = read_curve(curve)
    begin, end = MARKERS[coll]
    tmp = tempfile.mkdtemp(prefix="sim-p5-")
    try:
        what = "algorithm (the tuner's, NCCL's on 2 nodes)" if coll == "allreduce" else "algorithm"
        lines = [f"| nodes | size | {what} | measured busbw | simulated | error |", "|---|---|---|---|---|---|"]
        errors = []
        for n, size, ref_bw in rows:
            sim_bw, algorithm = simulate(sim, tmp, "p5", n, coll, size)
            err = (sim_bw - ref_bw) / ref_bw * 100
            fit = coll == "allreduce" and n in FIT_NODES and FIT_SIZES[0] <= size <= FIT_SIZES[1]
            if not fit:
                errors.append(abs(err))
            mib = size >> 20
            label = f"{mib >> 10} GiB" if mib >= 1024 else f"{mib} MiB"
            lines.append(f"| {n} | {label} | {algorithm.removeprefix('nccl:')} | {ref_bw:.1f} | {sim_bw:.1f} | "
                         f"{err:+.1f}%{' (fit)' if fit else ''} |")
            print(lines[-1], flush=True)
        within = sum(1 for e in errors if e <= 10)
        lines.append("")
        lead = "Held out" if coll == "allreduce" else "None fitted on"
        lines.append(f"{lead}: {within} of {len(errors)} rows within 10% of busbw; largest error {max(errors):.1f}%.")
        table = "\n".join(lines)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if "--write-docs" in sys.argv:
        write_block("docs/nccl.md", begin, end, table)
    else:
        print(table)


if __name__ == "__main__":
    main()
