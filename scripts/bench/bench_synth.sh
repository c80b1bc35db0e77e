#!/usr/bin/env bash
# Synthesizer speed and memory (a benchmark, not a test): `sim collective synth`
# on fixed cases, ETs written to a temporary folder.
#
#   SIM=build/sim scripts/bench/bench_synth.sh [case...]   cases: s64 s128ar s1024t s1024h (default: all)
#   SIM=build/sim scripts/bench/bench_synth.sh --write-docs [case...]   also rewrite those cases' rows
#                                   of docs/benchmarks.md's synthesizer table (and its machine line)
#   SIM=build/sim scripts/bench/bench_synth.sh --check-docs [case...]   exit 1 when that table shows
#                                   another NPU count or schedule (scripts/bench/bench_doc.py)
#
# Wall time, user time and peak RSS come from /usr/bin/time -v (Debian package
# `time`); "synthesis" is the matching and DAG building alone, as sim prints it
# (the rest is writing the ETs). See docs/benchmarks.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SIM=${SIM:-$ROOT/build/sim}
[[ -x $SIM ]] || { echo "bench_synth: no sim binary at $SIM (set SIM=...)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench_synth: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
DOCS=
case ${1:-} in --write-docs) DOCS=write; shift ;; --check-docs) DOCS=check; shift ;; esac
CASES=${*:-s64 s128ar s1024t s1024h}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench_synth.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# The rows as docs/benchmarks.md shows them (tab-separated, scripts/bench/bench_doc.py).
printf 'case\tNPUs\twall (s)\tuser (s)\tsynthesis (s)\tRSS (MiB)\tschedule at 1 MiB\n' >"$TMP/rows"

row() { printf '%-46s %6s %9s %9s %13s %9s %s\n' "$@"; }
row case npus "wall (s)" "user (s)" "synthesis (s)" "RSS (MiB)" "schedule"

# synth <label> <coll> <topology> [options...]
synth() {
  local label=$1 coll=$2 topo=$3
  shift 3
  /usr/bin/time -v -o "$TMP/time.txt" "$SIM" collective synth --coll "$coll" --network "$topo" -o "$TMP/out/x" "$@" \
    >"$TMP/out.txt" 2>"$TMP/err.txt" || { echo "bench_synth: $label failed:" >&2; cat "$TMP/err.txt" >&2; return 0; }
  local wall user rss npus synth sched
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$TMP/time.txt" |
    awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')
  user=$(sed -n 's/.*User time (seconds): //p' "$TMP/time.txt")
  rss=$(($(sed -n 's/.*Maximum resident set size (kbytes): //p' "$TMP/time.txt") / 1024))
  npus=$(sed -n 's/^wrote \([0-9]*\) files.*/\1/p' "$TMP/out.txt")
  synth=$(sed -n 's/^synthesis time: \([0-9.]*\) s.*/\1/p' "$TMP/out.txt")
  sched=$(sed -n 's/^schedule at [^:]*: //p' "$TMP/out.txt")
  row "$label" "$npus" "$wall" "$user" "$synth" "$rss" "$sched"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$npus" "$wall" "$user" "$synth" "$rss" "$sched" >>"$TMP/rows"
  rm -rf "$TMP/out"
}

for c in $CASES; do
  case $c in
    s64) synth "(s64) all-gather, mesh8x8" allgather "$ROOT/configs/mesh8x8.yml" ;;
    s128ar) synth "(s128ar) all-reduce, torus 4x4x8 (TACOS: 1.08 s)" allreduce "$ROOT/bench/torus4x4x8.yml" ;;
    s1024t) synth "(s1024t) all-gather, torus 32x32" allgather "$ROOT/bench/torus32x32.yml" ;;
    s1024h) synth "(s1024h) all-gather, hypercube 1024" allgather "$ROOT/bench/hypercube1024.yml" ;;
    *) echo "bench_synth: unknown case '$c' (s64 s128ar s1024t s1024h)" >&2; exit 2 ;;
  esac
done
if [[ -n $DOCS ]]; then
  # The schedule is exact; timings are the machine's and are not checked.
  exact=()
  [[ $DOCS == check ]] && exact=("case,NPUs,schedule at 1 MiB")
  python3 "$ROOT/scripts/bench/bench_doc.py" "$DOCS" "$ROOT/docs/benchmarks.md" scripts/bench/bench_synth.sh "$TMP/rows" "${exact[@]}"
fi
