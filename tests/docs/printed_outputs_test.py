#!/usr/bin/env python3
"""The printed examples of README.md and docs/ match what their commands print today.

Runs scripts/docs/doc_outputs.py's check over every document that has output blocks (README.md
among them), each block's commands in a fresh folder removed at exit, and fails naming each
block whose text differs (simulated figures exactly; wall time, loading, event loop, events/s
and peak memory masked). Blocks marked `long` are not run (`scripts/docs/doc_outputs.py --check
--long` runs them); with --skip-slow (the sanitizer builds) neither are those marked `slow`.

Also checks that everything the commands write in their folder is ignored by .gitignore, so a
user who runs them in a checkout keeps `git status` clean, and that the comparison itself fails
on a drifted simulated figure and passes on a changed wall time.

    tests/docs/printed_outputs_test.py SOURCE_DIR SIM [--skip-slow]
"""
import os
import re
import signal
import subprocess
import sys


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--skip-slow"):
        print(__doc__)
        return 2
    src, sim = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    skip_slow = len(argv) == 3
    sys.path.insert(0, os.path.join(src, "scripts", "docs"))
    import doc_outputs

    docs = doc_outputs.default_docs()
    if os.path.join(src, "README.md") not in docs:
        print("printed_outputs_test: README.md has no output block")
        return 1
    in_git = subprocess.run(["git", "-C", src, "rev-parse", "--git-dir"], capture_output=True).returncode == 0
    problems = []
    first = {}

    def after(block, work):
        first.setdefault("block", block)
        if not in_git:
            return
        for name in sorted(os.listdir(work)):
            path = os.path.join(work, name)
            if os.path.islink(path):
                continue
            probe = name + "/x" if os.path.isdir(path) else name
            r = subprocess.run(["git", "-C", src, "check-ignore", "-q", "--no-index", probe])
            if r.returncode != 0:
                problems.append(f"{block.where()}: the commands wrote {name}, which .gitignore does not cover")

    bad, checked, skipped = doc_outputs.check(docs, sim, lambda b: b.long or (b.slow and skip_slow), after)

    # The comparison: a simulated figure that moves by one digit fails, a wall time that moves passes.
    b = first.get("block")
    if b is None:
        problems.append("printed_outputs_test: no block was run")
    else:
        shown = b.shown
        drifted = re.sub(r"(?<=simulated time: )(\d)", lambda m: str((int(m.group(1)) + 1) % 10), shown, count=1)
        if drifted == shown or not doc_outputs.differences(b, drifted):
            problems.append(f"{b.where()}: a drifted simulated time is not reported as a difference")
        slower = re.sub(r"(?<=wall time )[\d.]+", "123.456", shown)
        if doc_outputs.differences(b, slower):
            problems.append(f"{b.where()}: a changed wall time is reported as a difference")
    for line in bad + problems:
        print(line)
    if bad:
        print("printed_outputs_test: run scripts/docs/doc_outputs.py --write and say in the prose what moved")
    if bad or problems:
        return 1
    print(f"printed_outputs_test: {checked} block(s) of {len(docs)} document(s) match what their commands print"
          f" ({skipped} slow or long one(s) not run); their outputs are ignored by git")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # ctest's timeout: folders removed on the way out
    sys.exit(main(sys.argv[1:]))
