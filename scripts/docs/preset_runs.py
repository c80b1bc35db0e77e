"""What the scripts comparing a preset with a measured curve share: one collective on a preset's
generated files, and the marked block of a doc they write their table into."""
import csv
import os
import re
import subprocess
import sys


def simulate(sim, tmp, preset, nodes, coll, size):
    """(busbw GB/s, algorithm) of `coll` of `size` bytes on `nodes` nodes of 8 GPUs of `preset`.

    The system files are generated once per node count in `tmp`. The record is the slowest rank's,
    as `sim compare` and `sim calibrate` take it: nccl-tests reports the mean over ranks of calls
    run back to back, and in that loop every rank's period is the slowest rank's."""
    sysdir = os.path.join(tmp, f"{preset}x{nodes}")
    if not os.path.isdir(sysdir):
        subprocess.run([sim, "system", "gen", preset, "--nodes", str(nodes), "-o", sysdir], check=True,
                       capture_output=True)
    wl = os.path.join(tmp, "wl")
    subprocess.run([sim, "workload", "gen", "collectives", "--npus", str(8 * nodes), "--coll", coll, "--size",
                    str(size), "-o", wl], check=True, capture_output=True)
    out = os.path.join(tmp, "run.csv")
    subprocess.run([sim, "--workload", wl, "--system", sysdir, "--csv", out, "-q"], check=True, capture_output=True)
    rec = max(csv.DictReader(open(out)), key=lambda r: float(r["duration_ns"]))
    return float(rec["busbw_gbps"]), rec["algorithm"]


def write_block(doc, begin, end, table):
    """Replaces the text between the markers `begin` and `end` of `doc` (a path under docs/) with `table`."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", doc)
    text = open(path).read()
    if begin not in text:
        sys.exit(f"{doc} has no block {begin}")
    text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: begin + "\n" + table + "\n" + end, text,
                  flags=re.S)
    open(path, "w").write(text)
    print(f"wrote the table into {doc}")
