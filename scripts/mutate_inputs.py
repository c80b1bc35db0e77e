#!/usr/bin/env python3
"""Whole-program robustness: run `sim` on mutated real inputs.

Every run must end with exit 0, or exit 2 / 3 with a message ("sim: error:
..."); a signal, a sanitizer report, a hang (timeout) or exit 1 ("internal
error") is a failure, kept in <out>/failures/ with the command to replay it.

    scripts/mutate_inputs.py --sim build-fuzz/sim --runs 2000 --out /tmp/mut

Mutations (chosen at random with --seed, so a campaign is reproducible):
  bytes      bit flips, truncation, inserted/deleted bytes in one rank's binary ET
             (../shared/testdata), a topology or a system config
  semantic   on a small 4-rank workload in our JSON form (compute, a send/recv
             ring, an all-reduce): out-of-range ids and ranks, duplicate node
             ids, dependency cycles, mismatched collectives across ranks, sends
             to self or to absent ranks, huge durations and sizes, wrong-typed
             attributes, dangling deps
Debian's python3 only. Counts go to docs/reliability.md.
"""
import argparse
import collections
import copy
import json
import os
import random
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTDATA = os.path.join(ROOT, "..", "shared", "testdata")
BIG = [2**31, 2**32 + 1, 2**62, 2**63 - 1, -1, -(2**63)]


def base_workload(ranks=4):
    """Per rank: COMP -> SEND to next, RECV from previous -> ALL_REDUCE -> COMP."""
    out = []
    for r in range(ranks):
        def attr(name, v):
            return {"name": name, "int64Val": str(v)}
        nodes = [
            {"id": "1", "name": "fwd", "type": "COMP_NODE", "durationMicros": "5"},
            {"id": "2", "name": "send", "type": "COMM_SEND_NODE", "dataDeps": ["1"],
             "attr": [attr("comm_dst", (r + 1) % ranks), attr("comm_size", 4096), attr("comm_tag", 7)]},
            {"id": "3", "name": "recv", "type": "COMM_RECV_NODE", "dataDeps": ["1"],
             "attr": [attr("comm_src", (r - 1) % ranks), attr("comm_size", 4096), attr("comm_tag", 7)]},
            {"id": "4", "name": "grad_sync", "type": "COMM_COLL_NODE", "dataDeps": ["2", "3"],
             "attr": [attr("comm_type", 0), attr("comm_size", 1 << 20)]},
            {"id": "5", "name": "bwd", "type": "COMP_NODE", "durationMicros": "7", "dataDeps": ["4"]},
        ]
        out.append({"metadata": {"version": "0.0.4"}, "nodes": nodes})
    return out


def semantic(rng, ranks):
    """One semantic mutation of the base workload; returns (description, ranks)."""
    w = copy.deepcopy(ranks)
    r = rng.randrange(len(w))
    nodes = w[r]["nodes"]
    node = rng.choice(nodes)
    kind = rng.choice(["rank", "dup_id", "cycle", "coll_mismatch", "self_send", "absent_rank", "huge",
                       "wrong_type", "dangling", "drop_recv", "bad_type", "big_id", "tag"])
    if kind in ("rank", "self_send", "absent_rank"):
        target = [n for n in nodes if n["type"] in ("COMM_SEND_NODE", "COMM_RECV_NODE")]
        n = rng.choice(target)
        a = n["attr"][0]
        a["int64Val"] = str({"rank": rng.choice(BIG), "self_send": r, "absent_rank": len(w) + rng.randrange(3)}[kind])
        return f"{kind}: rank {r} node {n['id']} {a['name']}={a['int64Val']}", w
    if kind == "dup_id":
        node2 = rng.choice(nodes)
        node2["id"] = node["id"]
        return f"dup_id: rank {r} id {node['id']}", w
    if kind == "cycle":
        nodes[0].setdefault("dataDeps", []).append(nodes[-1]["id"])
        return f"cycle: rank {r}", w
    if kind == "coll_mismatch":
        coll = nodes[3]
        if rng.random() < 0.5:
            coll["attr"][0]["int64Val"] = str(rng.randrange(10))
        else:
            coll["attr"][1]["int64Val"] = str(rng.choice([0, 1, 1 << 21, 2**40]))
        return f"coll_mismatch: rank {r}", w
    if kind == "huge":
        if rng.random() < 0.5:
            node["durationMicros"] = str(rng.choice([2**62, 5 * 10**12, 2**64 - 1]))
        else:
            for a in node.get("attr", []):
                if a["name"] == "comm_size":
                    a["int64Val"] = str(rng.choice([2**62, 2**63 - 1, 10**14]))
        return f"huge: rank {r} node {node['id']}", w
    if kind == "wrong_type":
        if node.get("attr"):
            a = rng.choice(node["attr"])
            v = a.pop("int64Val")
            member = rng.choice(["stringVal", "boolVal", "doubleVal"])
            a[member] = {"stringVal": v, "boolVal": True, "doubleVal": 1.5}[member]
        return f"wrong_type: rank {r} node {node['id']}", w
    if kind == "dangling":
        node.setdefault("dataDeps", []).append(str(rng.choice([99, 2**63, 0])))
        return f"dangling: rank {r} node {node['id']}", w
    if kind == "drop_recv":
        w[r]["nodes"] = [n for n in nodes if n["type"] != "COMM_RECV_NODE"]
        return f"drop_recv: rank {r}", w
    if kind == "bad_type":
        node["type"] = rng.choice([8, 100, -1, "NOPE"])
        return f"bad_type: rank {r} node {node['id']}", w
    if kind == "big_id":
        node["id"] = str(rng.choice([2**64 - 1, 2**63, 0]))
        return f"big_id: rank {r}", w
    nodes[1]["attr"][2]["int64Val"] = str(rng.choice(BIG))
    return f"tag: rank {r}", w


def mutate_bytes(rng, data):
    data = bytearray(data)
    how = rng.choice(["flip", "truncate", "insert", "delete", "flip"])
    if not data:
        return b"\x00", "empty->1 byte"
    if how == "flip":
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    elif how == "truncate":
        del data[rng.randrange(len(data)):]
    elif how == "insert":
        i = rng.randrange(len(data) + 1)
        data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    else:
        i = rng.randrange(len(data))
        del data[i:i + rng.randint(1, 16)]
    return bytes(data), how


def classify(proc, timed_out):
    text = proc.stderr if proc else ""
    if timed_out:
        return "hang"
    if proc.returncode < 0:
        return f"signal {-proc.returncode}"
    if "AddressSanitizer" in text or "runtime error:" in text or "LeakSanitizer" in text:
        return "sanitizer"
    if proc.returncode == 0:
        return "exit 0"
    if proc.returncode in (2, 3):
        return f"exit {proc.returncode}" if "sim: error:" in text else f"exit {proc.returncode} without message"
    return f"exit {proc.returncode}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=os.path.join(ROOT, "build", "sim"))
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--out", default="/tmp/sim_mutate")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(os.path.join(args.out, "failures"))
    ring8 = os.path.join(ROOT, "configs", "ring8.yml")
    et_dirs = [os.path.join(TESTDATA, "astrasim-microbenchmarks", c, "4npus_1MB")
               for c in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")]
    et_dirs = [d for d in et_dirs if os.path.isdir(d)]
    configs = [os.path.join(ROOT, "configs", f) for f in sorted(os.listdir(os.path.join(ROOT, "configs")))
               if f.endswith(".yml")]
    system_cfg = os.path.join(ROOT, "configs", "system", "h100_like.yml")
    counts = collections.Counter()
    by_family = collections.defaultdict(collections.Counter)
    for i in range(args.runs):
        case = os.path.join(args.out, "case")
        shutil.rmtree(case, ignore_errors=True)
        os.makedirs(case)
        family = rng.choice(["semantic", "semantic", "et_bytes", "topology_bytes", "system_bytes"]
                            if et_dirs else ["semantic", "topology_bytes", "system_bytes"])
        cmd = [args.sim, "-q"]
        if family == "semantic":
            what, ranks = semantic(rng, base_workload())
            for r, doc in enumerate(ranks):
                with open(os.path.join(case, f"w.{r}.json"), "w") as f:
                    json.dump(doc, f)
            cmd += ["--workload", os.path.join(case, "w"), "--network", ring8,
                    "--backend", rng.choice(["analytical", "flow"])]
        elif family == "et_bytes":
            src = rng.choice(et_dirs)
            files = sorted(f for f in os.listdir(src) if f.endswith(".et"))
            victim = rng.choice(files)
            for f in files:
                data = open(os.path.join(src, f), "rb").read()
                if f == victim:
                    data, how = mutate_bytes(rng, data)
                    what = f"{how} in {os.path.relpath(os.path.join(src, f), TESTDATA)}"
                open(os.path.join(case, f), "wb").write(data)
            cmd += ["--workload", case, "--network", os.path.join(ROOT, "configs", "switch8.yml")]
        elif family == "topology_bytes":
            src = rng.choice(configs)
            data, how = mutate_bytes(rng, open(src, "rb").read())
            open(os.path.join(case, "net.yml"), "wb").write(data)
            what = f"{how} in configs/{os.path.basename(src)}"
            cmd += ["--network", os.path.join(case, "net.yml"), "--workload",
                    os.path.join(et_dirs[0]) if et_dirs else os.path.join(case, "none")]
        else:
            data, how = mutate_bytes(rng, open(system_cfg, "rb").read())
            open(os.path.join(case, "sys.yml"), "wb").write(data)
            what = f"{how} in configs/system/h100_like.yml"
            cmd += ["--system", os.path.join(case, "sys.yml")]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=args.timeout)
            outcome = classify(proc, False)
        except subprocess.TimeoutExpired:
            proc, outcome = None, "hang"
        counts[outcome] += 1
        by_family[family][outcome] += 1
        ok = outcome in ("exit 0", "exit 2", "exit 3")
        if not ok:
            keep = os.path.join(args.out, "failures", f"{i:05d}")
            shutil.copytree(case, keep)
            with open(os.path.join(keep, "README"), "w") as f:
                f.write(f"{outcome}: {family}: {what}\n{' '.join(cmd)}\n\n{proc.stderr if proc else ''}")
            print(f"run {i}: {outcome}: {family}: {what}", file=sys.stderr)
    print(f"{args.runs} runs (seed {args.seed}, sim {args.sim})")
    print("| family | runs | " + " | ".join(sorted(counts)) + " |")
    print("|---|---|" + "---|" * len(counts))
    for fam in sorted(by_family):
        c = by_family[fam]
        print(f"| {fam} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in sorted(counts)) + " |")
    bad = sum(v for k, v in counts.items() if k not in ("exit 0", "exit 2", "exit 3"))
    print(f"failures: {bad} (kept in {os.path.join(args.out, 'failures')})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
