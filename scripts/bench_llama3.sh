#!/usr/bin/env bash
# Llama 3 405B pre-training iterations at the scale Meta published them
# ("The Llama 3 Herd of Models", 2024, Table 4), simulated on the
# dgx-h100-superpod preset (measured H100 kernel table, rail-optimised
# fat-tree), and the prediction set beside the published TFLOP/s per GPU.
#
#   scripts/bench_llama3.sh [--full]      SIM=build/sim by default
#
# Prints, per case: the simulated iteration, model TFLOP/s per GPU, the
# published figure and the ratio, wall time and peak RSS of `sim`. --full also
# runs each case with --no-aggregation (every one of the 8,192 / 16,384 ranks
# simulated: minutes and GBs; the same iteration time to the picosecond).
# docs/published-runs.md discusses the numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
SIM=${SIM:-build/sim}
full=${1:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_llama3.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# name | nodes | dp | global batch (sequences of 8,192 tokens) | published TFLOP/s per GPU
cases=(
  "8k   1024  64 2048 430"
  "16k  2048 128 2048 400"
)
printf '%-5s %-7s %-14s %-10s %-10s %-7s %-9s %s\n' case GPUs iteration TFLOP/s published ratio wall peak
for c in "${cases[@]}"; do
  read -r name nodes dp batch published <<<"$c"
  "$SIM" system gen dgx-h100-superpod --nodes "$nodes" -o "$tmp/sys$nodes" >/dev/null
  w="gen:transformer?model=llama3-405b&parallel=tp=8,pp=16,dp=$dp,sp&global-batch=$batch&seq=8192"
  w+="&first-stage-layers=7&last-stage-layers=7&schedule=interleaved:8"
  for mode in folded ${full:+full}; do
    flag=""
    [ "$mode" = full ] && flag="--no-aggregation"
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$SIM" --quiet --workload "$w" --network "$tmp/sys$nodes/network.yml" \
      --system "$tmp/sys$nodes/system.yml" --report "$tmp/r.json" $flag >/dev/null
    python3 - "$tmp/r.json" "$tmp/time" "$name${flag:+ (full)}" "$published" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["training"]
wall, kb = open(sys.argv[2]).read().split()
pub = float(sys.argv[4])
print(f"{sys.argv[3]:<5} {t['world_size']:<7} {t['iteration_time_ns'] / 1e6:>9.1f} ms {t['model_tflops_per_gpu']:>8.1f}  "
      f"{pub:>8.0f}  {t['model_tflops_per_gpu'] / pub:>6.2f}  {float(wall):>6.1f} s  {int(kb) / 1024:.0f} MiB")
EOF
  done
done
