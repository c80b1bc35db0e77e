#!/usr/bin/env python3
"""Fails when text in the repository speaks of how the product was made.

Docs, the README, code, scripts, configs and tests describe the product as it
is; the history of the work belongs in `git log`. This test reads every text
file of the repository (the files git tracks, or every file outside build*/
and extern/ when there is no git) and prints each line that names:

  - a work session ("session" and a number, "this session", "other sessions' builds");
  - an issue of this project ("issue" and a number, with or without "#"; "the issue's check").
    An issue of ANOTHER project is a source and is allowed when the project is
    named right before it: "<project> issue N" or "<project>'s issue #N", with
    <project> one of EXTERNAL_PROJECTS (nccl-tests, ASTRA-sim, ...: a cited
    source). "the issue order" (the order ops are issued in) is not about an
    issue;
  - the people or places of the work: helpers' builds, branch names ("branch
    `s6-loop`", "this branch", "the main branch"), "after all merges", the
    "house move", "this fix", "until this change", "previously";
  - "the seed" or "the seed paper" for the paper the product reproduces (name
    the paper by its title). A random seed and fuzzing's seed inputs or seed
    corpora are fine.

    tests/docs/process_words_test.py [REPO]

Exits 1 listing every offending line as FILE:LINE: text, 0 with a summary line.
"""
import pathlib
import re
import subprocess
import sys

EXTERNAL_PROJECTS = [
    "nccl-tests", "NCCL", "ASTRA-sim", "astra-sim", "Chakra", "PyTorch", "TACOS", "ns-3",
    "Megatron-LM", "TransformerEngine", "MSCCL", "RCCL", "libFuzzer", "yaml-cpp", "CLI11",
]

_project = "|".join(re.escape(p) for p in EXTERNAL_PROJECTS)
# "issue" or "issues" and a number, with or without "#", not preceded by an external project's name.
ISSUE = re.compile(r"(?<![\w-])issues?\s*#?\s*\d+", re.I)
ALLOWED_ISSUE_PREFIX = re.compile(r"(?:" + _project + r")(?:'s)?\s+$", re.I)

WORDS = [
    re.compile(r"\bsessions?\b", re.I),
    re.compile(r"\bsession-\d", re.I),
    re.compile(r"\bthe issue\b(?!\s+order)", re.I),
    re.compile(r"\bissue's\b", re.I),
    re.compile(r"\bhelpers?'s?\s+builds?\b", re.I),
    re.compile(r"\bhelpers'", re.I),
    re.compile(r"\bhouse move\b", re.I),
    re.compile(r"\bthis fix\b", re.I),
    re.compile(r"\bfix alone\b", re.I),
    re.compile(r"\bpreviously\b", re.I),
    re.compile(r"\b(?:until|before|after|since) (?:this|the) (?:change|fix|merge)\b", re.I),
    re.compile(r"\bbranch\s+`[^`]+`", re.I),
    re.compile(r"\b(?:this|the main|the branch's|of the) branch\b(?!\s+(?:of|that|NCCL))", re.I),
    re.compile(r"\bbranch's\s+base\b", re.I),
    re.compile(r"\bafter (?:all )?(?:the )?merges\b", re.I),
    re.compile(r"\bseed paper\b", re.I),
    re.compile(r"\bthe seed's\b", re.I),
    re.compile(r"\bthe seed\b(?![-_])(?!\s+(?:inputs?|corpora|corpus|files?|folders?|makes|value|of\s+the\s+(?:random|generator)))",
               re.I),
]

BINARY = {".png", ".et", ".gz", ".tgz", ".pb", ".pftrace", ".bin", ".so", ".a", ".o"}


def files(repo):
    try:
        out = subprocess.run(["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others", "--exclude-standard"], check=True, capture_output=True).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = [p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file()]
        names = [n for n in names if not n.startswith(("build", "extern/", ".git/"))]
    me = pathlib.Path(__file__).resolve()
    for n in sorted(names):
        p = repo / n
        if p.suffix in BINARY or not p.is_file() or p.resolve() == me:
            continue
        yield n, p


def offences(line):
    found = []
    for m in ISSUE.finditer(line):
        if not ALLOWED_ISSUE_PREFIX.search(line[: m.start()]):
            found.append(m.group(0))
    for w in WORDS:
        found.extend(m.group(0) for m in w.finditer(line))
    return found


def main():
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    bad = checked = 0
    for name, path in files(repo):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        checked += 1
        for i, line in enumerate(text.splitlines(), 1):
            words = offences(line)
            if words:
                bad += 1
                print(f"{name}:{i}: {', '.join(sorted(set(words)))}: {line.strip()[:160]}")
    if bad:
        print(f"process_words_test: {bad} line(s) speak of how the product was made (see the docstring)")
        return 1
    print(f"process_words_test: {checked} files, no process words")
    return 0


if __name__ == "__main__":
    sys.exit(main())
