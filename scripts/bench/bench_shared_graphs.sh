#!/bin/sh
# Ranks with identical traces share one graph (docs/benchmarks.md
# "Loading thousands of small traces"): workloads whose every rank has the same ET,
# run with --no-aggregation (so identical-rank folding does not hide the
# graphs) and with the defaults. Peak RSS and wall time from /usr/bin/time
# (Debian package `time`), loading time from sim's summary, and the JSON
# report's checksum (BASE's must equal SIM's). Builds nothing.
#
#   SIM=build/sim scripts/bench/bench_shared_graphs.sh                  # every case
#   SIM=build/sim BASE=old/sim scripts/bench/bench_shared_graphs.sh c4k  # and the same with another binary
#   SIM=build/sim scripts/bench/bench_shared_graphs.sh --write-docs     # every case, then rewrite the table
#                                                                       # of docs/benchmarks.md
#
# (c4k)  `sim workload gen chain --npus 4096 --nodes 1000` (1,000 dependent 10 us COMP nodes per rank), 4,096 NPUs on a switch
# (c16k) the same on 16,384 ranks, 16,384 NPUs on a switch
# (l4k)  4,096 ranks x 200 layers of (50 us compute + 1 MiB all-reduce), bench/torus16x16x16.yml, defaults
#        (aggregation on: replicas folded, so the graphs are most of the memory)
set -eu
SIM=${SIM:-build/sim}
BASE=${BASE:-}
docs=
if [ "${1:-}" = --write-docs ]; then
  docs=1
  shift
  [ $# -eq 0 ] && [ -z "$BASE" ] || { echo "bench_shared_graphs: --write-docs measures every case with SIM alone" >&2; exit 2; }
fi
CASES=${*:-c4k c16k l4k}
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench_shared_graphs.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
load0=$(cut -d' ' -f1 /proc/loadavg)
printf 'case\tsimulated\tpeak RSS\tCPU\tloading\twall\n' > "$TMP/rows.tsv"
printf 'shape: Switch\nnpus: 16384\nbandwidth: 50GB/s\nlatency: 500ns\n' > "$TMP/switch16384.yml"

# run NAME SHOWN ARGS...: one row per binary (SHOWN: the case as docs/benchmarks.md names it)
run() {
  name=$1; shown=$2; shift 2
  for bin in "$SIM" $BASE; do
    /usr/bin/time -f "%e %U %S %M" -o "$TMP/time" "$bin" "$@" --report "$TMP/report.json" > "$TMP/out" 2>&1 ||
      { cat "$TMP/out" >&2; exit 3; }
    read -r wall user sys rss < "$TMP/time"
    simt=$(sed -n "s/^simulated time: \(.*\) (.*/\1/p" "$TMP/out" | head -1)
    load=$(sed -n 's/.*(loading \([0-9.]* s\).*/\1/p' "$TMP/out" | tail -1)
    sum=$(md5sum < "$TMP/report.json" | cut -c1-12)
    printf '| %s | %s | %s | %s | %s | %s | %s MiB | %s |\n' "$name" "$bin" "$simt" "$wall" \
      "$(awk "BEGIN { printf \"%.2f\", $user + $sys }")" "$load" "$((rss / 1024))" "$sum"
    printf '%s\t%s\t%s MiB\t%s s\t%s\t%s s\n' "$shown" "$simt" "$((rss / 1024))" \
      "$(awk "BEGIN { printf \"%.2f\", $user + $sys }")" "$load" "$wall" >> "$TMP/rows.tsv"
  done
}

echo "| case | binary | simulated | wall (s) | CPU (s) | loading | peak RSS | report md5 |"
echo "|---|---|---|---|---|---|---|---|"
for c in $CASES; do
  case $c in
    c4k)
      "$SIM" workload gen chain --npus 4096 --nodes 1000 -o "$TMP/c4k/w" > /dev/null
      run "(c4k) chain, 4,096 ranks" \
        '(c4k) `workload gen chain --npus 4096 --nodes 1000`, switch of 4,096, `--no-aggregation`' --workload "$TMP/c4k/w" --network bench/switch4096.yml --no-aggregation
      rm -rf "$TMP/c4k" ;;
    c16k)
      "$SIM" workload gen chain --npus 16384 --nodes 1000 -o "$TMP/c16k/w" > /dev/null
      run "(c16k) chain, 16,384 ranks" \
        '(c16k) the same on 16,384 ranks, switch of 16,384, `--no-aggregation`' --workload "$TMP/c16k/w" --network "$TMP/switch16384.yml" --no-aggregation
      rm -rf "$TMP/c16k" ;;
    l4k)
      coll=$(awk 'BEGIN { for (i = 0; i < 200; i++) printf "%sallreduce", (i ? "," : "") }')
      "$SIM" workload gen collectives --npus 4096 --coll "$coll" --size 1MiB --compute 50us -o "$TMP/l4k/w" > /dev/null
      run "(l4k) 200 layers, 4,096 ranks, defaults" \
        '(l4k) 4,096 ranks x 200 layers (50 us + 1 MiB all-reduce), torus 16x16x16, defaults' --workload "$TMP/l4k/w" --network bench/torus16x16x16.yml
      rm -rf "$TMP/l4k" ;;
    *) echo "unknown case $c (c4k c16k l4k)" >&2; exit 2 ;;
  esac
done
if [ -n "$docs" ]; then
  python3 scripts/bench/bench_doc.py block docs/benchmarks.md shared-graphs scripts/bench/bench_shared_graphs.sh "$TMP/rows.tsv" "$load0"
fi
