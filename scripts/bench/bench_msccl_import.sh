#!/bin/sh
# Times `sim collective import msccl` (wall and CPU time, peak RSS from
# /usr/bin/time, Debian package `time`) on the biggest MSCCL-IR XML of
# docs/public-data.md (when ../shared/testdata/msccl holds it) and on ring
# all-reduce XMLs written here for 16..128 GPUs (the sizes whose conversion
# times the collectiveapi paper reports: 259/398/1485/7662 ms), then
# `sim collective check` of the 128-GPU XML. REPEAT runs each (default 2),
# shown as ranges. A benchmark, not a test.
#
#   SIM=build/sim scripts/bench/bench_msccl_import.sh
#   SIM=build/sim scripts/bench/bench_msccl_import.sh --write-docs   also rewrite the table of docs/benchmarks.md
set -eu
SIM=${SIM:-build/sim}
REPEAT=${REPEAT:-2}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
docs=
case ${1:-} in
  --write-docs) docs=1 ;;
  "") ;;
  *) echo "bench_msccl_import: unknown argument '$1' (--write-docs)" >&2; exit 2 ;;
esac
[ -x /usr/bin/time ] || { echo "bench_msccl_import: needs /usr/bin/time (Debian package 'time')" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
load0=$(cut -d' ' -f1 /proc/loadavg)
printf 'input\tXML (bytes)\tsteps\twall (s)\tCPU (s)\tpeak RSS (MiB)\n' >"$TMP/rows.tsv"

# A ring all-reduce in MSCCL-IR, one threadblock per GPU, laid out like
# ASTRA-sim's custom_allreduce.xml: send chunk r, then N-1 recv-reduce-copy +
# send steps, then N-1 receives of the finished chunks, forwarding all but the last.
ring_xml() {
  python3 - "$1" <<'EOF'
import sys
n = int(sys.argv[1])
def step(s, t, c):
    return (f'      <step s="{s}" type="{t}" srcbuf="i" srcoff="{c}" dstbuf="i" dstoff="{c}" cnt="1" '
            f'depid="-1" deps="-1" hasdep="0"/>')
out = [f'<algo name="ring{n}" proto="Simple" nchannels="1" nchunksperloop="{n}" ngpus="{n}" coll="allreduce" inplace="1">']
for r in range(n):
    out.append(f'  <gpu id="{r}" i_chunks="{n}" o_chunks="0" s_chunks="0">')
    out.append(f'    <tb id="0" send="{(r + 1) % n}" recv="{(r - 1) % n}" chan="0">')
    seq = [("s", r)]
    for k in range(1, n):
        seq += [("rrc", (r - k) % n), ("s", (r - k) % n)]
    for k in range(0, n - 1):
        seq.append(("r", (r - k) % n))
        if k < n - 2:
            seq.append(("s", (r - k) % n))
    out += [step(s, t, c) for s, (t, c) in enumerate(seq)]
    out += ['    </tb>', '  </gpu>']
out.append('</algo>')
print("\n".join(out))
EOF
}

# measure <label> <xml> <sim arguments...>: REPEAT runs, each range printed as min–max.
measure() {
  label=$1 xml=$2
  shift 2
  : >"$TMP/runs"
  i=0
  while [ "$i" -lt "$REPEAT" ]; do
    if ! /usr/bin/time -f "%e %U %S %M" -o "$TMP/time" "$SIM" "$@" >/dev/null 2>"$TMP/err"; then
      echo "bench_msccl_import: $label failed:" >&2
      cat "$TMP/err" >&2
      exit 3
    fi
    cat "$TMP/time" >>"$TMP/runs"
    i=$((i + 1))
  done
  steps=$(grep -c '<step ' "$xml")
  awk -v l="$label" -v b="$(wc -c <"$xml")" -v s="$steps" -v tsv="$TMP/rows.tsv" '
    function range(lo, hi, f) { return sprintf(f, lo) == sprintf(f, hi) ? sprintf(f, lo) : sprintf(f "–" f, lo, hi) }
    { c = $2 + $3; m = $4 / 1024
      if (NR == 1 || $1 < w0) w0 = $1; if (NR == 1 || $1 > w1) w1 = $1
      if (NR == 1 || c < c0) c0 = c; if (NR == 1 || c > c1) c1 = c
      if (NR == 1 || m < m0) m0 = m; if (NR == 1 || m > m1) m1 = m }
    END { w = range(w0, w1, "%.2f"); c = range(c0, c1, "%.2f"); m = range(m0, m1, "%.0f")
          printf "%-72s %9d B %7d steps  wall %-11s s  cpu %-11s s  peak %s MiB\n", l, b, s, w, c, m
          printf "%s\t%d\t%d\t%s\t%s\t%s\n", l, b, s, w, c, m >>tsv }' "$TMP/runs"
}

BIG=$(ls -S "$ROOT"/../shared/testdata/msccl/*.xml 2>/dev/null | head -1 || true)
if [ -n "$BIG" ]; then
  measure "\`msccl/$(basename "$BIG")\` (the largest of docs/public-data.md)" "$BIG" \
    collective import msccl "$BIG" -o "$TMP/out/a"
fi
for n in 16 32 64 128; do
  ring_xml "$n" >"$TMP/ring$n.xml"
  measure "ring all-reduce, $n GPUs" "$TMP/ring$n.xml" collective import msccl "$TMP/ring$n.xml" -o "$TMP/out/a"
done
measure "ring all-reduce, 128 GPUs, \`sim collective check\` (imported in memory, data check, no files)" \
  "$TMP/ring128.xml" collective check "$TMP/ring128.xml"
if [ -n "$docs" ]; then
  python3 "$ROOT/scripts/bench/bench_doc.py" block "$ROOT/docs/benchmarks.md" msccl-import scripts/bench/bench_msccl_import.sh "$TMP/rows.tsv" "$load0"
fi
