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

cd "$work"
n=0
while IFS= read -r cmd; do
  n=$((n + 1))
  cmd=${cmd%%#*}  # a trailing comment
  if ! out=$(bash -c "$cmd" 2>&1 </dev/null); then
    echo "readme_test: command $n failed: $cmd"
    echo "$out" | tail -20
    exit 1
  fi
done <<< "$commands"
echo "readme_test: all $n commands of 'Using it' exit 0"
