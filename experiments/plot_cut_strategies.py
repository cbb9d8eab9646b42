#!/usr/bin/python3
"""Plots cut_strategies' CSV through papers/style.py (the paper's look and checks): peak_live and
persistent against segment count, one line per strategy, for a few representative tapes in one PNG
(all tapes when there are at most six); a Pareto PNG of the same tapes (<png stem>_pareto.png: peak_live
against weighted recompute, every strategy and count a point, the front of the plans no other beats on
both); and one PNG per tape in <png stem>_tapes/. A strategy has one colour and marker in every panel
and figure (style.StrategyStyles: the registry's order; a plan file's own strategy highlighted); the
legend sits below the panels.

usage: plot_cut_strategies.py CSV PNG [INPUT ...]
Every PNG goes through the careful writer (experiments/drivers/careful.py), never over the CSV or an INPUT
(the driver's tapes). Exit 3 when matplotlib is missing (the driver then keeps its CSV and says so).
"""
import csv
import os
import re
import sys
from collections import defaultdict

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "drivers"))
import careful  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "papers"))
try:
    import style
except ImportError:
    print("plot_cut_strategies: matplotlib is not installed (apt install python3-matplotlib)", file=sys.stderr)
    sys.exit(3)

REPRESENTATIVE = ["asian-252", "european-252", "basket-5x252", "basket-20x252", "random-narrow-20000",
                  "random-wide-20000"]  # the study's tapes (cut_strategies.cpp) shown when there are more than six


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


def draw(ax_peak, ax_pers, name, t, styles, letters):
    counts = set()
    for strategy in styles.order_of(t["series"]):
        points = sorted(t["series"][strategy])
        for ax, key in ((ax_peak, "peak_live"), (ax_pers, "persistent")):
            if strategy == "auto":  # it chooses its own count: one point at the count it chose
                row = points[0][1]
                ax.plot([int(row["segments"])], [int(row[key])], linestyle="", label=strategy,
                        **{k: v for k, v in styles[strategy].items() if k != "linestyle"})
                continue  # its count is its own choice: no tick for it
            ax.plot([p[0] for p in points], [int(p[1][key]) for p in points], label=strategy, **styles[strategy])
            counts |= {p[0] for p in points}
    if "plain_peak" in t:
        for ax, key in ((ax_peak, "plain_peak"), (ax_pers, "plain_persistent")):
            ax.axhline(t[key], color="black", linestyle=":", linewidth=1, label="plain kernel (no cuts)")
    for ax, what, letter in ((ax_peak, "peak_live", letters[0]), (ax_pers, "persistent", letters[1])):
        style.ticks_at(ax, counts)
        ax.set_yscale("log")
        ax.set(xlabel="segments (revolve: snapshots)", ylabel=f"{what} (values)",
               title=f"({letter}) {name}, {t['nodes']:,} nodes: {what}")


def pareto(ax, name, t, styles, letter):
    """peak_live against weighted recompute: one point per (strategy, count), the front (no other point both
    lower and cheaper) as a grey step line. False when the CSV has no recompute column."""
    points = []
    for strategy in styles.order_of(t["series"]):
        series = t["series"][strategy]
        if "recompute_cost" not in series[0][1]:
            return False
        xs = [int(p[1]["peak_live"]) for p in series]
        ys = [max(float(p[1]["recompute_cost"]), 1.0) for p in series]
        ax.plot(xs, ys, linestyle="", label=strategy, **{k: v for k, v in styles[strategy].items() if k != "linestyle"})
        points += list(zip(xs, ys))
    front, best = [], None
    for x, y in sorted(points):
        if best is None or y < best:
            front.append((x, y))
            best = y
    ax.step([p[0] for p in front], [p[1] for p in front], where="post", color=style.GREY, linewidth=0.8,
            label="Pareto front (plans no other beats on both)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set(xlabel="peak_live (values)", ylabel="weighted recompute (instructions)",
           title=f"({letter}) {name}, {t['nodes']:,} nodes")
    return True


def save(f, path, inputs):
    style.save(f.finish(), path, inputs)


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
        print("plot_cut_strategies: no rows in " + csv_path, file=sys.stderr)
        return 1
    names = list(tapes) if len(tapes) <= 6 else [n for n in REPRESENTATIVE if n in tapes] or list(tapes)[:6]
    styles = style.StrategyStyles()
    caption = "Plan metrics (planner metrics, no run): the same on every machine. Log axes."
    f = style.Figure(len(names), 2)
    for i, name in enumerate(names):
        draw(f.axes[2 * i], f.axes[2 * i + 1], name, tapes[name], styles, (chr(97 + 2 * i), chr(98 + 2 * i)))
    f.note(caption)
    save(f, png_path, inputs)
    cols = min(2, len(names))
    f = style.Figure((len(names) + cols - 1) // cols, cols, panel_h=style.PANEL_H + 0.6)
    for ax in f.axes[len(names):]:
        f.fig.delaxes(ax)
    f.axes = f.axes[:len(names)]
    if all([pareto(ax, name, tapes[name], styles, chr(97 + i)) for i, (ax, name) in enumerate(zip(f.axes, names))]):
        zero = any(float(r["recompute_cost"]) == 0 for t in tapes.values() for ps in t["series"].values() for _, r in ps)
        f.note(caption + " Lower left is better" + ("; recompute 0 is drawn at 1." if zero else "."))
        save(f, os.path.splitext(png_path)[0] + "_pareto.png", inputs)
    else:
        style.plt.close(f.fig)
    per_tape = os.path.splitext(png_path)[0] + "_tapes"
    try:
        os.makedirs(per_tape, exist_ok=True)
    except OSError as e:
        raise careful.OutputFailed(f"figure {per_tape}: cannot make the directory: {e.strerror}") from None
    for name, t in tapes.items():
        f = style.Figure(1, 2)
        draw(f.axes[0], f.axes[1], name, t, styles, ("a", "b"))
        f.note(caption)
        save(f, os.path.join(per_tape, file_name(name) + ".png"), inputs)
    print("plot_cut_strategies: wrote %s and %d tapes in %s" % (png_path, len(tapes), per_tape), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(careful.run_main("plot_cut_strategies", main, sys.argv[1:]))
