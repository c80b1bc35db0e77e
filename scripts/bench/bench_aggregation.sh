#!/bin/sh
# Exact step aggregation (docs/benchmarks.md "Exact step
# aggregation"): its cases (a) to (c) with aggregation (the default) and with
# --no-aggregation, one run each. Wall time and peak RSS from /usr/bin/time
# (Debian package `time`); simulated time, events and aggregated collectives
# from sim's summary. Builds nothing: SIM (default build/sim).
#
#   SIM=build/sim scripts/bench/bench_aggregation.sh            # every case
#   SIM=build/sim scripts/bench/bench_aggregation.sh a c        # some: a b c (d: the flat-ring torus, slow without)
#   NO_AGG=0 scripts/bench/bench_aggregation.sh                 # skip the --no-aggregation runs
#   SIM=build/sim scripts/bench/bench_aggregation.sh --write-docs   every case, and rewrite the table of docs/benchmarks.md
#
# Each case's simulated time must be the same with and without aggregation
# (exit 1 otherwise). Cases that read ASTRA-sim's files are skipped when
# ../shared/testdata (REF) is absent.
#
# (a) 1 GiB ring all-reduce, 1,024 NPUs behind one switch (bench/switch1024.yml), 4 chunks (collective.chunks)
# (a-astra) the same through ASTRA-sim's files: Switch_1024.yml, ring_1d.json (4 splits, active 1, endpoint delay,
#     local-mem-bw reductions) -- skipped without ../shared/testdata/astrasim-reference
# (b) 1 GiB hierarchical ring all-reduce on ASTRA-sim's 16x16x16 torus files (ring_3d.json)
# (b-native) 1 GiB all-reduce, no algorithm named, on bench/torus16x16x16.yml: the hierarchical default
# (c) 64 ranks x 5,000 layers of (50 us compute + 1 MiB all-reduce), 4 chunks, configs/switch64.yml
# (d-direct) 1 GiB direct all-reduce, 1,024 NPUs behind one switch (bench/switch1024.yml): every rank sends to every other
# (d-hd) the same with halvingDoubling
# (a-flow), (b-flow) (a) and (b-native) on the flow backend
set -eu
SIM=${SIM:-build/sim}
NO_AGG=${NO_AGG:-1}
REF=${REF:-../shared/testdata/astrasim-reference}
DOCS=
if [ "${1:-}" = --write-docs ]; then
  DOCS=1; shift
  [ $# -eq 0 ] && [ "$NO_AGG" = 1 ] || { echo "bench_aggregation: --write-docs runs every case, both ways" >&2; exit 2; }
fi
CASES=${*:-a a-astra a-flow b b-native b-flow c d-direct d-hd}
LOAD0=$(cut -d' ' -f1 /proc/loadavg)
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench_aggregation.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

printf 'collective:\n  chunks: 4\n' > "$TMP/chunks4.yml"

printf 'case\tmode\tsimulated\twall (s)\tCPU (s)\tevents\tmessages\taggregated collectives (representative events)\tevent loop\tpeak RSS (MiB)\n' > "$TMP/rows.tsv"

# run NAME ARGS...: one row (with aggregation, then without when NO_AGG=1)
run() {
  name=$1; shift
  with=""
  for mode in aggregation no-aggregation; do
    flag=""
    if [ "$mode" = no-aggregation ]; then
      [ "$NO_AGG" = 1 ] || continue
      flag=--no-aggregation
    fi
    /usr/bin/time -f "%e %M %U %S" -o "$TMP/time" "$SIM" "$@" $flag > "$TMP/out" 2>&1 || { cat "$TMP/out" >&2; exit 1; }
    read -r wall rss user sys < "$TMP/time"
    simt=$(sed -n "s/^simulated time: \(.*\) (.*/\1/p" "$TMP/out" | head -1)
    events=$(sed -n 's/^events: \([0-9]*\).*/\1/p' "$TMP/out" | tail -1)
    messages=$(sed -n 's/^events: [0-9]*, messages: \([0-9]*\).*/\1/p' "$TMP/out" | tail -1)
    agg=$(sed -n 's/.*aggregated collectives: \([0-9]*\) (\([0-9]*\) representative.*/\1 (\2 events)/p' "$TMP/out" | tail -1)
    rate=$(sed -n 's/.*event loop [^:]*: \([0-9.]*\) M events\/s.*/\1/p' "$TMP/out" | tail -1)
    cpu=$(echo "$user $sys" | awk '{ printf "%.2f", $1 + $2 }')
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s M/s | %s MiB |\n' "$name" "$mode" "$simt" "$wall" "$cpu" \
      "$events" "$messages" "${agg:-0}" "${rate:-?}" "$((rss / 1024))"
    shown=$name
    [ "$mode" = aggregation ] || shown=""
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$shown" "$mode" "$simt" "$wall" "$cpu" "$events" "$messages" \
      "${agg:-0}" "${rate:+$rate M/s}" "$((rss / 1024))" >> "$TMP/rows.tsv"
    if [ "$mode" = aggregation ]; then
      with=$simt
    elif [ "$simt" != "$with" ]; then
      echo "bench_aggregation: $name: $with with aggregation, $simt without" >&2
      exit 1
    fi
  done
}

echo "| case | mode | simulated | wall (s) | CPU (s) | events | messages | aggregated collectives (representative events) | event loop | peak RSS |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for c in $CASES; do
  case $c in
    a)
      "$SIM" workload gen collectives --npus 1024 --coll allreduce --size 1GiB -o "$TMP/a/w" > /dev/null
      run "(a) ring, switch 1,024" --workload "$TMP/a/w" --network bench/switch1024.yml --system "$TMP/chunks4.yml" ;;
    a-flow)
      [ -d "$TMP/a" ] || "$SIM" workload gen collectives --npus 1024 --coll allreduce --size 1GiB -o "$TMP/a/w" > /dev/null
      run "(a) ring, switch 1,024, flow backend" --workload "$TMP/a/w" --network bench/switch1024.yml \
        --system "$TMP/chunks4.yml" --backend flow ;;
    b-flow)
      [ -d "$TMP/bn" ] || "$SIM" workload gen collectives --npus 4096 --coll allreduce --size 1GiB -o "$TMP/bn/w" > /dev/null
      run "(b) default (hierarchical), torus 16x16x16, flow backend" --workload "$TMP/bn/w" \
        --network bench/torus16x16x16.yml --system "$TMP/chunks4.yml" --backend flow ;;
    a-astra)
      [ -d "$REF" ] || { echo "(a-astra) skipped: $REF absent" >&2; continue; }
      "$SIM" workload gen collectives --npus 1024 --coll allreduce --size 1GiB -o "$TMP/aa/w" > /dev/null
      run "(a) ring, Switch_1024, ASTRA-sim's files" --workload-configuration="$TMP/aa/w" \
        --system-configuration="$REF/system/ring_1d.json" --network-configuration="$REF/network/Switch_1024.yml" \
        --remote-memory-configuration="$REF/remote_memory/no_memory_expansion.json" ;;
    b)
      [ -d "$REF" ] || { echo "(b) skipped: $REF absent" >&2; continue; }
      "$SIM" workload gen collectives --npus 4096 --coll allreduce --size 1GiB -o "$TMP/b/w" > /dev/null
      run "(b) hierarchical, Ring_Ring_Ring_16x16x16, ASTRA-sim's files" --workload-configuration="$TMP/b/w" \
        --system-configuration="$REF/system/ring_3d.json" \
        --network-configuration="$REF/network/Ring_Ring_Ring_16x16x16.yml" \
        --remote-memory-configuration="$REF/remote_memory/no_memory_expansion.json" ;;
    b-native)
      "$SIM" workload gen collectives --npus 4096 --coll allreduce --size 1GiB -o "$TMP/bn/w" > /dev/null
      run "(b) default (hierarchical), torus 16x16x16" --workload "$TMP/bn/w" --network bench/torus16x16x16.yml \
        --system "$TMP/chunks4.yml" ;;
    c)
      coll=$(awk 'BEGIN { for (i = 0; i < 5000; i++) printf "%sallreduce", (i ? "," : "") }')
      "$SIM" workload gen collectives --npus 64 --coll "$coll" --size 1MiB --compute 50us -o "$TMP/c/w" > /dev/null
      run "(c) 64 ranks x 5,000 layers" --workload "$TMP/c/w" --network configs/switch64.yml --system "$TMP/chunks4.yml" ;;
    d-direct|d-hd)
      [ -d "$TMP/d" ] || "$SIM" workload gen collectives --npus 1024 --coll allreduce --size 1GiB -o "$TMP/d/w" > /dev/null
      algo=direct; [ "$c" = d-hd ] && algo=halvingDoubling
      run "($c) $algo all-reduce, switch 1,024" --workload "$TMP/d/w" --network bench/switch1024.yml \
        --collective "allreduce=$algo" ;;
    *) echo "unknown case $c (a a-astra a-flow b b-native b-flow c d-direct d-hd)" >&2; exit 2 ;;
  esac
done
if [ -n "$DOCS" ]; then
  python3 scripts/bench/bench_doc.py block docs/benchmarks.md aggregation scripts/bench/bench_aggregation.sh "$TMP/rows.tsv" "$LOAD0"
fi
