#!/usr/bin/env python3
"""Writes a large PyTorch host execution trace and its Kineto trace by repeating
a real pair K times (ids, rf_ids, External ids and correlations shifted so every
copy links only to itself; Kineto times shifted by one step per copy), for the
import benchmark (docs/benchmarks.md, "PyTorch import"). The pair is made a
job of one rank (its process groups keep rank 0 only), which the importer
takes alone. Debian python3 only.

    scripts/bench/pytorch_big_trace.py HOST.json.gz KINETO.json.gz COPIES OUT_PREFIX
    # writes OUT_PREFIX/et_rank0.json.gz and OUT_PREFIX/kineto_rank0.json.gz
"""
import gzip
import json
import os
import sys


def one_rank(groups):
    """A job's process groups as a 1-rank job's: rank 0 only ([] stays "every rank")."""
    for g in groups:
        g["ranks"] = [r for r in g.get("ranks", []) if r == 0]
        for key in ("group_size", "pg_size"):
            if key in g:
                g[key] = 1
    return groups


def main():
    host_path, kineto_path, copies, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    host = json.load(gzip.open(host_path))
    kineto = json.load(gzip.open(kineto_path))
    nodes = host["nodes"]
    id_span = max(n["id"] for n in nodes) + 1
    rf_span = max(a["value"] for n in nodes for a in n["attrs"] if a["name"] == "rf_id") + 1
    ev = kineto["traceEvents"]
    ext_span = max(e.get("args", {}).get("External id", 0) for e in ev if isinstance(e.get("args"), dict)) + 1
    corr_span = max(e.get("args", {}).get("correlation", 0) for e in ev if isinstance(e.get("args"), dict)) + 1
    times = [e["ts"] + e.get("dur", 0) for e in ev if isinstance(e.get("ts"), (int, float))]
    t_span = max(times) - min(times) + 1.0
    big_nodes = []
    for k in range(copies):
        for n in nodes:
            m = dict(n)
            if n["ctrl_deps"] == n["id"]:  # the process root: once
                if k:
                    continue
            else:
                m["ctrl_deps"] = n["ctrl_deps"] + k * id_span if n["ctrl_deps"] != 1 else 1
            m["id"] = n["id"] + k * id_span if n["id"] != 1 else 1
            m["attrs"] = [dict(a, value=a["value"] + k * rf_span) if a["name"] == "rf_id" else a for a in n["attrs"]]
            big_nodes.append(m)
    for n in big_nodes:
        if "process_group:init" in n["name"]:
            values = list(n["inputs"]["values"])
            values[0] = json.dumps(one_rank(json.loads(values[0])))
            n["inputs"] = dict(n["inputs"], values=values)
    host["nodes"] = big_nodes
    info = kineto.get("distributedInfo")
    if isinstance(info, dict):
        info["world_size"] = 1
        one_rank(info.get("pg_config", []))
    big_ev = []
    for k in range(copies):
        for e in ev:
            if e.get("ph") != "X":
                if k == 0:
                    big_ev.append(e)
                continue
            m = dict(e)
            m["ts"] = e["ts"] + k * t_span
            if isinstance(e.get("args"), dict):
                a = dict(e["args"])
                if "External id" in a:
                    a["External id"] += k * ext_span
                if "correlation" in a:
                    a["correlation"] += k * corr_span
                if "Record function id" in a:
                    a["Record function id"] += k * rf_span
                m["args"] = a
            big_ev.append(m)
    kineto["traceEvents"] = big_ev
    os.makedirs(out, exist_ok=True)
    with gzip.open(os.path.join(out, "et_rank0.json.gz"), "wt", compresslevel=1) as f:
        json.dump(host, f)
    with gzip.open(os.path.join(out, "kineto_rank0.json.gz"), "wt", compresslevel=1) as f:
        json.dump(kineto, f)
    print(f"{len(big_nodes)} host ops, {len(big_ev)} Kineto events in {out}")


if __name__ == "__main__":
    main()
