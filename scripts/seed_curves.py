#!/usr/bin/python3
"""The paper's bandwidth curves: all-gather bus bandwidth vs size on 64 NPUs.

The paper: Yoo et al., "Towards a Standardized Representation for Deep Learning Collective Algorithms" (IEEE Micro, 2025).

Ring and Direct (written as Chakra ETs by `sim collective gen`) and the
synthesized algorithm (`sim collective synth`, one per topology) are each
injected as Chakra ETs (`--collective allgather=PREFIX`) into a workload of
one all-gather per rank, on every topology, with the flow backend (links
shared max-min fairly) and the analytical backend beside it (no contention).
Every link is 50 GB/s and 500 ns (the script checks the configs say so).
Sizes are per rank (the all-gather's input); busbw = (N-1) x size / time of
the slowest rank (nccl-tests). See docs/synthesizer.md.

Topologies: configs/mesh8x8.yml (the paper's 2-D mesh), configs/torus4x4x4.yml
and configs/hypercube64.yml (two readings of the paper's "3-D
hypercube 4x4x4"), and configs/mesh4x4x4.yml (what TACOS's Hypercube3D
actually is: a 3-D mesh without wraparound).

Writes <out>/seed_curves.csv and <out>/seed_curves.png. Debian packages only
(python3-matplotlib); run with /usr/bin/python3.

  scripts/seed_curves.py [--sim build/sim] [--out out] [--sizes 1KiB,1MiB,1GiB]
                         [--backend flow,analytical] [--chunks 1] [--jobs 2] [--quick]
"""
import argparse
import concurrent.futures
import csv
import json
import os
import re
import sys
import tempfile

from sim_script import POWERS_OF_4, parse_size, run as run_checked, size_label

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NPUS = 64
TOPOLOGIES = {
    "mesh8x8": "2-D mesh 8x8",
    "torus4x4x4": "3-D torus 4x4x4",
    "hypercube64": "hypercube (6-D, 64)",
    "mesh4x4x4": "3-D mesh 4x4x4 (TACOS Hypercube3D)",
}
ALGORITHMS = ("synth", "ring", "direct")
LABELS = {"synth": "synthesized (TACOS-style)", "ring": "ring", "direct": "direct"}
# The plateaus the paper reports (GB/s): synthesized / ring / direct.
SEED = {"mesh8x8": (100, 20, 5), "3-D": (150, 40, 5)}
DEFAULT_SIZES = POWERS_OF_4  # 1 KiB .. 1 GiB
QUICK_SIZES = [1 << 10, 1 << 20, 1 << 24]


def run(cmd):
    return run_checked(cmd, "seed_curves")


def check_links(topology):
    """Every shipped config the script runs must be the paper's 50 GB/s, 500 ns links."""
    with open(os.path.join(ROOT, "configs", topology + ".yml")) as f:
        text = f.read()
    bw = re.search(r"^bandwidth:\s*(\S+)", text, re.M)
    lat = re.search(r"^latency:\s*(\S+)", text, re.M)
    if not bw or not lat or bw.group(1) != "50GB/s" or lat.group(1) != "500ns":
        sys.exit(f"seed_curves: configs/{topology}.yml is not 50GB/s, 500ns links")


def simulate(sim, backend, workload, topology, algorithm, size, report):
    run([sim, "--workload", workload, "--network", os.path.join(ROOT, "configs", topology + ".yml"),
         "--backend", backend, "-q", "--report", report, "--collective", f"allgather={algorithm}"])
    with open(report) as f:
        slowest = max(c["duration_ns"] for c in json.load(f)["collectives"])
    return slowest, (NPUS - 1) * size / slowest  # ns, GB/s


def plot(results, sizes, backends, topologies, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 2 if len(topologies) > 1 else 1
    rows = (len(topologies) + cols - 1) // cols
    fig, grid = plt.subplots(rows, cols, figsize=(5.5 * cols, 3.8 * rows + 0.8), sharey=True, squeeze=False)
    axes = [ax for row in grid for ax in row]
    for ax in axes[len(topologies):]:
        ax.set_visible(False)
    colors = {"synth": "tab:red", "ring": "tab:blue", "direct": "tab:green"}
    styles = {"flow": "-o", "analytical": "--"}
    for ax, topo in zip(axes, topologies):
        for algo in ALGORITHMS:
            for b in backends:
                ys = [results[(b, topo, algo, s)][1] for s in sizes]
                ax.plot(sizes, ys, styles.get(b, ":"), color=colors[algo], markersize=3,
                        label=f"{LABELS[algo]} ({b})", alpha=1.0 if b == "flow" else 0.6)
        seed = SEED["mesh8x8" if topo == "mesh8x8" else "3-D"]
        for algo, y in zip(ALGORITHMS, seed):
            ax.axhline(y, color=colors[algo], linestyle=":", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.set_xticklabels([size_label(s).replace(" ", "") for s in sizes], rotation=60, ha="right", fontsize=7)
        ax.set_title(TOPOLOGIES[topo], fontsize=10)
        ax.set_xlabel("all-gather size per rank", fontsize=8)
        ax.set_ylabel("bus bandwidth (GB/s = 1e9 B/s)", fontsize=8)
        ax.grid(True, alpha=0.3, which="both")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(backends) * 2 if len(backends) > 1 else 3, fontsize=8)
    fig.suptitle(f"all-gather on {NPUS} NPUs, 50 GB/s 500 ns links (dotted: the paper's plateaus, "
                 "synthesized / ring / direct)", fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 0.96))
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=os.path.join(ROOT, "build", "sim"), help="sim binary (default build/sim)")
    ap.add_argument("--out", default=os.path.join(ROOT, "out"), help="output folder (default out/)")
    ap.add_argument("--sizes", type=lambda t: [parse_size(x) for x in t.split(",")], default=None,
                    help="comma-separated sizes per rank (default: powers of 4, 1KiB..1GiB)")
    ap.add_argument("--backend", default="flow,analytical", help="backends, comma-separated (default flow,analytical)")
    ap.add_argument("--chunks", type=int, default=1, help="chunks per NPU of the synthesized algorithm (default 1)")
    ap.add_argument("--topologies", default=",".join(TOPOLOGIES), help="config stems, comma-separated")
    ap.add_argument("--jobs", type=int, default=2, help="simulations run in parallel (default 2)")
    ap.add_argument("--quick", action="store_true", help="3 sizes (1KiB, 1MiB, 16MiB), flow backend only")
    args = ap.parse_args()
    backends = ["flow"] if args.quick else [b for b in args.backend.split(",") if b]
    sizes = sorted(set(args.sizes or (QUICK_SIZES if args.quick else DEFAULT_SIZES)))
    topologies = [t for t in args.topologies.split(",") if t]
    for t in topologies:
        if t not in TOPOLOGIES:
            sys.exit(f"seed_curves: unknown topology '{t}' ({', '.join(TOPOLOGIES)})")
        check_links(t)
    if not os.access(args.sim, os.X_OK):
        sys.exit(f"seed_curves: no sim binary at {args.sim} (use --sim)")
    os.makedirs(args.out, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="seed_curves.") as tmp:
        prefixes = {}
        for algo in ("ring", "direct"):
            prefixes[algo] = os.path.join(tmp, algo, "ag")
            run([args.sim, "collective", "gen", algo, "--coll", "allgather", "--npus", str(NPUS), "-o", prefixes[algo]])
        synth_info = {}
        for t in topologies:
            prefixes[("synth", t)] = os.path.join(tmp, "synth", t, "ag")
            out = run([args.sim, "collective", "synth", "--coll", "allgather", "--network",
                       os.path.join(ROOT, "configs", t + ".yml"), "--chunks", str(args.chunks),
                       "-o", prefixes[("synth", t)]])
            synth_info[t] = out.strip().splitlines()[2]
        workloads = {}
        for s in sizes:
            workloads[s] = os.path.join(tmp, f"wl{s}", "w")
            run([args.sim, "workload", "gen", "collectives", "--npus", str(NPUS), "--coll", "allgather",
                 "--size", str(s), "-o", workloads[s]])
        jobs = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for b in backends:
                for t in topologies:
                    for algo in ALGORITHMS:
                        prefix = prefixes[("synth", t)] if algo == "synth" else prefixes[algo]
                        for s in sizes:
                            report = os.path.join(tmp, f"{b}.{t}.{algo}.{s}.json")
                            jobs[(b, t, algo, s)] = pool.submit(simulate, args.sim, b, workloads[s], t, prefix, s, report)
        results = {key: job.result() for key, job in jobs.items()}

    csv_path = os.path.join(args.out, "seed_curves.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["backend", "topology", "algorithm", "size_bytes_per_rank", "time_ns", "busbw_GBps"])
        for b in backends:
            for t in topologies:
                for algo in ALGORITHMS:
                    for s in sizes:
                        ns, bw = results[(b, t, algo, s)]
                        w.writerow([b, t, algo, s, f"{ns:.3f}", f"{bw:.3f}"])
    png_path = os.path.join(args.out, "seed_curves.png")
    plot(results, sizes, backends, topologies, png_path)

    for t in topologies:
        print(f"{TOPOLOGIES[t]}: synthesized {synth_info[t]}")
    for b in backends:
        print(f"all-gather busbw (GB/s), {b} backend: synthesized / ring / direct")
        print(f"{'size':>8}  " + "  ".join(f"{t:>22}" for t in topologies))
        for s in sizes:
            cells = [" / ".join(f"{results[(b, t, a, s)][1]:.1f}" for a in ALGORITHMS) for t in topologies]
            print(f"{size_label(s):>8}  " + "  ".join(f"{c:>22}" for c in cells))
    print("the paper: mesh 100 / 20 / 5, 3-D hypercube 150 / 40 / 5")
    print(f"wrote {csv_path} and {png_path}")


if __name__ == "__main__":
    main()
