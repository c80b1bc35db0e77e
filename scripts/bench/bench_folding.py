#!/usr/bin/env python3
"""Folded replicas, periods and stand-ins against every rank (docs/benchmarks.md).

Each case is a generated training iteration on a preset, run three ways: as `sim` folds it by
default, with `--exact-folding` (a period of replicas where stand-ins would be used, else the same
fold), and with `--no-aggregation` (every rank, every message). Wall time and peak RSS of the whole
process from /usr/bin/time; simulated ranks and events from sim's summary. Exits 1 when a run that
claims to be exact (no stand-ins, no approximate routes) gives another iteration than every rank.

    SIM=build/sim scripts/bench/bench_folding.py [--write-docs] [--skip-every]

--write-docs rewrites the table of docs/benchmarks.md (every case, every mode); --skip-every
leaves out the every-rank runs (minutes each).
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIM = os.environ.get("SIM", os.path.join(ROOT, "build", "sim"))

# name | preset | nodes | workload query [sim options] | modes (folded, exact, every)
CASES = [
    ("llama3-8b, tp 8, pp 2, dp 4, sp, seq 4,096, GBS 32, ZeRO-1, `dgx-h100 --nodes 8`, NCCL", "dgx-h100", 8,
     "model=llama3-8b&parallel=tp=8,pp=2,dp=4,sp&global-batch=32&seq=4096&zero=1", ["folded", "every"]),
    ("NeMo GPT3-175B, tp 4, pp 8, dp 4, interleaved:6, FP8, `dgx-h100-superpod --nodes 16`, NCCL",
     "dgx-h100-superpod", 16,
     "model=gpt3-175b&parallel=tp=4,pp=8,dp=4,sp&global-batch=256&micro-batch=1&seq=2048&schedule=interleaved:6"
     "&zero=1&dtype=fp8&tp-comm-overlap", ["folded", "every"]),
    ("Megatron GPT 3.6B, tp 2, dp 32, `dgx-a100 --nodes 8`, NCCL", "dgx-a100", 8,
     "model=configs/models/megatron-sc21/gpt-3.6b.yml&parallel=tp=2,pp=1,dp=32&global-batch=512&micro-batch=16"
     "&seq=2048&recompute=full&attention=unfused", ["folded"]),
    ("llama3-8b, tp 8, dp 64, ZeRO-1, seq 8,192, GBS 128, `dgx-h100-superpod --nodes 64`, NCCL",
     "dgx-h100-superpod", 64, "model=llama3-8b&parallel=tp=8,pp=1,dp=64&global-batch=128&seq=8192&zero=1",
     ["folded", "exact", "every"]),
    ("Llama 3 405B, tp 8, pp 16, dp 128, `dgx-h100-superpod --nodes 2048`, NCCL (docs/published-runs.md)",
     "dgx-h100-superpod", 2048,
     "model=llama3-405b&parallel=tp=8,pp=16,dp=128,sp&global-batch=2048&seq=8192&first-stage-layers=7"
     "&last-stage-layers=7&schedule=interleaved:8", ["folded"]),
]
FLAGS = {"folded": [], "exact": ["--exact-folding"], "every": ["--no-aggregation"]}
SHOWN = {"folded": "folded (default)", "exact": "`--exact-folding`", "every": "every rank (`--no-aggregation`)"}


def run(tmp, preset, nodes, query, mode, extra=()):
    """One run of a case (`extra`: further sim options, e.g. --backend flow); its summary's figures.
    Also used by scripts/docs/tables/system.py."""
    system = os.path.join(tmp, f"{preset}-{nodes}")
    if not os.path.isdir(system):
        subprocess.run([SIM, "system", "gen", preset, "--nodes", str(nodes), "-o", system], check=True,
                       stdout=subprocess.DEVNULL)
    timing = os.path.join(tmp, "time")
    cmd = ["/usr/bin/time", "-f", "%e %M", "-o", timing, SIM, "--workload", f"gen:transformer?{query}",
           "--system", system] + FLAGS[mode] + list(extra)
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"bench_folding: {' '.join(cmd[5:])} failed:\n{out.stderr}")
    wall, kb = open(timing).read().split()
    text = out.stdout
    iteration = re.search(r"^training iteration: ([\d.]+) ms", text, re.M).group(1)
    simulated_ns = re.search(r"^simulated time: .*\(([\d.]+) ns\)", text, re.M).group(1)
    events = int(re.search(r"^events: (\d+)", text, re.M).group(1))
    folded = re.search(r"^(?:replicas|ranks) folded: .*?\((\d+) of (\d+) ranks", text, re.M)
    world = re.search(r"on (\d+) GPUs", text).group(1)
    ranks = f"{folded.group(1)} of {folded.group(2)}" if folded else f"{world} of {world}"
    approximate = "stand-ins" in (folded.group(0) if folded else "") or "approximate" in text
    stand_ins = re.search(r"with stand-ins: (\d+) collectives", text)
    return {"iteration": iteration, "events": events, "ranks": ranks, "wall": float(wall), "rss": int(kb) // 1024,
            "approximate": approximate, "stand_ins": stand_ins.group(1) if stand_ins else "",
            "simulated_ns": simulated_ns}


def main():
    args = sys.argv[1:]
    docs = "--write-docs" in args
    skip_every = "--skip-every" in args
    if set(args) - {"--write-docs", "--skip-every"} or (docs and skip_every):
        print(__doc__)
        return 2
    os.chdir(ROOT)  # the cases name model files by their path in the repository
    load0 = os.getloadavg()[0]
    rows = [["case", "mode", "ranks simulated", "iteration", "events", "wall (s)", "peak RSS (MiB)"]]
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name, preset, nodes, query, modes in CASES:
            results = {}
            for mode in modes:
                if mode == "every" and skip_every:
                    continue
                r = results[mode] = run(tmp, preset, nodes, query, mode)
                how = f"{r['iteration']} ms" + (f" (stand-ins: {r['stand_ins']} collectives)" if r["stand_ins"] else "")
                row = [name if mode == modes[0] else "", SHOWN[mode], r["ranks"], how, f"{r['events']:,}",
                       f"{r['wall']:.2f}", f"{r['rss']:,}"]
                print(" | ".join(row), flush=True)
                rows.append(row)
            every = results.get("every")
            for mode, r in results.items():
                if every and mode != "every" and not r["approximate"] and r["iteration"] != every["iteration"]:
                    print(f"bench_folding: {name}: {mode} gives {r['iteration']} ms, every rank "
                          f"{every['iteration']} ms", file=sys.stderr)
                    failed = True
        if failed:
            return 1
        if docs:
            path = os.path.join(tmp, "rows.tsv")
            with open(path, "w") as f:
                for row in rows:
                    f.write("\t".join(row) + "\n")
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench", "bench_doc.py"), "block",
                            os.path.join(ROOT, "docs", "benchmarks.md"), "folding", "scripts/bench/bench_folding.py", path,
                            str(load0)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
