#!/usr/bin/env bash
# What the outputs cost: time and peak memory of one large run with and
# without --report, --csv and --timeline, and the timeline's bytes per node.
#
#   SIM=build/sim scripts/bench_outputs.sh            64 ranks x 3,000 layers (384,000 nodes)
#   RANKS=8 LAYERS=500 REPEAT=3 scripts/bench_outputs.sh
#
# Each layer is a 100 us COMP node then a 1 MiB all-reduce (sim workload gen
# collectives), on configs/switch64.yml. Wall time, CPU time (user + system)
# and peak RSS come from /usr/bin/time (Debian package `time`); with
# REPEAT > 1 the fastest run is shown (the machine is shared; the minimum is
# the least disturbed). Costs are relative to the run without outputs, on
# CPU time, which other processes on a busy machine disturb less. The
# outputs go to a temporary folder, removed at the end. See docs/benchmarks.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIM=${SIM:-$ROOT/build/sim}
RANKS=${RANKS:-64}
LAYERS=${LAYERS:-3000}
REPEAT=${REPEAT:-1}
[[ -x $SIM ]] || { echo "bench_outputs: no sim binary at $SIM (set SIM=...)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench_outputs: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

colls=$(printf 'allreduce,%.0s' $(seq "$LAYERS"))
"$SIM" workload gen collectives --npus "$RANKS" --coll "${colls%,}" --size 1MiB --compute 100us -o "$TMP/wl/w" >/dev/null
NODES=$((RANKS * LAYERS * 2))
NET=$ROOT/bench/switch1024.yml
((RANKS <= 64)) && NET=$ROOT/configs/switch64.yml
((RANKS <= 8)) && NET=$ROOT/configs/switch8.yml
echo "workload: $RANKS ranks x $LAYERS layers (COMP + ALL_REDUCE) = $NODES nodes; network $(basename "$NET")"

printf '%-44s %9s %8s %9s %8s %9s %12s %10s\n' outputs "wall (s)" "CPU (s)" "vs none" "RSS MiB" "vs none" "file bytes" "B/node"
BASE_T=""
BASE_M=""
# measure <label> <file whose size to show, or -> [sim args...]
measure() {
  local label=$1 file=$2
  shift 2
  local best_t="" best_w="" best_m=""
  for ((i = 0; i < REPEAT; i++)); do
    /usr/bin/time -f "%e %U %S %M" -o "$TMP/time.txt" "$SIM" --workload "$TMP/wl/w" --network "$NET" -q "$@" 2>"$TMP/err.txt" ||
      { echo "bench_outputs: $label failed:" >&2; cat "$TMP/err.txt" >&2; return 0; }
    read -r w u sy m <"$TMP/time.txt"
    t=$(awk -v u="$u" -v s="$sy" 'BEGIN { printf "%.2f", u + s }')
    if [[ -z $best_t ]] || awk -v a="$t" -v b="$best_t" 'BEGIN { exit !(a < b) }'; then best_t=$t; fi
    if [[ -z $best_w ]] || awk -v a="$w" -v b="$best_w" 'BEGIN { exit !(a < b) }'; then best_w=$w; fi
    if [[ -z $best_m ]] || ((m < best_m)); then best_m=$m; fi
  done
  [[ -n $BASE_T ]] || { BASE_T=$best_t; BASE_M=$best_m; }
  local size="-" per="-"
  if [[ $file != - && -f $file ]]; then
    size=$(stat -c %s "$file")
    per=$(awk -v s="$size" -v n="$NODES" 'BEGIN { printf "%.1f", s / n }')
  fi
  printf '%-44s %9s %8s %8s%% %8s %8s%% %12s %10s\n' "$label" "$best_w" "$best_t" \
    "$(awk -v a="$best_t" -v b="$BASE_T" 'BEGIN { if (b > 0) printf "%+.0f", 100 * (a - b) / b; else printf "-" }')" "$((best_m / 1024))" \
    "$(awk -v a="$best_m" -v b="$BASE_M" 'BEGIN { if (b > 0) printf "%+.0f", 100 * (a - b) / b; else printf "-" }')" "$size" "$per"
  rm -f "$TMP"/out.*
}

measure "none" -
measure "--report" "$TMP/out.json" --report "$TMP/out.json"
measure "--csv" "$TMP/out.csv" --csv "$TMP/out.csv"
measure "--report --csv" - --report "$TMP/out.json" --csv "$TMP/out.csv"
measure "--timeline t.pftrace (Perfetto)" "$TMP/out.pftrace" --timeline "$TMP/out.pftrace"
measure "--timeline t.json (Chrome JSON)" "$TMP/out.json" --timeline "$TMP/out.json"
measure "--timeline t.pftrace --timeline-ranks 0-7" "$TMP/out.pftrace" --timeline "$TMP/out.pftrace" --timeline-ranks 0-7
