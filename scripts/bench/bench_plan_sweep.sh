#!/bin/bash
# Which plan is fastest: the sweep of configs/sweeps/plans_4096.yml (twelve plans of a
# 4,096-GPU job: tensor, pipeline, data, context and expert parallelism) on -j JOBS
# threads (default 2), timed, then every point run alone by `sim --workload ...` on the
# same files, whose simulated time, model TFLOP/s per GPU and MFU must equal the sweep's
# row (exit 1 otherwise). Prints a row per plan, by model, fastest first. Target: the sweep in
# <= 5 minutes on 2 cores.
#   scripts/bench/bench_plan_sweep.sh [build/sim] [JOBS]
#   scripts/bench/bench_plan_sweep.sh --write-docs [build/sim] [JOBS]   also rewrite the table of docs/workflows.md
set -euo pipefail
cd "$(dirname "$0")/../.."
docs=
if [[ ${1:-} == --write-docs ]]; then docs=1; shift; fi
SIM=${1:-build/sim}
JOBS=${2:-2}
spec=configs/sweeps/plans_4096.yml
preset=configs/presets/dgx-h100-superpod-x512
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_plan_sweep.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
load0=$(cut -d' ' -f1 /proc/loadavg)

/usr/bin/time -v "$SIM" sweep "$spec" -o "$tmp/out" -j "$JOBS" -q 2> "$tmp/time.txt" || { cat "$tmp/time.txt" >&2; exit 3; }
wall=$(grep "Elapsed (wall clock)" "$tmp/time.txt" | awk '{print $NF}')
rss=$(grep "Maximum resident" "$tmp/time.txt" | awk '{print $NF}')

# Every point alone, as a user would run it.
python3 - "$tmp/out/results.csv" > "$tmp/workloads.txt" <<'PY'
import csv, sys
for row in csv.DictReader(open(sys.argv[1])):
    print(row["point"], row["workload"])
PY
while read -r point workload; do
  "$SIM" --workload "$workload" --network "$preset/network.yml" --system "$preset/system.yml" \
    --report "$tmp/alone$point.json" > /dev/null 2> "$tmp/alone$point.err" || { cat "$tmp/alone$point.err" >&2; exit 3; }
done < "$tmp/workloads.txt"

python3 - "$tmp" "$wall" "$rss" "$JOBS" <<'PY'
import csv, json, sys
tmp, wall, rss, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
parts = [float(p) for p in wall.split(":")]
secs = parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) > 2 else 0)
points = {p["index"]: p for p in json.load(open(f"{tmp}/out/results.json"))["points"]}
rows, bad = [], 0
for row in csv.DictReader(open(f"{tmp}/out/results.csv")):
    t = json.load(open(f"{tmp}/alone{row['point']}.json"))["training"]
    p = points[int(row["point"])]["training"]
    same = (round(t["iteration_time_ns"] * 1000) == p["iteration_time_ps"] and
            abs(t["model_tflops_per_gpu"] - p["model_tflops_per_gpu"]) <= 1e-9 * p["model_tflops_per_gpu"] and
            abs(t["mfu"] - p["mfu"]) <= 1e-9 * p["mfu"])
    bad += not same
    query = row["workload"].split("?", 1)[1]
    q = dict(kv.split("=", 1) for kv in query.split("&"))
    notes = " ".join(points[int(row["point"])].get("notes", []))
    fold = "stand-ins" if "stand-ins" in notes else ("every rank" if "every rank" in notes else "exact")
    rows.append((p["iteration_time_ps"] / 1e3, q["model"], q["parallel"], float(row["model_tflops_per_gpu"]),
                 row["mfu_percent"], fold, points[int(row["point"])]["wall_seconds"], "yes" if same else "NO"))
rows.sort(key=lambda r: (r[1], r[0]))  # by model, fastest first
print(f"sim sweep {len(rows)} plans of 4,096 GPUs, -j {jobs}: {secs:.1f} s wall, peak RSS {rss / 1024:.0f} MiB")
with open(f"{tmp}/rows.tsv", "w") as out:
    out.write("model\tplan (`parallel=`)\titeration (ms)\tmodel TFLOP/s per GPU\tMFU (%)\tfolded\tpoint wall (s)\tequals the run alone\n")
    for ns, model, plan, tf, mfu, fold, w, same in rows:
        print(f"  {model:<13} {plan:<26} {ns / 1e6:10.1f} ms {tf:8.1f} TFLOP/s  MFU {mfu:>6}%  {fold:<10} {w:6.1f} s  alone: {same}")
        out.write(f"{model}\t{plan}\t{ns / 1e6:.1f}\t{tf:.1f}\t{mfu}\t{fold}\t{w:.1f}\t{same}\n")
    out.write(f"(the sweep)\t-j {jobs}, {len(rows)} points\t\t\t\t\t{secs:.1f}\t\n")
if bad:
    print(f"{bad} point(s) differ from the same plan run alone", file=sys.stderr)
    sys.exit(1)
PY
if [[ -n $docs ]]; then
  python3 scripts/bench/bench_doc.py block docs/workflows.md plan-sweep scripts/bench/bench_plan_sweep.sh "$tmp/rows.tsv" "$load0"
fi
