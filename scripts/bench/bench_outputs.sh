#!/usr/bin/env bash
# What the outputs cost: time and peak memory of one large run with and
# without --report, --csv and --timeline, and the timeline's bytes per node.
#
#   SIM=build/sim scripts/bench/bench_outputs.sh            64 ranks x 3,000 layers (384,000 nodes)
#   RANKS=8 LAYERS=500 REPEAT=3 scripts/bench/bench_outputs.sh
#   SIM=build/sim scripts/bench/bench_outputs.sh --write-docs   the default size, REPEAT 3 unless set,
#                                                          then rewrite the table of docs/benchmarks.md
#
# Each layer is a 100 us COMP node then a 1 MiB all-reduce (sim workload gen
# collectives), on configs/switch64.yml, with --no-aggregation: every rank's
# every node is simulated (by default the 64 identical ranks fold into one and
# the run costs a tenth of a second, so the outputs would be all there is to
# measure). Wall time, CPU time (user + system)
# and peak RSS come from /usr/bin/time (Debian package `time`); with
# REPEAT > 1 the fastest run is shown (the machine is shared; the minimum is
# the least disturbed). Costs are relative to the run without outputs, on
# CPU time, which other processes on a busy machine disturb less. The
# outputs go to a temporary folder, removed at the end.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SIM=${SIM:-$ROOT/build/sim}
docs=
case ${1:-} in
  --write-docs)
    docs=1
    [[ -z ${RANKS:-}${LAYERS:-} ]] || { echo "bench_outputs: --write-docs measures the documented size (unset RANKS, LAYERS)" >&2; exit 2; }
    REPEAT=${REPEAT:-3} ;;
  "") ;;
  *) echo "bench_outputs: unknown argument '$1' (--write-docs)" >&2; exit 2 ;;
esac
RANKS=${RANKS:-64}
LAYERS=${LAYERS:-3000}
REPEAT=${REPEAT:-1}
[[ -x $SIM ]] || { echo "bench_outputs: no sim binary at $SIM (set SIM=...)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench_outputs: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
load0=$(cut -d' ' -f1 /proc/loadavg)
printf 'outputs\twall (s)\tCPU (s)\tCPU vs none\tpeak RSS (MiB)\tRSS vs none\tfile\tbytes per node\n' >"$TMP/rows.tsv"

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
# measure <label> <the table's label> <file whose size to show, or -> [sim args...]
measure() {
  local label=$1 shown=$2 file=$3
  shift 3
  local best_t="" best_w="" best_m=""
  for ((i = 0; i < REPEAT; i++)); do
    /usr/bin/time -f "%e %U %S %M" -o "$TMP/time.txt" "$SIM" --workload "$TMP/wl/w" --network "$NET" -q --no-aggregation "$@" 2>"$TMP/err.txt" ||
      { echo "bench_outputs: $label failed:" >&2; cat "$TMP/err.txt" >&2; [[ -z $docs ]] || exit 3; return 0; }
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
  local dt dm
  dt=$(awk -v a="$best_t" -v b="$BASE_T" 'BEGIN { if (b > 0) printf "%+.0f", 100 * (a - b) / b; else printf "-" }')
  dm=$(awk -v a="$best_m" -v b="$BASE_M" 'BEGIN { if (b > 0) printf "%+.0f", 100 * (a - b) / b; else printf "-" }')
  printf '%-44s %9s %8s %8s%% %8s %8s%% %12s %10s\n' "$label" "$best_w" "$best_t" "$dt" "$((best_m / 1024))" "$dm" "$size" "$per"
  if [[ $label == none ]]; then dt=—; dm=—; else dt+=%; dm+=%; fi
  local mb=—
  [[ $size == - ]] || mb=$(awk -v s="$size" 'BEGIN { printf "%.1f MB", s / 1e6 }')
  [[ $per != - ]] || per=—
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$shown" "$best_w" "$best_t" "$dt" "$((best_m / 1024))" "$dm" "$mb" "$per" >>"$TMP/rows.tsv"
  rm -f "$TMP"/out.*
}

measure "none" none -
measure "--report" '`--report`' "$TMP/out.json" --report "$TMP/out.json"
measure "--csv" '`--csv`' "$TMP/out.csv" --csv "$TMP/out.csv"
measure "--report --csv" '`--report --csv`' - --report "$TMP/out.json" --csv "$TMP/out.csv"
measure "--timeline t.pftrace (Perfetto)" '`--timeline t.pftrace` (Perfetto protobuf)' "$TMP/out.pftrace" --timeline "$TMP/out.pftrace"
measure "--timeline t.json (Chrome JSON)" '`--timeline t.json` (Chrome JSON)' "$TMP/out.json" --timeline "$TMP/out.json"
measure "--timeline t.pftrace --timeline-ranks 0-7" '`--timeline t.pftrace --timeline-ranks 0-7`' "$TMP/out.pftrace" \
  --timeline "$TMP/out.pftrace" --timeline-ranks 0-7
if [[ -n $docs ]]; then
  python3 "$ROOT/scripts/bench/bench_doc.py" block "$ROOT/docs/benchmarks.md" outputs scripts/bench/bench_outputs.sh "$TMP/rows.tsv" "$load0"
fi
