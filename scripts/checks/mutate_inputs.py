#!/usr/bin/env python3
"""Whole-program robustness: run `sim` on mutated real inputs.

Every run must end with exit 0, or exit 2 / 3 with a message ("sim: error:
..."), or for `sim compare` exit 1 with its "outside tolerance:" lines; a signal, a sanitizer report, a hang (timeout) or exit 1 ("internal
error") is a failure, kept in <out>/failures/ with the command to replay it.

    scripts/checks/mutate_inputs.py --sim build-san/sim --runs 2000 --out /tmp/mut
    scripts/checks/mutate_inputs.py --only pytorch --runs 300      # one family

Mutations (chosen at random with --seed, so a campaign is reproducible):
  bytes      bit flips, truncation, inserted/deleted bytes in one rank's binary ET
             (../shared/testdata), a topology or a system config
  semantic   on a small 4-rank workload in our JSON form (compute, a send/recv
             ring, an all-reduce): out-of-range ids and ranks, duplicate node
             ids, dependency cycles, mismatched collectives across ranks, sends
             to self or to absent ranks, huge durations and sizes, wrong-typed
             attributes, dangling deps
  msccl      MSCCL-IR XML (../shared/testdata/msccl, astrasim-custom-ring): byte
             mutations and semantic ones (peers out of range or self, absent
             dependency targets, cycles, cnt mismatches, duplicate or missing
             GPUs, steps dropped or renumbered, huge ngpus / nchunksperloop /
             offsets / cnt, unknown step types, non-integers), each through
             `sim collective import msccl`, `sim collective check` or a run with
             `--collective <coll>=ALGO.xml`
  astrasim   ASTRA-sim's command line (--workload-configuration=... ): bytes
             of the system JSON, network YAML and remote-memory JSON, semantic
             JSON edits (keys dropped, unknown, repeated, wrong-typed, huge),
             and command-line edits (options dropped, unknown, repeated, without
             a value, bad numbers, absent files, folders, /dev/null)
  gen        the transformer generator: a gen:transformer query with keys
             dropped, repeated, unknown, without a value, or set to 0, huge
             (2^24, 2^26, 10^12, 2^63, 2^64), negative or non-numeric; bad
             parallel plans and schedules; and model YAML (configs/models) with
             bytes mutated or a key set to such a value, run through a small query
  curve      measured curves as `sim compare` reads them (the nccl-tests log in
             tests/workflows/compare/data, ../shared/testdata/reference-curves): bytes,
             numbers replaced by nan, inf, 0, negatives, 2^64, and launcher
             prefixes (mpirun --tag-output, srun --label) on some or all lines
  kernels    kernel table CSVs (configs/kernels/h100) through `sim compute
             time`: bytes, numbers replaced the same way, a byte order mark
  pytorch    a PyTorch job (../shared/testdata/pytorch/ddp4-gloo-h100: 4 host
             execution traces + 4 Kineto traces), one file mutated, through
             `sim workload import pytorch`: bytes of the JSON text, and
             semantic edits (ctrl_deps cycles, self-parents and dangling
             parents, duplicated or dangling rf / External / correlation ids,
             huge or negative durations, distributedInfo.rank and pg_config
             ranks out of range, files renamed to PyTorch's default names)
Debian's python3 only. Counts go to docs/reliability.md.
"""
import argparse
import collections
import copy
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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


# --- MSCCL-IR XML ----------------------------------------------------------

MSCCL_HUGE = [2**31, 2**32, 2**32 + 1, 2**62, 2**63 - 1, 10**18, -2, -(2**63)]


def msccl_semantic(rng, text):
    """One semantic mutation of an MSCCL-IR XML; returns (description, text)."""
    root = ElementTree.fromstring(text)
    gpus = root.findall("gpu")
    gpu = rng.choice(gpus)
    tbs = gpu.findall("tb") or [ElementTree.SubElement(gpu, "tb", {"id": "0", "send": "-1", "recv": "-1", "chan": "0"})]
    tb = rng.choice(tbs)
    steps = tb.findall("step")
    step = rng.choice(steps) if steps else None
    g = gpu.get("id")
    kind = rng.choice(["peer", "self_peer", "depid", "deps", "cycle", "cnt_mismatch", "dup_gpu", "drop_gpu",
                       "drop_step", "renumber", "ngpus", "nchunks", "offset", "buffers", "type", "chan", "coll",
                       "not_int", "huge_cnt", "swap_peers"])
    if kind in ("peer", "self_peer"):
        which = rng.choice(["send", "recv"])
        tb.set(which, g if kind == "self_peer" else str(rng.choice([len(gpus), len(gpus) + 3] + MSCCL_HUGE)))
        return f"{kind}: gpu {g} tb {tb.get('id')} {which}={tb.get(which)}", ElementTree.tostring(root, "unicode")
    if kind == "swap_peers":
        tb.set("send", tb.get("recv", "-1"))
        return f"swap_peers: gpu {g} tb {tb.get('id')}", ElementTree.tostring(root, "unicode")
    if kind == "dup_gpu" and len(gpus) > 1:
        gpus[1].set("id", gpus[0].get("id"))
        return "dup_gpu", ElementTree.tostring(root, "unicode")
    if kind == "drop_gpu":
        root.remove(gpu)
        return f"drop_gpu {g}", ElementTree.tostring(root, "unicode")
    if kind == "ngpus":
        root.set("ngpus", str(rng.choice([0, -1, len(gpus) + 1, 4 * 10**9] + MSCCL_HUGE)))
        return f"ngpus={root.get('ngpus')}", ElementTree.tostring(root, "unicode")
    if kind == "nchunks":
        root.set("nchunksperloop", str(rng.choice([0, -1, 3, 7] + MSCCL_HUGE)))
        return f"nchunksperloop={root.get('nchunksperloop')}", ElementTree.tostring(root, "unicode")
    if kind == "buffers":
        key = rng.choice(["i_chunks", "o_chunks", "s_chunks"])
        gpu.set(key, str(rng.choice([0, -1, 1] + MSCCL_HUGE)))
        return f"buffers: gpu {g} {key}={gpu.get(key)}", ElementTree.tostring(root, "unicode")
    if kind == "chan":
        tb.set("chan", str(rng.choice([-1, 1, 99] + MSCCL_HUGE)))
        return f"chan: gpu {g} tb {tb.get('id')} chan={tb.get('chan')}", ElementTree.tostring(root, "unicode")
    if kind == "coll":
        root.set("coll", rng.choice(["", "broadcast", "allgather", "allreduce", "alltoall", "reducescatter", "nope"]))
        return f"coll={root.get('coll')}", ElementTree.tostring(root, "unicode")
    if step is None:
        return "no step to mutate", text
    where = f"gpu {g} tb {tb.get('id')} step {step.get('s')}"
    if kind == "depid":
        step.set("depid", str(rng.choice([len(tbs) + 5, -2, 2**31] + MSCCL_HUGE)))
        step.set("deps", "0")
    elif kind == "deps":
        other = rng.choice(tbs)
        step.set("depid", other.get("id"))
        step.set("deps", str(rng.choice([len(other.findall("step")), -1, -5, 2**40])))
    elif kind == "cycle":  # the first step waits for the last: each step waits for the one before
        steps[0].set("depid", tb.get("id"))
        steps[0].set("deps", str(len(steps) - 1))
        steps[0].set("hasdep", "1")
        where = f"gpu {g} tb {tb.get('id')} step 0"
    elif kind == "cnt_mismatch":
        step.set("cnt", str(int(step.get("cnt", "1")) + rng.choice([1, -1, 1000])))
    elif kind == "huge_cnt":
        step.set("cnt", str(rng.choice(MSCCL_HUGE)))
    elif kind == "drop_step":
        tb.remove(step)
    elif kind == "renumber":
        tb.remove(step)
        for i, st in enumerate(tb.findall("step")):
            st.set("s", str(i))
    elif kind == "offset":
        key = rng.choice(["srcoff", "dstoff"])
        step.set(key, str(rng.choice([-1, 1, 8, 4096] + MSCCL_HUGE)))
        where += f" {key}={step.get(key)}"
    elif kind == "type":
        step.set("type", rng.choice(["x", "", "s", "r", "rrc", "rcs", "rrs", "rrcs", "cpy", "re", "nop"]))
        where += f" type={step.get('type')}"
    else:  # not_int
        key = rng.choice(["s", "cnt", "srcoff", "depid", "deps"])
        step.set(key, rng.choice(["1.5", "abc", "", "0x10", " 1", "99999999999999999999"]))
        where += f" {key}={step.get(key)!r}"
    return f"{kind}: {where}", ElementTree.tostring(root, "unicode")


class MscclRunner:
    """Runs a (mutated) XML through the import, the checker or a simulation."""

    def __init__(self, sim, out):
        self.sim, self.out, self.workloads = sim, out, {}
        self.sources = sorted(glob.glob(os.path.join(TESTDATA, "msccl", "*.xml")) +
                              glob.glob(os.path.join(TESTDATA, "astrasim-custom-ring", "*.xml")))

    def workload(self, ngpus, coll):
        """A generated one-collective workload and a ring for `ngpus` (made once)."""
        key = (ngpus, coll)
        if key not in self.workloads:
            d = os.path.join(self.out, "msccl_wl", f"{coll}_{ngpus}")
            os.makedirs(d, exist_ok=True)
            net = os.path.join(d, "ring.yml")
            with open(net, "w") as f:
                f.write(f"shape: Ring\nnpus: {ngpus}\nbandwidth: 50GB/s\nlatency: 500ns\n")
            subprocess.run([self.sim, "workload", "gen", "collectives", "--npus", str(ngpus), "--coll", coll,
                            "--size", "1MiB", "-o", os.path.join(d, "wl")], capture_output=True, check=True)
            self.workloads[key] = (os.path.join(d, "wl"), net)
        return self.workloads[key]

    def case(self, rng, case):
        src = rng.choice(self.sources)
        text = open(src, encoding="utf-8").read()
        if rng.random() < 0.5:
            what, text = msccl_semantic(rng, text)
            data = text.encode()
        else:
            data, what = mutate_bytes(rng, text.encode())
        what = f"{what} in {os.path.relpath(src, TESTDATA)}"
        xml = os.path.join(case, "algo.xml")
        open(xml, "wb").write(data)
        mode = rng.choice(["import", "import_size", "check", "run"])
        if mode == "import":
            return what, [self.sim, "collective", "import", "msccl", xml, "-o", os.path.join(case, "imp")]
        if mode == "import_size":
            return what, [self.sim, "collective", "import", "msccl", xml, "-o", os.path.join(case, "imp"),
                          "--size", rng.choice(["1MiB", "1", "3000000007", "1TiB"])]
        if mode == "check":
            return what, [self.sim, "collective", "check", xml, "--size", rng.choice(["1MiB", "1000", "1"])]
        head = open(src, encoding="utf-8").read(2000)
        ngpus = int(re.search(r'ngpus="(\d+)"', head).group(1))
        coll = re.search(r'coll="(\w+)"', head).group(1)
        wl, net = self.workload(ngpus, coll)
        return what, [self.sim, "-q", "--workload", wl, "--network", net, "--collective", f"{coll}={xml}"]


# --- ASTRA-sim's command line ----------------------------------------------

def json_semantic(rng, text):
    """One edit of a JSON object's keys or values (kept as text where JSON cannot say it)."""
    doc = json.loads(text)
    key = rng.choice(sorted(doc))
    kind = rng.choice(["drop", "unknown", "repeat", "wrong_type", "huge", "impl"])
    if kind == "drop":
        del doc[key]
    elif kind == "unknown":
        doc[key + "x"] = doc[key]
    elif kind == "repeat":  # a key given twice: only text can say it
        body = json.dumps(doc)
        return f"repeat {key}", body[:-1] + f', "{key}": {json.dumps(doc[key])}}}'
    elif kind == "wrong_type":
        doc[key] = rng.choice(["ring", [], {}, None, True, [1, 2], 1.5])
    elif kind == "huge":
        doc[key] = rng.choice([2**64, 2**63, -1, 0, 1e308, -1e308, 10**30])
    else:
        impls = [k for k in doc if k.endswith("-implementation")] or [key]
        key = rng.choice(impls)
        doc[key] = rng.choice([[], ["bogus"], ["ring"] * 5, ["direct", "ring", "halvingDoubling", "doubleBinaryTree"],
                               "ring", [["ring"]]])
    return f"{kind} {key}", json.dumps(doc)


class AstrasimRunner:
    """ASTRA-sim's drop-in command line with one of its inputs or options mutated."""

    def __init__(self):
        # 1-D systems: the network is one ring of 8, and a 2-D system would fail for that alone.
        self.systems = sorted(glob.glob(os.path.join(TESTDATA, "astrasim-reference", "system", "*_1d.json")))
        self.memory = os.path.join(TESTDATA, "astrasim-reference", "remote_memory", "no_memory_expansion.json")
        self.network = os.path.join(ROOT, "configs", "astrasim", "ring8.yml")
        self.workload = os.path.join(TESTDATA, "astrasim-microbenchmarks", "all_reduce", "8npus_1MB", "all_reduce")

    def available(self):
        return bool(self.systems) and os.path.exists(self.memory) and os.path.exists(self.workload + ".0.et")

    def case(self, rng, sim, case):
        files = {"system-configuration": rng.choice(self.systems), "network-configuration": self.network,
                 "remote-memory-configuration": self.memory}
        kind = rng.choice(["system_bytes", "network_bytes", "memory_bytes", "system_json", "memory_json", "cli", "cli"])
        what = kind
        if kind.endswith("_bytes") or kind.endswith("_json"):
            name = {"system": "system-configuration", "network": "network-configuration",
                    "memory": "remote-memory-configuration"}[kind.split("_")[0]]
            src = files[name]
            data = open(src, "rb").read()
            if kind.endswith("_bytes"):
                data, how = mutate_bytes(rng, data)
            else:
                how, text = json_semantic(rng, data.decode())
                data = text.encode()
            dst = os.path.join(case, os.path.basename(src))
            open(dst, "wb").write(data)
            files[name] = dst
            what = f"{kind}: {how} in {os.path.basename(src)}"
        opts = [f"--workload-configuration={self.workload}"] + [f"--{k}={v}" for k, v in files.items()]
        if kind == "cli":
            edit = rng.choice(["drop", "unknown", "repeat", "no_value", "bad_number", "absent", "folder", "devnull",
                               "value", "report"])
            i = rng.randrange(len(opts))
            name = opts[i].split("=")[0]
            if edit == "drop":
                del opts[i]
            elif edit == "unknown":
                opts.insert(i, rng.choice(["--network-config=x", "--workload=x", "--system-configuration2=x", "-x",
                                           "positional"]))
            elif edit == "repeat":
                opts.append(opts[i])
            elif edit == "no_value":
                opts[i] = name
                if i != len(opts) - 1:
                    opts.append(opts.pop(i))
            elif edit in ("absent", "folder", "devnull"):
                opts[i] = name + "=" + {"absent": os.path.join(case, "absent"), "folder": case,
                                        "devnull": "/dev/null"}[edit]
            elif edit == "value":
                opts.append(rng.choice(["--num-queues-per-dim=", "--num-queues-per-dim=abc", "--num-queues-per-dim=2",
                                        "--num-queues-per-dim=1e999", "--injection-scale=nan", "--injection-scale=-1",
                                        "--injection-scale=0", "--injection-scale=inf", "--rendezvous-protocol=maybe",
                                        "--rendezvous-protocol=true", "--egress=bogus", "--compute-scale=x",
                                        "--comm-group-configuration=" + os.path.join(case, "absent.json"),
                                        "--comm-group-configuration=empty", "--logging-folder="]))
            elif edit == "bad_number":
                opts.append(rng.choice(["--num-queues-per-dim=1", "--injection-scale=1e308", "--injection-scale=1e-308",
                                        "--comm-scale=1", "--compute-scale=-0"]))
            else:
                opts.append(rng.choice(["--report=" + case, "--report=" + os.path.join(case, "no", "such", "r.json"),
                                        "--csv=/dev/null", "--report=" + os.path.join(case, "r.json")]))
            what = f"cli: {edit} {name}"
        return what, [sim] + opts


# --- the transformer generator ------------------------------------------------

GEN_BASE = {"model": "llama3-8b", "parallel": "tp=2,pp=2,dp=2,sp", "global-batch": "4", "seq": "256"}
GEN_KEYS = ["model", "parallel", "global-batch", "micro-batch", "seq", "schedule", "zero", "recompute", "dtype",
            "attention", "cp-comm", "first-stage-layers", "last-stage-layers", "bucket-params", "comm-free", "layers-only",
            "pp-scatter-gather", "tp-comm-overlap", "routing"]
GEN_VALUES = ["0", "1", "2", "3", "7", str(2**24), str(2**26), str(10**12), str(2**63), str(2**64), "-1", "x", "",
              "1.5"]
GEN_MODEL_KEYS = ["layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "dropout"]
GEN_MODEL_VALUES = ["0", "1", "3", str(2**32), str(2**40), str(2**63), str(10**12), "-1", "1.5", "x", "[]"]


def gen_query(rng):
    """A mutated gen:transformer query; returns (description, query)."""
    q = dict(GEN_BASE)
    kind = rng.choice(["value", "value", "drop", "unknown", "repeat", "no_value", "parallel", "schedule", "flag"])
    key = rng.choice(GEN_KEYS)
    extra = ""
    if kind == "value":
        q[key] = rng.choice(GEN_VALUES)
    elif kind == "drop":
        q.pop(rng.choice(sorted(q)), None)
    elif kind == "unknown":
        q[rng.choice(["colour", "Seq", "seq ", "--seq", "layers"])] = "1"
    elif kind == "repeat":
        extra = f"&{key}={rng.choice(GEN_VALUES)}"
    elif kind == "no_value":
        extra = f"&{key}"
    elif kind == "parallel":
        q["parallel"] = rng.choice(["tp=3", "tp=0", "tp=2,tp=2", "pp=3", "cp=3", "ep=2", "tp=1,sp", "tp=2,pp=2,dp=2,cp=2",
                                    f"dp={2**20}", f"tp={2**21}", "tp=2,xp=1", ",", "tp=2,pp=2,dp=2,cp=2,sp",
                                    "tp=2,pp=2,dp=2,etp=2,sp", "etp=0", f"etp={2**21}"])
    elif kind == "schedule":
        q["parallel"] = "tp=1,pp=4,dp=1"
        q["global-batch"] = "8"
        q["schedule"] = rng.choice(["interleaved:2", "interleaved:0", "interleaved:1024", "interleaved:x", "gpipe", ""])
    else:
        q[rng.choice(["comm-free", "layers-only", "pp-scatter-gather", "tp-comm-overlap"])] = rng.choice(
            ["", "true", "false", "yes", "1"])
    return f"{kind} {key}", "&".join(f"{k}={v}" for k, v in q.items()) + extra


def gen_case(rng, sim, case):
    """A mutated query, or a mutated model YAML through a small query."""
    sys_yml = os.path.join(case, "sys.yml")
    with open(sys_yml, "w") as f:
        f.write("compute:\n  peak_tflops: 989\n  memory_bandwidth: 3350GB/s\n")
    if rng.random() < 0.6:
        what, query = gen_query(rng)
    else:
        src = rng.choice(sorted(glob.glob(os.path.join(ROOT, "configs", "models", "*.yml"))))
        text = open(src, encoding="utf-8").read()
        if rng.random() < 0.5:
            data, how = mutate_bytes(rng, text.encode())
        else:
            key = rng.choice(GEN_MODEL_KEYS)
            value = rng.choice(GEN_MODEL_VALUES)
            lines = [l for l in text.splitlines() if not l.startswith(key + ":")]
            data, how = ("\n".join(lines) + f"\n{key}: {value}\n").encode(), f"{key}: {value}"
        model = os.path.join(case, "model.yml")
        open(model, "wb").write(data)
        what = f"{how} in configs/models/{os.path.basename(src)}"
        query = f"model={model}&parallel=tp=1,pp=2,dp=1&global-batch=2&seq=64"
    return what, [sim, "-q", "--workload", "gen:transformer?" + query, "--network",
                  os.path.join(ROOT, "configs", "switch8.yml"), "--system", sys_yml, "--strict"]
# --- curves and kernel tables (sim compare, sim compute time) ---------------

ODD_NUMBERS = ["nan", "inf", "-inf", "0", "-1", "1e308", "1e-320", "18446744073709551616", "", "0x10", "1,5"]


def mutate_numbers(rng, text):
    """Some numbers of `text` replaced by odd ones; returns (description, text)."""
    spans = [m.span() for m in re.finditer(r"-?[0-9]+(\.[0-9]+)?(e-?[0-9]+)?", text)]
    if not spans:
        return "no numbers", text
    picked = sorted(rng.sample(spans, min(len(spans), rng.randint(1, 3))), reverse=True)
    news = []
    for a, b in picked:
        new = rng.choice(ODD_NUMBERS)
        news.append(f"{text[a:b]!r}->{new!r}")
        text = text[:a] + new + text[b:]
    return "numbers " + ", ".join(news), text


def with_prefixes(rng, text):
    forms = ["[1,0]<stdout>:", "[1,1]<stderr>:", "0: ", " 3: ", "12:"]
    lines = text.split("\n")
    everywhere = rng.random() < 0.7
    form = rng.choice(forms)
    out = [(form if everywhere or rng.random() < 0.5 else rng.choice(forms)) + l for l in lines]
    return f"prefix {form!r} {'on every line' if everywhere else 'mixed'}", "\n".join(out)


def curve_case(rng, sim, case):
    sources = [os.path.join(ROOT, "tests", "workflows", "compare", "data", "all_reduce_perf_8xH100.txt")]
    sources += sorted(glob.glob(os.path.join(TESTDATA, "reference-curves", "*.csv")))
    src = rng.choice(sources)
    text = open(src, "rb").read()
    how = rng.choice(["bytes", "numbers", "numbers", "prefix"])
    if how == "bytes":
        data, what = mutate_bytes(rng, text)
    else:
        what, out = (mutate_numbers if how == "numbers" else with_prefixes)(rng, text.decode())
        data = out.encode()
    name = os.path.basename(src)
    open(os.path.join(case, name), "wb").write(data)
    cmd = [sim, "-q", "compare", os.path.join(case, name), src, "--metric", rng.choice(["time", "busbw"])]
    return f"{what} in {name}", cmd


def kernels_case(rng, sim, case):
    src = os.path.join(ROOT, "configs", "kernels", "h100", rng.choice(["gemm.csv", "attention.csv", "membound.csv"]))
    text = open(src, "rb").read()
    how = rng.choice(["bytes", "numbers", "numbers", "bom"])
    if how == "bytes":
        data, what = mutate_bytes(rng, text)
    elif how == "bom":
        data, what = b"\xef\xbb\xbf" + text, "byte order mark"
    else:
        what, out = mutate_numbers(rng, text.decode())
        data = out.encode()
    open(os.path.join(case, "kernels.csv"), "wb").write(data)
    system = os.path.join(ROOT, "configs", "system", "h100_kernels.yml")
    return f"{what} in configs/kernels/h100/{os.path.basename(src)}", [
        sim, "-q", "compute", "time", "--system", system, "--kernels", os.path.join(case, "kernels.csv"),
        "-o", os.path.join(case, "out.csv")]
class PytorchRunner:
    """One mutated file of a real 4-rank PyTorch job, imported."""

    def __init__(self, sim):
        self.sim = sim
        self.src = os.path.join(TESTDATA, "pytorch", "ddp4-gloo-h100")
        self.files = sorted(f for f in os.listdir(self.src) if f.endswith(".json.gz")) if os.path.isdir(self.src) else []
        self.cache = {}

    def doc(self, name):
        if name not in self.cache:
            import gzip
            with gzip.open(os.path.join(self.src, name), "rt") as f:
                self.cache[name] = f.read()
        return json.loads(self.cache[name])

    @staticmethod
    def host_edit(rng, doc):
        nodes = doc["nodes"]
        a, b = rng.choice(nodes), rng.choice(nodes)
        how = rng.choice(["cycle", "self", "dangling", "dup_rf", "dur", "drop"])
        if how == "cycle":
            a["ctrl_deps"], b["ctrl_deps"] = b["id"], a["id"]
        elif how == "self":
            a["ctrl_deps"] = a["id"]
        elif how == "dangling":
            a["ctrl_deps"] = rng.choice(BIG[:4]) if rng.random() < 0.5 else max(n["id"] for n in nodes) + 1
        elif how == "dup_rf":
            rf = [x for x in b.get("attrs", []) if x.get("name") == "rf_id"]
            for x in a.get("attrs", []):
                if x.get("name") == "rf_id" and rf:
                    x["value"] = rf[0]["value"]
        elif how == "dur":
            a["dur"] = rng.choice([1e13, 1e300, -1, 2**63])
        else:
            nodes.remove(a)
        return f"{how} at op {a.get('id')}"

    @staticmethod
    def kineto_edit(rng, doc):
        ev = [e for e in doc["traceEvents"] if isinstance(e, dict) and isinstance(e.get("args"), dict)]
        a, b = rng.choice(ev), rng.choice(ev)
        info = doc.get("distributedInfo", {})
        how = rng.choice(["dur", "corr", "dup_ext", "dup_rf", "rank", "pg_rank", "drop"])
        if how == "dur":
            a["dur"] = rng.choice([1e13, 1e300, -1, 2**63])
        elif how == "corr":
            a["args"]["correlation"] = b["args"].get("correlation", rng.choice(BIG))
        elif how == "dup_ext":
            a["args"]["External id"] = b["args"].get("External id", 1)
        elif how == "dup_rf":
            a["args"]["Record function id"] = b["args"].get("Record function id", 1)
        elif how == "rank":
            info["rank"] = rng.choice([0, 1, 2, 3, 99, -1, 2**40, "0"])
        elif how == "pg_rank":
            for g in info.get("pg_config", []):
                g["ranks"] = [rng.choice([0, 1, 2, 3, 4, 99, -1, 2**63 - 1]) for _ in g.get("ranks", [0])]
        else:
            doc["traceEvents"].remove(a)
        return f"{how} at event {a.get('name')!r}"

    def case(self, rng, case):
        victim = rng.choice(self.files)
        names = {f: f[:-3] for f in self.files}
        if rng.random() < 0.1:  # PyTorch's default profiler names for the device traces
            names = {f: (f"host_{i}.{1700000000 + rng.randrange(9)}.pt.trace.json" if f.startswith("kineto") else f[:-3])
                     for i, f in enumerate(self.files)}
        for f in self.files:
            if f != victim:
                with open(os.path.join(case, names[f]), "w") as out:
                    out.write(self.cache.get(f) or json.dumps(self.doc(f)))
        doc = self.doc(victim)
        if rng.random() < 0.3:
            text, how = mutate_bytes(rng, json.dumps(doc).encode())
            what = f"{how} in {victim}"
        else:
            what = (self.host_edit if victim.startswith("et_") else self.kineto_edit)(rng, doc) + f" in {victim}"
            text = json.dumps(doc).encode()
        with open(os.path.join(case, names[victim]), "wb") as out:
            out.write(text)
        return what, [self.sim, "-q", "workload", "import", "pytorch", "--host-et", case, "--kineto", case,
                      "-o", os.path.join(case, "out")]


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
    if proc.returncode == 1 and "outside tolerance:" in proc.stdout:
        return "compare: outside"  # `sim compare`'s answer, as diff's exit 1 (docs/workflows.md)
    return f"exit {proc.returncode}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=os.path.join(ROOT, "build", "sim"))
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--out", default="/tmp/sim_mutate")
    ap.add_argument("--only", help="one family only (e.g. pytorch)")
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
    msccl = MscclRunner(args.sim, args.out)
    astrasim = AstrasimRunner()
    pytorch = PytorchRunner(args.sim)
    families = ["semantic", "semantic", "et_bytes", "topology_bytes", "system_bytes"] if et_dirs else [
        "semantic", "topology_bytes", "system_bytes"]
    families += ["msccl", "msccl"] if msccl.sources else []
    families += ["astrasim"] if astrasim.available() else []
    families += ["gen"]
    families += ["curve", "kernels"]
    families += ["pytorch"] if pytorch.files else []
    if args.only:
        if args.only not in families:
            print(f"--only {args.only}: not one of {sorted(set(families))} (its inputs may be absent)", file=sys.stderr)
            return 2
        families = [args.only]
    counts = collections.Counter()
    by_family = collections.defaultdict(collections.Counter)
    for i in range(args.runs):
        case = os.path.join(args.out, "case")
        shutil.rmtree(case, ignore_errors=True)
        os.makedirs(case)
        family = rng.choice(families)
        cmd = [args.sim, "-q"]
        if family == "msccl":
            what, cmd = msccl.case(rng, case)
        elif family == "astrasim":
            what, cmd = astrasim.case(rng, args.sim, case)
        elif family == "gen":
            what, cmd = gen_case(rng, args.sim, case)
        elif family == "curve":
            what, cmd = curve_case(rng, args.sim, case)
        elif family == "kernels":
            what, cmd = kernels_case(rng, args.sim, case)
        elif family == "pytorch":
            what, cmd = pytorch.case(rng, case)
        elif family == "semantic":
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
        ok = outcome in ("exit 0", "exit 2", "exit 3", "compare: outside")
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
    bad = sum(v for k, v in counts.items() if k not in ("exit 0", "exit 2", "exit 3", "compare: outside"))
    print(f"failures: {bad} (kept in {os.path.join(args.out, 'failures')})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
