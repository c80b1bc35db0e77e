#!/usr/bin/env bash
# Speed of the ns3 packet-level backend (a benchmark, not a test): wall time,
# events/s (ours and ns-3's) and packets/s for an 8-NPU 16 MiB ring all-reduce
# on ring8 and switch8 and a 64-NPU 1 MiB all-reduce on switch64 and fattree64,
# each beside the flow backend.
#
#   SIM=build/sim scripts/bench/ns3_bench.sh [--write-docs]   --write-docs: also rewrite the table of docs/benchmarks.md
#
# Needs a build with ns-3 (scripts/setup.sh installs it). Workloads are generated
# first, so only the simulation is timed (/usr/bin/time -v: wall, CPU = user + sys,
# peak RSS). Rates are per CPU second (events = ours + ns-3's after the warm-up),
# which a loaded machine distorts less than wall time. The handshake warm-up of
# `connect: before_start` is in the wall and CPU times.
# See docs/benchmarks.md.
set -euo pipefail
source "$(dirname "$0")/bench_start.sh" ns3_bench "$@"

"$SIM" workload gen collectives --npus 8 --coll allreduce --size 16MiB -o "$TMP/w8/ar" >/dev/null
"$SIM" workload gen collectives --npus 64 --coll allreduce --size 1MiB -o "$TMP/w64/ar" >/dev/null

printf 'network:\n  connect: on_first_send\n' >"$TMP/lazy.yml"
printf '| case | backend | simulated (ns) | wall (s) | CPU (s) | our events | ns-3 events | events/s (CPU) | packets | packets/s (CPU) | drops | peak RSS (MiB) |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
printf 'case\tbackend\tsimulated (ns)\twall (s)\tCPU (s)\tour events\tns-3 events\tevents/s (CPU)\tpackets\tpackets/s (CPU)\tdrops\tpeak RSS (MiB)\n' >"$TMP/rows.tsv"
# run <label> <workload> <network> <backend> [system config]
run() {
  local label=$1 wl=$2 net=$3 backend=$4 out=$TMP/out.txt
  local sys=()
  [[ -n ${5:-} ]] && sys=(--system "$5")
  /usr/bin/time -v -o "$TMP/time.txt" "$SIM" --workload "$wl" --network "$ROOT/configs/$net" --backend "$backend" \
    "${sys[@]}" >"$out" 2>"$TMP/err.txt" || { echo "ns3_bench: $label $backend failed:" >&2; cat "$TMP/err.txt" >&2; return 0; }
  local simns wall cpu rss events ns3ev packets drops
  simns=$(sed -n 's/^simulated time: .*(\([0-9.]*\) ns)/\1/p' "$out")
  wall=$(sed -n 's/.*Elapsed (wall clock) time.*: \(.*\)/\1/p' "$TMP/time.txt" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
  cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$TMP/time.txt")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): \(.*\)/\1/p' "$TMP/time.txt")
  events=$(sed -n 's/^events: \([0-9]*\),.*/\1/p' "$out")
  ns3ev=$(sed -n 's/.* \([0-9]*\) ns-3 events.*/\1/p' "$out")
  packets=$(sed -n 's/^network: \([0-9]*\) packet transmissions.*/\1/p' "$out")
  drops=$(sed -n 's/.* \([0-9]*\) packets dropped.*/\1/p' "$out")
  awk -v rows="$TMP/rows.tsv" -v l="$label" -v b="$backend" -v s="$simns" -v w="$wall" -v e="$events" -v n="${ns3ev:-0}" -v p="${packets:-0}" \
      -v d="${drops:--}" -v r="$rss" -v c="$cpu" 'BEGIN {
    if (c <= 0) c = 0.01
    printf "| %s | %s | %s | %.2f | %.2f | %d | %d | %.0f | %d | %.0f | %s | %.0f |\n", l, b, s, w, c, e, n, (e + n) / c, p, p / c, d, r / 1024
    rate = (n > 0) ? sprintf("%.0f k", (e + n) / c / 1000) : "-"
    prate = (p > 0) ? sprintf("%.0f k", p / c / 1000) : "-"
    printf "%s\t%s\t%s\t%.2f\t%.2f\t%d\t%d\t%s\t%d\t%s\t%s\t%.0f\n", l, b, s, w, c, e, n, rate, p, prate, d, r / 1024 >> rows }'
}
for net in ring8.yml switch8.yml; do
  for b in flow ns3; do run "8 NPUs, 16 MiB all-reduce, $net" "$TMP/w8/ar" "$net" "$b"; done
done
for net in switch64.yml fattree64.yml; do
  for b in flow ns3; do run "64 NPUs, 1 MiB all-reduce, $net" "$TMP/w64/ar" "$net" "$b"; done
  run "64 NPUs, 1 MiB all-reduce, $net, connect: on_first_send" "$TMP/w64/ar" "$net" ns3 "$TMP/lazy.yml"
done
if [[ -n $docs ]]; then
  python3 "$ROOT/scripts/bench/bench_doc.py" block "$ROOT/docs/benchmarks.md" ns3-speed scripts/bench/ns3_bench.sh "$TMP/rows.tsv" \
    "$load0"
fi
