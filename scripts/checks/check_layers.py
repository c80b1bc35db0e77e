#!/usr/bin/env python3
"""Checks that no #include runs back up the layers of docs/architecture.md.

Each folder below is a layer; a file may include files of its own folder, of
the folders it lists as peers, and of any lower layer. Tests, fuzz harnesses
and extern/ are outside the layers. Prints every offending include and exits 1;
prints one summary line and exits 0 when there is none.

    scripts/checks/check_layers.py [REPO]
    scripts/checks/check_layers.py --graph [REPO]   # the folder include graph, as Mermaid
"""
import pathlib
import re
import sys

# Bottom to top. Folders on one line form one layer: they may not include each
# other unless named as peers below.
LAYERS = [
    ["core"],
    ["network", "workload"],
    ["workload/loader"],
    ["workload/generators", "workload/pytorch"],
    ["workload/source"],
    ["compute"],
    ["system/config"],
    ["system/groups"],
    ["system/program"],
    ["system/collectives", "system/producers"],
    ["system/registry"],
    ["system/astrasim"],
    ["system/runner"],
    ["system/scenario"],
    ["report"],
    ["presets"],
    ["workflows/run"],
    ["workflows/sweep", "workflows/compare"],
    ["workflows/calibrate"],
    ["cli"],
]
PEERS = set()  # (from, to) pairs of one layer allowed to include each other

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path, folders):
    """The longest layer folder that holds `path` (a repo-relative string)."""
    best = None
    for f in folders:
        if path.startswith(f + "/") and (best is None or len(f) > len(best)):
            best = f
    return best


def graph(repo):
    """Folder-to-folder include counts over every source folder (layered or not)."""
    edges = {}
    for src in sorted(repo.rglob("*")):
        if src.suffix not in (".h", ".cpp") or not src.is_file():
            continue
        rel = src.relative_to(repo).as_posix()
        if rel.split("/")[0] in ("tests", "fuzz", "extern") or rel.startswith("build"):
            continue
        here = src.parent.relative_to(repo).as_posix()
        for target in INCLUDE.findall(src.read_text(errors="replace")):
            there = str(pathlib.PurePosixPath(target).parent)
            if there == here or not (repo / target).is_file():
                continue
            edges[(here, there)] = edges.get((here, there), 0) + 1
    print("graph BT")
    for (a, b), n in sorted(edges.items()):
        print(f"  {a.replace('/', '_')}[{a}] -->|{n}| {b.replace('/', '_')}[{b}]")
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--graph":
        return graph(pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else ".").resolve())
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    rank = {f: i for i, layer in enumerate(LAYERS) for f in layer}
    bad, files, edges = [], 0, 0
    for src in sorted(repo.rglob("*")):
        if src.suffix not in (".h", ".cpp") or not src.is_file():
            continue
        rel = src.relative_to(repo).as_posix()
        here = folder_of(rel, rank)
        if here is None:
            continue  # tests, fuzz, extern, build trees
        files += 1
        for target in INCLUDE.findall(src.read_text(errors="replace")):
            there = folder_of(target, rank)
            if there is None:
                continue  # generated protobuf headers, system headers
            edges += 1
            if there == here or (here, there) in PEERS:
                continue
            if rank[there] > rank[here]:
                bad.append(f"{rel}: includes {target}: {there} is above {here}")
            elif rank[there] == rank[here]:
                bad.append(f"{rel}: includes {target}: {there} and {here} are one layer (no includes between them)")
    for line in bad:
        print(line)
    if bad:
        print(f"check_layers: {len(bad)} include(s) run up or across the layers")
        return 1
    print(f"check_layers: {files} files, {edges} includes between layer folders, none runs up")
    return 0


if __name__ == "__main__":
    sys.exit(main())
