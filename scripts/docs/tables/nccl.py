#!/usr/bin/env python3
"""The simulated tables of docs/nccl.md: `nccl` (NCCL's choice) and forced algorithms on dgx-h100 nodes.

    scripts/docs/tables/nccl.py one-node        one dgx-h100 node, all-reduce: what `nccl` chooses and
                                                its busbw, `nccl:algo=ring` and `nccl:algo=tree`
    scripts/docs/tables/nccl.py nvls-chunk      one node (the preset's files), NVLS all-reduce on its
                                                128 KiB shards at every size, against NCCL's model
    scripts/docs/tables/nccl.py gather-scatter  one node, all-gather and reduce-scatter of the same
                                                nBytes: NCCL's ring, its time and NCCL's predicted time
    scripts/docs/tables/nccl.py gather-scatter-nvls
                                           the same near NCCL's NVLS crossovers (2-4 MB): `nccl`,
                                           `nccl:algo=nvls` and `nccl:algo=ring`, NCCL's model of both
    scripts/docs/tables/nccl.py reads           two nodes: all-reduce with the network file alone
                                                (reductions free) and with the system file (the GPU's
                                                reads of its addends charged)
    scripts/docs/tables/nccl.py two-node        two nodes, all-reduce: `nccl`, ring and tree
    scripts/docs/tables/nccl.py nvls-sharp      2 and 4 nodes whose node and rail switches both reduce:
                                                `nccl` (NVLS across nodes), NVLS-tree, CollNet direct,
                                                each with NCCL's model
    scripts/docs/tables/nccl.py collnet         two nodes whose rail switches reduce (SHARP), not the
                                                NVSwitch: `nccl`, CollNet direct and chain, network file
                                                alone / with the system file

The files:
  one-node, gather-scatter, gather-scatter-nvls: dgx.yml, a dgx-h100 node written here
      (shape: Switch, npus: 8, bandwidth: 450GB/s, latency: 500ns, in_network_reduction: true),
      network file only (reductions free).
  nvls-chunk: `sim system gen dgx-h100 -o DIR`'s network.yml and system.yml.
  reads, two-node, nvls-sharp, collnet: `sim system gen dgx-h100 --nodes N -o DIR`'s network.yml
      (in_network_reduction: [true, false]; nvls-sharp changes it to [true, true], collnet to
      [false, true]), with DIR/system.yml where a table says so.
Every run: `sim workload gen collectives --npus P --coll C --size S -o WL` (an all-gather's size
is each rank's share, nBytes / P) and `sim --workload WL --network NET [--system SYS]
--collective C=ALGO --csv OUT -q`; a figure is the slowest rank's (its duration_ns, busbw_gbps,
algorithm). Time in us or ms, busbw in GB/s (nccl-tests' definition, 1e9 B/s).

NCCL's modelled times: `sim` prints no column of NCCL's tuner table, so they are computed here
from NCCL's formula time = latency + nBytes / bandwidth, with the constants docs/nccl.md states
(NVIDIA/nccl src/graph/tuning.cc, as system/collectives/nccl/model/nccl_tuner.cpp has them, and the
topology search's channels on these nodes):
  one node, ring, all-gather and reduce-scatter (7 steps, algBw = busBw x 8/7, 12 channels of
      30 GB/s): LL 6.6 + 7 x 0.6 us, min(87.7, 360 / 3) x 8/7 GB/s; LL128 14 + 7 x 1.9 us,
      min(0.92 x 360, 12 x 36.7) x 8/7; Simple 8.4 + 7 x 3.4 us, 360 x 8/7;
  one node, NVLS: 23 us (hwLat NVLink), 8 channels x 40 GB/s x 5/6 = 266.7 GB/s;
  across nodes with SHARP, NVLS: 23 + 18 us, 266.7 GB/s (8 x min(bwIntra 40, bwInter 48) x 5/6);
  NVLS-tree: 23 + 2 x log2(nodes) x 14 us, 8 x 40 x 5/6 (2 nodes) or 8 x 48/2 x 5/6 (4 nodes);
  CollNet direct: 2 x (3.7 + 7 x 0.4) + 31 = 44 us, 8 x 46.35 x 0.85 / 2 = 157.6 GB/s
      (46.35 = 18 x 20.6 / 8 GB/s per channel).
A model's time is turned into busbw as a simulated one is (all-reduce 2 (n - 1)/n x nBytes / t).
Uses $SIM, else `sim` on the PATH.
"""
import csv
import math
import os
import subprocess
import sys
import tempfile

SIM = os.environ.get("SIM", "sim")
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

DGX_NODE = "shape: Switch\nnpus: 8\nbandwidth: 450GB/s\nlatency: 500ns\nin_network_reduction: true\n"

# NCCL's model: (latency us, bandwidth GB/s of buffer), as the docstring derives them.
RING_ONE_NODE = {  # all-gather and reduce-scatter on 8 GPUs
    "ll": (6.6 + 7 * 0.6, min(87.7, 360 / 3) * 8 / 7),
    "ll128": (14 + 7 * 1.9, min(0.92 * 360, 12 * 36.7) * 8 / 7),
    "simple": (8.4 + 7 * 3.4, 360 * 8 / 7),
}
NVLS_BW = 8 * 40 * 5 / 6
NVLS_ONE_NODE = (23.0, NVLS_BW)
NVLS_SHARP = (23.0 + 18.0, NVLS_BW)
COLLNET_DIRECT = (2 * (3.7 + 7 * 0.4) + 31, 8 * (18 * 20.6 / 8) * 0.85 / 2)


def nvls_tree_model(nodes):
    return 23 + 2 * int(math.log2(nodes)) * 14, 8 * (40 if nodes <= 2 else 48 / 2) * 5 / 6


def model_us(model, n_bytes):
    latency, bandwidth = model
    return latency + n_bytes / (1000 * bandwidth)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"nccl table: `{' '.join(cmd)}` exited {r.returncode}:\n{(r.stdout + r.stderr)[-2000:]}")
    return r.stdout


class Runner:
    """Runs sim in a temporary folder; workloads and system folders are made once."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.made = set()

    def path(self, name):
        return os.path.join(self.tmp, name)

    def dgx_node(self):
        p = self.path("dgx.yml")
        if p not in self.made:
            with open(p, "w") as f:
                f.write(DGX_NODE)
            self.made.add(p)
        return p

    def preset(self, nodes, reduction=None):
        """(network.yml, system.yml) of `sim system gen dgx-h100 --nodes N`, the network's
        in_network_reduction line replaced by `reduction` (e.g. "[true, true]") when given."""
        d = self.path(f"dgx-h100-x{nodes}")
        if d not in self.made:
            run([SIM, "system", "gen", "dgx-h100", "--nodes", str(nodes), "-o", d])
            self.made.add(d)
        net = os.path.join(d, "network.yml")
        if reduction:
            changed = self.path(f"dgx-h100-x{nodes}-{reduction.strip('[]').replace(', ', '-')}.yml")
            if changed not in self.made:
                text = open(net).read()
                old = "in_network_reduction: [true, false]"
                if old not in text:
                    sys.exit(f"nccl table: {net} has no line `{old}`")
                with open(changed, "w") as f:
                    f.write(text.replace(old, "in_network_reduction: " + reduction))
                self.made.add(changed)
            net = changed
        return net, os.path.join(d, "system.yml")

    def workload(self, npus, coll, size):
        p = self.path(f"wl-{coll}-{npus}-{size}")
        if p not in self.made:
            run([SIM, "workload", "gen", "collectives", "--npus", str(npus), "--coll", coll, "--size", str(size),
                 "-o", p])
            self.made.add(p)
        return p

    def sim(self, npus, coll, size, algo, network, system=None):
        """(algorithm, duration ns, busbw GB/s) of the slowest rank."""
        out = self.path("c.csv")
        cmd = [SIM, "--workload", self.workload(npus, coll, size), "--network", network, "--collective",
               f"{coll}={algo}", "--csv", out, "-q"]
        if system:
            cmd += ["--system", system]
        run(cmd)
        with open(out) as f:
            rows = list(csv.DictReader(f))
        slowest = max(rows, key=lambda r: float(r["duration_ns"]))
        return (slowest["algorithm"].removeprefix("nccl:"), float(slowest["duration_ns"]),
                float(slowest["busbw_gbps"]))


def size_label(n):
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if n % unit == 0:
            return f"{n // unit} {name}"
    return f"{n / 1e6:.1f} MB"


def us(ns):
    """A time: us below 1 ms (two decimals below 100 us, one above), else ms."""
    t = ns / 1e3
    if t < 100:
        return f"{t:.2f} us"
    if t < 1000:
        return f"{t:.1f} us"
    return f"{t / 1e3:.3f} ms"


def busbw_all_reduce(n_bytes, ranks, t_us):
    return 2 * (ranks - 1) / ranks * n_bytes / (t_us * 1e3)


def table(head, rows):
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")


def choice_ring_tree(r, gpus, net):
    """All-reduce by size: what `nccl` chooses and its busbw, then forced ring and tree."""
    rows = []
    for size in (64 * KiB, MiB, 16 * MiB, 256 * MiB, 4 * GiB):
        chosen, _, bw = r.sim(gpus, "allreduce", size, "nccl", net)
        ring = r.sim(gpus, "allreduce", size, "nccl:algo=ring", net)
        tree = r.sim(gpus, "allreduce", size, "nccl:algo=tree", net)
        rows.append([size_label(size), chosen, f"{bw:.2f}", f"{ring[0]} {ring[2]:.2f}", f"{tree[0]} {tree[2]:.2f}"])
    table(["size", "`nccl` chooses", "busbw (GB/s)", "`nccl:algo=ring`", "`nccl:algo=tree`"], rows)


def one_node(r):
    choice_ring_tree(r, 8, r.dgx_node())


def nvls_chunk(r):
    net, system = r.preset(1)
    rows = []
    for size in (MiB, 16 * MiB, 256 * MiB, 4 * GiB):
        algo, t, bw = r.sim(8, "allreduce", size, "nccl", net, system)
        if algo != "nvls/simple":
            sys.exit(f"nccl table: nvls-chunk: `nccl` runs {algo} at {size_label(size)}")
        # NCCL's chunk by nBytes (src/enqueue.cc, NCCL_ALGO_NVLS), 8 channels x 8 GPUs = 64 ops.
        chunk = 128 * KiB
        if size < 64 * 64 * chunk:
            chunk = 64 * KiB
        if size < 8 * 64 * chunk:
            chunk = 32 * KiB
        if size < 2 * 64 * chunk:
            chunk = 16 * KiB
        m = model_us(NVLS_ONE_NODE, size)
        rows.append([size_label(size), size_label(chunk), f"{bw:.2f} ({us(t)})",
                     f"{busbw_all_reduce(size, 8, m):.2f} ({us(m * 1e3)})", f"{(bw / busbw_all_reduce(size, 8, m) - 1) * 100:+.1f}%"])
    table(["size", "NCCL's chunk for nBytes (not run)", "`nccl` (nvls/simple, 128 KiB shards)",
           "NCCL's model (23 us + S / 266.7 GB/s)", "busbw vs model"], rows)


def gather_scatter(r):
    net = r.dgx_node()
    rows = []
    for n_bytes in (64 * KiB, MiB, 16 * MiB, 256 * MiB, 4 * GiB):
        ag = r.sim(8, "allgather", n_bytes // 8, "nccl", net)
        rs = r.sim(8, "reducescatter", n_bytes, "nccl", net)
        chosen = ag[0] if ag[0] == rs[0] else f"{ag[0]} / {rs[0]}"
        proto = rs[0].split("/")[1]
        rows.append([size_label(n_bytes), chosen, us(ag[1]), us(rs[1]), f"{rs[2]:.2f}",
                     us(model_us(RING_ONE_NODE[proto], n_bytes) * 1e3)])
    table(["nBytes", "`nccl` chooses", "all-gather", "reduce-scatter", "busbw (GB/s)", "NCCL's predicted time"], rows)


def gather_scatter_nvls(r):
    net = r.dgx_node()

    def cell(x):
        return f"{x[1] / 1e3:.2f} ({x[2]:.1f})"

    rows = []
    for n_bytes in (MiB, 2_000_000, 2_500_000, 3_000_000, 3_800_000, 4 * MiB, 256 * MiB):
        ag = r.sim(8, "allgather", n_bytes // 8, "nccl", net)
        rs = r.sim(8, "reducescatter", n_bytes, "nccl", net)
        nvls_ag = ag if ag[0] == "nvls/simple" else r.sim(8, "allgather", n_bytes // 8, "nccl:algo=nvls", net)
        nvls_rs = rs if rs[0] == "nvls/simple" else r.sim(8, "reducescatter", n_bytes, "nccl:algo=nvls", net)
        ring = rs if rs[0].startswith("ring/") else r.sim(8, "reducescatter", n_bytes, "nccl:algo=ring", net)
        ring_ag = ag if ag[0].startswith("ring/") else r.sim(8, "allgather", n_bytes // 8, "nccl:algo=ring", net)
        if ring_ag[0] != ring[0] or abs(ring_ag[1] - ring[1]) >= 1:
            sys.exit(f"nccl table: ring all-gather {ring_ag} and reduce-scatter {ring} differ at {n_bytes} B")
        chosen = ag[0] if ag[0] == rs[0] else f"{ag[0]} / {rs[0]}"
        proto = ring[0].split("/")[1]
        rows.append([size_label(n_bytes), chosen, cell(nvls_ag), cell(nvls_rs),
                     f"{model_us(NVLS_ONE_NODE, n_bytes):.2f}", f"{ring[0]} {cell(ring)}",
                     f"{model_us(RING_ONE_NODE[proto], n_bytes):.2f}"])
    table(["nBytes", "`nccl` chooses", "`nccl:algo=nvls`: all-gather, us (GB/s)", "reduce-scatter, us (GB/s)",
           "NCCL's model: NVLS, us", "`nccl:algo=ring` (both), us (GB/s)", "NCCL's model: ring, us"], rows)


def reads(r):
    rows = []
    one_net, one_system = r.preset(1)
    cases = [(1, "allreduce", 4 * GiB, "nccl:algo=ring"),
             (1, "allgather", 2 * GiB, "nccl"),
             (1, "reducescatter", 2 * GiB, "nccl")]
    cases += [(2, "allreduce", size, algo) for size in (GiB, 4 * GiB)
              for algo in ("nccl", "nccl:algo=tree", "nccl:algo=ring")]
    names = {"allreduce": "all-reduce", "allgather": "all-gather", "reducescatter": "reduce-scatter"}
    for nodes, coll, n_bytes, algo in cases:
        net, system = (one_net, one_system) if nodes == 1 else r.preset(nodes)
        size = n_bytes // (8 * nodes) if coll == "allgather" else n_bytes
        free = r.sim(8 * nodes, coll, size, algo, net)
        charged = r.sim(8 * nodes, coll, size, algo, net, system)
        ran = free[0] if free[0] == charged[0] else f"{free[0]} / {charged[0]}"
        rows.append([str(nodes), f"{names[coll]} {size_label(n_bytes)}", f"`{algo}`", ran, f"{free[2]:.2f}",
                     f"{charged[2]:.2f} ({(charged[1] / free[1] - 1) * 100:+.1f}%)"])
    table(["nodes", "collective, nBytes", "`--collective`", "runs", "busbw, network file",
           "with the system file (time's change)"], rows)


def two_node(r):
    choice_ring_tree(r, 16, r.preset(2)[0])


def nvls_sharp(r):
    rows = []
    for nodes in (2, 4):
        net, system = r.preset(nodes, "[true, true]")
        ranks = 8 * nodes
        for size in (16 * MiB, 256 * MiB, 4 * GiB):
            row = [str(nodes), size_label(size)]
            for algo, model in (("nccl", NVLS_SHARP), ("nccl:algo=nvlstree", nvls_tree_model(nodes)),
                                ("nccl:algo=collnetdirect", COLLNET_DIRECT)):
                name, _, bw = r.sim(ranks, "allreduce", size, algo, net, system)
                if algo == "nccl":
                    row.append(name)
                row.append(f"{bw:.2f} ({busbw_all_reduce(size, ranks, model_us(model, size)):.2f})")
            rows.append(row)
    table(["nodes", "size", "`nccl` chooses", "`nccl`", "`nccl:algo=nvlstree`", "`nccl:algo=collnetdirect`"], rows)


def collnet(r):
    net, system = r.preset(2, "[false, true]")
    rows = []
    for size in (64 * KiB, MiB, 16 * MiB, 256 * MiB, GiB, 4 * GiB):
        row = [size_label(size)]
        for algo in ("nccl", "nccl:algo=collnetdirect", "nccl:algo=collnetchain"):
            free = r.sim(16, "allreduce", size, algo, net)
            charged = r.sim(16, "allreduce", size, algo, net, system)
            if algo == "nccl":
                row.append(free[0] if free[0] == charged[0] else f"{free[0]} / {charged[0]}")
            row.append(f"{free[2]:.2f} / {charged[2]:.2f}")
        rows.append(row)
    table(["size", "`nccl` chooses", "`nccl`", "`nccl:algo=collnetdirect`", "`nccl:algo=collnetchain`"], rows)


TABLES = {
    "one-node": one_node,
    "nvls-chunk": nvls_chunk,
    "gather-scatter": gather_scatter,
    "gather-scatter-nvls": gather_scatter_nvls,
    "reads": reads,
    "two-node": two_node,
    "nvls-sharp": nvls_sharp,
    "collnet": collnet,
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in TABLES:
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory(prefix="nccl_table.") as tmp:
        TABLES[sys.argv[1]](Runner(tmp))


if __name__ == "__main__":
    main()
