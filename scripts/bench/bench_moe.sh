#!/usr/bin/env bash
# The mixture-of-experts runs of docs/published-runs.md, each simulated on
# dgx-h100-superpod at its size and set beside its published throughput:
# model TFLOP/s per GPU where the source gives them in Megatron-LM's count,
# else tokens per second per GPU (FLOP counts differ between sources).
#
#   SIM=build/sim scripts/bench/bench_moe.sh [FILTER]
#   SIM=build/sim scripts/bench/bench_moe.sh --write-docs    every case, and rewrite the table of docs/published-runs.md
#
# FILTER (a grep pattern) picks cases by their line below. Wall time and peak
# RSS of each `sim` from /usr/bin/time; simulated figures do not depend on
# the machine.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SIM=${SIM:-$ROOT/build/sim}
[[ -x $SIM ]] || { echo "bench_moe: no sim binary at $SIM (set SIM=...)" >&2; exit 2; }
docs=
case ${1:-} in --write-docs) docs=1; shift ;; esac
filter=${1:-.}
if [[ -n $docs && $filter != . ]]; then
  echo "bench_moe: --write-docs writes the whole table: run it without FILTER" >&2
  exit 2
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
load0=$(cut -d' ' -f1 /proc/loadavg)

# name | GPUs | published (a number, or -) | its unit: tflops or tokens | workload query [sim options]
# Sources and plans: docs/published-runs.md, "Mixture-of-experts runs on H100s".
cases=(
  "mixtral-8x7b-64 64 468 tflops model=mixtral-8x7b&parallel=tp=1,pp=4,dp=16,ep=8&global-batch=256&seq=4096&schedule=interleaved:8&zero=1"
  "mixtral-8x22b-128 128 - tflops model=mixtral-8x22b&parallel=tp=4,pp=8,dp=4,ep=2,sp&global-batch=256&seq=4096&schedule=interleaved:7&zero=1"
  "deepseek-v3-1024 1024 1297 tokens model=deepseek-v3&parallel=tp=2,pp=8,dp=64,ep=64,sp&global-batch=8192&seq=4096&schedule=interleaved:4&first-stage-layers=7&last-stage-layers=6&zero=1&dtype=fp8 --collective alltoall=direct"
  "deepseek-v3-2048 2048 1543 tokens model=deepseek-v3&parallel=tp=1,pp=16,dp=128,ep=64&global-batch=15360&seq=4096&first-stage-layers=3&last-stage-layers=2&zero=1&dtype=fp8 --collective alltoall=direct"
)
printf 'run\tGPUs\titeration\tmodel TFLOP/s per GPU\ttokens/s per GPU\tpublished\terror\twall (s), peak RSS (MiB)\n' >"$TMP/rows.tsv"
for c in "${cases[@]}"; do
  grep -q -- "$filter" <<<"$c" || continue
  read -r name gpus published unit query <<<"$c"
  options=()
  if [[ $query == *" "* ]]; then read -r -a options <<<"${query#* }"; query=${query%% *}; fi
  sys=$TMP/sp$((gpus / 8))
  [[ -d $sys ]] || "$SIM" system gen dgx-h100-superpod --nodes $((gpus / 8)) -o "$sys" >/dev/null
  /usr/bin/time -f "%e %M" -o "$TMP/time" "$SIM" --quiet --workload "gen:transformer?$query" \
    --system "$sys" "${options[@]}" --report "$TMP/r.json" >/dev/null 2>"$TMP/err" || {
    echo "bench_moe: $name failed:" >&2; cat "$TMP/err" >&2; exit 3; }
  python3 - "$TMP/r.json" "$TMP/time" "$name" "$published" "$unit" "$query" <<'PY' | tee -a "$TMP/rows.tsv"
import json, re, sys
report, timing, name, published, unit, query = sys.argv[1:]
t = json.load(open(report))["training"]
wall, kb = open(timing).read().split()
keys = dict(kv.split("=", 1) for kv in query.split("&") if "=" in kv)
seconds = t["iteration_time_ns"] / 1e9
tokens = int(keys["global-batch"]) * int(keys["seq"]) / seconds / t["world_size"]
got = {"tflops": t["model_tflops_per_gpu"], "tokens": tokens}[unit]
shown_unit = {"tflops": "TFLOP/s", "tokens": "tokens/s"}[unit]
if published == "-":
    pub, err = "none found", "-"
else:
    pub, err = f"{float(published):,.0f} {shown_unit}", f"{(got / float(published) - 1) * 100:+.1f}%"
print(f"`{name}`\t{t['world_size']:,}\t{t['iteration_time_ns'] / 1e6:,.1f} ms\t{t['model_tflops_per_gpu']:.1f}\t"
      f"{tokens:,.0f}\t{pub}\t{err}\t{float(wall):.1f}, {int(kb) // 1024:,}")
PY
done
if [[ -n $docs ]]; then
  python3 "$ROOT/scripts/bench/bench_doc.py" block "$ROOT/docs/published-runs.md" moe scripts/bench/bench_moe.sh "$TMP/rows.tsv" "$load0"
fi
