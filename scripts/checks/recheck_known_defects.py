#!/usr/bin/env python3
"""Recheck ../shared/reference/known-defects.md against a `sim` binary.

For each class of bad input listed there, writes one generated instance into a
temporary folder, runs `sim` on it and checks that the run ends as promised:
exit 0, 2 or 3 (never a signal, exit 1 or a hang), the exit code the class
calls for, and a message that names the culprit (file, node, key, value).
Prints a table; exits 1 when any case fails.

    scripts/checks/recheck_known_defects.py                  # build/sim
    scripts/checks/recheck_known_defects.py --sim build-san/sim --timeout 300 --cpu-factor 5
                                      # a Debug + ASan build is ~10x slower: scale the CPU bounds

The classes about memory and speed of outputs (match queues, --report and
--timeline built in memory) are measured by the scripts of scripts/bench/, not here.
Debian's python3 only.
"""
import argparse
import json
import os
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RING8 = os.path.join(ROOT, "configs", "ring8.yml")
TORUS = os.path.join(ROOT, "configs", "torus8x8.yml")
LIMIT = "9223372036854775807 ps"


def attr(name, value, member="int64Val"):
    return {"name": name, member: str(value) if member == "int64Val" else value}


def comp(i, micros, deps=(), name=None):
    return {"id": str(i), "name": name or f"layer{i}", "type": "COMP_NODE", "durationMicros": str(micros),
            "dataDeps": [str(d) for d in deps]}


def coll(i, size, pg=None, comm_type=0, deps=(), name="grad_sync", extra=()):
    a = [attr("comm_type", comm_type), attr("comm_size", size)]
    if pg is not None:
        a.append(attr("pg_name", pg, "stringVal"))
    return {"id": str(i), "name": name, "type": "COMM_COLL_NODE", "dataDeps": [str(d) for d in deps],
            "attr": a + list(extra)}


def p2p(i, send, peer, size=4096, tag=5, name=None):
    return {"id": str(i), "name": name or ("send" if send else "recv"),
            "type": "COMM_SEND_NODE" if send else "COMM_RECV_NODE",
            "attr": [attr("comm_dst" if send else "comm_src", peer), attr("comm_size", size), attr("comm_tag", tag)]}


class Case:
    """One generated instance: files in `d`, a command, what must come out."""

    def __init__(self, d):
        self.d = d
        self.cmd = []
        self.codes = {2}
        self.needles = []      # substrings of stderr that name the culprit
        self.max_cpu = None    # CPU seconds (user + system): wall time is noisy on a shared machine
        self.after = None      # extra check: returns "" or what is wrong
        self.sim = None        # the binary, for cases that prepare with it
        self.output_has = []   # substrings stdout + stderr must hold
        self.output_lacks = [] # substrings neither may hold (e.g. "nan" in a report)

    def path(self, name):
        return os.path.join(self.d, name)

    def text(self, name, body):
        with open(self.path(name), "w") as f:
            f.write(body)
        return self.path(name)

    def workload(self, ranks, prefix="w"):
        """Our JSON form, one file per rank; returns the prefix."""
        for r, nodes in enumerate(ranks):
            with open(self.path(f"{prefix}.{r}.json"), "w") as f:
                json.dump({"metadata": {"version": "0.0.4"}, "nodes": nodes}, f)
        return self.path(prefix)

    def run_on(self, workload, network=RING8, *extra):
        self.cmd = ["--workload", workload, "--network", network] + list(extra)


# --- one function per class of known-defects.md, each a list of (name, builder) ---

def time_wraps(c):
    w = c.workload([[comp(1, 5 * 10**12), comp(2, 5 * 10**12, [1])]])
    c.run_on(w)
    c.codes, c.needles = {3}, ["w.0.json: rank 0 node 2 'layer2'", LIMIT]


def duration_2_62(c):
    w = c.workload([[comp(1, 2**62)]])
    c.run_on(w)
    c.needles = ["w.0.json", "node 1 'layer1'", LIMIT]


def coll_size_2_62(c):
    w = c.workload([[coll(1, 2**62)] for _ in range(8)])
    c.run_on(w)
    c.codes, c.needles = {3}, ["node 1", "grad_sync", LIMIT]


def mem_op_wraps(c):
    w = c.workload([[{"id": "1", "name": "ld", "type": "MEM_LOAD_NODE", "attr": [attr("tensor_size", 10**18)]}]])
    sys_yml = c.text("mem.yml", "memory:\n  bandwidth: 1B/s\n")
    c.run_on(w, RING8, "--system", sys_yml)
    c.codes, c.needles = {3}, ["w.0.json: rank 0 node 1 'ld' (MEM_LOAD)", LIMIT]


def injected_duration_wraps(c):
    # An "algorithm" whose every rank runs one COMP of 2^62 us.
    algo = c.workload([[comp(1, 2**62, name="slow")] for _ in range(8)], prefix="algo")
    w = c.workload([[coll(1, 1 << 20)] for _ in range(8)])
    c.run_on(w, RING8, "--collective", "allreduce=" + algo)
    c.codes, c.needles = {2, 3}, ["algo.", "node 1", LIMIT]


def deep_json_et(c):
    with open(c.path("w.0.json"), "w") as f:
        f.write('{"metadata": {"version": "0.0.4", "attr": ' + "[" * 100000 + "]" * 100000 + '}, "nodes": []}')
    c.run_on(c.path("w"))
    c.needles = ["w.0.json", "nested deeper than 512 levels"]


def deep_comm_group(c):
    w = c.workload([[coll(1, 4096, pg="1")] for _ in range(8)])
    groups = c.text("groups.json", '{"1": ' + "[" * 100000 + "]" * 100000 + "}")
    c.run_on(w, RING8, "--comm-group", groups)
    c.needles = ["groups.json", "nested deeper than 512 levels"]


def deep_pg_metadata(c):
    pg = {"id": "1", "name": "[pytorch|profiler|execution_trace|process_group:init]", "type": "METADATA_NODE",
          "inputs": {"values": "['[{\"pg_name\": " + "[" * 100000 + "]" * 100000 + ", \"ranks\": []}]']"}}
    w = c.workload([[pg, comp(2, 1, [1])]])
    c.run_on(w)
    c.needles = ["w.0.json: rank 0, node 1", "nested deeper than 512 levels"]


def system_wrong_type(c):
    sys_yml = c.text("sys.yml", "collective:\n  reduction_bandwidth: [1, 2]\n")
    c.cmd = ["--system", sys_yml]
    c.needles = ["sys.yml:2", "reduction_bandwidth"]


def system_duplicate_key(c):
    sys_yml = c.text("sys.yml", "collective:\n  chunks: 2\ncollective:\n  chunks: 4\n")
    c.cmd = ["--system", sys_yml]
    c.needles = ["sys.yml:3", "collective"]


def comm_group_directory(c):
    os.makedirs(c.path("groups"))
    w = c.workload([[coll(1, 4096, pg="1")] for _ in range(8)])
    c.run_on(w, RING8, "--comm-group", c.path("groups"))
    c.needles = ["groups", "not a regular file"]


def system_dev_zero(c):
    c.cmd = ["--system", "/dev/zero"]
    c.needles = ["/dev/zero", "not a regular file"]
    c.max_cpu = 10


def wide_fan_in(c):
    n = 60000
    nodes = [comp(i, 1) for i in range(1, n + 1)] + [comp(n + 1, 1, range(1, n + 1), name="join")]
    c.run_on(c.workload([nodes]))
    c.codes, c.max_cpu = {0}, 10


def long_chain(c):
    n = 300000
    c.run_on(c.workload([[comp(i, 1, [i - 1] if i > 1 else []) for i in range(1, n + 1)]]))
    c.codes, c.max_cpu = {0}, 20


def report_symlink(c):
    target = c.text("old.json", "old\n")
    os.symlink(target, c.path("link.json"))
    c.run_on(c.workload([[comp(1, 1)]]), RING8, "--report", c.path("link.json"))
    c.codes = {0}

    def check():
        if not os.path.islink(c.path("link.json")):
            return "the symlink was replaced by a file"
        body = open(target).read()
        return "" if body.startswith("{") else "the link's target kept its old content"
    c.after = check


def report_mode_kept(c):
    report = c.text("r.json", "{}\n")
    os.chmod(report, 0o600)
    c.run_on(c.workload([[comp(1, 1)]]), RING8, "--report", report)
    c.codes = {0}

    def check():
        mode = stat.S_IMODE(os.stat(report).st_mode)
        return "" if mode == 0o600 else f"mode {oct(mode)}, not 0o600"
    c.after = check


def comm_dst_2_32_plus_1(c):
    ranks = [[p2p(1, True, 2**32 + 1, name="halo_send")], [p2p(1, False, 0)]]
    c.run_on(c.workload(ranks))
    c.needles = ["w.0.json", "node 1 'halo_send'", "comm_dst", "4294967297"]


def lenient_number(c):
    sys_yml = c.text("sys.yml", "collective:\n  chunks: 2.9\n")
    c.cmd = ["--system", sys_yml]
    c.needles = ["sys.yml:2", "chunks", "2.9"]


def lenient_suffix(c):
    sys_yml = c.text("sys.yml", "compute:\n  peak_tflops: 989abc\n")
    c.cmd = ["--system", sys_yml]
    c.needles = ["sys.yml:2", "peak_tflops", "989abc"]


def wrong_typed_attribute(c):
    node = coll(7, 4096, name="ar")
    node["attr"][1] = attr("comm_size", "4096", "stringVal")
    c.run_on(c.workload([[node] for _ in range(8)]))
    c.needles = ["w.0.json", "rank 0", "node 7 'ar'", "comm_size"]


def deadlock_names_group(c):
    groups = c.text("groups.json", '{"tp": [0, 1]}')
    ranks = [[coll(1, 4096, pg="tp", name="tp_sync")], [comp(1, 1, name="busy")]] + [[] for _ in range(6)]
    c.run_on(c.workload(ranks), RING8, "--comm-group", groups)
    c.codes, c.needles = {3}, ["tp", "rank 1"]


def pg_float_name(c):
    # "0.0" finds "0"; the file's "0" is a subset and is that group.
    groups = c.text("groups.json", '{"0": [0, 1]}')
    ranks = [[coll(1, 4096, pg="0.0")], [coll(1, 4096, pg="0.0")]] + [[comp(1, 1)] for _ in range(6)]
    c.run_on(c.workload(ranks), RING8, "--comm-group", groups)
    c.codes = {0}


def involved_dim(c):
    dims = [attr("involved_dim", None, "boolList")]
    dims[0]["boolList"] = {"values": [True, False]}
    ranks = [[coll(1, 1 << 20, extra=dims)] for _ in range(64)]
    c.run_on(c.workload(ranks), TORUS, "--report", c.path("r.json"))
    c.codes = {0}

    def check():
        sizes = {x.get("group_size") for x in json.load(open(c.path("r.json"))).get("collectives", [])}
        return "" if sizes == {8} else f"group sizes {sorted(s for s in sizes if s is not None)}, not 8"
    c.after = check


# --- the transformer generator (gen:transformer?..., model YAML) ---

SWITCH8 = os.path.join(ROOT, "configs", "switch8.yml")


def gen_run(c, query, network=SWITCH8, *extra):
    sys_yml = c.text("sys.yml", "compute:\n  peak_tflops: 312\n  memory_bandwidth: 2039GB/s\n")
    c.cmd = ["--workload", "gen:transformer?" + query, "--network", network, "--system", sys_yml, "--strict"] + list(extra)


def gen_seq_2_26(c):
    gen_run(c, "model=llama3-8b&parallel=tp=2,pp=1,dp=1&global-batch=1&seq=67108864")
    c.needles, c.max_cpu = ["gen:transformer: seq=67108864", "attention kernel's FLOPs", "hidden 4096"], 5


def gen_wide_model(c):
    model = c.text("wide.yml", "layers: 2\nhidden: 4194304\nffn_hidden: 16777216\nheads: 32\nkv_heads: 8\n"
                               "vocab: 32000\nmlp: swiglu\nnorm: rmsnorm\n")
    gen_run(c, f"model={model}&parallel=tp=2&global-batch=1&seq=262144")
    c.needles, c.max_cpu = ["gen:transformer: seq=262144", "MLP FC1 GEMM", "hidden 4194304", "wide.yml"], 5


def gen_vocab_1e12(c):
    model = c.text("vocab.yml", "layers: 2\nhidden: 4096\nffn_hidden: 14336\nheads: 32\nkv_heads: 8\n"
                                "vocab: 1000000000000\n")
    gen_run(c, f"model={model}&parallel=tp=1&global-batch=1&seq=2048")
    c.needles, c.max_cpu = ["output layer GEMM", "vocab 1000000000000", "vocab.yml"], 5


def gen_microbatches_2_24(c):
    gen_run(c, "model=llama3-8b&parallel=tp=1&global-batch=16777216&seq=128")
    c.needles, c.max_cpu = ["global-batch=16777216", "at least 12884901888 nodes", "lower global-batch="], 2


def gen_billion_layers(c):
    model = c.text("deep.yml", "layers: 1000000000\nhidden: 64\nffn_hidden: 256\nheads: 4\nvocab: 128\n")
    gen_run(c, f"model={model}&parallel=tp=1&global-batch=1&seq=16")
    c.needles, c.max_cpu = ["nodes", "layers 1000000000 of", "deep.yml"], 2


def gen_past_memory(c):
    gen_run(c, "model=llama3-8b&parallel=tp=1,pp=1,dp=64&global-batch=268435456&seq=128", TORUS)
    c.needles, c.max_cpu = ["too large for the memory available", "3221225472 nodes", "lower global-batch="], 2


def gen_first_stage_zero(c):
    gen_run(c, "model=llama3-8b&parallel=tp=1,pp=4&global-batch=8&seq=128&first-stage-layers=0&last-stage-layers=8")
    c.needles = ["first-stage-layers=0: must be from 1"]


def gen_bucket_zero(c):
    gen_run(c, "model=llama3-8b&parallel=tp=1,dp=2&global-batch=8&seq=128&bucket-params=0")
    c.needles = ["bucket-params=0: must be at least 1"]


def gen_global_batch_zero(c):
    gen_run(c, "model=llama3-8b&parallel=tp=1&global-batch=0&seq=128")
    c.needles = ["global-batch=0: must be at least 1"]


def gen_query_names_keys(c):
    gen_run(c, "model=llama3-8b&parallel=tp=1,cp=3&global-batch=8&seq=2048")
    c.needles = ["2 x cp must divide seq=2048"]


def impossible_mfu(c):
    # The generator's metadata (model_flops) claiming 10^18 FLOPs for a 1 us iteration.
    md = {"version": "0.0.4", "attr": [{"name": "model_flops", "int64Val": str(10**18)}, {"name": "pp", "int64Val": "1"}]}
    with open(c.path("w.0.json"), "w") as f:
        json.dump({"metadata": md, "nodes": [comp(1, 1)]}, f)
    sys_yml = c.text("sys.yml", "compute:\n  peak_tflops: 989\n  memory_bandwidth: 3350GB/s\n")
    c.run_on(c.path("w"), SWITCH8, "--system", sys_yml, "--strict")
    c.needles = ["MFU", "exceeds what a GPU can do", "--strict: the training iteration's MFU exceeds 100 %"]
# --- sim calibrate, sim compare and sim compute time inputs ---

REF_HEADER = "system,ranks,collective,size_bytes,time_us,algbw_GBps,busbw_GBps\n"
NCCL_LOG = [
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 4096 step: 512(factor) warmup iters: 5 iters: 20",
    "#  Rank  0 Group  0 Pid  1 on node device  0 [0x18] NVIDIA H100 80GB HBM3",
    "#  Rank  1 Group  0 Pid  2 on node device  1 [0x28] NVIDIA H100 80GB HBM3",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
    "           8             2     float     sum      -1    30.00    0.00    0.00      0    29.70    0.00    0.00      0",
    "        4096          1024     float     sum      -1    30.01    0.14    0.14      0    29.71    0.14    0.14      0",
]


def calibration_folder(c):
    """A ring of 8 with its link bandwidth free: what `sim calibrate --system` takes."""
    d = c.path("sys")
    os.makedirs(d)
    shutil.copy(RING8, os.path.join(d, "network.yml"))
    with open(os.path.join(d, "system.yml"), "w") as f:
        f.write("collective:\n  algorithms:\n    all_reduce: ring\n")
    with open(os.path.join(d, "calibration.yml"), "w") as f:
        f.write("free:\n  - {name: link_bandwidth, file: network, key: bandwidth, min: 10GB/s, max: 100GB/s}\n")
    return d


def calibrate_on(c, rows, *extra):
    ref = c.text("ref.csv", REF_HEADER + "x,8,all_reduce,1048576,60,17.48,30.58\n" + rows)
    c.cmd = ["calibrate", ref, "--system", calibration_folder(c), "-o", c.path("out")] + list(extra)


def calibrate_nan_time(c):
    calibrate_on(c, "x,8,all_reduce,4194304,nan,,\n")
    c.needles = ["ref.csv:3: column 5 (time_us)", "'nan'"]
    c.after = lambda: "files written" if os.path.exists(c.path("out")) else ""


def calibrate_zero_time(c):
    calibrate_on(c, "x,8,all_reduce,4194304,0,,\n")
    c.needles = ["ref.csv:3: column 5 (time_us)", "must be above 0"]


def calibrate_fit_twice(c):
    calibrate_on(c, "", "--fit", "link_bandwidth,link_bandwidth")
    c.needles = ["--fit", "'link_bandwidth' given twice"]


def calibrate_fit_empty(c):
    calibrate_on(c, "", "--fit", "")
    c.needles = ["--fit ''", "empty parameter name"]


def calibrate_output_is_a_file(c):
    calibrate_on(c, "")
    c.text("out", "a file\n")
    c.needles = ["-o " + c.path("out"), "exists and is not a folder"]
    c.max_cpu = 2  # refused before the fit


def calibrate_filter_system(c):
    calibrate_on(c, "y,8,all_reduce,4194304,100,41.94,73.40\n", "--filter", "system=x")
    c.codes = {0}

    def check():
        head = open(c.path("out/network.yml")).read()
        return "" if "--fit link_bandwidth --filter system=x`" in head else "the header lacks --fit and --filter"
    c.after = check


def compare_zero_reference(c):
    log = c.text("all_reduce_perf.txt", "\n".join(NCCL_LOG) + "\n")
    ours = c.text("ours.csv", REF_HEADER + "x,2,all_reduce,8,0.1,0.08,0.08\nx,2,all_reduce,4096,30,0.14,0.14\n")
    c.cmd = ["compare", ours, log, "--metric", "busbw"]
    c.codes, c.output_has, c.output_lacks = {0}, ["not compared", "1 points compared"], ["nan", "inf%"]


def nccl_log_prefixed(prefix):
    def build(c):
        plain = c.text("all_reduce_perf.txt", "\n".join(NCCL_LOG) + "\n")
        tagged = c.text("tagged_all_reduce_perf.txt", "".join(prefix + line + "\n" for line in NCCL_LOG))
        c.cmd = ["compare", tagged, plain, "--tolerance", "0"]
        c.codes, c.output_has = {0}, ["2 points compared"]
    return build


def compute_unknown_membound_op(c):
    c.text("membound.csv", "op,dtype,elements,time_us\nadd,bf16,1048576,9.2\nadd,bf16,4194304,30\n"
                           "copy,bf16,1048576,7.9\ncopy,bf16,4194304,25\n")
    sys_yml = c.text("sys.yml", "compute:\n  peak_tflops: 989\n  memory_bandwidth: 3.35TB/s\n  kernels: membound.csv\n")
    ask = c.text("ask.csv", "op,dtype,elements,time_us\nfrobnicate,bf16,1048576,9.2\n")
    c.cmd = ["compute", "time", "--system", sys_yml, "--kernels", ask]
    c.needles = ["ask.csv:2", "'frobnicate'", "known: add, copy"]


def kernel_csv_bom(c):
    sys_yml = c.text("sys.yml", "compute:\n  peak_tflops: 989\n  memory_bandwidth: 3.35TB/s\n")
    ask = c.text("ask.csv", "\ufeffop,dtype,elements,time_us\ncopy,bf16,1048576,9.2\n")
    c.cmd = ["compute", "time", "--system", sys_yml, "--kernels", ask]
    c.codes, c.output_has = {0}, ["copy,bf16,1048576,9.2,"]


def reference_csv_bom(c):
    plain = c.text("ref.csv", REF_HEADER + "x,8,all_reduce,1048576,60,17.48,30.58\n")
    bom = c.text("bom.csv", "\ufeff" + REF_HEADER + "x,8,all_reduce,1048576,60,17.48,30.58\n")
    c.cmd = ["compare", bom, plain, "--tolerance", "0"]
    c.codes, c.output_has = {0}, ["1 points compared"]
# --- PyTorch traces (workload import pytorch, --workload pytorch:DIR) ---

def pt_op(i, name, parent, rf, **extra):
    op = {"id": i, "name": name, "ctrl_deps": parent, "inputs": {"values": [], "shapes": [], "types": []},
          "outputs": {"values": [], "shapes": [], "types": []},
          "attrs": [{"name": "rf_id", "type": "uint64", "value": rf}, {"name": "tid", "type": "uint64", "value": 1}]}
    op.update(extra)
    return op


def pt_host(c, name, nodes, pid=10):
    roots = [pt_op(1, "[pytorch|profiler|execution_trace|process]", 1, 0),
             pt_op(2, "[pytorch|profiler|execution_trace|thread]", 1, 0)]
    with open(c.path(name), "w") as f:
        json.dump({"schema": "1.1.1-chakra.0.0.4", "pid": pid, "nodes": roots + nodes}, f)


def pt_kineto(c, name, rank, world, dur=10, pid=10, groups=None):
    info = {"backend": "nccl", "rank": rank, "world_size": world}
    if groups is not None:
        info["pg_config"] = groups
    ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": pid, "tid": pid, "ts": 100, "dur": dur,
           "args": {"External id": 41, "Record function id": 3}}]
    with open(c.path(name), "w") as f:
        json.dump({"schemaVersion": 1, "distributedInfo": info, "traceEvents": ev}, f)


def pt_import(c, host, kineto=None):
    c.cmd = ["workload", "import", "pytorch", "--host-et", c.path(host), "-o", c.path("out")]
    if kineto:
        c.cmd += ["--kineto", c.path(kineto)]


def pytorch_ctrl_deps_cycle(c):
    os.mkdir(c.path("in"))
    pt_host(c, "in/et_rank0.json", [pt_op(5, "aten::add", 6, 3), pt_op(6, "aten::mul", 5, 4),
                                    pt_op(7, "c10d::barrier", 5, 5)])
    pt_import(c, "in")
    c.needles = ["in/et_rank0.json: rank 0", "form a cycle: 5 -> 6 -> 5"]


def pytorch_scheme_ctrl_deps_cycle(c):
    os.mkdir(c.path("in"))
    pt_host(c, "in/et_rank0.json", [pt_op(5, "aten::add", 6, 3), pt_op(6, "aten::mul", 5, 4),
                                    pt_op(7, "c10d::barrier", 5, 5)])
    c.run_on("pytorch:" + c.path("in"))
    c.needles = ["in/et_rank0.json: rank 0", "form a cycle: 5 -> 6 -> 5"]


def pytorch_some_ranks(c):
    os.mkdir(c.path("in"))
    groups = [{"pg_name": "0", "pg_desc": "default_pg", "ranks": [0, 1, 2, 3]}]
    for r in range(2):
        pt_host(c, f"in/et_rank{r}.json", [pt_op(5, "aten::mm", 2, 3)], pid=10 + r)
        pt_kineto(c, f"in/kineto_rank{r}.json", r, 4, pid=10 + r, groups=groups)
    pt_import(c, "in", "in")
    c.needles = ["kineto_rank0.json: rank 0", "process group '0' (default_pg) lists ranks 2, 3, whose traces are missing"]


def pytorch_group_rank_99(c):
    os.mkdir(c.path("in"))
    groups = [{"pg_name": "0", "ranks": [0, 1]}, {"pg_name": "5", "ranks": [0, 99]}]
    for r in range(2):
        pt_host(c, f"in/et_rank{r}.json", [pt_op(5, "aten::mm", 2, 3)], pid=10 + r)
        pt_kineto(c, f"in/kineto_rank{r}.json", r, 2, pid=10 + r, groups=groups)
    pt_import(c, "in", "in")
    c.needles = ["process group '5' lists rank 99", "the trace's job had 2 ranks"]


def pytorch_kineto_dur_1e13(c):
    pt_host(c, "et_rank0.json", [pt_op(5, "aten::mm", 2, 3)])
    pt_kineto(c, "kineto_rank0.json", 0, 1, dur=1e13)
    pt_import(c, "et_rank0.json", "kineto_rank0.json")
    c.needles = ["kineto_rank0.json: rank 0: traceEvents[0] (cpu_op 'aten::mm'): field 'dur' is 10000000000000 us",
                 LIMIT]


def pytorch_profiler_default_names(c):
    os.mkdir(c.path("in"))
    for r in range(2):
        pt_host(c, f"in/et_rank{r}.json", [pt_op(5, "aten::mm", 2, 3)], pid=10 + r)
        pt_kineto(c, f"in/gpu-node_{10 + r}.{1732655187999 - r}.pt.trace.json", r, 2, pid=10 + r)
    pt_import(c, "in", "in")
    c.codes = {0}


def pytorch_name_contradicts_rank(c):
    os.mkdir(c.path("in"))
    for r in range(2):
        pt_host(c, f"in/et_rank{r}.json", [pt_op(5, "aten::mm", 2, 3)], pid=10 + r)
        pt_kineto(c, f"in/kineto_rank{r}.json", 1 - r, 2, pid=10 + r)
    pt_import(c, "in", "in")
    c.needles = ["records rank 1 (distributedInfo.rank) but its name says rank 0"]


def stale_rank_files(c):
    # 8 ranks written, then 4 to the same prefix: the run must see the 4.
    subprocess.run([c.sim, "workload", "gen", "collectives", "--npus", "8", "--coll", "allreduce", "--size", "1MiB",
                    "-o", c.path("wl/job")], capture_output=True, check=True)
    c.cmd = ["workload", "gen", "collectives", "--npus", "4", "--coll", "allreduce", "--size", "1MiB",
             "-o", c.path("wl/job")]
    c.codes = {0}

    def check():
        left = sorted(os.listdir(c.path("wl")))
        if left != [f"job.{r}.et" for r in range(4)]:
            return "rank files left: " + ", ".join(left)
        run = subprocess.run([c.sim, "--workload", c.path("wl/job"), "--network", RING8], capture_output=True,
                             text=True)
        return "" if run.returncode == 0 and "(4 ranks)" in run.stdout else "the run is not of the 4 ranks written"
    c.after = check


def prefix_not_plain(c):
    os.makedirs(c.path("dir"))
    c.cmd = ["workload", "gen", "collectives", "--npus", "2", "--coll", "allreduce", "--size", "1MiB",
             "-o", c.path("dir") + "/"]
    c.needles = ["-o '" + c.path("dir") + "/'", "a prefix is a path"]
    c.after = lambda: "" if not os.listdir(c.path("dir")) else "files written: " + ", ".join(os.listdir(c.path("dir")))


def one_rank_nccl(c):
    w = c.workload([[coll(1, 1 << 20, comm_type=2)]])  # ALL_GATHER on one rank
    sys_yml = c.text("nccl.yml", "compute:\n  peak_tflops: 1000\n  memory_bandwidth: 2TB/s\n"
                                 "collective:\n  algorithms: {all_gather: nccl}\n")
    c.run_on(w, RING8, "--system", sys_yml)
    c.codes = {0}


CASES = [
    ("simulated time wraps", "two chained COMPs of 5e12 us", time_wraps),
    ("simulated time wraps", "duration_micros 2^62", duration_2_62),
    ("simulated time wraps", "all-reduce comm_size 2^62", coll_size_2_62),
    ("memory-op time wraps", "MEM_LOAD 1e18 B at 1 B/s", mem_op_wraps),
    ("injected-algorithm durations wrap", "algorithm COMP of 2^62 us", injected_duration_wraps),
    ("deep JSON nesting", "JSON ET nested 100,000 levels", deep_json_et),
    ("deep JSON nesting", "comm-group file nested 100,000 levels", deep_comm_group),
    ("deep JSON nesting", "process-group METADATA nested 100,000 levels", deep_pg_metadata),
    ("wrong-typed system config values", "reduction_bandwidth: [1, 2]", system_wrong_type),
    ("wrong-typed system config values", "collective key twice", system_duplicate_key),
    ("special files as inputs", "--comm-group a directory", comm_group_directory),
    ("special files as inputs", "--system /dev/zero", system_dev_zero),
    ("slow dependency handling", "one node with 60,000 deps", wide_fan_in),
    ("slow dependency handling", "300,000 chained COMPs", long_chain),
    ("output path replaced", "--report through a symlink", report_symlink),
    ("output mode lost", "--report onto a 0600 file", report_mode_kept),
    ("ids truncated", "comm_dst 2^32+1", comm_dst_2_32_plus_1),
    ("lenient numbers in the system config", "chunks: 2.9", lenient_number),
    ("lenient numbers in the system config", "peak_tflops: 989abc", lenient_suffix),
    ("errors without a place", "comm_size as a string", wrong_typed_attribute),
    ("deadlock told in internal terms", "a sub-group member never issues", deadlock_names_group),
    ("process groups misread", "pg_name \"0.0\", file defines \"0\" as a subset", pg_float_name),
    ("involved_dim ignored", "[true, false] on an 8x8 torus", involved_dim),
    ("generated counts wrap", "gen: seq 2^26 at tp 2 (MFU 140,135 %)", gen_seq_2_26),
    ("generated counts wrap", "gen: hidden 2^22 at seq 2^18 (MFU 358 %)", gen_wide_model),
    ("generated counts wrap", "gen: model vocab 10^12", gen_vocab_1e12),
    ("generated workload past memory", "gen: 2^24 micro-batches", gen_microbatches_2_24),
    ("generated workload past memory", "gen: a billion layers", gen_billion_layers),
    ("generated workload past memory", "gen: 64 ranks of 3.2e9 nodes", gen_past_memory),
    ("generator options read as defaults", "gen: first-stage-layers=0", gen_first_stage_zero),
    ("generator options read as defaults", "gen: bucket-params=0", gen_bucket_zero),
    ("generator options read as defaults", "gen: global-batch=0", gen_global_batch_zero),
    ("gen: query errors name flags", "gen: cp=3 with seq=2048", gen_query_names_keys),
    ("physically impossible results", "MFU above 100 % with --strict", impossible_mfu),
    ("calibrate accepts nonsense times", "reference time_us nan", calibrate_nan_time),
    ("calibrate accepts nonsense times", "reference time_us 0", calibrate_zero_time),
    ("calibrate --fit lists", "--fit a,a", calibrate_fit_twice),
    ("calibrate --fit lists", "--fit ''", calibrate_fit_empty),
    ("calibrate -o checked after the fit", "-o onto an existing file", calibrate_output_is_a_file),
    ("calibrate --filter on a reference column", "--filter system=x; header names --fit", calibrate_filter_system),
    ("compare prints nan/inf deviations", "nccl-tests busbw 0.00 as reference", compare_zero_reference),
    ("nccl-tests logs through launchers refused", "mpirun --tag-output prefixes", nccl_log_prefixed("[1,0]<stdout>:")),
    ("nccl-tests logs through launchers refused", "srun --label prefixes", nccl_log_prefixed("0: ")),
    ("compute time accepts unknown membound ops", "op 'frobnicate'", compute_unknown_membound_op),
    ("CSV byte order mark misread", "kernel CSV with a BOM", kernel_csv_bom),
    ("CSV byte order mark misread", "reference CSV with a BOM", reference_csv_bom),
    ("pytorch import hangs", "host trace ctrl_deps cycle 5 -> 6 -> 5", pytorch_ctrl_deps_cycle),
    ("pytorch import hangs", "the same through --workload pytorch:DIR", pytorch_scheme_ctrl_deps_cycle),
    ("pytorch import succeeds, run cannot", "2 of 4 ranks imported", pytorch_some_ranks),
    ("pytorch import succeeds, run cannot", "process group naming rank 99", pytorch_group_rank_99),
    ("pytorch import succeeds, run cannot", "Kineto dur 1e13 us", pytorch_kineto_dur_1e13),
    ("pytorch trace ranks", "profiler default names, rank recorded", pytorch_profiler_default_names),
    ("pytorch trace ranks", "name rank contradicts distributedInfo.rank", pytorch_name_contradicts_rank),
    ("stale rank files reused", "gen 8 ranks, then 4 to the same prefix", stale_rank_files),
    ("prefix writers", "-o dir/ (hidden dir/.0.et)", prefix_not_plain),
    ("one-member collective", "1-rank all-gather on nccl", one_rank_nccl),
]


def run_case(sim, timeout, build, cpu_factor):
    d = tempfile.mkdtemp(prefix="sim_known_defects_")
    try:
        c = Case(d)
        c.sim = sim
        build(c)
        start = time.monotonic()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            proc = subprocess.run([sim, "-q"] + c.cmd, capture_output=True, text=True, errors="replace",
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return "hang", f"no exit within {timeout} s"
        seconds = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        err = proc.stderr
        first = err.strip().splitlines()[0][:150] if err.strip() else ""
        if "runtime error:" in err or "Sanitizer" in err:
            return "FAIL", "sanitizer report: " + next(l for l in err.splitlines() if "runtime error:" in l or
                                                      "Sanitizer" in l)[:150]
        if proc.returncode < 0:
            return "FAIL", f"signal {-proc.returncode}: {first}"
        if proc.returncode not in (0, 2, 3):
            return "FAIL", f"exit {proc.returncode}: {first}"
        if proc.returncode not in c.codes:
            return "FAIL", f"exit {proc.returncode}, expected {'/'.join(map(str, sorted(c.codes)))}: {first}"
        if proc.returncode != 0 and "sim: error:" not in err:
            return "FAIL", f"exit {proc.returncode} without 'sim: error:'"
        missing = [n for n in c.needles if n not in err]
        if missing:
            return "FAIL", f"message lacks {missing!r}: {first}"
        both = proc.stdout + err
        absent = [n for n in c.output_has if n not in both]
        if absent:
            return "FAIL", f"output lacks {absent!r}: {first}"
        present = [n for n in c.output_lacks if n in both]
        if present:
            return "FAIL", f"output holds {present!r}: {first}"
        if c.max_cpu and cpu > c.max_cpu * cpu_factor:
            return "FAIL", f"took {cpu:.1f} CPU s, more than {c.max_cpu * cpu_factor:g}"
        if c.after:
            why = c.after()
            if why:
                return "FAIL", why
        return "ok", f"exit {proc.returncode}, {seconds:.1f} s ({cpu:.1f} CPU s)" + (f": {first}" if first else "")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=os.path.join(ROOT, "build", "sim"))
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--cpu-factor", type=float, default=1, help="scale the CPU-time bounds (slow builds)")
    args = ap.parse_args()
    if not os.access(args.sim, os.X_OK):
        print(f"no sim binary at {args.sim} (build first, or give --sim)", file=sys.stderr)
        return 2
    failures = 0
    print(f"{'class':36} {'instance':46} result")
    for klass, instance, build in CASES:
        verdict, detail = run_case(args.sim, args.timeout, build, args.cpu_factor)
        failures += verdict != "ok"
        print(f"{klass[:36]:36} {instance[:46]:46} {verdict}: {detail}")
    print(f"{len(CASES) - failures} of {len(CASES)} ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
