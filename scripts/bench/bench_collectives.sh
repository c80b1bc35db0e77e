#!/usr/bin/env bash
# The collective library at scale: one all-reduce per rank (1 MiB or 1 GiB),
# each algorithm on its network, aggregated (the default) and message by message
# (--no-aggregation), which must give the same simulated time to the
# picosecond (exit 1 otherwise).
#
#   SIM=build/sim scripts/bench/bench_collectives.sh
#   SIM=build/sim scripts/bench/bench_collectives.sh --write-docs   also rewrite the table of docs/benchmarks.md
#
# Wall time and peak RSS of the whole process (/usr/bin/time). ASTRA-sim's
# figures for the same cases were measured outside this repository (its
# upstream build on the same kind of machine) and are read from
# bench/astrasim_collectives.tsv.
set -euo pipefail
source "$(dirname "$0")/bench_start.sh" bench_collectives "$@"
printf 'case\tranks\tsimulated time\twall (s)\tpeak RSS (MiB)\tevents\t--no-aggregation: wall (s), RSS (MiB)\tASTRA-sim\n' >"$TMP/rows.tsv"
printf '%-48s %6s %14s %8s %8s %10s %18s\n' case ranks "simulated" "wall" "RSS" events "no-aggregation"

# Runs sim, leaves "simulated_ns wall rss_mib events" in $TMP/run.txt.
measure() {
  /usr/bin/time -f "%e %M" -o "$TMP/time.txt" "$SIM" "$@" >"$TMP/out.txt" 2>"$TMP/err.txt" || {
    echo "bench_collectives: sim $* failed:" >&2; cat "$TMP/err.txt" >&2; exit 3; }
  local ns events wall rss
  ns=$(sed -n 's/^simulated time: .*(\([0-9.]*\) ns)$/\1/p' "$TMP/out.txt")
  events=$(sed -n 's/^events: \([0-9]*\),.*/\1/p' "$TMP/out.txt")
  read -r wall rss <"$TMP/time.txt"
  echo "$ns $wall $((rss / 1024)) $events" >"$TMP/run.txt"
}

# case_row LABEL NPUS ALGO NETWORK [SIZE [SIM OPTIONS...]]: NETWORK relative to the repository or absolute.
# The workload is the rank files `sim workload gen collectives` writes, or with
# IN_MEMORY=1 the same made in memory (--workload 'gen:collectives?...': no file read).
case_row() {
  local label=$1 npus=$2 algo=$3 network=$4 size=${5:-1GiB}
  shift 4; shift || true
  [[ $network == /* ]] || network=$ROOT/$network
  local wl=$TMP/ar$npus-$size/w
  if [[ -n ${IN_MEMORY:-} ]]; then
    wl="gen:collectives?npus=$npus&coll=allreduce&size=$size"
  elif [[ ! -d $TMP/ar$npus-$size ]]; then
    "$SIM" workload gen collectives --npus "$npus" --coll allreduce --size "$size" -o "$wl" >/dev/null
  fi
  measure --workload "$wl" --network "$network" --collective "allreduce=$algo" "$@"
  read -r ns wall rss events <"$TMP/run.txt"
  measure --workload "$wl" --network "$network" --collective "allreduce=$algo" "$@" --no-aggregation
  read -r ns2 wall2 rss2 events2 <"$TMP/run.txt"
  if [[ $ns != "$ns2" ]]; then
    echo "bench_collectives: $label: $ns ns aggregated but $ns2 ns with --no-aggregation" >&2
    exit 1
  fi
  local ms astra
  ms=$(awk -v n="$ns" 'BEGIN { printf "%.5f ms", n / 1e6 }')
  astra=$(awk -F'\t' -v c="$label" '$1 == c { print $2 }' "$ROOT/bench/astrasim_collectives.tsv")
  printf '%-48s %6s %14s %8s %8s %10s %18s\n' "$label" "$npus" "$ms" "$wall" "$rss" "$events" "$wall2 s, $rss2 MiB"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$npus" "$ms" "$wall" "$rss" "$events" "$wall2, $rss2" \
    "${astra:--}" >>"$TMP/rows.tsv"
}

printf 'topology: [Ring]\nnpus_count: [1024]\nbandwidth: [50]\nlatency: [500]\n' >"$TMP/ring1024.yml"
printf 'collective:\n  chunks: 4\n' >"$TMP/chunks4.yml"
case_row "1 MiB ring all-reduce, switch" 1024 ring bench/switch1024.yml 1MiB
case_row "1 MiB ring all-reduce, ring of 1,024" 1024 ring "$TMP/ring1024.yml" 1MiB
case_row "1 MiB ring all-reduce in 4 chunks (8.4 M messages), switch" 1024 ring bench/switch1024.yml 1MiB \
  --system "$TMP/chunks4.yml"
case_row "1 GiB ring all-reduce, switch" 1024 ring bench/switch1024.yml
case_row "1 GiB halvingDoubling all-reduce, switch" 1024 halvingDoubling bench/switch1024.yml
case_row "1 GiB direct all-reduce, switch" 1024 direct bench/switch1024.yml
IN_MEMORY=1 case_row "1 GiB halvingDoubling all-reduce, switch, made in memory (\`gen:collectives\`)" 1024 \
  halvingDoubling bench/switch1024.yml
IN_MEMORY=1 case_row "1 GiB direct all-reduce, switch, made in memory (\`gen:collectives\`)" 1024 direct \
  bench/switch1024.yml
case_row "1 GiB hierarchical ring all-reduce (\`allreduce=ring,ring,ring\`), torus 16x16x16" 4096 ring,ring,ring \
  bench/torus16x16x16.yml
if [[ -n $docs ]]; then
  python3 "$ROOT/scripts/bench/bench_doc.py" block "$ROOT/docs/benchmarks.md" collectives scripts/bench/bench_collectives.sh \
    "$TMP/rows.tsv" "$load0"
fi
