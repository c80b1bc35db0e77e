#!/usr/bin/env bash
# How sensitive the 16,384-GPU Llama 3 405B prediction of docs/published-runs.md
# is to the training plan: the paper's plan on dgx-h100-superpod (2,048 nodes),
# then one change at a time, each simulated and its model TFLOP/s per GPU
# printed (Megatron-LM's count: recomputation is not counted, so recomputing
# lowers it).
#
#   SIM=build/sim scripts/bench/bench_sensitivity.sh [--write-docs]
#
# --write-docs rewrites the table "sensitivity" of docs/published-runs.md.
set -euo pipefail
source "$(dirname "$0")/bench_start.sh" bench_sensitivity "$@"

base='model=llama3-405b&parallel=tp=8,pp=16,dp=128,sp&global-batch=2048&seq=8192&first-stage-layers=7&last-stage-layers=7'
# change | what is appended to (or, for the schedule, replaces) the paper's plan
cases=(
  "the paper's plan: interleaved 1F1B, 8 chunks per stage|&schedule=interleaved:8"
  "ZeRO-1 (distributed optimizer)|&schedule=interleaved:8&zero=1"
  "ZeRO-3, parameters gathered per micro-batch|&schedule=interleaved:8&zero=3"
  "selective recomputation|&schedule=interleaved:8&recompute=selective"
  "full recomputation|&schedule=interleaved:8&recompute=full"
  "1F1B instead of interleaved|&schedule=1f1b"
)
"$SIM" system gen dgx-h100-superpod --nodes 2048 -o "$TMP/sp2048" >/dev/null
printf 'change\titeration\tmodel TFLOP/s per GPU\tversus the paper'"'"'s plan\twall (s), peak RSS (MiB)\n' >"$TMP/rows.tsv"
first=
for c in "${cases[@]}"; do
  label=${c%%|*}
  query=$base${c#*|}
  /usr/bin/time -f "%e %M" -o "$TMP/time" "$SIM" --quiet --workload "gen:transformer?$query" \
    --system "$TMP/sp2048" --report "$TMP/r.json" >/dev/null 2>"$TMP/err" || {
    echo "bench_sensitivity: '$label' failed:" >&2; cat "$TMP/err" >&2; exit 3; }
  python3 - "$TMP/r.json" "$TMP/time" "$label" "$first" "$TMP/got" <<'PY' | tee -a "$TMP/rows.tsv"
import json, sys
report, timing, label, first, got_path = sys.argv[1:]
t = json.load(open(report))["training"]
wall, kb = open(timing).read().split()
got = t["model_tflops_per_gpu"]
versus = f"{(got / float(first) - 1) * 100:+.1f}%" if first else "-"
print(f"{label}\t{t['iteration_time_ns'] / 1e6:,.1f} ms\t{got:.1f}\t{versus}\t{float(wall):.1f}, {int(kb) // 1024:,}")
open(got_path, "w").write(repr(got))
PY
  [[ -n $first ]] || first=$(cat "$TMP/got")
done
if [[ -n $docs ]]; then
  python3 "$ROOT/scripts/bench/bench_doc.py" block "$ROOT/docs/published-runs.md" sensitivity scripts/bench/bench_sensitivity.sh \
    "$TMP/rows.tsv" "$load0"
fi
