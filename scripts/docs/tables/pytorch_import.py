#!/usr/bin/env python3
"""The PyTorch import table of docs/benchmarks.md: what `sim workload import pytorch` costs.

    scripts/docs/tables/pytorch_import.py

In a temporary folder, from the 4-rank DDP job's traces in ../shared/testdata/pytorch/ddp4-gloo-h100/
(which a public clone lacks):

    scripts/bench/pytorch_big_trace.py D/et_rank0.json.gz D/kineto_rank0.json.gz 33 big   (not timed)
    sim workload import pytorch --host-et big/et_rank0.json.gz --kineto big/kineto_rank0.json.gz -o big/out
    sim workload import pytorch --host-et big/et_rank0.json.gz -o big/host
    sim workload import pytorch --host-et D --kineto D -o real/out
    /usr/bin/python3 -c 'json.load(gzip.open(...))' of big/et_rank0.json.gz and big/kineto_rank0.json.gz

one after another. Per command: the nodes written (the sum of what sim prints per rank; the
python row loads the files and writes nothing), the size of the ETs written (MB = 1e6 B), the CPU
time (user + sys) and the peak RSS of the process (wait4's rusage), its wall time, and the 1-minute
load average when it started (/proc/loadavg): the last four depend on the machine and its load.
Uses $SIM, else `sim` on the PATH; $SIM_SOURCE_DIR, else this script's repository.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.environ.get("SIM_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SIM = os.environ.get("SIM", "sim")
TRACES = os.path.join(ROOT, "..", "shared", "testdata", "pytorch", "ddp4-gloo-h100")
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
NODES = re.compile(r"^rank \d+: (\d+) CPU, (\d+) GPU, (\d+) communication nodes", re.M)


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def measured(cmd, cwd):
    """Runs cmd; returns (stdout + stderr, CPU s, wall s, peak RSS KiB, load average at start)."""
    load = load_average()
    with tempfile.TemporaryFile() as out:
        start = time.monotonic()
        p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if p.returncode != 0:
        sys.exit(f"pytorch import table: {' '.join(cmd)} exited {p.returncode}:\n{text[-2000:]}")
    return text, usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss, load


def main():
    if len(sys.argv) != 1:
        sys.exit(__doc__)
    if not os.path.isdir(TRACES):
        sys.exit(f"pytorch import table: {TRACES} is absent (../shared/testdata)")
    print("| input | nodes written (CPU / GPU / communication) | ETs written | CPU (user + sys) | wall | peak RSS "
          "| load average |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="pytorch_import_table.") as tmp:
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench", "pytorch_big_trace.py"),
                            os.path.join(TRACES, "et_rank0.json.gz"), os.path.join(TRACES, "kineto_rank0.json.gz"),
                            "33", "big"], cwd=tmp, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"pytorch import table: pytorch_big_trace.py exited {r.returncode}:\n{r.stderr[-2000:]}")
        host, kineto = "big/et_rank0.json.gz", "big/kineto_rank0.json.gz"
        cases = [
            ("100k-op host trace + Kineto trace", ["--host-et", host, "--kineto", kineto], "big/out"),
            ("100k-op host trace alone", ["--host-et", host], "big/host"),
            ("the real 4-rank DDP job (4 × 3,053 ops + Kineto)", ["--host-et", TRACES, "--kineto", TRACES], "real/out"),
        ]
        for label, args, out in cases:
            text, cpu, wall, rss, load = measured([SIM, "workload", "import", "pytorch"] + args + ["-o", out], tmp)
            counts = [sum(int(m[i]) for m in NODES.findall(text)) for i in range(3)]
            if not counts[0]:
                sys.exit(f"pytorch import table: no 'rank N: ... nodes' line in what sim printed:\n{text[-2000:]}")
            size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(tmp, out + ".*.et")))
            print(f"| {label} | {counts[0]:,} / {counts[1]:,} / {counts[2]:,} | {size / 1e6:.1f} MB | {cpu:.2f} s "
                  f"| {wall:.1f} s | {rss // 1024} MiB | {load:.1f} |")
        _, cpu, wall, rss, load = measured(
            [PYTHON, "-c", "import gzip, json, sys\nfor f in sys.argv[1:]:\n    json.load(gzip.open(f))", host, kineto],
            tmp)
        print(f"| python3 only loading the two 100k-op files (`json.load(gzip.open(...))` each) | none | none "
              f"| {cpu:.2f} s | {wall:.1f} s | {rss // 1024} MiB | {load:.1f} |")


if __name__ == "__main__":
    main()
