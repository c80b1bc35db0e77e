#!/usr/bin/env bash
# Runs every command of the README's "Using it" section, in order, in a fresh
# folder that holds only links to the build, configs/, examples/ and scripts/
# (what a fresh clone has), and fails naming the first command that exits
# non-zero. So the README's examples cannot rot, and need nothing beside the
# repository (no ../shared).
#
#   tests/cli/readme_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/readme.$$.XXXXXX")
trap 'rm -rf "$work"' EXIT
ln -s "$build" "$work/build"
for d in configs examples scripts; do ln -s "$src/$d" "$work/$d"; done

# The indented lines of the section (outside fenced blocks), continuation lines
# joined, comments dropped.
commands=$(awk '
  /^## / { inside = ($0 == "## Using it") ; next }
  /^```/ { fence = !fence; next }   # fenced blocks are not commands to run
  fence { next }
  inside && /^    [^ #]/ || (inside && cont) {
    line = $0; sub(/^ +/, "", line)
    if (cont) cmd = cmd " " line; else cmd = line
    if (line ~ /\\$/) { sub(/\\$/, "", cmd); cont = 1 } else { cont = 0; print cmd }
  }' "$src/README.md")
[ -n "$commands" ] || { echo "readme_test: no commands found in the README's 'Using it' section"; exit 1; }

# Under the sanitizers (an unoptimised build, tens of times slower) the one
# full-scale run, Llama 3 on 16,384 GPUs with NCCL's collectives (about 20 s
# in Release), would pass ctest's limit: it is skipped there, and the Release
# suite runs it (as PublishedRuns.Llama3_405bOn16384H100sWithin5PercentOfThePaper).
sanitized=0
grep -q '^SIM_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null && sanitized=1

cd "$work"
n=0
while IFS= read -r cmd; do
  n=$((n + 1))
  cmd=${cmd%%#*}  # a trailing comment
  if [ "$sanitized" = 1 ] && [[ "$cmd" == *"--system sys/sp2048"* ]]; then
    echo "readme_test: command $n skipped under the sanitizers (the Release suite runs it): $cmd"
    continue
  fi
  if ! out=$(bash -c "$cmd" 2>&1 </dev/null); then
    echo "readme_test: command $n failed: $cmd"
    echo "$out" | tail -20
    exit 1
  fi
done <<< "$commands"
# Everything the commands wrote is ignored by git (.gitignore), so a user who
# runs them in a checkout keeps `git status` clean.
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  for path in $(find . -mindepth 1 -maxdepth 1 ! -type l -printf '%P\n' | sort); do
    [ -d "$path" ] && probe="$path/x" || probe="$path"
    if ! git -C "$src" check-ignore -q --no-index "$probe"; then
      echo "readme_test: the commands wrote $path, which .gitignore does not cover"
      exit 1
    fi
  done
fi
echo "readme_test: all $n commands of 'Using it' exit 0"
