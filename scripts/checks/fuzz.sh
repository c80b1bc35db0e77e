#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, clang + address and undefined-
# behaviour sanitizers) in build-fuzz/, seeds each corpus from
# ../shared/testdata and configs/ (copied at fuzz time into
# build-fuzz/corpus/<harness>, never into the repo), and runs the harnesses at
# the lowest priority, FUZZ_JOBS at a time (default one).
#
#   scripts/checks/fuzz.sh [seconds per harness (default 25)] [harness ...]
#   FUZZ_NO_BUILD=1 scripts/checks/fuzz.sh ...    use the harnesses already built
#   FUZZ_CAMPAIGN=1 FUZZ_RUNS=10000000 scripts/checks/fuzz.sh SECONDS ...
#       a long campaign: every harness runs all N inputs (no CI shares below),
#       ASan keeps no allocation stacks (malloc_context_size=0: ~15% faster;
#       replay a finding to see them)
#   FUZZ_BUILD=DIR scripts/checks/fuzz.sh ...
#       the harnesses of another SIM_FUZZ build folder (default build-fuzz):
#       CI builds one clang sanitizer folder for the test suite and the
#       harnesses alike
#   FUZZ_MAX_LEN=N scripts/checks/fuzz.sh ...
#       inputs up to N bytes (default 65536): readers that parse slowly under
#       the sanitizers (the PyTorch traces, model files) run many times more
#       inputs at a few KiB, and parser faults rarely need more
#   FUZZ_RUNS=N FUZZ_SEED=S scripts/checks/fuzz.sh SECONDS ...
#       a reproducible run: N inputs per harness from random seed S (SECONDS
#       stays an upper bound). CI uses this so that a landing is never decided
#       by luck; open-ended random campaigns are for developers (a finding
#       there gets fixed and its input added to fuzz/regressions/).
#
# Prints each harness's executions and time; exits 1 if any harness found a
# crash, leak, timeout or out-of-memory (the input is kept in
# build-fuzz/artifacts/<harness>/: replay it with build-fuzz/fuzz/fuzz_<harness> <file>,
# then add it to fuzz/regressions/<harness>/ with the fix).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${FUZZ_BUILD:-build-fuzz}
case $B in /*) ;; *) B=$PWD/$B ;; esac
seconds=${1:-25}
shift || true

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (scripts/setup.sh installs clang and libclang-rt-14-dev)" >&2
  exit 2
fi
if [ ! -f "$B/CMakeCache.txt" ]; then
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DSIM_FUZZ=ON -DSIM_TESTS=OFF \
        ${CCACHE:+-DCMAKE_CXX_COMPILER_LAUNCHER=ccache} >/dev/null
fi
harnesses=("$@")
if ((${#harnesses[@]} == 0)); then
  mapfile -t harnesses < <(cut -d' ' -f1 "$B/fuzz_seeds.txt")
fi
# Only the harnesses and what they link: not sim, its modules or the replayers.
[ -n "${FUZZ_NO_BUILD:-}" ] || nice -n 19 cmake --build "$B" -j"${JOBS:-2}" --target "${harnesses[@]/#/fuzz_}" >/dev/null

# Seeds: the files below each seed folder, shaped for the harness.
seed() {
  local name=$1; shift
  local dir="$B/corpus/$name"
  mkdir -p "$dir"
  local f i=0
  for src in "$@"; do
    [ -e "$src" ] || continue
    while IFS= read -r -d '' f; do
      i=$((i + 1))
      case $name in
        et_gzip) gzip -c "$f" > "$dir/seed$i.gz" ;;
        msccl_xml) { printf '\003'; cat "$f"; } > "$dir/seed$i" ;;  # 4 ranks, then the XML
        *) cp "$f" "$dir/seed$i" ;;
      esac
    done < <(find "$src" -type f -size -1024k -print0)
  done
  if [ "$name" = comm_groups ]; then
    printf '{"": [0, 1, 2, 3], "tp0": [0, 1], "tp1": [2, 3]}' > "$dir/seed_groups"
    printf '{"0": [0, 1]}' > "$dir/seed_world"
  fi
  cp fuzz/regressions/"$name"/* "$dir"/ 2>/dev/null || true
}

# One harness: its corpus seeded, its run, its line of the table in $B/result_<name>.
fuzz_one() {
  local name=$1
  read -r -a seeds < <(grep "^$name " "$B/fuzz_seeds.txt" | cut -d' ' -f2-)
  seed "$name" "${seeds[@]}"
  mkdir -p "$B/artifacts/$name"
  local log="$B/fuzz_$name.log"
  # Harnesses slow per input (a whole MSCCL-IR import and check; a sweep
  # expanded and its configs parsed; a PyTorch trace) take a share of FUZZ_RUNS, so that the
  # CI step (all harnesses) stays within ~5 minutes on 2 cores.
  local runs=${FUZZ_RUNS:-}
  if [ -n "$runs" ] && [ -z "${FUZZ_CAMPAIGN:-}" ]; then
    case $name in
      msccl_import) runs=$((runs / 5)) ;;
      sweep_spec) runs=$((runs / 4)) ;;
      # curves with their checks, models with a rank generated (~1,000 inputs/s)
      reference_curve | model_yaml) runs=$((runs / 10)) ;;
      # a PyTorch trace read, linked, grouped and built into a graph
      pytorch_host_json | kineto_json) runs=$((runs / 50)) ;;
    esac
  fi
  local asan=detect_leaks=1
  [ -z "${FUZZ_CAMPAIGN:-}" ] || asan=$asan:malloc_context_size=0
  # The PyTorch harnesses hand each input over as a file in $TMPDIR: a folder
  # of the harness's own here, so that an input whose run aborts leaves nothing in /tmp.
  mkdir -p "$B/tmp/$name"
  local rc=0
  TMPDIR="$B/tmp/$name" ASAN_OPTIONS=$asan UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    nice -n 19 "$B/fuzz/fuzz_$name" -max_total_time="$seconds" ${runs:+-runs=$runs} \
      ${FUZZ_SEED:+-seed=$FUZZ_SEED} -timeout=10 -rss_limit_mb=2048 \
      -max_len="${FUZZ_MAX_LEN:-65536}" -print_final_stats=1 -artifact_prefix="$B/artifacts/$name/" \
      "$B/corpus/$name" >"$log" 2>&1 || rc=$?
  local done_runs took result
  done_runs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  took=$(grep -ao 'Done [0-9]* runs in [0-9]* second' "$log" | grep -o 'in [0-9]*' | grep -o '[0-9]*' || echo "$seconds")
  if ((rc == 0)); then result=ok; else result="FAILED (exit $rc, see $log)"; fi
  printf '%-18s %12s %8s %10s  %s\n' "$name" "${done_runs:-0}" "$took" "$(( ${done_runs:-0} / (took > 0 ? took : 1) ))" \
    "$result" >"$B/result_$name"
}

# FUZZ_JOBS harnesses at a time (default 1: a developer's machine stays usable);
# each is one process with its own seed and input count, so the result is the
# same at any FUZZ_JOBS.
jobs_max=${FUZZ_JOBS:-1}
rm -f "$B"/result_*
for name in "${harnesses[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n || true; done
  fuzz_one "$name" &
done
wait

failed=0
printf '%-18s %12s %8s %10s  %s\n' harness executions seconds exec/s result
for name in "${harnesses[@]}"; do
  if [ ! -f "$B/result_$name" ]; then
    printf '%-18s stopped before its result (%s/fuzz_%s.log)\n' "$name" "$B" "$name"
    failed=1
    continue
  fi
  cat "$B/result_$name"
  grep -q '  ok$' "$B/result_$name" || failed=1
done
exit $failed
