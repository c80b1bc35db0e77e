#!/usr/bin/env python3
"""Tables of folded replicas and stand-ins (docs/system.md, docs/presets.md) and of sweeps
(docs/workflows.md), written from what `sim` prints.

    scripts/docs/tables/system.py NAME        ($SIM, else `sim` on the PATH, else build/sim)

Prints NAME's Markdown table (a header, then one row per case) and nothing else. Simulated figures
come from sim's summary (`simulated time: ... (N ns)`, the workload line's ranks); wall time and
peak RSS of the whole process from /usr/bin/time (they depend on the machine: a document masks
them). Differences are (folded - exact) / exact of the simulated times.

The small cases run llama3-8b, seq 512, global batch 8 (`gen:transformer?model=llama3-8b&seq=512&
global-batch=8&parallel=PLAN`) on NETWORK below (4 GPUs a node, 2 nodes a leaf, 4 leaves: a rail's
ring crosses the spine at every other hop, NCCL's tree over the nodes has a root, inner nodes and
leaves), with a system file `compute: {peak_tflops: 989, memory_bandwidth: 3350GB/s}` (unless said)
and `collective: algorithms: {all_reduce: ALGO, all_gather: nccl, reduce_scatter: nccl}`, as
tests/system/runner/aggregation/stand_in_test.cpp and flow_stand_in_test.cpp do:

  stand-ins        tp 4, dp 8, NCCL's tree, with and without the compute: section (the second is
                   tests/cli/aggregation_cli_test.cpp's case): `sim` as it folds by default (one
                   replica with stand-ins) against `--exact-folding` (here every rank).
  stand-ins-cp     cp 2 (tp 2, pp 2, dp 2 and 4, 1F1B and interleaved:2; tp 1, pp 2, dp 8), NCCL's
                   tree: the default (the cp ranks folded as copies, with stand-ins) against
                   `--no-aggregation` (every rank).
  stand-ins-flow   the cases of FlowFolding.StandInsAreCloseToEveryRank with `--backend flow`:
                   the default (one replica with stand-ins) against `--exact-folding` (every rank).
  stand-ins-ports  mixtures of experts with pipeline stages and a dense plan on one switch of 8 or
                   16 GPUs (50 GB/s, 500 ns; the compute above, sim's native collectives), on the
                   flow backend with `pair_order` fifo and shared: the default against
                   `--exact-folding` (FlowFolding.ALoadOnTheRanksPortPacesEachStandIn's cases and more).

The large cases run on `sim system gen PRESET --nodes N` through scripts/bench/bench_folding.py's run()
(its cases, the same commands):

  context-parallel   NeMo's LLAMA3-70B row of scripts/bench/bench_published.sh (nemo-llama3-70b-64:
                     64 GPUs, tp 4, pp 4, cp 2, dp 2): the default (one replica, the cp ranks
                     simulated) against `--no-aggregation`. A minute or two.
  stand-ins-512      bench_folding.py's 512-GPU case (llama3-8b, tp 8, dp 64 on
                     `dgx-h100-superpod --nodes 64`): the default and `--exact-folding`, on the
                     analytical backend (a period of 32 replicas) and on the flow backend (every
                     rank). Minutes: every rank on the flow backend is most of it.
  presets            bench_folding.py's 512-GPU case (default, `--exact-folding`) and its
                     16,384-GPU Llama 3 405B case (default only). A few minutes.

And the sweep specs that replace scripts (docs/workflows.md):

  sweeps             `sim sweep configs/sweeps/SPEC -o DIR -j 1` against the script it replaces
                     (`/usr/bin/python3 scripts/SCRIPT --jobs 1`, python3-matplotlib): fig4_et.yml
                     and scripts/fig4.py, fig4_alltoall.yml and scripts/fig4.py --alltoall (which
                     runs the ring's points too), seed_curves.yml and scripts/seed_curves.py.
                     A few minutes: the scripts are most of it.
"""
import decimal
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(os.path.dirname(HERE))
BENCH = os.path.join(SCRIPTS, "bench")
ROOT = os.path.dirname(SCRIPTS)
SIM = os.environ.get("SIM") or shutil.which("sim") or os.path.join(ROOT, "build", "sim")
os.environ["SIM"] = SIM  # bench_folding reads it when imported
sys.path.insert(0, BENCH)
import bench_folding  # noqa: E402  (its cases and its run())

NETWORK = ("topology: [Switch, Switch, Switch]\nnpus_count: [4, 2, 4]\n"
           "bandwidth: [450GB/s, 50GB/s, 50GB/s]\nlatency: [300ns, 1350ns, 500ns]\n")
COMPUTE = "compute: {peak_tflops: 989, memory_bandwidth: 3350GB/s}\n"
SMALL = "gen:transformer?model=llama3-8b&seq=512&global-batch=8&parallel="


def fail(message):
    sys.exit(f"tables/system.py: {message}")


def timed(cmd, tmp):
    """Runs cmd under /usr/bin/time: (stdout, wall seconds, peak RSS in MiB). Exits on failure."""
    timing = os.path.join(tmp, "time")
    done = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", timing] + cmd, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr.strip()}")
    wall, kb = open(timing).read().split()
    return done.stdout + done.stderr, float(wall), int(kb) // 1024


def small(tmp, plan, all_reduce, flags=(), compute=True):
    """One small case: (simulated ns as a Decimal, 'S of N' ranks simulated)."""
    net = os.path.join(tmp, "net.yml")
    with open(net, "w") as f:
        f.write(NETWORK)
    system = os.path.join(tmp, "system.yml")
    with open(system, "w") as f:
        f.write((COMPUTE if compute else "") + "collective:\n  algorithms: {all_reduce: '" + all_reduce +
                "', all_gather: nccl, reduce_scatter: nccl}\n")
    cmd = [SIM, "--workload", SMALL + plan, "--network", net, "--system", system] + list(flags)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr.strip()}")
    ns = re.search(r"^simulated time: .*\(([\d.]+) ns\)", done.stdout, re.M)
    ranks = re.search(r"^workload: .*\((\d+) ranks(?:, (\d+) simulated)?\)$", done.stdout, re.M)
    if not ns or not ranks:
        fail(f"{' '.join(cmd)}: no simulated time or workload line in\n{done.stdout}")
    return decimal.Decimal(ns.group(1)), f"{ranks.group(2) or ranks.group(1)} of {ranks.group(1)}"


def ms(ns, decimals=4):
    return f"{ns / 1000000:,.{decimals}f} ms"


def difference(ns, exact_ns):
    """(ns - exact) / exact in percent, two significant digits (at least two decimals)."""
    d = float((decimal.Decimal(ns) - decimal.Decimal(exact_ns)) / decimal.Decimal(exact_ns)) * 100
    if d == 0:
        return "0%"
    decimals = max(2, 1 - int(f"{abs(d):e}".split("e")[1]))
    return f"{d:+.{decimals}f}%"


def row(*cells):
    print("| " + " | ".join(cells) + " |", flush=True)


def header(*cells):
    row(*cells)
    row(*["---"] * len(cells))


def stand_ins(tmp):
    header("case", "ranks simulated", "stand-ins (default)", "exact (`--exact-folding`: every rank)", "difference")
    for what, compute in (("llama3-8b, tp 4, dp 8, seq 512, GBS 8, on 4 GPUs x 2 nodes x 4 leaves, NCCL's tree "
                           "(`nccl:algo=tree`)", True),
                          ("the same, sim's default compute (no `compute:` section)", False)):
        folded, ranks = small(tmp, "tp=4,pp=1,dp=8", "nccl:algo=tree", compute=compute)
        exact, _ = small(tmp, "tp=4,pp=1,dp=8", "nccl:algo=tree", ["--exact-folding"], compute=compute)
        row(what, ranks, ms(folded), ms(exact), difference(folded, exact))


def stand_ins_cp(tmp):
    header("case", "ranks simulated", "stand-ins (default)", "every rank (`--no-aggregation`)", "difference")
    for what, plan in (("tp 2, pp 2, cp 2, dp 2, 1F1B", "tp=2,pp=2,cp=2,dp=2"),
                       ("the same, dp 4", "tp=2,pp=2,cp=2,dp=4"),
                       ("the same, dp 4, interleaved:2", "tp=2,pp=2,cp=2,dp=4&schedule=interleaved:2"),
                       ("tp 1, pp 2, cp 2, dp 8 (communication-bound)", "tp=1,pp=2,cp=2,dp=8")):
        folded, ranks = small(tmp, plan, "nccl:algo=tree")
        every, _ = small(tmp, plan, "nccl:algo=tree", ["--no-aggregation"])
        row(what, ranks, ms(folded), ms(every), difference(folded, every))


def stand_ins_flow(tmp):
    header("plan, all-reduce", "folded (ranks simulated)", "every rank (`--exact-folding`)", "difference")
    for what, plan, algo in (("tp 4, dp 8, NCCL's ring", "tp=4,pp=1,dp=8", "nccl:algo=ring"),
                             ("tp 4, dp 8, NCCL's tree", "tp=4,pp=1,dp=8", "nccl:algo=tree"),
                             ("tp 2, pp 2, dp 8, NCCL's choice", "tp=2,pp=2,dp=8", "nccl"),
                             ("tp 4, pp 2, dp 4, interleaved:2, NCCL's choice",
                              "tp=4,pp=2,dp=4&schedule=interleaved:2", "nccl"),
                             ("tp 2, pp 2, cp 2, dp 4, NCCL's tree", "tp=2,pp=2,cp=2,dp=4", "nccl:algo=tree"),
                             ("tp 4, dp 8, native ring", "tp=4,pp=1,dp=8", "ring")):
        folded, ranks = small(tmp, plan, algo, ["--backend", "flow"])
        every, _ = small(tmp, plan, algo, ["--backend", "flow", "--exact-folding"])
        row(what, f"{ms(folded)} ({ranks.split()[0]})", ms(every), difference(folded, every))


def stand_ins_ports(tmp):
    header("model, plan (GPUs)", "pair_order fifo: folded", "every rank", "difference",
           "pair_order shared: folded", "every rank", "difference")
    moe = "gen:transformer?model=mixtral-8x7b&"
    for workload, gpus in ((moe + "seq=256&global-batch=16&parallel=tp=1,pp=2,dp=8,ep=4", 16),
                           (moe + "seq=128&global-batch=4&parallel=tp=1,pp=4,dp=4,ep=2", 16),
                           (moe + "seq=256&global-batch=8&parallel=tp=1,pp=2,dp=4,ep=2", 8),
                           (moe + "seq=256&global-batch=16&parallel=tp=1,pp=2,dp=8,ep=2", 16),
                           (moe + "seq=256&global-batch=16&parallel=tp=1,pp=1,dp=16,ep=4", 16),
                           ("gen:transformer?model=llama3-8b&seq=1024&global-batch=8&parallel=tp=2,pp=2,dp=4", 16)):
        net = os.path.join(tmp, "switch.yml")
        with open(net, "w") as f:
            f.write(f"topology: [Switch]\nnpus_count: [{gpus}]\nbandwidth: [50GB/s]\nlatency: [500ns]\n")
        cells = []
        for order in ("fifo", "shared"):
            system = os.path.join(tmp, "system.yml")
            with open(system, "w") as f:
                f.write(COMPUTE + "network: {backend: flow, pair_order: " + order + "}\n")
            times = []
            for flags in ([], ["--exact-folding"]):
                cmd = [SIM, "--workload", workload, "--network", net, "--system", system] + flags
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode != 0:
                    fail(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr.strip()}")
                ns = re.search(r"^simulated time: .*\(([\d.]+) ns\)", done.stdout, re.M)
                if not ns:
                    fail(f"{' '.join(cmd)}: no simulated time in\n{done.stdout}")
                times.append(decimal.Decimal(ns.group(1)))
            cells += [ms(times[0]), ms(times[1]), difference(times[0], times[1])]
        model, _, rest = workload.partition("model=")[2].partition("&")
        plan = rest.rpartition("parallel=")[2].replace(",", ", ").replace("=", " ")
        row(f"{model}, {plan} ({gpus})", *cells)


def published_case(name):
    """scripts/bench/bench_published.sh's case NAME: (preset, nodes, query)."""
    for line in open(os.path.join(BENCH, "bench_published.sh")):
        fields = line.strip().strip('"').split()
        if fields and fields[0] == name:
            if len(fields) != 6 or not fields[2].isdigit():
                fail(f"bench_published.sh's case {name} is not 'name preset nodes published fit query'")
            return fields[1], int(fields[2]), fields[5]
    fail(f"no case {name} in scripts/bench/bench_published.sh")


def folding_case(preset, nodes):
    """scripts/bench/bench_folding.py's case on PRESET --nodes NODES: (preset, nodes, query)."""
    for _name, p, n, query, _modes in bench_folding.CASES:
        if (p, n) == (preset, nodes):
            return p, n, query
    fail(f"no case on {preset} --nodes {nodes} in scripts/bench/bench_folding.py")


def wall(r):
    return f"{r['wall']:.1f} s"


def rss(r):
    return f"{r['rss']:,} MiB"


def shown_ms(r):
    """bench_folding's iteration (ms, as the summary prints it), with thousands separators."""
    whole, _, decimals = r["iteration"].partition(".")
    return f"{int(whole):,}.{decimals} ms"


def iteration(r):
    """The simulated time to the picosecond, in ms."""
    return f"{decimal.Decimal(r['simulated_ns']) / 1000000:,.9f} ms"


def period(case, r):
    """How many replicas a fold simulates: its ranks over the ranks of one replica."""
    dp = int(re.search(r"\bdp=(\d+)", case[2]).group(1))
    simulated, world = (int(x) for x in r["ranks"].split(" of "))
    return simulated * dp // world


def context_parallel(tmp):
    case = published_case("nemo-llama3-70b-64")
    header("", "ranks simulated", "events", "wall", "peak RSS", "iteration")
    for mode, shown in (("folded", "folded (default: one replica, its cp ranks simulated)"),
                        ("every", "every rank (`--no-aggregation`)")):
        r = bench_folding.run(tmp, *case, mode)
        row(shown, r["ranks"], f"{r['events']:,}", wall(r), rss(r), iteration(r))


def stand_ins_512(tmp):
    case = folding_case("dgx-h100-superpod", 64)
    header("backend", "run", "ranks simulated", "iteration", "difference", "wall", "peak RSS")
    for backend in ("analytical", "flow"):
        extra = ["--backend", backend]
        folded = bench_folding.run(tmp, *case, "folded", extra)
        exact = bench_folding.run(tmp, *case, "exact", extra)
        replicas = period(case, exact)
        exact_shown = "`--exact-folding` (" + (f"a period of {replicas} replicas" if exact["ranks"].split()[0] !=
                                               exact["ranks"].split()[-1] else "every rank") + ")"
        row(backend, "default (stand-ins)", folded["ranks"], shown_ms(folded),
            difference(folded["simulated_ns"], exact["simulated_ns"]), wall(folded), rss(folded))
        row("", exact_shown, exact["ranks"], shown_ms(exact), "", wall(exact), rss(exact))


def presets(tmp):
    header("case", "stand-ins (default)", "exact (`--exact-folding`)", "difference")
    name = ("llama3-8b, tp 8, dp 64, ZeRO-1, seq 8,192, GBS 128, `dgx-h100-superpod --nodes 64` (512 GPUs; "
            "NCCL's ring over 64 nodes of 2 leaves)")
    case = folding_case("dgx-h100-superpod", 64)
    folded = bench_folding.run(tmp, *case, "folded")
    exact = bench_folding.run(tmp, *case, "exact")
    row(name, f"{shown_ms(folded)}, {wall(folded)}, {rss(folded)}",
        f"{shown_ms(exact)}, {wall(exact)}, {rss(exact)} ({exact['ranks']} ranks: a period of "
        f"{period(case, exact)} replicas)",
        difference(folded["simulated_ns"], exact["simulated_ns"]))
    name = ("Llama 3 405B, tp 8, pp 16, dp 128, `dgx-h100-superpod --nodes 2048` (16,384 GPUs, "
            "docs/published-runs.md; NCCL's tree over 128 nodes of 4 leaves for the gradients)")
    case = folding_case("dgx-h100-superpod", 2048)
    folded = bench_folding.run(tmp, *case, "folded")
    row(name, f"{shown_ms(folded)}, {wall(folded)}, {rss(folded)}", "not run", "")


def sweeps(tmp):
    header("script", "spec", "points", "sweep (`-j 1`): wall, peak RSS", "script (`--jobs 1`): wall")
    for script, spec in (("fig4.py", "fig4_et.yml"), ("fig4.py --alltoall", "fig4_alltoall.yml"),
                         ("seed_curves.py", "seed_curves.yml")):
        out = os.path.join(tmp, "sweep")
        text, sweep_wall, sweep_rss = timed([SIM, "sweep", os.path.join(ROOT, "configs", "sweeps", spec), "-o", out,
                                             "-j", "1"], tmp)
        points = re.search(r"^sweep: (\d+) of (\d+) points \(\d+ simulated, 0 from cache, 0 failed\)", text, re.M)
        if not points or points.group(1) != points.group(2):
            fail(f"sweep {spec}: not every point simulated:\n{text}")
        shutil.rmtree(out)
        args = script.split()
        _, script_wall, _ = timed(["/usr/bin/python3", os.path.join(SCRIPTS, args[0])] + args[1:] +
                                  ["--sim", SIM, "--jobs", "1", "--out", os.path.join(tmp, "script")], tmp)
        shutil.rmtree(os.path.join(tmp, "script"))
        shown = f"`scripts/{script}`" + {"fig4.py": " (the ring as Chakra ETs)",
                                          "fig4.py --alltoall": " (the ring's points too)"}.get(script, "")
        row(shown, f"`{spec}`", points.group(1), f"{sweep_wall:.1f} s, {sweep_rss:,} MiB", f"{script_wall:.1f} s")


TABLES = {"stand-ins": stand_ins, "stand-ins-cp": stand_ins_cp, "stand-ins-flow": stand_ins_flow,
          "stand-ins-ports": stand_ins_ports,
          "context-parallel": context_parallel, "stand-ins-512": stand_ins_512, "presets": presets,
          "sweeps": sweeps}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in TABLES:
        print(__doc__, file=sys.stderr)
        print("tables: " + ", ".join(TABLES), file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="tables-system.") as tmp:
        TABLES[sys.argv[1]](tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
