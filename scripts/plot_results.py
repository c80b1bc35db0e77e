#!/usr/bin/python3
"""Plot `sim sweep` results: bus bandwidth (or time) vs collective size, one line per series.

A series is every row sharing the values of the axis columns other than `size`
(plus the collective type and algorithm). Debian packages only
(python3-matplotlib); run with /usr/bin/python3. Used by `sim plot` and by
`sim compare --plot` (--overlay).

  scripts/plot_results.py out/results.csv [more.csv | OUTDIR ...] -o fig.png [--metric busbw|time]
                          [--baseline AXIS=VALUE]   # time divided by that series' time (Fig. 4's slowdown:
                                                    #   --metric makespan --baseline network=../ring64.yml)
                          [--facet AXIS] [--log]    # one panel per value of AXIS; log y for busbw too
                          [--style AXIS]            # one color per series, one line style per value of AXIS
  scripts/plot_results.py --overlay pairs.csv --metric time -o fig.png

Errors are one line, "<prog>: error: <what>", exit 2; `sim plot` passes
`--prog 'sim plot'` first, so its messages speak as the command the user typed.
"""
import argparse
import csv
import os
import stat
import sys

RESULT_COLUMNS = ["status", "exit_code", "npus", "sim_time_ns", "collective", "bytes", "group_size", "algorithm",
                  "ranks", "time_ns", "algbw_gbps", "busbw_gbps", "message"]
PROG = "plot_results.py"  # the name messages speak as (--prog)


def fail(what):
    print(f"{PROG}: error: {what}", file=sys.stderr)
    sys.exit(2)


AXES_LABEL = {"busbw": "bus bandwidth (GB/s, 1 GB/s = 1e9 B/s)", "time": "collective time (us)",
              "makespan": "simulated time of the whole workload (us)"}


def size_label(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return f"{n}B"


def read_rows(path):
    folder = os.path.isdir(path)
    if folder:
        path = os.path.join(path, "results.csv")
    if not os.path.isfile(path):
        what = "the folder holds no results.csv" if folder else "no such file"
        fail(f"{path}: {what} (give a sweep's results.csv or its output folder)")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        if not header or header[0] != "point" or "busbw_gbps" not in header:
            fail(f"{path}: not a sim sweep results.csv")
        if "status" not in header:
            fail(f"{path}: not a sim sweep results.csv (no 'status' column)")
        axes = header[1:header.index("status")]
        rows = []
        for r in reader:
            if r["status"] != "ok" or not r["collective"]:
                continue
            for column in ("bytes", "time_ns", "sim_time_ns", "busbw_gbps"):
                try:
                    float(r[column])
                except (TypeError, ValueError):
                    fail(f"{path}:{reader.line_num}: column {column}: '{r[column]}' is not a number")
            rows.append(r)
    return axes, rows


def value(row, metric):
    if metric == "busbw":
        return float(row["busbw_gbps"])
    return float(row["time_ns" if metric == "time" else "sim_time_ns"]) / 1e3


def read_series(args):
    """{facet value: {series label: {bytes: row}}}; one facet (None) without --facet."""
    facets = {}
    for path in args.results:
        axes, rows = read_rows(path)
        for option, axis in (("--facet", args.facet), ("--style", args.style)):
            if axis and axis not in axes:
                fail(f"{option} {axis}: not an axis of {path} ({', '.join(axes)})")
        keys = [a for a in axes if a not in ("size", args.facet)]
        if args.facet:
            # An axis zipped with the facet (one value in each panel, several in all)
            # says nothing the panel title does not: it is left out of the labels.
            panels = {r[args.facet] for r in rows}
            zipped = {k for k in keys
                      if len({r[k] for r in rows}) > 1
                      and all(len({r[k] for r in rows if r[args.facet] == f}) == 1 for f in panels)}
            keys = [k for k in keys if k not in zipped]
        for r in rows:
            # makespan: one value per point, so the collective is not part of the series
            what = [] if args.metric == "makespan" else [r["collective"]]
            tail = [] if args.metric == "makespan" else [f"[{r['algorithm']}]"]
            label = " ".join(what + [f"{k}={r[k]}" for k in keys] + tail)
            facet = r[args.facet] if args.facet else None
            facets.setdefault(facet, {}).setdefault(label, {})[int(r["bytes"])] = r
    return facets


def split_style(label, axis):
    """(the label without the --style axis's part, that axis's value): series
    differing only in that axis share a color and differ in line style."""
    if not axis:
        return label, None
    parts = label.split(" ")
    mine = [p for p in parts if p.startswith(axis + "=")]
    return " ".join(p for p in parts if not p.startswith(axis + "=")), (mine[0] if mine else None)


LINE_STYLES = ["-o", "--x", ":s", "-.^", "-v", "--D"]


def draw(ax, series, args, baseline, colors, styles):
    for label, points in sorted(series.items()):
        xs = sorted(points)
        if baseline:
            key, want = baseline
            base_label = " ".join(p if not p.startswith(key + "=") else f"{key}={want}" for p in label.split(" "))
            if base_label not in series:
                fail(f"--baseline {args.baseline}: no series '{base_label}'")
            metric = "time" if args.metric == "busbw" else args.metric
            ys = [value(points[x], metric) / value(series[base_label][x], metric) for x in xs]
        else:
            ys = [value(points[x], args.metric) for x in xs]
        color_key, style = split_style(label, args.style)
        ax.plot(xs, ys, styles.get(style, "-o"), markersize=3, label=label, color=colors[color_key])
    ax.set_xscale("log", base=2)
    xs = sorted({x for p in series.values() for x in p})
    ax.set_xticks(xs)
    ax.set_xticklabels([size_label(x) for x in xs], rotation=45, ha="right", fontsize=7)
    ax.set_xlabel("collective size per rank (bytes)")
    if baseline:
        what = "collective time" if args.metric != "makespan" else "simulated time"
        ax.set_ylabel(f"{what} / the same at {baseline[0]}={baseline[1]}")
    else:
        ax.set_ylabel(AXES_LABEL[args.metric])
        if args.metric != "busbw" or args.log:
            ax.set_yscale("log")
    ax.grid(True, alpha=0.3, which="both")


def plot_results(args, plt):
    facets = read_series(args)
    if not facets:
        fail(f"{', '.join(args.results)}: no point ran a collective (no row with status ok and a collective): nothing to plot")
    baseline = None
    if args.baseline:
        key, eq, want = args.baseline.partition("=")
        if not key or not eq:
            fail(f"--baseline {args.baseline}: expected AXIS=VALUE, e.g. backend=analytical")
        baseline = (key, want)
        # A baseline on an axis no label carries (size, the --facet axis, an
        # axis the results lack) would divide every series by itself: a flat 1.
        series_axes = sorted({part.split("=", 1)[0] for series in facets.values() for label in series
                              for part in label.split(" ") if "=" in part and not part.startswith("[")})
        if key not in series_axes:
            why = ("size is the x axis" if key == "size" else
                   "the --facet axis (one value per panel)" if key == args.facet else
                   "not an axis the series differ by")
            fail(f"--baseline {args.baseline}: {why}; give AXIS=VALUE of one of: "
                 + (", ".join(series_axes) if series_axes else "none (one series)"))
    labels = sorted({label for series in facets.values() for label in series})
    keys = sorted({split_style(label, args.style)[0] for label in labels})
    values = []
    for label in labels:
        v = split_style(label, args.style)[1]
        if v is not None and v not in values:
            values.append(v)
    styles = {v: LINE_STYLES[i % len(LINE_STYLES)] for i, v in enumerate(values)}
    cmap = plt.get_cmap("tab20" if len(keys) > 10 else "tab10")
    colors = {key: cmap(i % cmap.N) for i, key in enumerate(keys)}  # one color per series in every panel
    names = list(facets)  # in the order of the results (the spec's order)
    cols = 2 if len(names) > 1 else 1
    rows = (len(names) + cols - 1) // cols
    fig, grid = plt.subplots(rows, cols, figsize=(6 * cols, 4 * rows), squeeze=False, sharey=bool(args.facet))
    panels = [ax for row in grid for ax in row]
    for ax in panels[len(names):]:
        ax.set_visible(False)
    for ax, name in zip(panels, names):
        draw(ax, facets[name], args, baseline, colors, styles)
        if args.facet:
            ax.set_title(f"{args.facet}={name}", fontsize=10)
    if args.facet:
        handles, texts = [], []
        for ax in panels[:len(names)]:
            for h, t in zip(*ax.get_legend_handles_labels()):
                if t not in texts:
                    handles.append(h)
                    texts.append(t)
        fig.set_size_inches(6 * cols + 4, 4 * rows)
        fig.legend(handles, texts, fontsize=7, loc="center right")
        fig.tight_layout(rect=(0, 0, 6 * cols / (6 * cols + 4), 1))
        return fig
    place_legend(fig, panels[0])
    return fig


def place_legend(fig, ax):
    """Beside the axes, so it never hides a curve."""
    fig.set_size_inches(12, 5)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))


def plot_overlay(args, plt):
    if not os.path.isfile(args.overlay):
        fail(f"--overlay {args.overlay}: no such file")
    with open(args.overlay, newline="") as f:
        rows = list(csv.DictReader(f))
    series = {}
    for r in rows:
        series.setdefault(r["series"], []).append((int(r["bytes"]), float(r["results"]), float(r["reference"])))
    unit = "ns" if args.metric == "time" else "GB/s"
    fig, ax = plt.subplots(figsize=(8, 4.8))
    ax.set_prop_cycle(color=[plt.get_cmap("tab20")(i % 20) for i in range(max(1, len(series)))])
    many = len(series) > 12  # then one legend entry per style, not per series
    for label, pts in sorted(series.items()):
        pts.sort()
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", markersize=3,
                        label=None if many else f"{label} (results)")
        ax.plot([p[0] for p in pts], [p[2] for p in pts], "--x", color=line.get_color(),
                label=None if many else f"{label} (reference)")
    if many:
        ax.plot([], [], "-o", color="gray", label=f"results ({len(series)} series)")
        ax.plot([], [], "--x", color="gray", label="reference")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    xs = sorted({p[0] for pts in series.values() for p in pts})
    ax.set_xticks(xs)
    ax.set_xticklabels([size_label(x) for x in xs], rotation=45, ha="right")
    ax.set_xlabel("collective size per rank (bytes)")
    ax.set_ylabel(f"{args.metric} ({unit})")
    ax.grid(True, alpha=0.3, which="both")
    place_legend(fig, ax)
    return fig


def main():
    global PROG
    argv = sys.argv[1:]
    if len(argv) >= 2 and argv[0] == "--prog":  # the command that runs this script, for messages
        PROG, argv = argv[1], argv[2:]
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="*", help="results.csv files or sweep output folders")
    ap.add_argument("-o", "--output", required=True, help="PNG to write")
    ap.add_argument("--metric", choices=["busbw", "time", "makespan"], default="busbw",
                    help="busbw (GB/s), time (each collective, us) or makespan (the point's simulated time, us)")
    ap.add_argument("--baseline", help="AXIS=VALUE: plot time relative to that series")
    ap.add_argument("--overlay", help="compare overlay CSV (series,collective,bytes,results,reference)")
    ap.add_argument("--facet", help="AXIS: one panel per value of this axis (e.g. network)")
    ap.add_argument("--log", action="store_true", help="logarithmic y axis for busbw too")
    ap.add_argument("--style", help="AXIS: series differing only in this axis share a color, one line style per value")
    args = ap.parse_args(argv)
    if not args.results and not args.overlay:
        fail("give results.csv files or --overlay")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail(f"{sys.executable} has no matplotlib (apt-get install python3-matplotlib)")

    fig = plot_overlay(args, plt) if args.overlay else plot_results(args, plt)
    if not args.facet:
        fig.tight_layout()
    # As sim's own outputs (core/output_file.h): a symlink is followed and its
    # target replaced, a device or FIFO is written directly; renamed over, as
    # root, /dev/null became a PNG file and a FIFO's reader never got the image.
    target = os.path.realpath(args.output)
    try:
        mode = os.stat(target).st_mode
    except OSError:
        mode = 0
    if stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
        fail(f"-o {args.output}: cannot write it: a block device or a socket, not a file")
    tmp = target + f".tmp.{os.getpid()}.png"
    try:
        if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
            with open(target, "wb") as f:
                fig.savefig(f, dpi=120, format="png")
        else:
            fig.savefig(tmp, dpi=120)
            os.replace(tmp, target)  # atomic: a reader never sees half a PNG
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        fail(f"-o {args.output}: cannot write it: {e.strerror or e}")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
