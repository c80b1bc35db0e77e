#!/usr/bin/env bash
# Load-and-run time on the shapes that used to be quadratic, each at a quarter,
# half and full size: a time proportional to size doubles with it.
#
#   SIM=build/sim scripts/bench/bench_linear.sh
#   SIM=build/sim scripts/bench/bench_linear.sh --write-docs   also rewrite the table of docs/benchmarks.md
#
#   fanin   one node with N data deps (N = 50,000 .. 200,000), our JSON form
#   chain   N chained COMP nodes on one rank (N = 75,000 .. 300,000)
#   ranks   R ranks x 10,000 chained nodes (R = 256 .. 1,024), --no-aggregation: every
#           rank runs its chain (identical traces are still decoded once per thread)
# Wall time, CPU time (user + system) and peak RSS from /usr/bin/time.
set -euo pipefail
source "$(dirname "$0")/bench_start.sh" bench_linear "$@"
printf 'case\tsize\tedges\twall (s)\tCPU (s)\tRSS (MiB)\n' >"$TMP/rows.tsv"
# The table's first cell of each shape (the rows below it leave it empty).
declare -A title=([fanin]="one node with N data deps (our JSON form)" [chain]="N chained COMP nodes, one rank (binary ET)"
  [ranks]='R ranks x 10,000 chained nodes, `--no-aggregation`')

printf '%-8s %10s %12s %9s %8s %10s\n' case size "edges" "wall (s)" "CPU (s)" "RSS (MiB)"
run() {
  local label=$1 size=$2 edges=$3
  shift 3
  /usr/bin/time -f "%e %U %S %M" -o "$TMP/time.txt" "$SIM" -q "$@" >/dev/null 2>"$TMP/err.txt" || {
    echo "bench_linear: $label $size failed:" >&2; cat "$TMP/err.txt" >&2; [[ -z $docs ]] || exit 3; return 0; }
  read -r wall user sys rss <"$TMP/time.txt"
  local cpu
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  printf '%-8s %10s %12s %9s %8s %10s\n' "$label" "$size" "$edges" "$wall" "$cpu" "$((rss / 1024))"
  local shown=$size
  [[ $size != *x* ]] || shown=$(sed 's/x/ x /;:a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$size")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${title[$label]}" "$shown" "$edges" "$wall" "$cpu" "$((rss / 1024))" >>"$TMP/rows.tsv"
  title[$label]=""
}

# One COMP node depending on all N others (our JSON form: no protobuf writer in python3).
fanin() {
  python3 - "$1" "$2" <<'PY'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
nodes = [{"id": str(i), "name": "leaf", "type": "COMP_NODE", "durationMicros": "1"} for i in range(1, n + 1)]
nodes.append({"id": str(n + 1), "name": "sink", "type": "COMP_NODE", "durationMicros": "1",
              "dataDeps": [str(i) for i in range(1, n + 1)]})
json.dump({"metadata": {"version": "0.0.4"}, "nodes": nodes}, open(path, "w"))
PY
}

for n in 50000 100000 200000; do
  fanin "$n" "$TMP/fanin.0.json"
  run fanin "$n" "$n" --workload "$TMP/fanin" --network "$ROOT/configs/ring8.yml"
done
for n in 75000 150000 300000; do
  "$SIM" workload gen chain --npus 1 --nodes "$n" -o "$TMP/chain$n/c" >/dev/null
  run chain "$n" "$((n - 1))" --workload "$TMP/chain$n/c" --network "$ROOT/configs/ring8.yml"
done
for r in 256 512 1024; do
  "$SIM" workload gen chain --npus "$r" --nodes 10000 -o "$TMP/ranks$r/c" >/dev/null
  run ranks "${r}x10000" "$((r * 9999))" --workload "$TMP/ranks$r/c" --network "$ROOT/bench/switch1024.yml" --no-aggregation
  rm -rf "$TMP/ranks$r"
done
if [[ -n $docs ]]; then
  python3 "$ROOT/scripts/bench/bench_doc.py" block "$ROOT/docs/benchmarks.md" linear scripts/bench/bench_linear.sh "$TMP/rows.tsv" "$load0"
fi
