#!/usr/bin/env python3
"""The tables of docs/synthesizer.md: synthesized collectives against the injection bound, and
the synthesized all-gather against ring and direct on 64 NPUs.

    scripts/docs/tables/synthesizer.py gap         per topology and collective, with 1 and 4 chunks per
                                                   share: the schedule's bus bandwidth at 16 MiB and its
                                                   share of the NPU ingress bound, as
                                                   `sim collective synth --coll C --network configs/T.yml
                                                   --chunks K --size 16MiB -o PREFIX` prints them
    scripts/docs/tables/synthesizer.py plateaus    all-gather busbw (GB/s) at 1 GiB per rank, flow
                                                   backend (the analytical one in parentheses where it
                                                   differs), beside the paper's plateaus
    scripts/docs/tables/synthesizer.py busbw SIZE  the same at another size per rank (1KiB .. 1GiB,
                                                   a power of 4), without the paper's column

plateaus and busbw run the sweep spec of scripts/seed_curves.py's curves (4 topologies x 3
algorithms x 2 backends x 11 sizes, about a second in Release), in a temporary folder:

    sim sweep configs/sweeps/seed_curves.yml -o OUT -j 1 -q

and read OUT/results.csv's `busbw_gbps` ((N-1) x size / time, nccl-tests' definition).
Uses $SIM, else `sim` on the PATH; $SIM_SOURCE_DIR, else this script's repository.
"""
import csv
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.environ.get("SIM_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SIM = os.environ.get("SIM", "sim")

GAP_TOPOLOGIES = ["mesh8x8", "torus4x4x4", "hypercube64", "mesh4x4x4"]
GAP_COLLECTIVES = {"allgather": "all-gather", "allreduce": "all-reduce"}
GAP_CHUNKS = [1, 4]
SCHEDULE = re.compile(r"^schedule at .*\(busbw ([\d.]+) GB/s, ([\d.]+)% of the ([\d.]+) GB/s an NPU can receive\)$", re.M)

# Sweep network -> row title, in the order of docs/synthesizer.md.
CURVE_TOPOLOGIES = {
    "../mesh8x8.yml": "2-D mesh 8x8",
    "../mesh4x4x4.yml": "3-D mesh 4x4x4 (TACOS Hypercube3D)",
    "../torus4x4x4.yml": "3-D torus 4x4x4",
    "../hypercube64.yml": "hypercube 64 (6-D)",
}
ALGORITHMS = {"allgather=synth": "synthesized", "allgather=gen:ring": "ring", "allgather=gen:direct": "direct"}
# The plateaus (GB/s, synthesized / ring / direct) of the all-gather bandwidth curves on 64 NPUs in
# Yoo et al., "Towards a Standardized Representation for Deep Learning Collective Algorithms",
# IEEE Micro 45(2), 2025: the 2-D mesh, and the "3-D hypercube 4x4x4" (TACOS's Hypercube3D, a 3-D
# mesh; in parentheses beside the two 6-link readings of that name). The same as
# scripts/seed_curves.py's SEED.
PAPER = {
    "../mesh8x8.yml": "100 / 20 / 5",
    "../mesh4x4x4.yml": "150 / 40 / 5",
    "../torus4x4x4.yml": "(150 / 40 / 5)",
    "../hypercube64.yml": "(150 / 40 / 5)",
}


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"synthesizer table: {' '.join(cmd)} exited {r.returncode}:\n{r.stderr[-2000:]}")
    return r.stdout


def gap():
    print("| topology | collective | NPU ingress bound | k = 1: busbw (share of the bound) | k = 4 |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="synth_table.") as tmp:
        for coll, coll_label in GAP_COLLECTIVES.items():
            for topo in GAP_TOPOLOGIES:
                cells, bound = [], None
                for k in GAP_CHUNKS:
                    out = run([SIM, "collective", "synth", "--coll", coll, "--network",
                               os.path.join(ROOT, "configs", topo + ".yml"), "--chunks", str(k), "--size", "16MiB",
                               "-o", os.path.join(tmp, f"{topo}.{coll}.{k}", "algo")])
                    m = SCHEDULE.search(out)
                    if not m:
                        sys.exit(f"synthesizer table: no schedule line in what sim collective synth printed:\n{out}")
                    bound = m.group(3)
                    cells.append(f"{m.group(1)} GB/s ({m.group(2)}%)")
                print(f"| {topo} | {coll_label} | {bound} GB/s | " + " | ".join(cells) + " |")


def sweep():
    """{(network, collective, backend, size): busbw GB/s} of configs/sweeps/seed_curves.yml."""
    with tempfile.TemporaryDirectory(prefix="synth_table.") as tmp:
        out = os.path.join(tmp, "out")
        run([SIM, "sweep", os.path.join(ROOT, "configs", "sweeps", "seed_curves.yml"), "-o", out, "-j", "1", "-q"])
        busbw = {}
        with open(os.path.join(out, "results.csv")) as f:
            for row in csv.DictReader(f):
                if row["status"] != "ok":
                    sys.exit(f"synthesizer table: point {row['point']}: {row['status']} {row['message']}")
                # `--collective` is the axis (allgather=synth), `collective` the result's (ALL_GATHER).
                busbw[(row["network"], row["--collective"], row["backend"], row["size"])] = float(row["busbw_gbps"])
    return busbw


def curves(size, paper):
    bw = sweep()
    if not any(k[3] == size for k in bw):
        sys.exit(f"synthesizer table: the sweep has no size {size} (1KiB, 4KiB, ..., 1GiB)")
    print("| topology | " + " | ".join(ALGORITHMS.values()) + (" | the paper (synth / ring / direct) |" if paper else " |"))
    print("|---|" + "---|" * (len(ALGORITHMS) + (1 if paper else 0)))
    for net, title in CURVE_TOPOLOGIES.items():
        cells = []
        for algo in ALGORITHMS:
            flow, analytical = (f"{bw[(net, algo, b, size)]:.1f}" for b in ("flow", "analytical"))
            cells.append(flow if flow == analytical else f"{flow} ({analytical})")
        print(f"| {title} | " + " | ".join(cells) + (f" | {PAPER[net]} |" if paper else " |"))


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["gap"]:
        gap()
    elif args == ["plateaus"]:
        curves("1GiB", True)
    elif len(args) == 2 and args[0] == "busbw":
        curves(args[1], False)
    else:
        sys.exit(__doc__)
