#!/bin/bash
# Sweep overhead benchmark: 1,000 points of 8-rank microbenchmarks (10 sizes x
# 10 link bandwidths x 5 all-reduce algorithms x 2 backends) on -j JOBS
# threads (default 2), cold (every point simulated) and warm (all cached).
# Prints wall time, points/s and peak memory (/usr/bin/time -v). Target: the
# cold sweep in <= 10 s on 2 cores.
#   scripts/bench/bench_sweep.sh [build/sim] [JOBS]
#   scripts/bench/bench_sweep.sh --write-docs [build/sim] [JOBS]   also rewrite the table of docs/benchmarks.md
set -euo pipefail
cd "$(dirname "$0")/../.."
docs=
if [[ ${1:-} == --write-docs ]]; then docs=1; shift; fi
SIM=${1:-build/sim}
JOBS=${2:-2}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_sweep.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
load0=$(cut -d' ' -f1 /proc/loadavg)
fs="$(findmnt -n -o FSTYPE --target "$tmp" 2>/dev/null || stat -f -c %T "$tmp") (\`$(dirname "$tmp")\`)"
printf 'run\toutput on\twall (s)\tpoints/s\tinside points (s)\tpeak RSS (MiB)\n' > "$tmp/rows.tsv"
cat > "$tmp/spec.yml" <<SPEC
base:
  microbenchmark: {npus: 8, collectives: [allreduce]}
  network: $PWD/configs/ring8.yml
axes:
  size: [1KiB, 4KiB, 16KiB, 64KiB, 256KiB, 1MiB, 4MiB, 16MiB, 64MiB, 256MiB]
  network.bandwidth: [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
  collective: [allreduce=ring, allreduce=direct, allreduce=halvingDoubling, allreduce=doubleBinaryTree, allreduce=binaryTree]
  backend: [analytical, flow]
SPEC

run() {  # label, extra args
  local label=$1; shift
  /usr/bin/time -v "$SIM" sweep "$tmp/spec.yml" -o "$tmp/out" -j "$JOBS" -q "$@" 2> "$tmp/time.txt" ||
    { cat "$tmp/time.txt" >&2; exit 3; }
  local wall rss
  wall=$(grep "Elapsed (wall clock)" "$tmp/time.txt" | awk '{print $NF}')
  rss=$(grep "Maximum resident" "$tmp/time.txt" | awk '{print $NF}')
  python3 - "$label" "$wall" "$rss" "$tmp/out/results.json" "$fs" "$tmp/rows.tsv" <<'PY'
import json, sys
label, wall, rss, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
parts = [float(p) for p in wall.split(":")]
secs = parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) > 2 else 0)
j = json.load(open(path))
simulated = j["summary"]["simulated"]
# Time inside the points (load + simulate), summed over threads.
inside = sum(p["wall_seconds"] for p in j["points"] if not p["from_cache"])
print(f"{label:>5}: 1000 points ({simulated} simulated) in {secs:.2f} s wall, {1000 / secs:,.0f} points/s, "
      f"{inside:.2f} s inside points (all threads), peak memory {rss / 1024:.0f} MiB")
with open(sys.argv[6], "a") as rows:
    rows.write(f"{label}\t{sys.argv[5]}\t{secs:.2f}\t{1000 / secs:,.0f}\t{inside:.2f}\t{rss / 1024:.0f}\n")
PY
}

echo "sim sweep, 1000 points of 8-rank all-reduce microbenchmarks, -j $JOBS on $(nproc) cores"
run cold
run warm
rm -rf "$tmp/out"
run "cold again"
if [[ -n $docs ]]; then
  python3 scripts/bench/bench_doc.py block docs/benchmarks.md sweep-overhead scripts/bench/bench_sweep.sh "$tmp/rows.tsv" "$load0"
fi
