#!/bin/bash
# A sweep on a Slurm cluster without MPI: a job array runs one shard per task
# (`sim sweep --shard I/K`), then a job that depends on the whole array merges
# the shards (`sim sweep merge`). The merged results.csv is byte-identical to
# a local run's. Each shard keeps its own cache: resubmitting reruns only
# missing or changed points.
#
#   scripts/sweep_slurm.sh submit SPEC.yml OUTDIR K [sbatch options...]
#       submits K array tasks and the merge job (prints their job ids)
#   scripts/sweep_slurm.sh task SPEC.yml OUTDIR      (what each array task runs)
#   scripts/sweep_slurm.sh merge OUTDIR K            (what the merge job runs)
#
# SIM (default: build/sim next to this script) is the binary to run; every
# node must see SPEC, its inputs and OUTDIR on a shared file system.
#SBATCH --job-name=sim-sweep
#SBATCH --cpus-per-task=2
#SBATCH --output=%x-%A_%a.log
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SIM=${SIM:-$here/../build/sim}
mode=${1:?usage: sweep_slurm.sh submit|task|merge ...}
shift

case "$mode" in
  submit)
    spec=${1:?SPEC.yml}; out=${2:?OUTDIR}; k=${3:?K shards}; shift 3
    mkdir -p "$out"
    array=$(sbatch --parsable --array=0-$((k - 1)) --export=ALL,SIM="$SIM" "$@" \
            "$here/sweep_slurm.sh" task "$spec" "$out")
    merge=$(sbatch --parsable --dependency=afterok:"$array" --export=ALL,SIM="$SIM" --job-name=sim-sweep-merge \
            --cpus-per-task=1 "$@" "$here/sweep_slurm.sh" merge "$out" "$k")
    echo "array job $array ($k shards), merge job $merge -> $out/results.csv"
    ;;
  task)
    spec=${1:?SPEC.yml}; out=${2:?OUTDIR}
    i=${SLURM_ARRAY_TASK_ID:?not in a Slurm array task}
    k=${SLURM_ARRAY_TASK_COUNT:?not in a Slurm array task}
    exec "$SIM" sweep "$spec" --shard "$i/$k" -j "${SLURM_CPUS_PER_TASK:-1}" -o "$out/shard_$i"
    ;;
  merge)
    out=${1:?OUTDIR}; k=${2:?K shards}
    dirs=()
    for ((i = 0; i < k; i++)); do dirs+=("$out/shard_$i"); done
    exec "$SIM" sweep merge "${dirs[@]}" -o "$out"
    ;;
  *)
    echo "sweep_slurm.sh: unknown mode '$mode' (submit, task or merge)" >&2
    exit 2
    ;;
esac
