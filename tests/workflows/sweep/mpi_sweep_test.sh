#!/bin/sh
# `mpirun -n 2 sim sweep` writes the CSV a local run writes, byte for byte.
# Registered with ctest only when sim was built with OpenMPI.
#   mpi_sweep_test.sh <sim> <mpirun> <spec>
set -eu
sim=$1 mpirun=$2 spec=$3
# OpenMPI's runtime keeps allocations past MPI_Finalize by design; in the
# sanitizer build LeakSanitizer would report them as our leaks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpi_sweep.$$.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$sim" sweep "$spec" -q -j 2 -o "$tmp/local"
"$mpirun" --allow-run-as-root --oversubscribe -n 2 "$sim" sweep "$spec" -j 1 -o "$tmp/mpi" > "$tmp/mpi.log" 2>&1 || {
  cat "$tmp/mpi.log"; exit 1; }
cat "$tmp/mpi.log"
grep -q "48 of 48 points (48 simulated" "$tmp/mpi.log"   # rank 0 wrote all, none from a cache
cmp "$tmp/local/results.csv" "$tmp/mpi/results.csv"
echo "mpi sweep: results.csv identical to the local run"
