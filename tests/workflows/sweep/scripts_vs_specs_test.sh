#!/bin/bash
# The sweep specs that replace scripts/fig4.py (its default ET-injected mode
# and --alltoall) and scripts/seed_curves.py give the scripts' numbers, on a
# subset of their sizes and topologies (the shipped specs with their size and
# network axes narrowed; everything else as shipped).
#   scripts_vs_specs_test.sh <sim> <source dir>
set -euo pipefail
sim=$1 src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/scripts_vs_specs.$$.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3

# A shipped spec with its relative paths made absolute and some axes replaced.
narrow() {  # spec, output, sed expressions...
  local spec=$1 out=$2
  shift 2
  sed -e "s#\.\./#$src/configs/#g" "$@" "$src/configs/sweeps/$spec" > "$out"
}

# Fig. 4: the ring as Chakra ETs (gen:ring) and the direct all-to-all.
$py "$src/scripts/fig4.py" --sim "$sim" --sizes 1KiB,1MiB --alltoall --out "$tmp/fig4py" --jobs 2 > "$tmp/fig4py.log"
narrow fig4_et.yml "$tmp/fig4_et.yml" -e 's#^  size: .*#  size: [1KiB, 1MiB]#'
narrow fig4_alltoall.yml "$tmp/fig4_a2a.yml" -e 's#^  size: .*#  size: [1KiB, 1MiB]#'
"$sim" sweep "$tmp/fig4_et.yml" -q -j 2 -o "$tmp/fig4_et"
"$sim" sweep "$tmp/fig4_a2a.yml" -q -j 2 -o "$tmp/fig4_a2a"

# Seed curves: synthesized (synth), ring and direct (gen:) on two topologies.
$py "$src/scripts/seed_curves.py" --sim "$sim" --sizes 1KiB,1MiB --topologies mesh8x8,hypercube64 \
  --out "$tmp/seedpy" --jobs 2 > "$tmp/seedpy.log"
narrow seed_curves.yml "$tmp/seed.yml" -e 's#^  size: .*#  size: [1KiB, 1MiB]#' \
  -e "s#^  network: \[.*#  network: [$src/configs/mesh8x8.yml, $src/configs/hypercube64.yml]#"
"$sim" sweep "$tmp/seed.yml" -q -j 2 -o "$tmp/seed"

$py - "$tmp" <<'PY'
import csv, os, sys
tmp = sys.argv[1]
def rows(path):
    with open(os.path.join(tmp, path), newline="") as f:
        return list(csv.DictReader(f))
def topo(row):
    return os.path.basename(row["network"])[:-len(".yml")]
checked, bad = 0, []
def same(what, ours, theirs):  # the scripts print 3 decimals
    global checked
    checked += 1
    if abs(float(ours) - float(theirs)) > 0.0005 + 1e-9 * abs(float(theirs)):
        bad.append(f"{what}: sweep {ours} vs script {theirs}")

ring = {}
for b in ("analytical", "flow"):
    for r in rows(f"fig4py/{'fig4' if b == 'analytical' else 'fig4_flow'}.csv"):
        ring[(b, r["topology"], int(r["size_bytes"]))] = r["sim_time_ns"]
seen = set()
for r in rows("fig4_et/results.csv"):
    assert r["status"] == "ok" and r["algorithm"] == "et:gen:ring", r
    key = (r["backend"], topo(r), int(r["bytes"]))
    if key not in seen:  # two rows per point (all-reduce, all-gather), one makespan
        seen.add(key)
        same(f"fig4 {key}", r["sim_time_ns"], ring[key])
assert len(seen) == len(ring) == 16, (len(seen), len(ring))

a2a = {(r["topology"], int(r["size_bytes"])): r for r in rows("fig4py/fig4_alltoall.csv")}
for r in rows("fig4_a2a/results.csv"):
    assert r["status"] == "ok", r
    same(f"alltoall {topo(r)} {r['bytes']} {r['backend']}", r["sim_time_ns"],
         a2a[(topo(r), int(r["bytes"]))][r["backend"] + "_ns"])

names = {"allgather=synth": "synth", "allgather=gen:ring": "ring", "allgather=gen:direct": "direct"}
seed = {(r["backend"], r["topology"], r["algorithm"], int(r["size_bytes_per_rank"])): r for r in rows("seedpy/seed_curves.csv")}
ours = rows("seed/results.csv")
assert len(ours) == len(seed) == 24, (len(ours), len(seed))
for r in ours:
    assert r["status"] == "ok", r
    ref = seed[(r["backend"], topo(r), names[r["--collective"]], int(r["bytes"]))]
    same(f"seed {topo(r)} {r['--collective']} {r['bytes']} {r['backend']} time", r["time_ns"], ref["time_ns"])
    same(f"seed {topo(r)} {r['--collective']} {r['bytes']} {r['backend']} busbw", r["busbw_gbps"], ref["busbw_GBps"])
if bad:
    sys.exit("sweep specs differ from the scripts:\n  " + "\n  ".join(bad))
print(f"scripts vs specs: {checked} numbers equal (fig4 ET ring, fig4 all-to-all, seed curves)")
PY
