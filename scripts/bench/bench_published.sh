#!/usr/bin/env bash
# Every published training run of docs/published-runs.md, simulated on its
# cluster preset, set beside the published model TFLOP/s per GPU.
#
#   scripts/bench/bench_published.sh [FILTER]                SIM=build/sim by default
#   scripts/bench/bench_published.sh --write-docs [FILTER]   also rewrite those cases' rows in
#                                                            docs/published-runs.md's generated table
#   scripts/bench/bench_published.sh --check-docs [FILTER]   exit 1 when that table shows another
#                                                            iteration or TFLOP/s (scripts/bench/published_runs_doc.py)
#
# FILTER (a grep pattern) picks cases by their line below (e.g. "nemo", "sc21").
# Prints, per case: GPUs, the simulated iteration, model TFLOP/s per GPU (as
# Megatron-LM counts them: no recomputation), the published figure converted
# to the same count, the error, whether the preset's compute.efficiency was
# fitted on the case or not, wall time and peak RSS of `sim`. Data-parallel
# replicas fold (docs/system.md): each case takes seconds, the 310B to 1T rows up to minutes
# (128 to 512 ranks simulated through pipelines of 16 to 64 stages), llama3-405b-cp16 about half
# a minute (128 ranks: context-parallel ranks fold as copies too, docs/published-runs.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
SIM=${SIM:-build/sim}
docs=
case ${1:-} in --write-docs) docs=write; shift ;; --check-docs) docs=check; shift ;; esac
filter=${1:-.}
load0=$(cut -d' ' -f1 /proc/loadavg)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_published.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# case | preset | nodes[/nodes per leaf] | published model TFLOP/s per GPU | fit or held | workload (gen:transformer? query) [sim options]
# Sources, plans and FLOP conversions: docs/published-runs.md.
cases=(
  # Llama 3 Herd of Models (Meta, 2024), Table 4: BF16, 430, 400 and 380 TFLOP/s per GPU.
  "llama3-405b-8k  dgx-h100-superpod 1024 430 fit  model=llama3-405b&parallel=tp=8,pp=16,dp=64,sp&global-batch=2048&seq=8192&first-stage-layers=7&last-stage-layers=7&schedule=interleaved:8"
  "llama3-405b-16k dgx-h100-superpod 2048 400 held model=llama3-405b&parallel=tp=8,pp=16,dp=128,sp&global-batch=2048&seq=8192&first-stage-layers=7&last-stage-layers=7&schedule=interleaved:8"
  # The same on the congestion-aware backend: one replica with stand-ins (docs/system.md).
  "llama3-405b-16k-flow dgx-h100-superpod 2048 400 held model=llama3-405b&parallel=tp=8,pp=16,dp=128,sp&global-batch=2048&seq=8192&first-stage-layers=7&last-stage-layers=7&schedule=interleaved:8 --backend flow"
  # The same three with the attention kernel of the time: FlashAttention-2's published H100 speeds
  # (the +fa2 system below), compute.efficiency fitted again on the 8,192-GPU run.
  "llama3-405b-8k-fa2   dgx-h100-superpod+fa2 1024 430 fit  model=llama3-405b&parallel=tp=8,pp=16,dp=64,sp&global-batch=2048&seq=8192&first-stage-layers=7&last-stage-layers=7&schedule=interleaved:8"
  "llama3-405b-16k-fa2  dgx-h100-superpod+fa2 2048 400 held model=llama3-405b&parallel=tp=8,pp=16,dp=128,sp&global-batch=2048&seq=8192&first-stage-layers=7&last-stage-layers=7&schedule=interleaved:8"
  "llama3-405b-cp16-fa2 dgx-h100-superpod+fa2 2048 380 held model=llama3-405b&parallel=tp=8,cp=16,pp=16,dp=8,sp&global-batch=128&seq=131072&first-stage-layers=7&last-stage-layers=7&schedule=interleaved:8&cp-comm=all-gather"
  # Its long-context run (380 TFLOP/s per GPU): cp 16, sequence 131,072, 16M tokens per batch = 128 sequences,
  # K/V all-gathered over the cp group as the paper describes (section 3.3.2); then the same with ring attention.
  "llama3-405b-cp16 dgx-h100-superpod 2048 380 held model=llama3-405b&parallel=tp=8,cp=16,pp=16,dp=8,sp&global-batch=128&seq=131072&first-stage-layers=7&last-stage-layers=7&schedule=interleaved:8&cp-comm=all-gather"
  "llama3-405b-cp16-ring dgx-h100-superpod 2048 380 held model=llama3-405b&parallel=tp=8,cp=16,pp=16,dp=8,sp&global-batch=128&seq=131072&first-stage-layers=7&last-stage-layers=7&schedule=interleaved:8"
  # NeMo 24.07 performance summary (NVIDIA/NeMo docs/source/performance/performance_summary.md), DGX-H100, FP8.
  # tp-comm-overlap: NeMo-Framework-Launcher's gpt3/175b.yaml and llama/llama3_70b.yaml set
  # ub_tp_comm_overlap: true (the 8B row has tp 1: no TP communication to overlap).
  "nemo-gpt3-175b-128 dgx-h100-superpod 16 782 held model=gpt3-175b&parallel=tp=4,pp=8,dp=4,sp&global-batch=256&micro-batch=1&seq=2048&schedule=interleaved:6&zero=1&dtype=fp8&tp-comm-overlap"
  "nemo-gpt3-175b-512 dgx-h100-superpod 64 842 held model=gpt3-175b&parallel=tp=4,pp=8,dp=16,sp&global-batch=2048&micro-batch=2&seq=2048&schedule=interleaved:6&zero=1&dtype=fp8&tp-comm-overlap"
  "nemo-llama3-70b-64 dgx-h100-superpod 8 738 held model=llama3-70b&parallel=tp=4,pp=4,dp=2,cp=2,sp&global-batch=128&micro-batch=1&seq=8192&schedule=interleaved:5&zero=1&dtype=fp8&tp-comm-overlap"
  "nemo-llama3-8b-8   dgx-h100-superpod 1 697 held model=llama3-8b&parallel=tp=1,pp=1,dp=4,cp=2&global-batch=128&micro-batch=1&seq=8192&zero=1&dtype=fp8"
  # Narayanan et al., SC'21, Table 1, A100s: 137, 138, 142 TFLOP/s counted with the recomputed
  # forward pass, here converted to model FLOPs (x 72 (1 + s/6h + V/12lh) / 96 (1 + s/6h + V/16lh)).
  # Plans: NVIDIA/Megatron-LM examples/sc21/run_table_1.sh.
  "sc21-gpt-1.7b-32  dgx-a100 4  104.39 held model=configs/models/megatron-sc21/gpt-1.7b.yml&parallel=tp=1,pp=1,dp=32&global-batch=512&micro-batch=16&seq=2048&recompute=full&attention=unfused"
  "sc21-gpt-3.6b-64  dgx-a100 8  104.55 held model=configs/models/megatron-sc21/gpt-3.6b.yml&parallel=tp=2,pp=1,dp=32&global-batch=512&micro-batch=16&seq=2048&recompute=full&attention=unfused"
  "sc21-gpt-7.5b-128 dgx-a100 16 107.20 fit  model=configs/models/megatron-sc21/gpt-7.5b.yml&parallel=tp=4,pp=1,dp=32&global-batch=512&micro-batch=16&seq=2048&recompute=full&attention=unfused"
  # The table's larger rows: 135, 138, 140, 148, 155, 163, 163 published. From 39B on the script
  # runs DDP=local: the gradients are all-reduced after the last backward pass, not overlapped
  # with it (one bucket per model chunk). Pipeline messages are split over the tensor-parallel
  # ranks and all-gathered (Megatron-LM's default then, --scatter-gather-tensors-in-pipeline).
  # NODES/K: K nodes per rail leaf (`--leaf-nodes`), so that each pipeline stage's data-parallel
  # group sits on whole leaves (the replicas fold where the group's all-reduce divides evenly).
  "sc21-gpt-18b-256   dgx-a100 32  101.66 held model=configs/models/megatron-sc21/gpt-18b.yml&parallel=tp=8,pp=1,dp=32&global-batch=1024&micro-batch=8&seq=2048&recompute=full&attention=unfused"
  "sc21-gpt-39b-512   dgx-a100 64  103.77 held model=configs/models/megatron-sc21/gpt-39b.yml&parallel=tp=8,pp=2,dp=32&global-batch=1536&micro-batch=4&seq=2048&recompute=full&attention=unfused&bucket-params=100000000000&pp-scatter-gather"
  "sc21-gpt-76b-1024  dgx-a100 128 105.18 held model=configs/models/megatron-sc21/gpt-76b.yml&parallel=tp=8,pp=4,dp=32&global-batch=1792&micro-batch=2&seq=2048&recompute=full&attention=unfused&schedule=interleaved:3&bucket-params=100000000000&pp-scatter-gather"
  "sc21-gpt-145b-1536 dgx-a100 192/12 111.12 held model=configs/models/megatron-sc21/gpt-145b.yml&parallel=tp=8,pp=8,dp=24&global-batch=2304&micro-batch=2&seq=2048&recompute=full&attention=unfused&schedule=interleaved:2&bucket-params=100000000000&pp-scatter-gather"
  "sc21-gpt-310b-1920 dgx-a100 240/15 116.33 held model=configs/models/megatron-sc21/gpt-310b.yml&parallel=tp=8,pp=16,dp=15&global-batch=2160&micro-batch=1&seq=2048&recompute=full&attention=unfused&schedule=interleaved:2&bucket-params=100000000000&pp-scatter-gather"
  "sc21-gpt-530b-2520 dgx-a100 315/9 122.31 held model=configs/models/megatron-sc21/gpt-530b.yml&parallel=tp=8,pp=35,dp=9&global-batch=2520&micro-batch=1&seq=2048&recompute=full&attention=unfused&schedule=interleaved:3&bucket-params=100000000000&pp-scatter-gather"
  "sc21-gpt-1t-3072   dgx-a100 384/12 122.29 held model=configs/models/megatron-sc21/gpt-1t.yml&parallel=tp=8,pp=64,dp=6&global-batch=3072&micro-batch=1&seq=2048&recompute=full&attention=unfused&bucket-params=100000000000&pp-scatter-gather"
)
# PRESET+fa2: the preset's system with the attention kernel of early 2024, FlashAttention-2 on H100
# (`sim system gen --attention flash-attention-2`: configs/kernels/h100-flash-attention-2, the
# FlashAttention-3 paper's speeds of it; GEMMs and memory-bound ops from builtin:h100 as before; the
# efficiency fitted on llama3-405b-8k-fa2, 430 published: 429.9 predicted at 0.705, three digits).
printf '%-21s %-6s %-12s %-9s %-9s %-7s %-5s %-8s %-9s %s\n' case GPUs iteration TFLOP/s published error fit wall peak gradients
for c in "${cases[@]}"; do
  grep -q -- "$filter" <<<"$c" || continue
  read -r name preset nodes published fit query <<<"$c"
  variant=
  if [[ $preset == *+* ]]; then variant=${preset#*+}; preset=${preset%%+*}; fi
  options=()
  if [[ $query == *" "* ]]; then read -r -a options <<<"${query#* }"; query=${query%% *}; fi
  leaf=()
  if [[ $nodes == */* ]]; then leaf=(--leaf-nodes "${nodes#*/}"); nodes=${nodes%/*}; fi
  gen=()
  case $variant in
    "") ;;
    fa2) gen=(--attention flash-attention-2) ;;
    *) echo "bench_published: unknown system variant '$variant'" >&2; exit 1 ;;
  esac
  sys="$tmp/$preset-$nodes-${leaf[1]:-spread}${variant:+-$variant}"
  [ -d "$sys" ] || "$SIM" system gen "$preset" --nodes "$nodes" "${leaf[@]}" "${gen[@]}" -o "$sys" >/dev/null
  system="$sys/system.yml"
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$SIM" --quiet --workload "gen:transformer?$query" \
    --network "$sys/network.yml" --system "$system" "${options[@]}" --report "$tmp/r.json" >/dev/null
  python3 - "$tmp/r.json" "$tmp/time" "$name" "$published" "$fit" "$tmp/rows.jsonl" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
t = report["training"]
wall, kb = open(sys.argv[2]).read().split()
pub = float(sys.argv[4])
got = t["model_tflops_per_gpu"]
# The gradient collective: the largest all-reduce or reduce-scatter over a data-parallel group.
grads = [c for c in report["collectives"] if c["type"] in ("ALL_REDUCE", "REDUCE_SCATTER") and "'dp" in c["group"]]
g = max(grads, key=lambda c: c["bytes"], default=None)
gradients = (f"{g['type'].lower().replace('_', '-')} {g['algorithm']} on {g['group_size']:,} ranks" if g else "none")
row = {"case": sys.argv[3], "gpus": t["world_size"], "iteration_ms": t["iteration_time_ns"] / 1e6, "tflops": got,
       "published": pub, "error_percent": (got / pub - 1) * 100, "fit": sys.argv[5], "gradients": gradients,
       "wall_s": float(wall), "peak_mib": round(int(kb) / 1024)}
print(json.dumps(row), file=open(sys.argv[6], "a"))
print(f"{sys.argv[3]:<21} {t['world_size']:<6} {t['iteration_time_ns'] / 1e6:>9.1f} ms {got:>8.1f}  {pub:>8.1f}  "
      f"{(got / pub - 1) * 100:>+5.1f}%  {sys.argv[5]:<5} {float(wall):>5.1f} s  {int(kb) / 1024:.0f} MiB  {gradients}")
PY
done
if [ -n "$docs" ]; then
  python3 scripts/bench/published_runs_doc.py "$docs" "${PUBLISHED_DOC:-docs/published-runs.md}" "$tmp/rows.jsonl" "$load0"
fi
