#!/usr/bin/python3
"""Reproduce Fig. 4 of "Towards a Standardized Representation for Deep Learning Collective Algorithms": a 1D ring on 64-NPU topologies.

Each rank runs one all-reduce then one all-gather of the same size; both are
expanded with the ring algorithm written as Chakra ETs (`sim collective gen`).
The workload is timed on a 1D ring, a 2D torus, a 2D mesh and a 3D torus, and
each time is divided by the 1D ring's at the same size. See docs/fig4.md.

--backend takes one backend or a comma-separated list (default: analytical,flow);
the analytical results go to out/fig4.csv/.png, every other backend's to
out/fig4_<backend>.csv/.png. --alltoall adds a case where contention matters: a
direct all-to-all written as point-to-point sends (every rank sends S/64 to each
of the 63 others at once), on the same topologies with every backend, written to
out/fig4_alltoall.csv/.png.

Debian packages only (python3-matplotlib); run with /usr/bin/python3.

  scripts/fig4.py [--sim build/sim] [--out out] [--sizes 1KiB,1MiB,1GiB] [--native]
                  [--backend analytical,flow] [--alltoall] [--jobs 2]
"""
import argparse
import concurrent.futures
import csv
import json
import os
import sys
import tempfile

from sim_script import POWERS_OF_4, parse_size, run as run_checked, size_label

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NPUS = 64
# Config file stem -> legend label, in the paper's legend order.
TOPOLOGIES = {
    "ring64": "1D Ring",
    "torus4x4x4": "3D Torus",
    "torus8x8": "2D Torus",
    "mesh8x8": "2D Mesh",
}
BASELINE = "ring64"
# Every power of 4 from 1 KiB to 1 GiB: 11 sizes keep the sweep to a few seconds per topology.
DEFAULT_SIZES = POWERS_OF_4


def run(cmd):
    return run_checked(cmd, "fig4")


def simulate(sim, backend, workload, topology, collectives, report):
    cmd = [sim, "--workload", workload, "--network", os.path.join(ROOT, "configs", topology + ".yml"),
           "--backend", backend, "-q", "--report", report]
    for c in collectives:
        cmd += ["--collective", c]
    run(cmd)
    with open(report) as f:
        return json.load(f)["sim_time_ns"]


def write_direct_alltoall(prefix, size):
    """A direct all-to-all of `size` bytes per rank as point-to-point sends, in our JSON ET form:
    rank r sends size/64 to r+1, r+2, ..., r+63 (mod 64), all at once, and receives from every other rank."""
    block = size // NPUS
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    for r in range(NPUS):
        nodes = []
        for j in range(1, NPUS):
            for kind, peer_key, peer in (("COMM_SEND_NODE", "comm_dst", (r + j) % NPUS),
                                         ("COMM_RECV_NODE", "comm_src", (r - j) % NPUS)):
                nodes.append({"id": str(len(nodes) + 1), "name": f"a2a.{kind[5:9].lower()} {peer}", "type": kind,
                              "attr": [{"name": peer_key, "int32_val": peer},
                                       {"name": "comm_size", "int64_val": str(block)},
                                       {"name": "comm_tag", "int32_val": 0},
                                       {"name": "is_cpu_op", "bool_val": False}]})
        with open(f"{prefix}.{r}.json", "w") as f:
            json.dump({"metadata": {"version": "0.0.4"}, "nodes": nodes}, f)


def output_stem(backend):
    return "fig4" if backend == "analytical" else f"fig4_{backend}"


def plot(rows, sizes, backend, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    styles = {"ring64": "--", "torus4x4x4": "-o", "torus8x8": "-v", "mesh8x8": "-s"}
    for topo, label in TOPOLOGIES.items():
        ys = [rows[(topo, s)][1] for s in sizes]
        ax.plot(sizes, ys, styles[topo], label=label, markersize=4)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([size_label(s).replace(" ", "") for s in sizes], rotation=45, ha="right")
    ax.set_xlabel("collective size (all-reduce, then all-gather of the same size per rank)")
    ax.set_ylabel("slowdown over 1D ring")
    ax.set_title(f"1D ring algorithm on {NPUS} NPUs ({backend} backend)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_alltoall(times, sizes, backends, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    markers = {"ring64": "--", "torus4x4x4": "-o", "torus8x8": "-v", "mesh8x8": "-s"}
    base = backends[0]
    for b in backends[1:]:
        for topo, label in TOPOLOGIES.items():
            ys = [times[(b, topo, s)] / times[(base, topo, s)] for s in sizes]
            ax.plot(sizes, ys, markers[topo], label=f"{label}", markersize=4)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sizes)
    ax.set_xticklabels([size_label(s).replace(" ", "") for s in sizes], rotation=45, ha="right")
    ax.set_xlabel("all-to-all size per rank (S/64 to each peer, all sent at once)")
    ax.set_ylabel(f"{'/'.join(backends[1:])} time / {base} time")
    ax.set_title(f"direct all-to-all on {NPUS} NPUs: contention ({'/'.join(backends[1:])} over {base})")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=os.path.join(ROOT, "build", "sim"), help="sim binary (default build/sim)")
    ap.add_argument("--out", default=os.path.join(ROOT, "out"), help="output folder (default out/)")
    ap.add_argument("--sizes", type=lambda t: [parse_size(x) for x in t.split(",")],
                    default=DEFAULT_SIZES, help="comma-separated sizes (default: powers of 4, 1KiB..1GiB)")
    ap.add_argument("--native", action="store_true",
                    help="use the simulator's native ring instead of the ring written as Chakra ETs")
    ap.add_argument("--backend", default="analytical,flow",
                    help="network backends passed to sim, comma-separated (default analytical,flow)")
    ap.add_argument("--alltoall", action="store_true",
                    help="also run a direct all-to-all (point-to-point sends) on every topology and backend")
    ap.add_argument("--jobs", type=int, default=2, help="simulations run in parallel (default 2)")
    args = ap.parse_args()
    backends = [b for b in args.backend.split(",") if b]
    if not backends or len(set(backends)) != len(backends):
        sys.exit(f"fig4: bad --backend '{args.backend}' (e.g. analytical,flow)")
    if not os.access(args.sim, os.X_OK):
        sys.exit(f"fig4: no sim binary at {args.sim} (use --sim)")
    sizes = sorted(set(args.sizes))
    os.makedirs(args.out, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="fig4.") as tmp:
        if args.native:
            collectives = ["allreduce=ring", "allgather=ring"]
        else:
            # Written once; runs rescale the ETs' messages to each collective's size.
            collectives = []
            for coll in ("allreduce", "allgather"):
                prefix = os.path.join(tmp, "algo", coll)
                run([args.sim, "collective", "gen", "ring", "--coll", coll, "--npus", str(NPUS), "-o", prefix])
                collectives.append(f"{coll}={prefix}")
        workloads = {}
        for s in sizes:
            workloads[s] = os.path.join(tmp, f"wl{s}", "w")
            run([args.sim, "workload", "gen", "collectives", "--npus", str(NPUS), "--coll", "allreduce,allgather",
                 "--size", str(s), "-o", workloads[s]])

        a2a = {}
        if args.alltoall:
            for s in sizes:
                a2a[s] = os.path.join(tmp, f"a2a{s}", "w")
                write_direct_alltoall(a2a[s], s)

        jobs = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for b in backends:
                for topo in TOPOLOGIES:
                    for s in sizes:
                        report = os.path.join(tmp, f"{b}.{topo}.{s}.json")
                        jobs[("ring", b, topo, s)] = pool.submit(simulate, args.sim, b, workloads[s], topo,
                                                                 collectives, report)
                        if args.alltoall:
                            report = os.path.join(tmp, f"a2a.{b}.{topo}.{s}.json")
                            jobs[("a2a", b, topo, s)] = pool.submit(simulate, args.sim, b, a2a[s], topo, [], report)
        times = {key: job.result() for key, job in jobs.items()}

    for b in backends:
        rows = {(topo, s): (times[("ring", b, topo, s)], times[("ring", b, topo, s)] / times[("ring", b, BASELINE, s)])
                for topo in TOPOLOGIES for s in sizes}
        csv_path = os.path.join(args.out, output_stem(b) + ".csv")
        with open(csv_path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["topology", "size_bytes", "sim_time_ns", "slowdown_vs_ring"])
            for topo in TOPOLOGIES:
                for s in sizes:
                    t, slow = rows[(topo, s)]
                    w.writerow([topo, s, f"{t:.3f}", f"{slow:.4f}"])
        png_path = os.path.join(args.out, output_stem(b) + ".png")
        plot(rows, sizes, b, png_path)

        print(f"ring all-reduce + all-gather, {b} backend: slowdown over the 1D ring")
        print(f"{'size':>8}  " + "  ".join(f"{TOPOLOGIES[t]:>9}" for t in TOPOLOGIES))
        for s in sizes:
            print(f"{size_label(s):>8}  " + "  ".join(f"{rows[(t, s)][1]:9.3f}" for t in TOPOLOGIES))
        print(f"wrote {csv_path} and {png_path}")
    for b in backends[1:]:
        worst = max(abs(times[("ring", b, t, s)] / times[("ring", backends[0], t, s)] - 1) for t in TOPOLOGIES for s in sizes)
        print(f"ring workload: {b} vs {backends[0]}: largest relative difference {worst:.3g}")

    if args.alltoall:
        csv_path = os.path.join(args.out, "fig4_alltoall.csv")
        with open(csv_path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["topology", "size_bytes"] + [f"{b}_ns" for b in backends] +
                       [f"{b}_over_{backends[0]}" for b in backends[1:]])
            for topo in TOPOLOGIES:
                for s in sizes:
                    ts = [times[("a2a", b, topo, s)] for b in backends]
                    w.writerow([topo, s] + [f"{t:.3f}" for t in ts] + [f"{t / ts[0]:.4f}" for t in ts[1:]])
        print(f"direct all-to-all: time in us per backend ({', '.join(backends)})")
        print(f"{'size':>8}  " + "  ".join(f"{TOPOLOGIES[t]:>22}" for t in TOPOLOGIES))
        for s in sizes:
            cells = []
            for t in TOPOLOGIES:
                cells.append(" / ".join(f"{times[('a2a', b, t, s)] / 1e3:.1f}" for b in backends))
            print(f"{size_label(s):>8}  " + "  ".join(f"{c:>22}" for c in cells))
        if len(backends) > 1:
            png_path = os.path.join(args.out, "fig4_alltoall.png")
            plot_alltoall({(b, t, s): times[("a2a", b, t, s)] for b in backends for t in TOPOLOGIES for s in sizes},
                          sizes, backends, png_path)
            print(f"wrote {csv_path} and {png_path}")
        else:
            print(f"wrote {csv_path}")


if __name__ == "__main__":
    main()
