#!/usr/bin/env python3
"""Writes an MSCCL-IR ring all-reduce on N GPUs (default 4) to stdout.

In place, one channel, one threadblock per GPU sending to r+1 and receiving
from r-1. Chunk c starts at GPU c+1; on the way round it is received, reduced
and forwarded (rrs), completed at GPU c (rrcs), then sent round again (rcs) and
finally stored at the last GPU (r): 2N-1 steps per GPU.

    examples/msccl/gen_ring_xml.py [N] > ring_allreduce_N.xml
"""
import sys


def ring(n):
    m = lambda v: v % n
    out = [f'<algo name="ring{n}" proto="Simple" nchannels="1" nchunksperloop="{n}" ngpus="{n}" '
           f'coll="allreduce" inplace="1">']
    for r in range(n):
        steps = [("s", r - 1)]
        steps += [("rrs", r - k) for k in range(2, n)]
        steps += [("rrcs", r)]
        steps += [("rcs", r - k) for k in range(1, n - 1)]
        steps += [("r", r - (n - 1))]
        out.append(f'  <gpu id="{r}" i_chunks="{n}" o_chunks="0" s_chunks="0">')
        out.append(f'    <tb id="0" send="{m(r + 1)}" recv="{m(r - 1)}" chan="0">')
        for s, (kind, chunk) in enumerate(steps):
            out.append(f'      <step s="{s}" type="{kind}" srcbuf="i" srcoff="{m(chunk)}" dstbuf="i" '
                       f'dstoff="{m(chunk)}" cnt="1" depid="-1" deps="-1" hasdep="0"/>')
        out.append("    </tb>")
        out.append("  </gpu>")
    out.append("</algo>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(ring(int(sys.argv[1]) if len(sys.argv) > 1 else 4))
