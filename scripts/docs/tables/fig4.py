#!/usr/bin/env python3
"""The tables of docs/fig4.md: a 1D ring algorithm and a direct all-to-all on 64-NPU topologies.

    scripts/docs/tables/fig4.py slowdown    ring all-reduce then ring all-gather (the ring written as
                                            Chakra ETs): each topology's time over the 1D ring's, on
                                            the analytical backend, with the 1D ring's time, and the
                                            largest relative difference of the flow backend's times
    scripts/docs/tables/fig4.py alltoall    a direct all-to-all: time in us, analytical / flow

Both run a sweep spec of configs/sweeps/ (4 topologies x 11 sizes x 2 backends, about a second
each in Release), in a temporary folder, one point at a time:

    sim sweep configs/sweeps/fig4_et.yml -o OUT -j 1 -q         (slowdown; the numbers of scripts/fig4.py)
    sim sweep configs/sweeps/fig4_alltoall.yml -o OUT -j 1 -q   (alltoall; those of scripts/fig4.py --alltoall)

and read OUT/results.csv (`sim_time_ns` of each point). The tables show a subset of the sizes.
Uses $SIM, else `sim` on the PATH; $SIM_SOURCE_DIR, else this script's repository.
"""
import csv
import os
import subprocess
import sys
import tempfile

ROOT = os.environ.get("SIM_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SIM = os.environ.get("SIM", "sim")
# Config in the sweep's network axis -> column title, in the paper's legend order.
TOPOLOGIES = {
    "../ring64.yml": "1D ring",
    "../torus4x4x4.yml": "3D torus 4×4×4",
    "../torus8x8.yml": "2D torus 8×8",
    "../mesh8x8.yml": "2D mesh 8×8",
}
RING = "../ring64.yml"
SLOWDOWN_SIZES = ["1KiB", "16KiB", "256KiB", "1MiB", "16MiB", "1GiB"]
ALLTOALL_SIZES = ["1KiB", "64KiB", "1MiB", "16MiB", "1GiB"]


def sweep(spec):
    """{(network, size, backend): sim_time_ns} of a sweep spec's points."""
    with tempfile.TemporaryDirectory(prefix="fig4_table.") as tmp:
        out = os.path.join(tmp, "out")
        r = subprocess.run([SIM, "sweep", os.path.join(ROOT, "configs", "sweeps", spec), "-o", out, "-j", "1", "-q"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"fig4 table: sim sweep {spec} exited {r.returncode}:\n{r.stderr[-2000:]}")
        times = {}
        with open(os.path.join(out, "results.csv")) as f:
            for row in csv.DictReader(f):
                if row["status"] != "ok":
                    sys.exit(f"fig4 table: point {row['point']} of {spec}: {row['status']} {row['message']}")
                times[(row["network"], row["size"], row["backend"])] = float(row["sim_time_ns"])
    return times


def label(size):
    return size.replace("KiB", " KiB").replace("MiB", " MiB").replace("GiB", " GiB")


def duration(ns):
    if ns >= 1e9:
        return f"{ns / 1e9:.3f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.3f} ms"
    return f"{ns / 1e3:.1f} µs"


def slowdown():
    t = sweep("fig4_et.yml")
    others = [n for n in TOPOLOGIES if n != RING]
    print("| size | 1D ring (time) | " + " | ".join(TOPOLOGIES[n] for n in others) + " | flow vs analytical |")
    print("|---|---|" + "---|" * len(others) + "---|")
    for s in SLOWDOWN_SIZES:
        ring = t[(RING, s, "analytical")]
        cells = [f"{t[(n, s, 'analytical')] / ring:.3f}" for n in others]
        worst = max(abs(t[(n, s, "flow")] / t[(n, s, "analytical")] - 1) for n in TOPOLOGIES)
        print(f"| {label(s)} | {duration(ring)} | " + " | ".join(cells) + f" | {worst:.3g} |")


def alltoall():
    t = sweep("fig4_alltoall.yml")
    print("| size per rank | " + " | ".join(TOPOLOGIES.values()) + " |")
    print("|---|" + "---|" * len(TOPOLOGIES))
    for s in ALLTOALL_SIZES:
        cells = [f"{t[(n, s, 'analytical')] / 1e3:.1f} / {t[(n, s, 'flow')] / 1e3:.1f}" for n in TOPOLOGIES]
        print(f"| {label(s)} | " + " | ".join(cells) + " |")


TABLES = {"slowdown": slowdown, "alltoall": alltoall}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in TABLES:
        sys.exit(__doc__)
    TABLES[sys.argv[1]]()
