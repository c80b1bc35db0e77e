#!/usr/bin/env bash
# Memory per workload node on huge traces (a benchmark, not a test; docs/benchmarks.md).
#
#   SIM=build/sim scripts/bench/bench_memory.sh [one wide]
#   SIM=build/sim scripts/bench/bench_memory.sh --write-docs   both cases, then rewrite the
#                                                         table of docs/benchmarks.md
#
# one:  1 rank x 10,000,000 chained COMP nodes
# wide: 1,024 ranks x 10,000 chained COMP nodes
# Each workload is written with `sim workload gen chain` into a temporary folder
# (removed at the end; ~0.4 GB each), then run on the analytical backend under
# /usr/bin/time -v. Printed: peak RSS, the traces' size on disk, and bytes per
# node in all and beyond the traces' protobuf size ((peak RSS - trace bytes) /
# nodes; the target is <= 100). See docs/benchmarks.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SIM=${SIM:-$ROOT/build/sim}
[[ -x $SIM ]] || { echo "bench_memory: no sim binary at $SIM (set SIM=...)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench_memory: needs /usr/bin/time (Debian package 'time')" >&2; exit 2; }
docs=
if [[ ${1:-} == --write-docs ]]; then
  docs=1
  shift
  (($# == 0)) || { echo "bench_memory: --write-docs measures every case (no case names)" >&2; exit 2; }
fi
CASES=${*:-one wide}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
load0=$(cut -d' ' -f1 /proc/loadavg)
printf 'case\tnodes\ttrace (MB)\twall (s)\tloading (s)\tpeak RSS (MiB)\tB/node\tB/node > pb\n' >"$TMP/rows.tsv"

row() { printf '%-30s %6s %11s %12s %9s %10s %11s %9s %10s\n' "$@"; }
row case ranks nodes "trace (MB)" "wall (s)" "loading(s)" "RSS (MiB)" "B/node" "B/node>pb"

# measure <label> <ranks> <nodes per rank> <the table's label>
measure() {
  local label=$1 ranks=$2 per=$3
  local nodes=$((ranks * per))
  "$SIM" workload gen chain --npus "$ranks" --nodes "$per" --duration 1us -o "$TMP/w/w" >/dev/null
  local bytes
  bytes=$(du -cb "$TMP"/w/w.*.et | tail -1 | cut -f1)
  local net=$ROOT/bench/switch1024.yml
  /usr/bin/time -v -o "$TMP/time.txt" "$SIM" --workload "$TMP/w" --network "$net" >"$TMP/out.txt" 2>"$TMP/err.txt" || {
    echo "bench_memory: $label failed:" >&2
    cat "$TMP/err.txt" >&2
    rm -rf "$TMP/w"
    [[ -z $docs ]] || exit 3
    return 0
  }
  local rss_kb wall loading
  rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\)/\1/p' "$TMP/time.txt")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): \(.*\)/\1/p' "$TMP/time.txt")
  loading=$(sed -n 's/.*(loading \([0-9.]*\) s.*/\1/p' "$TMP/out.txt")
  awk -v l="$label" -v d="$4" -v r="$ranks" -v n="$nodes" -v b="$bytes" -v w="$wall" -v ld="${loading:--}" -v k="$rss_kb" \
    -v tsv="$TMP/rows.tsv" 'BEGIN {
       split(w, t, ":"); s = (length(t) == 3) ? t[1] * 3600 + t[2] * 60 + t[3] : t[1] * 60 + t[2];
       rss = k * 1024;
       printf "%-30s %6d %11d %12.1f %9.2f %10s %11.1f %9.1f %10.1f\n", l, r, n, b / 1e6, s, ld, rss / 1048576, rss / n, (rss - b) / n
       printf "%s\t%d\t%.1f\t%.2f\t%s\t%.1f\t%.1f\t%.1f\n", d, n, b / 1e6, s, ld, rss / 1048576, rss / n, (rss - b) / n >>tsv
     }'
  rm -rf "$TMP/w"
}

for c in $CASES; do
  case $c in
    one) measure "(m1) 1 rank x 10 M nodes" 1 10000000 "(m1) 1 rank x 10 M" ;;
    wide) measure "(m2) 1,024 ranks x 10,000 nodes" 1024 10000 "(m2) 1,024 ranks x 10,000" ;;
    *) echo "bench_memory: unknown case '$c' (one wide)" >&2; exit 2 ;;
  esac
done
if [[ -n $docs ]]; then
  python3 "$ROOT/scripts/bench/bench_doc.py" block "$ROOT/docs/benchmarks.md" memory-per-node scripts/bench/bench_memory.sh "$TMP/rows.tsv" "$load0"
fi
