#!/usr/bin/env python3
"""The ns3 backend's RDMA transport against the flow backend, at scale (docs/network.md, docs/benchmarks.md).

    scripts/docs/ns3_roce_check.py SIM [--only agreement,tcp,incast,speed] [--budget SECONDS] [--write-docs]

Sections (all by default):
  agreement  ring all-reduce, direct all-to-all and incast (every NPU sends S to NPU 0: a direct
             gather) on 8 to 256 NPUs, 1 to 256 MiB: flow (hashed ECMP) against ns3 with
             `transport: roce` (PFC and DCQCN, the defaults) and with `dcqcn: false` (PFC alone)
  tcp        the TCP rows docs/network.md quotes: ring all-reduce on ring8 and switch8, the 7-to-1
             incast of 2 MiB, the direct all-to-all of 64 MiB on 8 NPUs
  incast     63-to-1 of 8 MiB on the 64-NPU leaf-spine (configs/fattree64.yml): PFC and DCQCN,
             PFC alone, and neither with a shallow buffer
  speed      wall time, events/s and peak RSS of the RoCE and TCP models, and the 1 GiB ring
             all-reduce on 128 NPUs (a k = 8 fat tree), run or extrapolated from smaller sizes

Every case runs `sim` on workloads generated into a temporary folder removed at exit, timed by
/usr/bin/time -v (wall, CPU = user + sys, peak RSS). Within one fabric and collective, sizes run
smallest first; a size whose run time, extrapolated linearly in bytes from the last one run, would
exceed --budget (default 150 s) is reported as not run (the 1 GiB ring all-reduce of `speed`:
twice the budget). --write-docs replaces the marked blocks of
the sections run in docs/network.md and docs/benchmarks.md. Run it with `nice`: it is CPU-bound.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MIB = 1 << 20

# Fabrics: name, NPUs, topology text (None: the shipped config of that name).
FABRICS = [
    ("switch8.yml", 8, None),
    ("leaf-spine 16 (4 x 4, 4 spines, 1:1)", 16,
     "shape: FatTree\nleaves: 4\nnpus_per_leaf: 4\nspines: 4\nbandwidth: 50GB/s\nlatency: 500ns\n"),
    ("fattree64.yml (8 x 8, 4 spines, 2:1)", 64, None),
    ("k = 8 fat tree (128 NPUs, 1:1)", 128, "shape: FatTree\nk: 8\nbandwidth: 50GB/s\nlatency: 500ns\n"),
    ("leaf-spine 256 (16 x 16, 16 spines, 1:1)", 256,
     "shape: FatTree\nleaves: 16\nnpus_per_leaf: 16\nspines: 16\nbandwidth: 50GB/s\nlatency: 500ns\n"),
]
COLLECTIVES = [("ring all-reduce", "allreduce"), ("direct all-to-all", "alltoall"), ("incast (N-1 to 1)", "gather")]
SIZES = [1, 16, 256]  # MiB

# DCQCN as NVIDIA's firmware sets it (ConnectX-4 and later; docs/network.md gives each key's
# source): alpha every 1 us with g = 5/1024, increase every 300 us or 32767 B, F = 1, R_AI 5 Mb/s,
# a CNP at most every 4 us.
NVIDIA = {"dcqcn_alpha_timer": "1us", "dcqcn_g": "0.0048828125", "dcqcn_rate_timer": "300us",
          "dcqcn_byte_counter": "32767B", "dcqcn_fast_recovery": "1", "dcqcn_rate_ai": "5Mbps",
          "dcqcn_rate_hai": "50Mbps", "dcqcn_min_rate": "1Mbps", "cnp_interval": "4us"}
# ASTRA-sim's shipped ns-3 config.txt (CC_MODE 1 keys), ECN thresholds as its KMIN/KMAX/PMAX_MAP give
# them for a 400 Gb/s port (KB), buffer 32 MB.
ASTRASIM = {"dcqcn_alpha_timer": "1us", "dcqcn_g": "0.00390625", "dcqcn_rate_timer": "900us",
            "dcqcn_fast_recovery": "1", "dcqcn_rate_ai": "50Mbps", "dcqcn_rate_hai": "100Mbps",
            "dcqcn_min_rate": "100Mbps", "cnp_interval": "4us", "ecn_kmin": "800KB", "ecn_kmax": "3200KB",
            "ecn_pmax": "0.2", "buffer_size": "32MB"}

DIRECT = "collective:\n  algorithms:\n    all_to_all: direct\n    gather: direct\n"


class Runner:
    def __init__(self, sim, tmp, budget):
        self.sim, self.tmp, self.budget = sim, tmp, budget
        self.workloads = {}

    def file(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def network(self, name, text):
        if text is None:
            return os.path.join(ROOT, "configs", name.split(" ")[0])
        return self.file(re.sub(r"[^A-Za-z0-9]+", "_", name) + ".yml", text)

    def workload(self, npus, coll, size):
        key = (npus, coll, size)
        if key not in self.workloads:
            prefix = os.path.join(self.tmp, f"w_{npus}_{coll}_{size}", "w")
            subprocess.run([self.sim, "workload", "gen", "collectives", "--npus", str(npus), "--coll", coll,
                            "--size", str(size), "-o", prefix], check=True, capture_output=True)
            self.workloads[key] = prefix
        return self.workloads[key]

    def system(self, network_lines):
        text = DIRECT + ("network:\n" + "".join(f"  {k}: {v}\n" for k, v in network_lines.items())
                         if network_lines else "")
        return self.file(f"sys_{abs(hash(text))}.yml", text)

    def run(self, workload, network, backend, options=None):
        """One simulation: its report's numbers and /usr/bin/time's."""
        timing = os.path.join(self.tmp, "time.txt")
        cmd = ["/usr/bin/time", "-v", "-o", timing, self.sim, "--workload", workload, "--network", network,
               "--backend", backend, "--system", self.system(options or {})]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
        out, t = p.stdout, open(timing).read()
        r = {"ns": float(re.search(r"^simulated time: .*\(([0-9.]+) ns\)", out, re.M).group(1))}
        wall = re.search(r"Elapsed \(wall clock\) time.*: (.*)", t).group(1).split(":")
        r["wall"] = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
        r["cpu"] = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([0-9.]+)", t))
        r["rss_mib"] = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) / 1024
        r["events"] = int(re.search(r"^events: (\d+)", out, re.M).group(1))
        for key, pattern in [("ns3_events", r"(\d+) ns-3 events"), ("packets", r"(\d+) packet transmissions"),
                             ("drops", r"(\d+) packets dropped"), ("pauses", r"(\d+) PFC pauses"),
                             ("cnps", r"(\d+) CNP transmissions"), ("resent", r"(\d+) retransmitted packets"),
                             ("timeouts", r"(\d+) retransmission timeouts"), ("nacks", r"(\d+) NACKs")]:
            m = re.search(pattern, out)
            r[key] = int(m.group(1)) if m else 0
        return r


def pct(a, b, digits=1):
    return f"{(a / b - 1) * 100:+.{digits}f}%"


def us(ns):
    return f"{ns / 1e3:,.1f}"


def agreement(rn, speed_rows):
    lines = ["| fabric | collective | S | flow (us) | roce (us) | roce vs flow | PFC alone (us) | PFC alone vs flow "
             "| PFC pauses | CNPs | ns3 wall (s) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    worst_pfc, worst_roce, skipped = 0.0, 0.0, []
    for name, npus, text in FABRICS:
        net = rn.network(name, text)
        for label, coll in COLLECTIVES:
            last = None  # (size, slowest ns3 wall) of the last size run
            for size in SIZES:
                if last and last[1] * size / last[0] > rn.budget:
                    skipped.append(f"{label}, {size} MiB on {name} (about {last[1] * size / last[0]:.0f} s per run)")
                    continue
                wl = rn.workload(npus, coll, size * MIB)
                flow = rn.run(wl, net, "flow")
                roce = rn.run(wl, net, "ns3", {"transport": "roce"})
                pfc = rn.run(wl, net, "ns3", {"transport": "roce", "dcqcn": "false"})
                last = (size, max(roce["wall"], pfc["wall"]))
                worst_roce = max(worst_roce, abs(roce["ns"] / flow["ns"] - 1))
                worst_pfc = max(worst_pfc, abs(pfc["ns"] / flow["ns"] - 1))
                lines.append(f"| {name} | {label} | {size} MiB | {us(flow['ns'])} | {us(roce['ns'])} | "
                             f"{pct(roce['ns'], flow['ns'])} | {us(pfc['ns'])} | {pct(pfc['ns'], flow['ns'])} | "
                             f"{roce['pauses']:,} / {pfc['pauses']:,} | {roce['cnps']:,} | "
                             f"{roce['wall']:.1f} / {pfc['wall']:.1f} |")
                print(lines[-1], flush=True)
                speed_rows.append((f"{label}, {size} MiB, {name}", "roce", roce))
    lines.append("")
    lines.append(f"Largest difference from flow: {worst_roce * 100:.1f}% with PFC and DCQCN, {worst_pfc * 100:.1f}% "
                 "with PFC alone. PFC pauses: with DCQCN / without. ns3 wall: with DCQCN / without.")
    if skipped:
        lines.append("")
        lines.append("Not run (longer than the script's budget per run, extrapolated from the size below): " +
                     "; ".join(skipped) + ".")
    return "\n".join(lines)


def tcp(rn):
    lines = ["| case | flow (us) | ns3 TCP (us) | TCP vs flow | ns3 roce (us) | roce vs flow | TCP drops |",
             "|---|---|---|---|---|---|---|"]
    cases = []
    for cfg in ["ring8.yml", "switch8.yml"]:
        for size in [1, 16, 64]:
            cases.append((f"ring all-reduce, {size} MiB, {cfg}", 8, "allreduce", size * MIB, cfg, {}))
    cases.append(("7-to-1 incast of 2 MiB each, switch8.yml", 8, "gather", 2 * MIB, "switch8.yml", {}))
    cases.append(("direct all-to-all, 64 MiB, switch8.yml", 8, "alltoall", 64 * MIB, "switch8.yml", {}))
    cases.append(("direct all-to-all, 64 MiB, switch8.yml, queue_size: 64MiB", 8, "alltoall", 64 * MIB,
                  "switch8.yml", {"queue_size": "64MiB"}))
    for label, npus, coll, size, cfg, extra in cases:
        wl = rn.workload(npus, coll, size)
        net = os.path.join(ROOT, "configs", cfg)
        flow = rn.run(wl, net, "flow")
        t = rn.run(wl, net, "ns3", extra)
        roce = rn.run(wl, net, "ns3", {"transport": "roce"}) if not extra else None
        lines.append(f"| {label} | {us(flow['ns'])} | {us(t['ns'])} | {pct(t['ns'], flow['ns'])} | "
                     f"{us(roce['ns']) if roce else '-'} | {pct(roce['ns'], flow['ns']) if roce else '-'} | "
                     f"{t['drops']:,} |")
        print(lines[-1], flush=True)
    return "\n".join(lines)


def wire(size, payload=4096, headers=62):
    return size + -(-size // payload) * headers


def incast(rn, speed_rows):
    net = os.path.join(ROOT, "configs", "fattree64.yml")
    wl = rn.workload(64, "gather", 8 * MIB)
    # Every frame through the one 50 GB/s port into NPU 0, plus the two 500 ns hops of the nearest
    # senders' route (NPU -> leaf -> NPU 0).
    bound_ns = 63 * wire(8 * MIB) / 50e9 * 1e9 + 2 * 500
    lines = [f"Bound: 63 x 8 MiB of frames (4096 B payload, 62 B headers each) through the 50 GB/s port into "
             f"NPU 0 plus two 500 ns hops: {us(bound_ns)} us.", "",
             "| case | last delivery (us) | vs bound | drops | PFC pauses | CNPs | NACKs | packets resent | timeouts "
             "| wall (s) |", "|---|---|---|---|---|---|---|---|---|---|"]
    flow = rn.run(wl, net, "flow")
    lines.append(f"| flow | {us(flow['ns'])} | {pct(flow['ns'], bound_ns, 2)} | - | - | - | - | - | - | "
                 f"{flow['wall']:.1f} |")
    for label, opts in [("roce: PFC and DCQCN (defaults)", {"transport": "roce"}),
                        ("roce: PFC and DCQCN with NVIDIA ConnectX's defaults", dict(NVIDIA, transport="roce")),
                        ("roce: PFC and DCQCN with ASTRA-sim's config.txt", dict(ASTRASIM, transport="roce")),
                        ("roce: PFC alone", {"transport": "roce", "dcqcn": "false"}),
                        ("roce: no PFC, no DCQCN, 1 MB buffers", {"transport": "roce", "pfc": "false",
                                                                  "dcqcn": "false", "buffer_size": "1MB"}),
                        ("roce: no PFC, DCQCN, 1 MB buffers", {"transport": "roce", "pfc": "false",
                                                              "buffer_size": "1MB"})]:
        r = rn.run(wl, net, "ns3", opts)
        lines.append(f"| {label} | {us(r['ns'])} | {pct(r['ns'], bound_ns, 2)} | {r['drops']:,} | {r['pauses']:,} | "
                     f"{r['cnps']:,} | {r['nacks']:,} | {r['resent']:,} | {r['timeouts']:,} | {r['wall']:.1f} |")
        print(lines[-1], flush=True)
        speed_rows.append((f"63-to-1 incast of 8 MiB, fattree64.yml, {label.split(': ')[1]}", "roce", r))
    return "\n".join(lines)


def speed(rn, speed_rows):
    net = rn.network("k8", FABRICS[3][2])
    lines = ["| case | transport | simulated (us) | wall (s) | CPU (s) | ns-3 events | events/s (CPU) | packets/s (CPU) "
             "| peak RSS (MiB) |", "|---|---|---|---|---|---|---|---|---|"]

    def row(label, transport, r):
        cpu = max(r["cpu"], 0.01)
        ev = r["events"] + r["ns3_events"]
        return (f"| {label} | {transport} | {us(r['ns'])} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['ns3_events']:,} | "
                f"{ev / cpu / 1e6:.2f} M | {r['packets'] / cpu / 1e6:.2f} M | {r['rss_mib']:.0f} |")

    runs = []
    for size in [16, 64, 256]:
        wl = rn.workload(128, "allreduce", size * MIB)
        r = rn.run(wl, net, "ns3", {"transport": "roce"})
        runs.append((size, r))
        lines.append(row(f"ring all-reduce, {size} MiB, k = 8 fat tree (128 NPUs)", "roce", r))
        print(lines[-1], flush=True)
    for size in [16]:
        wl = rn.workload(128, "allreduce", size * MIB)
        r = rn.run(wl, net, "ns3", {"connect": "on_first_send"})
        lines.append(row(f"ring all-reduce, {size} MiB, k = 8 fat tree (128 NPUs), connect: on_first_send", "tcp", r))
        print(lines[-1], flush=True)
    size, last = runs[-1]
    predicted = last["wall"] * 1024 / size
    if predicted <= rn.budget * 2:
        wl = rn.workload(128, "allreduce", 1024 * MIB)
        r = rn.run(wl, net, "ns3", {"transport": "roce"})
        lines.append(row("ring all-reduce, 1 GiB, k = 8 fat tree (128 NPUs)", "roce", r))
        print(lines[-1], flush=True)
        big = (f"The 1 GiB ring all-reduce on 128 NPUs through the k = 8 fat tree: {r['wall']:.0f} s of wall time "
               f"({r['wall'] / 60:.1f} min; {predicted:.0f} s predicted linearly from {size} MiB), "
               f"{r['rss_mib']:.0f} MiB peak RSS.")
    else:
        big = (f"The 1 GiB ring all-reduce on 128 NPUs through the k = 8 fat tree was not run: linear in bytes from "
               f"{size} MiB it takes about {predicted:.0f} s ({predicted / 60:.1f} min).")
    for label, transport, r in speed_rows:
        lines.append(row(label, transport, r))
    return "\n".join(lines) + "\n\n" + big


def replace_block(doc, tag, table):
    path = os.path.join(ROOT, "docs", doc)
    begin, end = f"<!-- {tag}: begin (scripts/docs/ns3_roce_check.py --write-docs) -->", f"<!-- {tag}: end -->"
    text = open(path).read()
    if begin not in text or end not in text:
        sys.exit(f"ns3_roce_check: {path} has no block {begin} ... {end}")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + table + "\n" + end + tail)


def main():
    args = sys.argv[1:]
    positional = [a for a in args if not a.startswith("--")]
    only, budget = ["agreement", "tcp", "incast", "speed"], 150.0
    for i, a in enumerate(args):
        if a == "--only":
            only = args[i + 1].split(",")
            positional.remove(args[i + 1])
        elif a == "--budget":
            budget = float(args[i + 1])
            positional.remove(args[i + 1])
    if len(positional) != 1 or not set(only) <= {"agreement", "tcp", "incast", "speed"}:
        sys.exit(__doc__)
    sim = os.path.abspath(positional[0])
    tmp = tempfile.mkdtemp(prefix="sim-ns3-roce-")
    blocks = []
    try:
        rn = Runner(sim, tmp, budget)
        speed_rows = []
        if "tcp" in only:
            blocks.append(("network.md", "ns3-tcp-agreement", tcp(rn)))
        if "incast" in only:
            blocks.append(("network.md", "ns3-roce-incast", incast(rn, speed_rows)))
        if "agreement" in only:
            blocks.append(("network.md", "ns3-roce-agreement", agreement(rn, speed_rows)))
        if "speed" in only:
            blocks.append(("benchmarks.md", "ns3-roce-speed", speed(rn, speed_rows)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for doc, tag, table in blocks:
        print(f"\n{doc} {tag}:\n{table}")
        if "--write-docs" in args:
            replace_block(doc, tag, table)


if __name__ == "__main__":
    main()
