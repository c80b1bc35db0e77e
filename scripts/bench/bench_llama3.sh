#!/usr/bin/env bash
# Generated training iterations at scale (docs/benchmarks.md, "Generated
# training iterations"): llama3-405b, tp 8, pp 16 (7 + 14 x 8 + 7 layers),
# seq 8,192, micro-batch 1, bf16.
#
#   scripts/bench/bench_llama3.sh [--write-docs]      SIM=build/sim by default
#
# 1. generation: the ETs of one replica written as files (dp 1, 1F1B, 16
#    micro-batches), and the same plan with dp 8 generated in memory and run
#    with every rank simulated, on a switch of 1,024 NPUs with roofline compute;
# 2. the 16,384-GPU iteration (dp 128, interleaved:8, dgx-h100-superpod x2048,
#    a ring per dimension for every collective) folded (the default) and with
#    every rank simulated (--no-aggregation: about 5 minutes and 7 GB); the two
#    must give the same iteration to the picosecond (exit 1 otherwise).
# Wall time and peak RSS of each `sim` from /usr/bin/time. --write-docs
# rewrites both tables of docs/benchmarks.md.
set -euo pipefail
source "$(dirname "$0")/bench_start.sh" bench_llama3 "$@"
plan="model=llama3-405b&seq=8192&first-stage-layers=7&last-stage-layers=7"
timed() { /usr/bin/time -f "%e %M" -o "$TMP/time" "$@"; read -r wall kb <"$TMP/time"; rss=$((kb / 1024)); }
field() { sed -n "s/$1/\1/p" "$TMP/out" | head -1; }

# 1. Generation.
printf 'case\tranks\tnodes\tgeneration\trun\tpeak RSS (MiB)\n' >"$TMP/gen.tsv"
printf 'compute: {peak_tflops: 989, memory_bandwidth: 3350GB/s}\n' >"$TMP/roofline.yml"
printf 'shape: Switch\nnpus: 1024\nbandwidth: 50GB/s\nlatency: 500ns\n' >"$TMP/switch1024.yml"
timed "$SIM" workload gen transformer --model llama3-405b --parallel tp=8,pp=16,dp=1 --global-batch 16 --seq 8192 \
  --first-stage-layers 7 --last-stage-layers 7 -o "$TMP/et/w" >"$TMP/out"
nodes=$(field '^wrote 128 ranks (\([0-9]*\) nodes, .*')
bytes=$(field '^wrote 128 ranks ([0-9]* nodes, \([0-9]*\) B).*')
printf 'ET files, dp 1, 1F1B (`workload gen transformer -o`)\t128\t%s\t%s s, %s MB on disk\t-\t%s\n' \
  "$nodes" "$wall" "$((bytes / 1000000))" "$rss" | tee -a "$TMP/gen.tsv"
rm -rf "$TMP/et"
timed "$SIM" --workload "gen:transformer?$plan&parallel=tp=8,pp=16,dp=8&global-batch=128" \
  --network "$TMP/switch1024.yml" --system "$TMP/roofline.yml" --no-aggregation >"$TMP/out"
loading=$(field '.*wall time [0-9.]* s (loading \([0-9.]*\) s.*')
loop=$(field '.*event loop \([0-9.]*\) s.*')
printf 'in memory, dp 8, 1F1B, every rank (`gen:transformer?...`, `--no-aggregation`)\t1,024\t-\t%s s (loading)\t%s s event loop (%s s wall)\t%s\n' \
  "$loading" "$loop" "$wall" "$rss" | tee -a "$TMP/gen.tsv"

# 2. The 16,384-GPU iteration.
printf 'run\tranks simulated\titeration\tevents\twall (s): loading + event loop\tpeak RSS (MiB)\n' >"$TMP/16k.tsv"
"$SIM" system gen dgx-h100-superpod --nodes 2048 -o "$TMP/sp2048" >/dev/null
rings=(--collective allreduce=ring,ring,ring --collective allgather=ring,ring,ring --collective reducescatter=ring,ring,ring)
first=
for mode in folded every; do
  flag=()
  [[ $mode == every ]] && flag=(--no-aggregation)
  timed "$SIM" --workload "gen:transformer?$plan&parallel=tp=8,pp=16,dp=128,sp&global-batch=2048&schedule=interleaved:8" \
    --system "$TMP/sp2048" "${rings[@]}" "${flag[@]}" >"$TMP/out" 2>/dev/null
  iteration=$(field '^training iteration: \([0-9.]*\) ms.*')
  events=$(field '^events: \([0-9]*\),.*')
  loading=$(field '.*wall time [0-9.]* s (loading \([0-9.]*\) s.*')
  loop=$(field '.*event loop \([0-9.]*\) s.*')
  ranks=$(field '^replicas folded: .*(\([0-9]*\) of 16384 ranks.*')
  label="replicas folded (default; docs/system.md)"
  [[ $mode == every ]] && label='every rank (`--no-aggregation`)'
  printf '%s\t%s\t%s ms\t%s\t%s (%s + %s)\t%s\n' "$label" "${ranks:-16384}" "$iteration" "$events" "$wall" \
    "$loading" "$loop" "$rss" | tee -a "$TMP/16k.tsv"
  if [[ -z $first ]]; then
    first=$iteration
  elif [[ $iteration != "$first" ]]; then
    echo "bench_llama3: folded $first ms, every rank $iteration ms" >&2
    exit 1
  fi
done
if [[ -n $docs ]]; then
  python3 "$ROOT/scripts/bench/bench_doc.py" block "$ROOT/docs/benchmarks.md" generation scripts/bench/bench_llama3.sh \
    "$TMP/gen.tsv" "$load0"
  python3 "$ROOT/scripts/bench/bench_doc.py" block "$ROOT/docs/benchmarks.md" llama3-16k scripts/bench/bench_llama3.sh \
    "$TMP/16k.tsv" "$load0"
fi
