#!/usr/bin/python3
"""Plots cut_strategies' CSV: peak_live and persistent against segment count,
one line per strategy, for a few representative tapes in one PNG (all tapes
when there are at most six), a Pareto PNG of the same tapes (<png stem>_pareto.png:
peak_live against weighted recompute_cost, every strategy and count a point, the
front joined), and one PNG per tape in <png stem>_tapes/.

usage: plot_cut_strategies.py CSV PNG [INPUT ...]
Every PNG goes through the careful writer (experiments/drivers/careful.py): never over the CSV or an
INPUT (cut_strategies passes its --tape and --plan files), a directory or a device. Exit 3 when
matplotlib is missing (the driver then keeps its CSV and says so); any failure is one line on stderr
(exit 2 for a refused file, else 1).
"""
import csv
import io
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "drivers"))
import careful  # noqa: E402

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("plot_cut_strategies: matplotlib is not installed (apt install python3-matplotlib)", file=sys.stderr)
    sys.exit(3)

REPRESENTATIVE = ["asian-252", "european-252", "basket-5x252", "basket-20x252", "random-narrow-20000",
                  "random-wide-20000"]
STYLE = {"uniform": ":", "window": "-", "marginal": "--", "optimal": "-", "optimal-persistent": "-.", "auto": "-",
         "plan-file": "o"}  # --plan FILE: one plan, a marker
WIDTH = {"optimal": 2.2, "window": 1.4}


def load(path):
    tapes = {}  # name -> dict(nodes, plain_peak, plain_persistent, series: strategy -> [(requested, row)])
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            t = tapes.setdefault(row["tape"], {"nodes": int(row["nodes"]), "series": defaultdict(list)})
            if row["strategy"] == "plain":
                t["plain_peak"] = int(row["peak_live"])
                t["plain_persistent"] = int(row["persistent"])
                continue
            t["series"][row["strategy"]].append((int(row["requested_segments"]), row))
    return tapes


def draw(ax_peak, ax_pers, name, t):
    for strategy, points in t["series"].items():
        points.sort()
        xs = [p[0] for p in points]
        if strategy == "auto":  # it chooses its own count: one plan, drawn as a level and a marker
            row = points[0][1]
            label = "auto (%s segments)" % row["segments"]
            for ax, key in ((ax_peak, "peak_live"), (ax_pers, "persistent")):
                ax.axhline(int(row[key]), color="black", lw=0.8, ls="--")
                ax.plot([int(row["segments"])], [int(row[key])], "k*", ms=9, label=label)
            continue
        for ax, key in ((ax_peak, "peak_live"), (ax_pers, "persistent")):
            ax.plot(xs, [int(p[1][key]) for p in points], STYLE.get(strategy, "-"), lw=WIDTH.get(strategy, 1.2),
                    label=strategy)
    if "plain_peak" in t:
        ax_peak.axhline(t["plain_peak"], color="grey", lw=0.8, ls=":", label="plain kernel")
    for ax, what in ((ax_peak, "peak_live"), (ax_pers, "persistent")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("segments")
        ax.set_ylabel(what)
        ax.set_title("%s (%d nodes): %s" % (name, t["nodes"], what), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    ax_peak.legend(fontsize=7)


def pareto(ax, name, t):
    """peak_live against weighted recompute_cost: one point per (strategy, count), the front
    (no other point both lower and cheaper) joined by a line."""
    points = []
    for strategy, series in sorted(t["series"].items()):
        if "recompute_cost" not in series[0][1]:
            return False
        xs = [float(p[1]["recompute_cost"]) for p in series]
        ys = [int(p[1]["peak_live"]) for p in series]
        ax.plot(xs, ys, "o", ms=3, alpha=0.7, label=strategy)
        points += [(x, y, strategy) for x, y in zip(xs, ys)]
    front, best = [], None
    for x, y, _ in sorted(points):
        if best is None or y < best:
            front.append((x, y))
            best = y
    ax.plot([p[0] for p in front], [p[1] for p in front], "k-", lw=1, label="Pareto front")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("weighted recompute cost (planner/costs.h)")
    ax.set_ylabel("peak_live")
    ax.set_title("%s (%d nodes): peak_live vs recompute" % (name, t["nodes"]), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return True


def save(fig, path, inputs, dpi):
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=dpi)
    plt.close(fig)
    careful.write_output(path, png.getvalue(), inputs, "figure")


def file_name(tape):
    """A tape's name as a file name in <png stem>_tapes/: no directory, nothing hidden."""
    return re.sub(r"[^A-Za-z0-9._+-]", "_", tape).lstrip(".") or "tape"


def main(argv):
    if len(argv) < 2:
        raise careful.BadInput("usage: plot_cut_strategies.py CSV PNG [INPUT ...]")
    csv_path, png_path = argv[0], argv[1]
    inputs = [csv_path] + argv[2:]
    tapes = load(csv_path)
    if not tapes:
        raise careful.BadInput("no rows in " + csv_path)
    for path in (png_path, os.path.splitext(png_path)[0] + "_pareto.png"):
        careful.check_output(path, inputs, "figure")
    names = list(tapes) if len(tapes) <= 6 else [n for n in REPRESENTATIVE if n in tapes] or list(tapes)[:6]
    fig, axes = plt.subplots(len(names), 2, figsize=(12, 3.6 * len(names)), squeeze=False)
    for i, name in enumerate(names):
        draw(axes[i][0], axes[i][1], name, tapes[name])
    fig.tight_layout()
    save(fig, png_path, inputs, 110)
    cols = 2
    fig, axes = plt.subplots((len(names) + cols - 1) // cols, cols, figsize=(12, 4 * ((len(names) + 1) // 2)),
                             squeeze=False)
    drawn = [pareto(axes[i // cols][i % cols], name, tapes[name]) for i, name in enumerate(names)]
    for i in range(len(names), axes.size):
        axes[i // cols][i % cols].axis("off")
    if all(drawn):
        fig.tight_layout()
        save(fig, os.path.splitext(png_path)[0] + "_pareto.png", inputs, 110)
    plt.close(fig)
    per_tape = os.path.splitext(png_path)[0] + "_tapes"
    try:
        os.makedirs(per_tape, exist_ok=True)
    except OSError as e:
        raise careful.OutputFailed(f"figure {per_tape}: cannot make the directory: {e.strerror}") from None
    for name, t in tapes.items():
        fig, axes = plt.subplots(1, 2, figsize=(12, 4))
        draw(axes[0], axes[1], name, t)
        fig.tight_layout()
        save(fig, os.path.join(per_tape, file_name(name) + ".png"), inputs, 100)
    print("plot_cut_strategies: wrote %s and %d tapes in %s" % (png_path, len(tapes), per_tape), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(careful.run_main("plot_cut_strategies", main, sys.argv[1:]))
