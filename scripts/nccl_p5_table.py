#!/usr/bin/env python3
"""The p5 preset against the public p5 all-reduce curve, every row (docs/nccl.md).

    scripts/nccl_p5_table.py SIM CURVE.csv              # print the table
    scripts/nccl_p5_table.py SIM CURVE.csv --write-docs # put it into docs/nccl.md's marked block

CURVE.csv is p5_efa_allreduce_2-32nodes.csv (docs/public-data.md says where it comes from).
Each row is simulated on `sim system gen p5 --nodes N`'s files as generated, in a temporary
folder removed at exit. Rows the preset was fitted on are marked "fit".
"""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

BEGIN, END = "<!-- p5-table: begin (scripts/nccl_p5_table.py --write-docs) -->", "<!-- p5-table: end -->"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    sim, curve = os.path.abspath(args[0]), args[1]
    rows = list(csv.DictReader(open(curve)))
    tmp = tempfile.mkdtemp(prefix="sim-p5-")
    try:
        lines = ["| nodes | size | algorithm (the tuner's, NCCL's on 2 nodes) | measured busbw | simulated | error |", "|---|---|---|---|---|---|"]
        errors = []
        for r in rows:
            n, size = int(r["nodes"]), int(r["size_bytes"])
            sysdir = os.path.join(tmp, f"p5x{n}")
            if not os.path.isdir(sysdir):
                subprocess.run([sim, "system", "gen", "p5", "--nodes", str(n), "-o", sysdir], check=True, capture_output=True)
            wl = os.path.join(tmp, f"ar{n}_{size}")
            subprocess.run([sim, "workload", "gen", "collectives", "--npus", str(8 * n), "--coll", "allreduce",
                            "--size", str(size), "-o", wl], check=True, capture_output=True)
            out = os.path.join(tmp, "c.csv")
            subprocess.run([sim, "--workload", wl, "--system", sysdir, "--csv", out, "-q"], check=True, capture_output=True)
            rec = list(csv.DictReader(open(out)))[-1]
            sim_bw, ref_bw = float(rec["busbw_gbps"]), float(r["busbw_GBps"])
            err = (sim_bw - ref_bw) / ref_bw * 100
            fit = n == 2 and size <= 256 << 20
            if not fit:
                errors.append(abs(err))
            mib = size >> 20
            label = f"{mib >> 10} GiB" if mib >= 1024 else f"{mib} MiB"
            lines.append(f"| {n} | {label} | {rec['algorithm'].removeprefix('nccl:')} | {ref_bw:.1f} | {sim_bw:.1f} | "
                         f"{err:+.1f}%{' (fit)' if fit else ''} |")
            print(lines[-1], flush=True)
        within = sum(1 for e in errors if e <= 10)
        lines.append("")
        lines.append(f"Held out: {within} of {len(errors)} rows within 10% of busbw; largest error {max(errors):.1f}%.")
        table = "\n".join(lines)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if "--write-docs" in sys.argv:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "nccl.md")
        text = open(path).read()
        block = BEGIN + "\n" + table + "\n" + END
        if BEGIN in text:
            text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text, flags=re.S)
        else:
            text = text.replace("P5_TABLE", block)
        open(path, "w").write(text)
        print("wrote the table into docs/nccl.md")
    else:
        print(table)


if __name__ == "__main__":
    main()
