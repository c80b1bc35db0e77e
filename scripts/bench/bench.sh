#!/usr/bin/env bash
# Simulator speed and memory on fixed cases (a benchmark, not a test).
#
#   SIM=build/sim scripts/bench/bench.sh [case...]     cases: a b c d e f g h n p p-flow (default: all)
#   SIM=build/sim scripts/bench/bench.sh --write-docs [case...]   also rewrite those cases' rows of
#                                   docs/benchmarks.md's "Headline cases" table (and its machine line)
#   SIM=build/sim scripts/bench/bench.sh --check-docs [case...]   exit 1 when that table shows another
#                                   simulated time or event count (scripts/bench/bench_doc.py)
#
# Builds nothing: point $SIM at a Release build. Workloads are generated into a
# temporary folder first, so only the simulation itself is timed. Wall time and
# peak RSS come from /usr/bin/time (Debian package `time`); without it, from
# the figures `sim` prints at the end of its summary. Every case runs with
# --no-aggregation: every message is an event (docs/benchmarks.md, "Exact step
# aggregation", times the aggregated runs). See docs/benchmarks.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SIM=${SIM:-$ROOT/build/sim}
[[ -x $SIM ]] || { echo "bench: no sim binary at $SIM (set SIM=...)" >&2; exit 2; }
DOCS=
case ${1:-} in --write-docs) DOCS=write; shift ;; --check-docs) DOCS=check; shift ;; esac
CASES=${*:-a b c d e f g h n p p-flow}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# The rows as docs/benchmarks.md shows them (tab-separated, scripts/bench/bench_doc.py).
printf 'case\tranks\tsimulated time\twall (s)\tevent loop (s)\tevents\tpeak RSS (MiB)\n' >"$TMP/rows"
HAVE_TIME=0
[[ -x /usr/bin/time ]] && HAVE_TIME=1

row() { printf '%-44s %6s %16s %9s %15s %11s %16s %9s\n' "$@"; }
row case ranks "simulated time" "wall (s)" "event loop (s)" events "events/s (loop)" "RSS (MiB)"

# run <label> <ranks> <sim args...>
run() {
  local label=$1 ranks=$2
  shift 2
  local out=$TMP/out.txt
  if ((HAVE_TIME)); then
    /usr/bin/time -f "%e %M" -o "$TMP/time.txt" "$SIM" "$@" --no-aggregation >"$out" 2>"$TMP/err.txt" || {
      echo "bench: $label failed:" >&2
      cat "$TMP/err.txt" >&2
      return 0
    }
  else
    "$SIM" "$@" --no-aggregation >"$out" 2>"$TMP/err.txt" || { echo "bench: $label failed:" >&2; cat "$TMP/err.txt" >&2; return 0; }
  fi
  # "simulated time: 4.27 ms (4270000 ns)", "events: N, messages: M, wall time X s (...)", "peak memory: Z MiB"
  local simtime events wall rss
  simtime=$(sed -n 's/^simulated time: \([^(]*\) (.*/\1/p' "$out")
  events=$(sed -n 's/^events: \([0-9]*\),.*/\1/p' "$out")
  if ((HAVE_TIME)); then
    read -r wall rss <"$TMP/time.txt"
    rss=$((rss / 1024))
  else
    wall=$(sed -n 's/.*wall time \([0-9.]*\) s.*/\1/p' "$out")
    rss=$(sed -n 's/^peak memory: \([0-9]*\) MiB/\1/p' "$out")
  fi
  # The event loop alone, without loading the traces (printed by sim).
  local loop rate
  loop=$(sed -n 's/.*event loop \([0-9.]*\) s.*/\1/p' "$out")
  rate=$(awk -v e="$events" -v w="$loop" 'BEGIN { if (w > 0) printf "%.2fM", e / w / 1e6; else print "-" }')
  row "$label" "$ranks" "$simtime" "$wall" "${loop:--}" "$events" "$rate" "$rss"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$ranks" "$simtime" "$wall" "${loop:--}" \
    "$events" "$rss" >>"$TMP/rows"
}

for c in $CASES; do
  case $c in
    a)
      et=$ROOT/../shared/testdata/chakra/chakra.0.et
      if [[ -f $et ]]; then
        # One rank: pass the prefix, the folder also holds other traces.
        run "(a) chakra.0.et, switch8" 1 --workload "${et%.0.et}" --network "$ROOT/configs/switch8.yml"
      else
        echo "(a) skipped: $et absent"
      fi
      ;;
    b)
      "$SIM" workload gen chain --npus 1024 --nodes 1000 --duration 10us -o "$TMP/chain/w" >/dev/null
      run "(b) 1,000 dependent COMP nodes, switch1024" 1024 --workload "$TMP/chain/w" --network "$ROOT/bench/switch1024.yml"
      rm -rf "$TMP/chain"
      ;;
    c | d)
      n=1024
      [[ $c == d ]] && n=4096
      "$SIM" workload gen collectives --npus $n --coll allreduce --size 1GiB -o "$TMP/ar$n/w" >/dev/null
      run "($c) 1 GiB all-reduce, native ring, switch$n" $n --workload "$TMP/ar$n/w" --network "$ROOT/bench/switch$n.yml"
      ;;
    e)
      [[ -d $TMP/ar1024 ]] || "$SIM" workload gen collectives --npus 1024 --coll allreduce --size 1GiB -o "$TMP/ar1024/w" >/dev/null
      if "$SIM" collective gen ring --coll allreduce --npus 1024 -o "$TMP/ring1024/ring" >/dev/null 2>"$TMP/err.txt"; then
        run "(e) as (c), ring injected as Chakra ETs" 1024 --workload "$TMP/ar1024/w" \
          --network "$ROOT/bench/switch1024.yml" --collective "allreduce=$TMP/ring1024/ring"
      else
        echo "(e) skipped: 'sim collective gen' failed: $(head -1 "$TMP/err.txt")"
      fi
      ;;
    f)
      [[ -d $TMP/ar1024 ]] || "$SIM" workload gen collectives --npus 1024 --coll allreduce --size 1GiB -o "$TMP/ar1024/w" >/dev/null
      run "(f) as (c), flow backend" 1024 --workload "$TMP/ar1024/w" --network "$ROOT/bench/switch1024.yml" --backend flow
      ;;
    g)
      "$SIM" workload gen collectives --npus 64 --coll alltoall --size 1MiB -o "$TMP/a2a64/w" >/dev/null
      run "(g) 1 MiB direct all-to-all, mesh8x8, flow" 64 --workload "$TMP/a2a64/w" --network "$ROOT/configs/mesh8x8.yml" \
        --backend flow --collective alltoall=direct
      ;;
    h)
      "$SIM" workload gen collectives --npus 4096 --coll allreduce --size 1GiB -o "$TMP/ar4096t/w" >/dev/null
      run "(h) 1 GiB all-reduce, ring, torus 16^3, flow" 4096 --workload "$TMP/ar4096t/w" \
        --network "$ROOT/bench/torus16x16x16.yml" --backend flow \
        --collective allreduce=ring
      rm -rf "$TMP/ar4096t"
      ;;
    n)
      # NCCL's own programs, built op by op: NVLS-tree across 16 nodes (its
      # switches' uploads and copies, every message of every loop).
      "$SIM" system gen dgx-h100 --nodes 16 -o "$TMP/h16" >/dev/null
      run "(n) 1 GiB all-reduce, NCCL's choice (NVLS-tree), dgx-h100 x16" 128 \
        --workload 'gen:collectives?npus=128&coll=allreduce&size=1GiB' --system "$TMP/h16"
      rm -rf "$TMP/h16"
      ;;
    p | p-flow)
      # 1,024 ranks x 2,000 rounds of send-to-next / receive-from-previous: 2.05 M
      # point-to-point messages, 4.1 M nodes (388 MB of ETs, written once per script run).
      [[ -d $TMP/p2p ]] || "$SIM" workload gen p2p-ring --npus 1024 --iterations 2000 --size 1MiB -o "$TMP/p2p/r" >/dev/null
      if [[ $c == p ]]; then
        run "(p) p2p ring, 2,000 rounds, switch1024" 1024 --workload "$TMP/p2p/r" --network "$ROOT/bench/switch1024.yml"
      else
        run "(p-flow) as (p), --backend flow" 1024 --workload "$TMP/p2p/r" --network "$ROOT/bench/switch1024.yml" \
          --backend flow
      fi
      ;;
    *) echo "bench: unknown case '$c' (a b c d e f g h n p p-flow)" >&2; exit 2 ;;
  esac
done
if [[ -n $DOCS ]]; then
  # Simulated time and events are exact; timings are the machine's and are not checked.
  exact=()
  [[ $DOCS == check ]] && exact=("case,ranks,simulated time,events")
  python3 "$ROOT/scripts/bench/bench_doc.py" "$DOCS" "$ROOT/docs/benchmarks.md" scripts/bench/bench.sh "$TMP/rows" "${exact[@]}"
fi
