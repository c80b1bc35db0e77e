#!/usr/bin/env python3
"""The spec-sheet dgx-h100 preset against all-reduce measured on InfiniBand H100 clusters (docs/nccl.md).

    scripts/docs/nccl_ib_table.py SIM FILE@NODES@LABEL...              # print the table
    scripts/docs/nccl_ib_table.py SIM FILE@NODES@LABEL... --write-docs # put it into docs/nccl.md's marked block

Each FILE is nccl-tests `all_reduce_perf` output as printed (the rows are enough: size, count,
type, redop, [root,] then out-of-place time, algbw, busbw), NODES its node count of 8 GPUs, LABEL
the source's name in the table. Every row from 16 MiB on is simulated on `sim system gen dgx-h100
--nodes NODES`'s files as generated, in a temporary folder removed at exit, and the slowest rank's
busbw compared with the measured out-of-place busbw. The table shows a few sizes; the count under
it covers every row from 16 MiB but the fitted ones: the H100's NVLS copy bandwidth (presets/hardware.h)
is fitted on the rows of 16-256 MiB of the source labelled FITTED (`--fitted LABEL`), marked "fit".
"""
import os
import shutil
import sys
import tempfile

from preset_runs import simulate, write_block

BEGIN = "<!-- ib-table: begin (scripts/docs/nccl_ib_table.py --write-docs) -->"
END = "<!-- ib-table: end -->"
SHOWN = [16 << 20, 64 << 20, 256 << 20, 1 << 30, 4 << 30]
MIN_BYTES = 16 << 20
FIT_BYTES = (16 << 20, 256 << 20)  # the copy bandwidth's fitting rows, in the --fitted source


def read_rows(path):
    """{bytes: out-of-place busbw} of nccl-tests rows as printed."""
    rows = {}
    for line in open(path):
        t = line.split()
        if len(t) < 12 or not (t[0].isdigit() and t[1].isdigit()):
            continue
        # With a root column (newer nccl-tests) 13 fields, without 12: busbw is the third after redop[/root].
        first = 5 if len(t) >= 13 else 4
        rows[int(t[0])] = float(t[first + 2])
    return rows


def label(size):
    mib = size >> 20
    return f"{mib >> 10} GiB" if mib >= 1024 else f"{mib} MiB"


def main():
    argv = sys.argv[1:]
    fitted = None
    if "--fitted" in argv:
        i = argv.index("--fitted")
        if i + 1 >= len(argv):
            sys.exit("--fitted needs the label of the source the copy bandwidth was fitted on")
        fitted = argv[i + 1]
        del argv[i:i + 2]
    args = [a for a in argv if not a.startswith("--")]
    if len(args) < 2:
        sys.exit(__doc__)
    sim = os.path.abspath(args[0])
    sources = []
    for spec in args[1:]:
        parts = spec.split("@")
        if len(parts) != 3 or not parts[1].isdigit():
            sys.exit(f"{spec}: expected FILE@NODES@LABEL")
        sources.append((parts[0], int(parts[1]), parts[2]))
    tmp = tempfile.mkdtemp(prefix="sim-ib-")
    try:
        lines = ["| source | nodes | " + " | ".join(label(s) for s in SHOWN) + " |",
                 "|---|---|" + "---|" * len(SHOWN)]
        errors, algorithms = [], set()
        for path, nodes, name in sources:
            rows = read_rows(path)
            cells = {}
            for size, ref in sorted(rows.items()):
                if size < MIN_BYTES:
                    continue
                bw, algo = simulate(sim, tmp, "dgx-h100", nodes, "allreduce", size)
                algorithms.add(algo.removeprefix("nccl:"))
                err = (bw - ref) / ref * 100
                fit = name == fitted and FIT_BYTES[0] <= size <= FIT_BYTES[1]
                if not fit:
                    errors.append(abs(err))
                cells[size] = f"{ref:.1f} / {bw:.1f} ({err:+.1f}%{' fit' if fit else ''})"
            lines.append(f"| {name} | {nodes} | " + " | ".join(cells.get(s, "") for s in SHOWN) + " |")
            print(lines[-1], flush=True)
        within = sum(1 for e in errors if e <= 10)
        lines.append("")
        lines.append(f"Measured / simulated busbw in GB/s (error of the simulation); every row from 16 MiB not "
                     f"fitted on: {within} of {len(errors)} within 10%, largest error {max(errors):.1f}%; the preset runs "
                     f"{', '.join(sorted(algorithms))}.")
        table = "\n".join(lines)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if "--write-docs" in sys.argv:
        write_block("docs/nccl.md", BEGIN, END, table)
    else:
        print(table)


if __name__ == "__main__":
    main()
