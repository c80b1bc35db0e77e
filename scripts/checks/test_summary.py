#!/usr/bin/env python3
"""The last line of a test run: how many tests skipped, and why.

Run by ctest after the suite (CTEST_CUSTOM_POST_TEST, set up by
tests/CMakeLists.txt). Every skipped GoogleTest test leaves its message in
SKIPS_DIR/<suite.test> (tests/common/test_environment.cpp); this groups them
by reason and prints one line. Tests that need ../shared/testdata skip when it
is absent; with CI=true and that folder present, any such skip fails the run
(exit 1): CI must run every test it has the inputs for.

    scripts/checks/test_summary.py SKIPS_DIR [TESTDATA_DIR]
"""
import os
import pathlib
import sys


def reason_of(message):
    low = message.lower()
    if "testdata" in low or "shared/" in low:
        return "testdata"
    if "ns-3" in low or "ns3" in low:
        return "ns-3 backend not built"
    if "mpi" in low:
        return "MPI not built"
    first = next((line for line in message.splitlines() if line.strip()), "no reason given")
    return first.strip()[:80]


def main():
    skips = pathlib.Path(sys.argv[1])
    testdata = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else None
    present = testdata is not None and testdata.is_dir()
    reasons, for_testdata = {}, []
    for f in sorted(skips.glob("*")) if skips.is_dir() else []:
        why = reason_of(f.read_text(errors="replace"))
        reasons[why] = reasons.get(why, 0) + 1
        if why == "testdata":
            for_testdata.append(f.name)
    total = sum(reasons.values())
    if total == 0:
        print("test summary: no test skipped")
    else:
        parts = []
        for why, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
            if why == "testdata":
                why = ("need a file missing from ../shared/testdata" if present
                       else "need ../shared/testdata, which is absent")
            parts.append(f"{n} {why}")
        print(f"test summary: {total} skipped: " + "; ".join(parts))
    if for_testdata and present and os.environ.get("CI") == "true":
        print(f"test summary: FAIL: CI has {testdata}, yet {len(for_testdata)} test(s) skipped for want of it: "
              + ", ".join(for_testdata[:5]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
