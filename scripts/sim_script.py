"""Helpers shared by the scripts that drive `sim` (fig4.py, seed_curves.py): sizes with
units, and running a command that must succeed. Debian python3 only."""
import argparse
import subprocess
import sys

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
# Every power of 4 from 1 KiB to 1 GiB.
POWERS_OF_4 = [1 << e for e in range(10, 31, 2)]


def parse_size(text):
    """'4096', '64KiB', '1MiB', '1GiB' -> bytes (an argparse type)."""
    text = text.strip()
    for unit in sorted(UNITS, key=len, reverse=True):
        if text.endswith(unit) and text[: -len(unit)].strip().isdigit():
            return int(text[: -len(unit)]) * UNITS[unit]
    if text.isdigit():
        return int(text)
    raise argparse.ArgumentTypeError(f"bad size '{text}' (e.g. 4096, 64KiB, 1MiB, 1GiB)")


def size_label(n):
    """Bytes -> '1 KiB', '16 MiB', '4096 B'."""
    for unit in ("GiB", "MiB", "KiB"):
        if n >= UNITS[unit] and n % UNITS[unit] == 0:
            return f"{n // UNITS[unit]} {unit}"
    return f"{n} B"


def run(cmd, who):
    """Runs `cmd`; on failure exits naming `who`, the command and its stderr. Returns stdout."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{who}: failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr.strip()}")
    return done.stdout
