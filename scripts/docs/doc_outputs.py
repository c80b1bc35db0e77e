#!/usr/bin/env python3
"""The printed examples of README.md and docs/*.md, written and checked from what `sim` prints.

A block is an HTML comment (invisible on the rendered page) followed by a fenced block:

    <!-- output (scripts/docs/doc_outputs.py --write)
    setup: build/sim workload gen collectives --npus 8 --coll allreduce --size 1MiB -o wl/ar8
    run: build/sim --workload wl/ar8 --network configs/switch8.yml
    lines: ^simulated time|^events
    slow
    -->
    ```
    ...what `run` prints...
    ```

A table a command prints (Markdown rows, nothing else) is a `table` block: the same comment
opened by `<!-- table (scripts/docs/doc_outputs.py --write)`, then the table's lines, up to the first
line that does not start with `|`:

    <!-- table (scripts/docs/doc_outputs.py --write)
    run: scripts/docs/tables/nccl.py one-node
    mask: \d+\.\d s
    -->
    | size | busbw |
    ...

`needs: PATH` (relative to the repository) marks a block whose command reads data a clone does
not have (../shared/testdata): it is skipped, and said so, when PATH is absent. Commands see the
repository's folder as $SIM_SOURCE_DIR.

`mask:` (any number, both kinds) names further text that depends on the machine (a table's wall
times): each match is replaced by "#" on both sides before comparing.

`setup:` lines (any number) and then `run:` are run with bash in a fresh folder per block that
holds links to the build folder (as `build/`, and `sim` on the PATH), configs/, examples/ and
scripts/, like a fresh clone; the block is run's standard error (sim's notes and warnings come
before its summary), then its standard output. `lines:` keeps only the lines that match the
regular expression. `slow` marks a block that takes a sanitizer build more than a few seconds:
`--skip-slow` (the sanitizer builds' ctest) leaves it out; `long` one that takes more than a few
seconds in a Release build: only `--check --long` and `--write` run it. The `run` command must
appear above the block in the document as written (continuation lines joined), so a shown output
cannot drift away from its command.

    scripts/docs/doc_outputs.py --write [--sim PATH] [DOC...]   rewrite every block (default: README.md
                                                                and the docs/ pages that have blocks)
    scripts/docs/doc_outputs.py --check [--sim PATH] [--skip-slow] [--long] [DOC...]
                                                                exit 1 naming each block whose text
                                                                differs from what its command prints

The check compares simulated figures exactly (the same inputs give the same picoseconds). Host
timings and memory (`wall time`, `loading`, `event loop`, `M events/s`, `peak memory`,
`synthesis time`) depend on the machine and its load: they are masked on both sides before
comparing (the document shows those of the machine that last ran --write).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPENINGS = ("<!-- output (scripts/docs/doc_outputs.py --write)", "<!-- table (scripts/docs/doc_outputs.py --write)")
# An output block: the comment, then a fenced block (group 2); a table block: the comment, then
# the lines starting with "|" (group 4).
MARK = re.compile(r"<!-- output \(scripts/docs/doc_outputs\.py --write\)\n(.*?)-->\n```[^\n]*\n(.*?)```\n"
                  r"|<!-- table \(scripts/docs/doc_outputs\.py --write\)\n(.*?)-->\n((?:\|[^\n]*\n)*)", re.S)
# Host timings and memory in sim's summary; each number is replaced by "#" before comparing.
TIMINGS = [re.compile(p) for p in (
    r"(?<=wall time )[\d.]+(?= s)",
    r"(?<=loading )[\d.]+(?= s)",
    r"(?<=event loop )[\d.]+(?= s)",
    r"[\d.]+(?= M events/s)",
    r"(?<=peak memory: )\d+(?= MiB)",
    r"(?<=synthesis time: )[\d.]+(?= s)",
)]
LINKED = ("configs", "examples", "scripts")


class Block:
    def __init__(self, doc, match, text):
        self.doc = doc
        self.start, self.end = match.span()
        self.table = match.group(1) is None
        head, body = (3, 4) if self.table else (1, 2)
        self.body_start = match.start(body)
        self.shown = match.group(body)
        self.line = text.count("\n", 0, self.start) + 1
        self.setup, self.run, self.lines, self.slow, self.long = [], None, None, False, False
        self.masks = []
        self.needs = []
        for raw in match.group(head).splitlines():
            key, _, value = raw.strip().partition(":")
            value = value.strip()
            if key == "setup":
                self.setup.append(value)
            elif key == "run" and self.run is None:
                self.run = value
            elif key == "lines":
                self.lines = re.compile(value)
            elif key == "needs":
                self.needs.append(value)
            elif key == "mask":
                self.masks.append(re.compile(value))
            elif key == "slow" and not value:
                self.slow = True
            elif key == "long" and not value:
                self.long = True
            elif raw.strip():
                raise SystemExit(f"doc_outputs: {doc}:{self.line}: unknown line {raw.strip()!r} in a block's "
                                 "comment (setup:, run:, lines:, needs:, mask:, slow, long)")
        if self.run is None:
            raise SystemExit(f"doc_outputs: {doc}:{self.line}: the block names no 'run:' command")

    def missing(self):
        """The first path the block needs that this checkout lacks, or None."""
        return next((p for p in self.needs if not os.path.exists(os.path.join(ROOT, p))), None)

    def where(self):
        return f"{os.path.relpath(self.doc, ROOT)}:{self.line}"


def blocks_of(doc):
    text = open(doc).read()
    blocks = [Block(doc, m, text) for m in MARK.finditer(text)]
    opened = sum(text.count(o) for o in OPENINGS)
    if opened != len(blocks):
        raise SystemExit(f"doc_outputs: {doc}: {opened} comment(s) open an output or table block, {len(blocks)} "
                         "are followed by '-->' and a fenced block or a table as the docstring shows")
    for b in blocks:
        if b.table and not b.shown:
            raise SystemExit(f"doc_outputs: {b.where()}: a table block with no table after its comment")
    return text, blocks


def commands_of(text):
    """Every line of the document outside the blocks' comments, continuation lines joined (the
    joined line stands at its first line's index), whitespace collapsed."""
    text = MARK.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    joined = re.sub(r"\\\n", " ", text)
    return [" ".join(line.split()) for line in joined.splitlines()]


def workspace(sim):
    """A folder removed after the block (also when the check is stopped): work/, the block's
    folder, like a fresh clone; bin/, `sim` for the PATH."""
    base = tempfile.mkdtemp(prefix="doc_outputs.")
    work, bindir = os.path.join(base, "work"), os.path.join(base, "bin")
    os.mkdir(work)
    os.mkdir(bindir)
    os.symlink(os.path.dirname(os.path.abspath(sim)), os.path.join(work, "build"))
    for d in LINKED:
        os.symlink(os.path.join(ROOT, d), os.path.join(work, d))
    os.symlink(os.path.abspath(sim), os.path.join(bindir, "sim"))
    return base, work, bindir


def printed(block, sim, work, bindir):
    """What block.run prints after block.setup, in a folder shared with the other blocks."""
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), SIM=os.path.abspath(sim),
               SIM_SOURCE_DIR=ROOT)
    for cmd in block.setup + [block.run]:
        r = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"doc_outputs: {block.where()}: `{cmd}` exited {r.returncode}:\n"
                             f"{(r.stdout + r.stderr)[-2000:]}")
    if block.table:
        if r.stderr.strip():
            raise SystemExit(f"doc_outputs: {block.where()}: `{block.run}` wrote to standard error:\n{r.stderr[-2000:]}")
        rows = r.stdout.splitlines()
        if not rows or any(not ln.startswith("|") for ln in rows):
            raise SystemExit(f"doc_outputs: {block.where()}: `{block.run}` printed lines that are not table rows")
    lines = (r.stderr + r.stdout).splitlines()
    if block.lines:
        lines = [ln for ln in lines if block.lines.search(ln)]
    return "".join(ln.rstrip() + "\n" for ln in lines)


def masked(text, block=None):
    for p in TIMINGS + (block.masks if block else []):
        text = p.sub("#", text)
    return text


def differences(block, now):
    """Lines where the document's block and what the command prints now differ (timings masked)."""
    shown, got = masked(block.shown, block).splitlines(), masked(now, block).splitlines()
    out = []
    for i in range(max(len(shown), len(got))):
        a = shown[i] if i < len(shown) else "(no line)"
        b = got[i] if i < len(got) else "(no line)"
        if a != b:
            out.append(f"  the document: {a}\n  sim prints:   {b}")
    if len(out) > 5:
        out[5:] = [f"  ... and {len(out) - 5} more line(s)"]
    return out


def default_docs():
    docs = [os.path.join(ROOT, "README.md")]
    docs += sorted(os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
                   if f.endswith(".md"))
    return [d for d in docs if MARK.search(open(d).read())]


def run_blocks(docs, sim, skip, on_block):
    """Runs the blocks of each document in order, each in a fresh folder removed after on_block
    (which sees the folder, and now=None for a block that skip(block) leaves out)."""
    for doc in docs:
        text, blocks = blocks_of(doc)
        if not blocks:
            raise SystemExit(f"doc_outputs: {doc} has no output block")
        commands = commands_of(text)
        for b in blocks:
            run = " ".join(b.run.split())
            if not any(run in c for c in commands[:b.line - 1]):
                raise SystemExit(f"doc_outputs: {b.where()}: the block's command `{b.run}` is not shown "
                                 "above it in the document")
            if skip(b) or b.missing():
                if b.missing():
                    print(f"doc_outputs: {b.where()}: skipped, {b.missing()} is absent")
                on_block(doc, b, None, None)
                continue
            base, work, bindir = workspace(sim)
            try:
                on_block(doc, b, printed(b, sim, work, bindir), work)
            finally:
                shutil.rmtree(base)


def write(docs, sim):
    outputs = {}
    run_blocks(docs, sim, lambda b: False,
               lambda doc, b, now, work: now is None or outputs.setdefault(doc, []).append((b, now)))
    for doc, pairs in outputs.items():
        text = open(doc).read()
        for b, now in reversed(pairs):
            text = text[:b.body_start] + now + text[b.body_start + len(b.shown):]
        open(doc, "w").write(text)
        print(f"doc_outputs: {len(pairs)} block(s) of {os.path.relpath(doc, ROOT)} written")


def check(docs, sim, skip, after=None):
    """The lines naming each block that differs from what its command prints (empty: all match),
    and how many blocks were checked and skipped. after(block, work), when given, sees each run
    block's folder before it is removed."""
    bad, counts = [], {"checked": 0, "skipped": 0}

    def one(doc, b, now, work):
        if now is None:
            counts["skipped"] += 1
            return
        counts["checked"] += 1
        diff = differences(b, now)
        if diff:
            bad.append(f"{b.where()}: `{b.run}` prints another text than the document shows:\n" + "\n".join(diff))
        if after:
            after(b, work)

    run_blocks(docs, sim, skip, one)
    return bad, counts["checked"], counts["skipped"]


def main(argv):
    mode = None
    sim = os.path.join(ROOT, "build", "sim")
    skip_slow = long = False
    docs = []
    args = iter(argv)
    for a in args:
        if a in ("--write", "--check"):
            mode = a
        elif a == "--sim":
            sim = next(args, None)
        elif a == "--skip-slow":
            skip_slow = True
        elif a == "--long":
            long = True
        elif a.startswith("-"):
            print(__doc__)
            return 2
        else:
            docs.append(os.path.abspath(a))
    if mode is None or not sim:
        print(__doc__)
        return 2
    if not os.access(sim, os.X_OK):
        print(f"doc_outputs: no sim binary at {sim} (--sim PATH)")
        return 2
    docs = docs or default_docs()
    if mode == "--write":
        write(docs, sim)
        return 0
    bad, checked, skipped = check(docs, sim, lambda b: (b.long and not long) or (b.slow and skip_slow))
    for line in bad:
        print(line)
    if bad:
        print("doc_outputs: run scripts/docs/doc_outputs.py --write and say in the prose what moved")
        return 1
    print(f"doc_outputs: {checked} block(s) match what their commands print"
          + (f" ({skipped} slow or long one(s) skipped)" if skipped else ""))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # folders removed on the way out
    sys.exit(main(sys.argv[1:]))
