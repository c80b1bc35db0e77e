#!/usr/bin/env python3
"""The simulated tables of docs/network.md, each printed in Markdown by `sim` runs made here.

    scripts/docs/tables/network.py ecmp        multi-path routing on a 1:1 leaf-spine, flow backend:
                                               ecmp-hash, spray and adaptive, U = F = 4, 8, 16
    scripts/docs/tables/network.py qps         the same fabric, U = F = 8, ecmp-hash with 1, 2, 4, 8
                                               queue pairs per connection
    scripts/docs/tables/network.py seeds       one training iteration on configs/fattree64.yml (2:1), flow,
                                               every rank, under ecmp-hash, adaptive and spray with ECMP
                                               seeds 0-7: the spread of one hash draw
    scripts/docs/tables/network.py ns3-ring    ring all-reduce of 1, 16, 64 MiB on configs/ring8.yml and
                                               switch8.yml: analytical, flow, ns3 (TCP), ns3's packets
                                               and drops                                   (ns3: long)
    scripts/docs/tables/network.py ns3-presets NCCL's all-reduce of 16 and 256 MiB on h100-roce-clos (roce)
                                          and dgx-h100-superpod (ib), 2 nodes: flow against ns3,
                                          NVLS's switch reductions as packets        (ns3: long)
    scripts/docs/tables/network.py traffic-classes
                                          two jobs on ns3 with 2 traffic classes: a victim job's
                                          16 MiB beside another job's 3-to-1 incast, on the
                                          incast's service level and on its own    (ns3: slow)
    scripts/docs/tables/network.py astrasim-ring-one-hop
                                          ASTRA-sim's ring schedule as Chakra ETs on Ring_8,
                                          FullyConnected_8, Ring_64, flow, against ASTRA-sim's
                                          congestion-aware rows                (1M-node ETs: long)
    scripts/docs/tables/network.py astrasim-ring-switch
                                          the same on Switch_8 and Switch_64, with the gap
                                          k x steps x m/B                      (1M-node ETs: long)
    scripts/docs/tables/network.py astrasim-ring-ns3
                                          the 8-NPU rows of the two above on flow and ns3 (long)
    scripts/docs/tables/network.py astrasim-rows
                                          every 8-NPU congestion-aware row of ASTRA-sim run from
                                          its own parameters on analytical, flow and ns3  (long)
    scripts/docs/tables/network.py astrasim-rows-within
                                          how many of those rows each backend has within 1%, 5%
                                          and 20% of ASTRA-sim                            (long)

ecmp, qps: a leaf-spine of U NPUs per leaf and U spines, every link 50 GB/s (B) and 500 ns (L),
`shape: FatTree`, with as many leaf pairs as trials / 2. Leaves 2p and 2p + 1 are two trials:
each NPU of leaf 2p sends S = 1 MiB to an NPU of leaf 2p + 1 (a random permutation, Python's
random.Random(12345)), and each NPU of leaf 2p + 1 to one of leaf 2p (another), all at time 0.
The two directions use disjoint links (leaf 2p's uplinks and the spines' links down to leaf
2p + 1, and the reverse), and so do different leaf pairs, so the trials are independent; every
NPU pair is a different key of the ECMP hash (seed 0). One Chakra ET per rank (a send and a
receive, no dependencies), run as

    sim --workload wl/perm --network leafspine.yml --system routing.yml --backend flow \
        --link-stats links.csv --timeline timeline.json -q

with routing.yml's `network:` section holding `routing` and `qps_per_connection`. Per trial:
uplinks used = the leaf's uplinks (leaf -> spine) that carried bytes (links.csv); a message's
throughput = S / (its receive's end - 4L), in units of B (the timeline's receive nodes); the
last delivery = (the trial's last receive's end - 4L) / (S / B). Printed: means over trials, and
the balls-into-bins expectation U (1 - (1 - 1/U)^(F q)) of uplinks used. "1 exactly" when every
message of every trial arrives at S / B + 4L to the picosecond. Trials: 256, 128 and 64 for
U = 4, 8, 16 (1,024 NPUs each); qps uses the U = 8 trials.

seeds: `sim --workload 'gen:transformer?model=llama3-8b&seq=2048&global-batch=64&parallel=tp=4,pp=2,dp=8'
--network configs/fattree64.yml --system sys.yml --exact-folding --report R.json`, sys.yml:
`network: {backend: flow, routing: R, ecmp_seed: s}` for s = 0..7; the iteration is sim_time_ns.

ns3-ring: `sim workload gen collectives --npus 8 --coll allreduce --size S -o WL`, then
`sim --workload WL --network configs/<topology> --backend B --report R.json --link-stats L.csv`
for B = analytical, flow, ns3 (default options); times in us (sim_time_ns), packets and drops
summed over the ns3 run's links.

astrasim-*: ASTRA-sim's times come from bench/astrasim_congestion_aware.tsv (its header says where
they come from); the network file is written from the row's topology as ASTRA-sim's form
(`topology: [ Ring ]`, `npus_count: [ 8 ]`, `bandwidth: [ 50.0 ]`, `latency: [ 500.0 ]`) plus
`bandwidth_unit: GiB/s` (ASTRA-sim's "GB/s" is 2^30 B/s).
  astrasim-ring-*: ASTRA-sim's ring as Chakra ETs (what tests/system/astrasim/
  astrasim_congestion_test.cpp builds): k = 4 chunks of c = S/4 one after another; per chunk
  `steps` send/receive pairs of m bytes to the ring neighbours (all-reduce 2(n-1) of c/n,
  reduce-scatter n-1 of c/n, all-gather n-1 of c, all-to-all n(n-1)/2 of c/n), each step after
  the previous receive; after each of the first n-1 receives of all-reduce and reduce-scatter a
  COMP node of 3m bytes; each chunk closed by a COMP node of 16,000 B (10 ns at 1600 GB/s). Run
  with `sim workload gen collectives --npus n --coll C --size S -o WL` and
  `sim --workload WL --network NET --system sys.yml --collective C=algo/ring --backend flow|ns3`,
  sys.yml: `network: {message_latency: 10ns}` (ASTRA-sim's endpoint delay per message) and
  `collective: {reduction_bandwidth: 1600GB/s}` (its local-mem-bw). The switch table's last column
  is k x steps x m/B (B = 50 x 2^30 B/s), computed here.
  astrasim-rows*: `sim workload gen collectives --npus 8 --coll C --size S -o WL` and
  `sim --workload WL --system <algorithm>_1d.json --network NET --backend B --report R.json`,
  the system file in ASTRA-sim's JSON form with the parameters the TSV's header lists (ASTRA-sim's
  quirks on), B = analytical, flow, ns3 (default options). Ratios are ours / ASTRA-sim - 1.

Uses $SIM, else `sim` on the PATH. Scratch files in a temporary folder, removed at the end.
"""
import csv
import json
import os
import random
import subprocess
import sys
import tempfile

SIM = os.environ.get("SIM", "sim")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
TSV = os.path.join(ROOT, "bench", "astrasim_congestion_aware.tsv")
MiB = 1 << 20

# --- running sim -------------------------------------------------------------------------------


def run(args, cwd):
    r = subprocess.run([SIM] + args, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("network.py: `sim %s` exited %d:\n%s" % (" ".join(args), r.returncode, (r.stdout + r.stderr)[-2000:]))
    return r.stdout


def report(args, cwd):
    """sim_time_ns of a run (its JSON report)."""
    run(["-q", "--report", "report.json"] + args, cwd)
    with open(os.path.join(cwd, "report.json")) as f:
        return json.load(f)["sim_time_ns"]


def link_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


# --- Chakra ETs, written by hand (protobuf wire format of proto/et_def.proto) -------------------


def varint(x):
    out = bytearray()
    while True:
        b = x & 0x7F
        x >>= 7
        if not x:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def field_int(number, x):
    return varint(number << 3) + varint(x)


def field_bytes(number, b):
    return varint((number << 3) | 2) + varint(len(b)) + b


def attr_int64(name, value):  # Node.attr (10): AttributeProto name (1), int64_val (9)
    return field_bytes(10, field_bytes(1, name.encode()) + field_int(9, value))


def attr_uint64(name, value):  # uint64_val (13)
    return field_bytes(10, field_bytes(1, name.encode()) + field_int(13, value))


METADATA = field_bytes(1, b"0.0.4")  # GlobalMetadata.version
SEND, RECV, COMP = 5, 6, 4  # NodeType
HEAD = {SEND: field_bytes(2, b"send") + field_int(3, SEND), RECV: field_bytes(2, b"recv") + field_int(3, RECV),
        COMP: field_bytes(2, b"comp") + field_int(3, COMP)}


def frame(b):
    return varint(len(b)) + b


def write_et(path, nodes):
    """nodes: encoded Node messages, in issue order."""
    with open(path, "wb") as f:
        f.write(frame(METADATA) + b"".join(frame(n) for n in nodes))


# --- ecmp, qps ---------------------------------------------------------------------------------

S = MiB
B = 50e9  # B/s
LAT = 500.0  # ns
DRAIN = S / B * 1e9  # S / B in ns: 20971.52
TRIALS = {4: 256, 8: 128, 16: 64}  # even: two per leaf pair


def leaf_spine(tmp, u):
    """The trials' workload and fabric for U = u: (leaves, [(trial's senders' leaf, [receiving ranks])])."""
    trials = TRIALS[u]
    leaves = trials  # two trials per leaf pair
    rng = random.Random(12345)
    os.makedirs(os.path.join(tmp, "wl"), exist_ok=True)
    dst = [0] * (leaves * u)
    for p in range(leaves // 2):
        a, b = 2 * p * u, (2 * p + 1) * u
        for lo, hi in ((a, b), (b, a)):
            perm = list(range(u))
            rng.shuffle(perm)
            for i in range(u):
                dst[lo + i] = hi + perm[i]
    src = [0] * len(dst)
    for s, d in enumerate(dst):
        src[d] = s
    for r in range(len(dst)):
        write_et(os.path.join(tmp, "wl", "perm.%d.et" % r), [
            field_int(1, 0) + HEAD[SEND] + attr_int64("comm_dst", dst[r]) + attr_int64("comm_size", S) +
            attr_int64("comm_tag", 0),
            field_int(1, 1) + HEAD[RECV] + attr_int64("comm_src", src[r]) + attr_int64("comm_size", S) +
            attr_int64("comm_tag", 0)])
    write(os.path.join(tmp, "leafspine.yml"), "shape: FatTree\nleaves: %d\nnpus_per_leaf: %d\nspines: %d\n"
          "bandwidth: 50GB/s\nlatency: 500ns\n" % (leaves, u, u))
    return leaves


def trials_of(tmp, u, leaves, routing, qps):
    """Per trial (a leaf's sends): (uplinks used, mean throughput in B, last drain in S/B, all at the bound)."""
    write(os.path.join(tmp, "routing.yml"), "network:\n  routing: %s\n  qps_per_connection: %d\n" % (routing, qps))
    run(["--workload", "wl/perm", "--network", "leafspine.yml", "--system", "routing.yml", "--backend", "flow",
         "--link-stats", "links.csv", "--timeline", "timeline.json", "-q"], tmp)
    npus = leaves * u
    links = link_rows(os.path.join(tmp, "links.csv"))
    with open(os.path.join(tmp, "timeline.json")) as f:
        events = json.load(f)["traceEvents"]
    rank_of = {e["pid"]: int(e["args"]["name"].split()[1]) for e in events
               if e["ph"] == "M" and e["name"] == "process_name"}
    arrival = {}  # receiving rank -> end of its receive, ns
    for e in events:
        if e["ph"] == "X" and e["name"] == "recv":
            arrival[rank_of[e["pid"]]] = e["args"]["end_ns"]
    # receivers of the leaf's sends: the permutation written in its ETs
    out = []
    for leaf in range(leaves):
        used = 0
        for j in range(u):  # leaf -> spine j: link 2 npus + 2 (leaf u + j) (network/fat_tree.cpp)
            row = links[2 * npus + 2 * (leaf * u + j)]
            assert row["src"] == "sw%d" % leaf and row["dst"] == "sw%d" % (leaves + j), row
            used += int(row["bytes"]) > 0
        partner = leaf + 1 if leaf % 2 == 0 else leaf - 1
        ends = [arrival[r] for r in range(partner * u, (partner + 1) * u)]
        drains = [t - 4 * LAT for t in ends]
        out.append((used, sum(DRAIN / d for d in drains) / u, max(drains) / DRAIN,
                    all(abs(t - (DRAIN + 4 * LAT)) < 1e-3 for t in ends)))
    assert len(arrival) == npus
    return out


def expected_bins(u, balls):
    return u * (1 - (1 - 1 / u) ** balls)


def mean(xs):
    return sum(xs) / len(xs)


def table_ecmp():
    print("| routing | U = F | trials | uplinks used (expected) | mean throughput, B (expected) |")
    print("|---|---|---|---|---|")
    rows = {}
    with tempfile.TemporaryDirectory(prefix="network-ecmp.") as tmp:
        for u in (4, 8, 16):
            leaves = leaf_spine(tmp, u)
            for routing in ("ecmp-hash", "spray", "adaptive"):
                rows[routing, u] = trials_of(tmp, u, leaves, routing, 1)
            for f in os.listdir(os.path.join(tmp, "wl")):
                os.remove(os.path.join(tmp, "wl", f))
    for routing in ("ecmp-hash", "spray", "adaptive"):
        for u in (4, 8, 16):
            t = rows[routing, u]
            used, thr = mean([x[0] for x in t]), mean([x[1] for x in t])
            if routing == "ecmp-hash":
                bins = expected_bins(u, u)
                print("| %s | %d | %d | %.3f (%.3f) | %.3f (%.3f) |" % (routing, u, len(t), used, bins, thr, bins / u))
            else:
                exact = all(x[3] for x in t)
                print("| %s | %d | %d | %.3f (%d) | %s (1) |" % (routing, u, len(t), used, u,
                                                               "1 exactly" if exact else "%.3f" % thr))


def table_qps():
    u = 8
    print("| QPs per connection | uplinks used (expected) | mean throughput, B | last delivery, x S / B |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="network-qps.") as tmp:
        leaves = leaf_spine(tmp, u)
        for q in (1, 2, 4, 8):
            t = trials_of(tmp, u, leaves, "ecmp-hash", q)
            print("| %d | %.3f (%.3f) | %.3f | %.3f |" % (q, mean([x[0] for x in t]), expected_bins(u, u * q),
                                                          mean([x[1] for x in t]), mean([x[2] for x in t])))


# --- seeds -------------------------------------------------------------------------------------

SEEDS_WORKLOAD = "gen:transformer?model=llama3-8b&seq=2048&global-batch=64&parallel=tp=4,pp=2,dp=8"


def table_seeds():
    print("| routing | iteration per ECMP seed 0-7 (ms) | min / median / max (ms) | max / min |")
    print("|---|---|---|---|")
    fabric = os.path.join(ROOT, "configs", "fattree64.yml")
    with tempfile.TemporaryDirectory(prefix="network-seeds.") as tmp:
        for routing in ("ecmp-hash", "adaptive", "spray"):
            times = []
            for seed in range(8):
                write(os.path.join(tmp, "sys.yml"),
                      "network: {backend: flow, routing: %s, ecmp_seed: %d}\n" % (routing, seed))
                times.append(report(["--workload", SEEDS_WORKLOAD, "--network", fabric, "--system", "sys.yml",
                                     "--exact-folding"], tmp) / 1e6)
            s = sorted(times)
            median = (s[3] + s[4]) / 2
            print("| %s | %s | %.1f / %.1f / %.1f | %.3f |" % (routing, ", ".join("%.1f" % x for x in times),
                                                              s[0], median, s[-1], s[-1] / s[0]))


# --- ns3-ring ----------------------------------------------------------------------------------


def table_ns3_ring():
    print("| topology | S | analytical (us) | flow (us) | ns3 (us) | ns3 vs flow | ns3 packets (all hops) | drops |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="network-ns3.") as tmp:
        for mib in (1, 16, 64):
            run(["workload", "gen", "collectives", "--npus", "8", "--coll", "allreduce", "--size", "%dMiB" % mib,
                 "-o", "wl/ar%d" % mib], tmp)
        for topo in ("ring8.yml", "switch8.yml"):
            net = os.path.join(ROOT, "configs", topo)
            for mib in (1, 16, 64):
                us = {}
                for backend in ("analytical", "flow", "ns3"):
                    us[backend] = report(["--workload", "wl/ar%d" % mib, "--network", net, "--backend", backend,
                                          "--link-stats", "links.csv"], tmp) / 1e3
                links = link_rows(os.path.join(tmp, "links.csv"))  # the ns3 run's
                packets = sum(int(r["packets"]) for r in links)
                drops = sum(int(r["drops"]) for r in links)
                print("| %s | %d MiB | %.2f | %.2f | %.2f | %+.2f%% | %s | %d |" % (
                    topo, mib, us["analytical"], us["flow"], us["ns3"], 100 * (us["ns3"] / us["flow"] - 1),
                    format(packets, ","), drops))


def table_ns3_presets():
    print("| preset (2 nodes, 16 GPUs) | transport | S | NCCL's choice | flow (us) | ns3 (us) | ns3 vs flow "
          "| packets (all hops) | drops | PFC pauses |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="network-ns3-presets.") as tmp:
        sizes = (16, 256)
        for mib in sizes:
            run(["workload", "gen", "collectives", "--npus", "16", "--coll", "allreduce", "--size", "%dMiB" % mib,
                 "-o", "wl/ar%d" % mib], tmp)
        for preset, transport in (("h100-roce-clos", "roce"), ("dgx-h100-superpod", "ib")):
            run(["system", "gen", preset, "--nodes", "2", "-o", preset], tmp)
            for mib in sizes:
                us = {}
                for backend in ("flow", "ns3"):
                    us[backend] = report(["--workload", "wl/ar%d" % mib, "--system", preset, "--backend", backend,
                                          "--link-stats", "links.csv"], tmp) / 1e3
                with open(os.path.join(tmp, "report.json")) as f:
                    algorithm = json.load(f)["collectives"][0]["algorithm"]
                links = link_rows(os.path.join(tmp, "links.csv"))  # the ns3 run's
                total = lambda key: sum(int(r[key]) for r in links)
                print("| %s | %s | %d MiB | `%s` | %.2f | %.2f | %+.2f%% | %s | %d | %d |" % (
                    preset, transport, mib, algorithm, us["flow"], us["ns3"], 100 * (us["ns3"] / us["flow"] - 1),
                    format(total("packets"), ","), total("drops"), total("pauses_received")))


VICTIM_NET = ("npus: 6\nswitches: 2\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n"
              "  - {src: npu0, dst: sw0}\n  - {src: npu1, dst: sw0}\n  - {src: npu2, dst: sw0}\n"
              "  - {src: npu3, dst: sw0}\n  - {src: npu4, dst: sw1}\n  - {src: npu5, dst: sw1}\n"
              "  - {src: sw0, dst: sw1, bandwidth: 200GB/s}\n")


def p2p(node_id, send, peer, size):
    return (field_int(1, node_id) + HEAD[SEND if send else RECV] +
            attr_int64("comm_dst" if send else "comm_src", peer) + attr_int64("comm_size", size) +
            attr_int64("comm_tag", 0))


def table_traffic_classes():
    size = 16 * MiB
    cases = (("roce, PFC alone", "transport: roce\n  dcqcn: false"), ("roce, PFC and DCQCN", "transport: roce"),
             ("ib", "transport: ib"))
    print("| transport | victim job alone (us) | on the incast job's service level (us) | on its own (us) "
          "| incast job (us), shared / own |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="network-classes.") as tmp:
        os.makedirs(os.path.join(tmp, "wl"))
        for r in range(3):
            write_et(os.path.join(tmp, "wl", "incast.%d.et" % r), [p2p(1, True, 3, size)])
        write_et(os.path.join(tmp, "wl", "incast.3.et"), [p2p(k + 1, False, k, size) for k in range(3)])
        for r in range(2):
            write_et(os.path.join(tmp, "wl", "victim.%d.et" % r), [p2p(1, r == 0, 1 - r, size)])
        write(os.path.join(tmp, "victim.yml"), VICTIM_NET)
        write(os.path.join(tmp, "both.json"), json.dumps(
            {"incast-0": 0, "incast-1": 1, "incast-2": 2, "incast-3": 4, "victim-0": 3, "victim-1": 5}))
        write(os.path.join(tmp, "alone.json"), json.dumps({"victim-0": 3, "victim-1": 5}))
        jobs = ["--workload", "incast=wl/incast", "--workload", "victim=wl/victim", "--placement", "both.json"]
        for label, transport in cases:
            write(os.path.join(tmp, "sys.yml"), "network:\n  backend: ns3\n  %s\n  traffic_classes: 2\n"
                  "  buffer_size: 4MB\n" % transport)
            common = ["--network", "victim.yml", "--system", "sys.yml"]
            alone = report(["--workload", "victim=wl/victim", "--placement", "alone.json"] + common, tmp)
            times = {}
            for level in ("0", "1"):
                run(["-q", "--report", "report.json", "--service-level", "victim=" + level] + jobs + common, tmp)
                with open(os.path.join(tmp, "report.json")) as f:
                    times[level] = {j["name"]: j["sim_time_ns"] for j in json.load(f)["jobs"]}
            print("| %s | %.1f | %.1f (x%.2f) | %.1f (x%.2f) | %.1f / %.1f |" % (
                label, alone / 1e3, times["0"]["victim"] / 1e3, times["0"]["victim"] / alone,
                times["1"]["victim"] / 1e3, times["1"]["victim"] / alone, times["0"]["incast"] / 1e3,
                times["1"]["incast"] / 1e3))


# --- ASTRA-sim ---------------------------------------------------------------------------------

COLL = {"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reducescatter",
        "all_to_all": "alltoall"}
IMPLEMENTATION = {"all_reduce": "all-reduce-implementation", "all_gather": "all-gather-implementation",
                  "reduce_scatter": "reduce-scatter-implementation", "all_to_all": "all-to-all-implementation"}
SPLITS = 4
ASTRA_B = 50 * (1 << 30) / 1e9  # bytes per ns


def astrasim_rows():
    with open(TSV, newline="") as f:
        lines = [ln for ln in f if not ln.startswith("#")]
    rows = list(csv.DictReader(lines, delimiter="\t"))
    for r in rows:
        r["npus"], r["size_bytes"], r["sim_time_ns"] = int(r["npus"]), int(r["size_bytes"]), int(r["sim_time_ns"])
    return rows


def astrasim_network(tmp, topology):
    """ASTRA-sim's network file of `topology` (e.g. Ring_8), read with its "GB/s" as 2^30 B/s."""
    path = os.path.join(tmp, topology + ".yml")
    if not os.path.exists(path):
        shape, npus = topology.rsplit("_", 1)
        write(path, "topology: [ %s ]\nnpus_count: [ %s ]\nbandwidth: [ 50.0 ]  # GB/s\nlatency: [ 500.0 ]  # ns\n"
              "\nbandwidth_unit: GiB/s\n" % (shape, npus))
    return topology + ".yml"


def collective_workload(tmp, row):
    prefix = "wl/%s_%d_%d" % (row["collective"], row["npus"], row["size_bytes"])
    if not os.path.exists(os.path.join(tmp, prefix + ".0.et")):
        run(["workload", "gen", "collectives", "--npus", str(row["npus"]), "--coll", COLL[row["collective"]],
             "--size", str(row["size_bytes"]), "-o", prefix], tmp)
    return prefix


def ring_phase(collective, n, chunk):
    """ASTRA-sim's ring phase on a chunk: (steps, reducing steps, bytes per message)."""
    return {"all_reduce": (2 * (n - 1), n - 1, chunk // n), "reduce_scatter": (n - 1, n - 1, chunk // n),
            "all_gather": (n - 1, 0, chunk), "all_to_all": (n * (n - 1) // 2, 0, chunk // n)}[collective]


def write_ring_ets(tmp, row):
    """ASTRA-sim's ring schedule of the row's collective as one Chakra ET per rank; the prefix."""
    n, collective = row["npus"], row["collective"]
    prefix = "algo/ring_%s_%d_%d" % (collective, n, row["size_bytes"])
    if os.path.exists(os.path.join(tmp, prefix + ".0.et")):
        return prefix
    os.makedirs(os.path.join(tmp, "algo"), exist_ok=True)
    for f in os.listdir(os.path.join(tmp, "algo")):  # one schedule at a time: a 64-NPU all-to-all is 30 MB
        os.remove(os.path.join(tmp, "algo", f))
    steps, reducing, m = ring_phase(collective, n, row["size_bytes"] // SPLITS)
    size = attr_int64("comm_size", m)
    reduce_bytes = attr_uint64("tensor_size", 3 * m)
    trailing_ed = attr_uint64("tensor_size", 16000)  # 10 ns at 1600 GB/s
    tag_name = field_bytes(1, b"comm_tag")
    for pos in range(n):
        to_next = attr_int64("comm_dst", (pos + 1) % n)
        from_prev = attr_int64("comm_src", (pos - 1) % n)
        nodes, node_id, last = [], 0, None
        for c in range(SPLITS):
            for s in range(steps):
                tag = field_bytes(10, tag_name + field_int(9, c * steps + s))
                deps = field_bytes(5, varint(last)) if last is not None else b""
                nodes.append(field_int(1, node_id) + HEAD[SEND] + deps + to_next + size + tag)
                nodes.append(field_int(1, node_id + 1) + HEAD[RECV] + deps + from_prev + size + tag)
                last, node_id = node_id + 1, node_id + 2
                if s < reducing:
                    nodes.append(field_int(1, node_id) + HEAD[COMP] + field_bytes(5, varint(last)) + reduce_bytes)
                    last, node_id = node_id, node_id + 1
            nodes.append(field_int(1, node_id) + HEAD[COMP] + field_bytes(5, varint(last)) + trailing_ed)
            last, node_id = node_id, node_id + 1
        write_et(os.path.join(tmp, "%s.%d.et" % (prefix, pos)), nodes)
    return prefix


def ring_ns(tmp, row, backend):
    """The row's collective with ASTRA-sim's ring injected as ETs; simulated ns."""
    if not os.path.exists(os.path.join(tmp, "ring.yml")):
        write(os.path.join(tmp, "ring.yml"), "network:\n  message_latency: 10ns\ncollective:\n"
              "  reduction_bandwidth: 1600GB/s\n")
    algo = write_ring_ets(tmp, row)
    return report(["--workload", collective_workload(tmp, row), "--network", astrasim_network(tmp, row["topology"]),
                   "--system", "ring.yml", "--collective", "%s=%s" % (COLL[row["collective"]], algo),
                   "--backend", backend], tmp)


def pct(ours, theirs, digits=2):
    return "%+.*f%%" % (digits, 100.0 * (ours / theirs - 1.0))


ONE_HOP = ("Ring_8", "FullyConnected_8", "Ring_64")
SWITCH = ("Switch_8", "Switch_64")


def table_astrasim_ring(topologies, gap):
    head = "| topology | collective | S (B) | ours (ns) | ASTRA-sim (ns) | difference |"
    print(head + (" k x steps x m/B (ns) |" if gap else ""))
    print("|---" * (7 if gap else 6) + "|")
    with tempfile.TemporaryDirectory(prefix="network-astrasim.") as tmp:
        for r in astrasim_rows():
            if r["algorithm"] != "ring" or r["topology"] not in topologies:
                continue
            ours, theirs = ring_ns(tmp, r, "flow"), r["sim_time_ns"]
            cells = [r["topology"], r["collective"], str(r["size_bytes"]), "%.2f" % ours, str(theirs),
                     pct(ours, theirs, 3)]
            if gap:
                steps, _, m = ring_phase(r["collective"], r["npus"], r["size_bytes"] // SPLITS)
                cells.append("%.0f" % (SPLITS * steps * m / ASTRA_B))
            print("| " + " | ".join(cells) + " |")


def table_astrasim_ring_ns3():
    print("| topology | collective | S (B) | ASTRA-sim (ns) | flow (ns) | ns3 (ns) | ns3 vs ASTRA-sim | ns3 vs flow |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="network-astrasim.") as tmp:
        for r in astrasim_rows():
            if r["algorithm"] != "ring" or r["npus"] != 8:
                continue
            flow, ns3, theirs = ring_ns(tmp, r, "flow"), ring_ns(tmp, r, "ns3"), r["sim_time_ns"]
            print("| %s | %s | %d | %d | %.1f | %.1f | %s | %s |" % (
                r["topology"], r["collective"], r["size_bytes"], theirs, flow, ns3, pct(ns3, theirs), pct(ns3, flow)))


BACKENDS = ("analytical", "flow", "ns3")


def astrasim_system(tmp, rows, algorithm):
    """ASTRA-sim's system file for `algorithm` (1 dimension), in its JSON form."""
    path = os.path.join(tmp, algorithm + "_1d.json")
    if not os.path.exists(path):
        doc = {"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
               "preferred-dataset-splits": SPLITS}
        for c in COLL:  # every collective the algorithm has rows for
            if any(r["algorithm"] == algorithm and r["collective"] == c for r in rows):
                doc[IMPLEMENTATION[c]] = [algorithm]
        doc.update({"collective-optimization": "localBWAware", "local-mem-bw": 1600, "boost-mode": 0,
                    "roofline-enabled": 0, "peak-perf": 900})
        write(path, json.dumps(doc, indent=4) + "\n")
    return algorithm + "_1d.json"


def eight_npu_rows():
    """[(row, {backend: ns})] for every 8-NPU row of the TSV."""
    rows = astrasim_rows()
    out = []
    with tempfile.TemporaryDirectory(prefix="network-astrasim.") as tmp:
        for r in rows:
            if r["npus"] != 8:
                continue
            args = ["--workload", collective_workload(tmp, r), "--system", astrasim_system(tmp, rows, r["algorithm"]),
                    "--network", astrasim_network(tmp, r["topology"])]
            out.append((r, {b: report(args + ["--backend", b], tmp) for b in BACKENDS}))
    return out


def table_astrasim_rows():
    head = ["topology", "collective", "algorithm", "S (B)", "ASTRA-sim (ns)"] + ["%s (ns)" % b for b in BACKENDS]
    head += ["%s vs ASTRA-sim" % b for b in BACKENDS] + ["ns3 vs flow"]
    print("| " + " | ".join(head) + " |")
    print("|---" * len(head) + "|")
    for r, t in eight_npu_rows():
        theirs = r["sim_time_ns"]
        cells = [r["topology"], r["collective"], r["algorithm"], str(r["size_bytes"]), str(theirs)]
        cells += ["%.1f" % t[b] for b in BACKENDS] + [pct(t[b], theirs) for b in BACKENDS] + [pct(t["ns3"], t["flow"])]
        print("| " + " | ".join(cells) + " |")


def table_astrasim_rows_within():
    results = eight_npu_rows()
    print("| backend | within 1% | within 5% | within 20% |")
    print("|---|---|---|---|")
    for b in BACKENDS:
        err = [abs(t[b] / r["sim_time_ns"] - 1.0) for r, t in results]
        print("| %s | %d | %d | %d |" % (b, sum(e <= 0.01 for e in err), sum(e <= 0.05 for e in err),
                                         sum(e <= 0.20 for e in err)))


TABLES = {
    "ecmp": table_ecmp,
    "qps": table_qps,
    "seeds": table_seeds,
    "ns3-ring": table_ns3_ring,
    "ns3-presets": table_ns3_presets,
    "traffic-classes": table_traffic_classes,
    "astrasim-ring-one-hop": lambda: table_astrasim_ring(ONE_HOP, False),
    "astrasim-ring-switch": lambda: table_astrasim_ring(SWITCH, True),
    "astrasim-ring-ns3": table_astrasim_ring_ns3,
    "astrasim-rows": table_astrasim_rows,
    "astrasim-rows-within": table_astrasim_rows_within,
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in TABLES:
        sys.exit("usage: scripts/docs/tables/network.py {%s}" % ",".join(TABLES))
    TABLES[sys.argv[1]]()
