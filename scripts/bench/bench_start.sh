# The start every table-writing benchmark script shares; source it after
# `set -euo pipefail` with the script's name and arguments:
#
#   source "$(dirname "$0")/bench_start.sh" bench_name "$@"
#
# Sets ROOT (the repository), SIM (the binary: $SIM, else build/sim, which
# must exist), docs (1 with --write-docs, the only argument taken), TMP (a
# folder removed on exit) and load0 (the 1-minute load average now, for the
# table's machine line). Any other argument is an error, exit 2.
bench_name=$1
shift
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SIM=${SIM:-$ROOT/build/sim}
[[ -x $SIM ]] || { echo "$bench_name: no sim binary at $SIM (set SIM=...)" >&2; exit 2; }
docs=
case ${1:-} in
  --write-docs) docs=1 ;;
  "") ;;
  *) echo "$bench_name: unknown argument '$1' (--write-docs)" >&2; exit 2 ;;
esac
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
load0=$(cut -d' ' -f1 /proc/loadavg)
