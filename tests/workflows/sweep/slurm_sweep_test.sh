#!/bin/bash
# scripts/sweep_slurm.sh submit, run against fake sbatch/squeue/srun
# (tests/workflows/sweep/fake_slurm/) that run the jobs at once: checks the array
# size, each task's shard arguments, the merge job's dependency and
# arguments, and that the merged results.csv is the local run's, byte for byte.
#   slurm_sweep_test.sh <sim> <scripts/sweep_slurm.sh> <spec>
set -euo pipefail
sim=$1 slurm=$2 spec=$3
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/slurm_sweep.$$.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export FAKE_SLURM_DIR=$tmp/slurm PATH="$here/fake_slurm:$PATH"
mkdir -p "$FAKE_SLURM_DIR"
fail() { echo "FAIL: $*" >&2; for f in "$FAKE_SLURM_DIR"/*.log; do echo "== $f"; cat "$f"; done >&2; exit 1; }

# SIM is a wrapper that records how each task called sim.
cat > "$tmp/sim" <<WRAP
#!/bin/sh
echo "\$*" >> "$tmp/sim_calls.log"
exec "$sim" "\$@"
WRAP
chmod +x "$tmp/sim"

"$sim" sweep "$spec" -q -j 2 -o "$tmp/local"
SIM=$tmp/sim "$slurm" submit "$spec" "$tmp/out" 3 --partition=cpu > "$tmp/submit.log" || fail "submit exited $?"
cat "$tmp/submit.log"
grep -q "array job 1001 (3 shards), merge job 1002 -> $tmp/out/results.csv" "$tmp/submit.log" || fail "submit's summary"

# Two submissions: an array of 3 tasks, then the merge after it; both get the extra options.
[ "$(grep -c '^sbatch ' "$FAKE_SLURM_DIR/calls.log")" = 2 ] || fail "expected 2 sbatch calls"
grep -q "^1001 name=sim-sweep array=0-2 dependency= cpus=2 args=task $spec $tmp/out\$" "$FAKE_SLURM_DIR/jobs.log" ||
  fail "array job"
grep -q "^1002 name=sim-sweep-merge array= dependency=afterok:1001 cpus=1 args=merge $tmp/out 3\$" \
  "$FAKE_SLURM_DIR/jobs.log" || fail "merge job"
[ "$(grep -c -- '--partition=cpu' "$FAKE_SLURM_DIR/calls.log")" = 2 ] || fail "sbatch options not passed to both jobs"
! grep -q '^squeue\|^srun' "$FAKE_SLURM_DIR/calls.log" || fail "the script should need only sbatch"

# Each task ran its shard on the task's cores; the merge joined the three.
for i in 0 1 2; do
  grep -qx "sweep $spec --shard $i/3 -j 2 -o $tmp/out/shard_$i" "$tmp/sim_calls.log" || fail "task $i's sim call"
  [ -s "$tmp/out/shard_$i/results.csv" ] || fail "shard $i wrote nothing"
done
grep -qx "sweep merge $tmp/out/shard_0 $tmp/out/shard_1 $tmp/out/shard_2 -o $tmp/out" "$tmp/sim_calls.log" ||
  fail "merge's sim call"
[ "$(cat "$FAKE_SLURM_DIR/status.1001") $(cat "$FAKE_SLURM_DIR/status.1002")" = "ok ok" ] || fail "a job failed"
cmp "$tmp/local/results.csv" "$tmp/out/results.csv" || fail "merged results.csv differs from the local run's"

# A failed shard: the merge never runs (afterok), nothing is written.
rm -rf "$FAKE_SLURM_DIR" "$tmp/out2" && mkdir -p "$FAKE_SLURM_DIR"
SIM=/bin/false "$slurm" submit "$spec" "$tmp/out2" 2 > /dev/null
[ "$(cat "$FAKE_SLURM_DIR/status.1001") $(cat "$FAKE_SLURM_DIR/status.1002")" = "failed never" ] ||
  fail "the merge must wait for every shard"
[ ! -e "$tmp/out2/results.csv" ] || fail "merged output from failed shards"

# The task and merge modes outside Slurm, and a bad mode.
if env -u SLURM_ARRAY_TASK_ID "$slurm" task "$spec" "$tmp/x" 2> "$tmp/err"; then fail "task outside an array ran"; fi
grep -q "not in a Slurm array task" "$tmp/err" || fail "task outside an array: $(cat "$tmp/err")"
set +e; "$slurm" frobnicate 2> "$tmp/err"; code=$?; set -e
[ $code = 2 ] && grep -q "unknown mode 'frobnicate'" "$tmp/err" || fail "bad mode: exit $code"
echo "slurm sweep: 3 array tasks + merge (afterok) == local results.csv; a failed shard blocks the merge"
