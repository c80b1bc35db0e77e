#!/bin/sh
# Times `sim collective import msccl` (wall time, peak RSS via /usr/bin/time)
# on the biggest shipped MSCCL-IR XML and on ring all-reduce XMLs written
# here for 16..128 GPUs (the sizes whose conversion times the collectiveapi
# paper reports: 259/398/1485/7662 ms). A benchmark, not a test.
#
#   SIM=build/sim scripts/bench_msccl_import.sh
set -eu
SIM=${SIM:-build/sim}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

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

measure() {  # label xml
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "%e %U %S %M" -o "$TMP/time" "$SIM" collective import msccl "$2" -o "$TMP/out/a" >/dev/null
    read -r wall user sys rss <"$TMP/time"
    printf '%-60s wall %6s s  cpu %5s s  peak %5s MiB\n' "$1" "$wall" "$(echo "$user + $sys" | bc)" "$((rss / 1024))"
  else
    start=$(date +%s.%N)
    "$SIM" collective import msccl "$2" -o "$TMP/out/a" >/dev/null
    printf '%-60s %8s s\n' "$1" "$(echo "$(date +%s.%N) - $start" | bc)"
  fi
}

BIG=$(ls -S "$ROOT"/../shared/testdata/msccl/*.xml 2>/dev/null | head -1 || true)
[ -n "$BIG" ] && measure "$(basename "$BIG") ($(wc -c <"$BIG") B)" "$BIG"
for n in 16 32 64 128; do
  ring_xml "$n" >"$TMP/ring$n.xml"
  measure "ring all-reduce, $n GPUs ($(wc -c <"$TMP/ring$n.xml") B)" "$TMP/ring$n.xml"
done
