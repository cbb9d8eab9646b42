"""The look of every figure of the paper, in one place (papers/plot.py draws through it).

Sizes for a two-column paper (one column 3.5 in, both 7.16 in) with 8 pt text; a palette of
twenty colours and ten markers, so no two series of a figure share a colour up to twenty
series and no two share colour, marker and line together up to eighty; legends below the
panels, never over the data; plain tick labels (1, 10, 100, 1,000: no 2x10^0, no offset, no
1e6); a banner on figures measured on CPU-served engines; notes under the figure for what it
leaves out (a panel with no data is omitted and named there, never drawn empty) and for
timings without a recorded spread. `Figure.finish` lays it out and `check` refuses a figure
that breaks a rule (an empty panel, a legend over an axes, text spilling out of its panel over
a title, a tick label in scientific notation, a source path in a label), so a figure function
that breaks one fails the build (papers/build.sh, CTest paper_build_*) instead of being committed.
"""
import io
import math
import os
import re
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.container import BarContainer, ErrorbarContainer  # noqa: E402
from matplotlib.legend import Legend  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator  # noqa: E402

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments", "drivers"))
import careful  # noqa: E402  (the careful writer every figure goes through)

COLUMN_W = 3.5  # inches: one column of a two-column paper (IEEE 3.5, ACM 3.33)
PAGE_W = 7.16  # inches: both columns
PANEL_H = 2.1  # inches: one row of panels
FONT = 8  # points: labels and titles (the paper's caption size)
SMALL = 6.5  # points: legends, bar labels, notes
DPI = 200

RC = {
    "font.family": "DejaVu Sans", "font.size": FONT, "axes.titlesize": FONT, "axes.labelsize": FONT,
    "xtick.labelsize": SMALL + 0.5, "ytick.labelsize": SMALL + 0.5, "legend.fontsize": SMALL,
    "legend.frameon": False, "figure.dpi": 100, "savefig.dpi": DPI, "axes.grid": True, "grid.alpha": 0.3,
    "grid.linewidth": 0.5, "lines.linewidth": 1.1, "lines.markersize": 3.5, "errorbar.capsize": 2,
    "axes.formatter.useoffset": False, "axes.formatter.limits": (-9, 12), "axes.spines.top": False,
    "axes.spines.right": False, "svg.hashsalt": "tapelab", "axes.titlepad": 4,
}
plt.rcParams.update(RC)

# tab10, then the lighter partner of each (tab20's odd entries): twenty colours, no repeats.
_TAB20 = plt.get_cmap("tab20").colors
PALETTE = ["#%02x%02x%02x" % tuple(round(255 * c) for c in rgb) for rgb in list(_TAB20[0::2]) + list(_TAB20[1::2])]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h"]
MARKERS_MORE = ["d", "p", "H", "8", "*"]  # strategies past the tenth (the user's take "*" with a black edge)
LINESTYLES = ["-", "--", ":", "-."]
GREY = "#7f7f7f"
CPU_BANNER = "CPU-served run (cpu-jit, lavapipe, PoCL on a 2-core machine): checks the drivers, not GPU behaviour"


def style(i):
    """Colour, marker and line of the i-th series of a figure: colours unique for the first twenty,
    (colour, marker, line) unique for the first eighty."""
    return {"color": PALETTE[i % 20], "marker": MARKERS[i % 10], "linestyle": LINESTYLES[(i // 20) % 4]}


class Styles:
    """One style per label across every panel of a figure, in first-seen order (the same series looks the
    same in each panel)."""

    def __init__(self, labels=()):
        self.order = []
        for label in labels:
            self[label]

    def __getitem__(self, label):
        if label not in self.order:
            self.order.append(label)
        return style(self.order.index(label))


_STRATEGIES = None


def builtin_strategies():
    """The built-in strategies in the registry's order: the list docs/strategies.md carries between its
    'strategies:' markers, generated from `tapelab plan --help` (CTest docs_help checks that it is the
    binary's). Read here so that the paper's figures need no tapelab build; never a list kept by hand."""
    global _STRATEGIES
    if _STRATEGIES is None:
        doc = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "strategies.md")
        names, inside = [], False
        with open(doc, encoding="utf-8") as f:
            for line in f:
                if line.startswith("<!-- strategies:"):
                    inside = "end" not in line
                elif inside and line.startswith("      ") and line.strip():
                    names.append(line.split()[0])
        _STRATEGIES = names
    return _STRATEGIES


PLAIN = {"color": "black", "marker": "x", "linestyle": ":"}


class StrategyStyles:
    """One look per cut strategy in every panel of every figure: a built-in strategy takes the palette entry
    and marker of its place in the registry (builtin_strategies()), 'plain' is black; any other name is the
    user's strategy, highlighted (a star, a black edge, a thicker line) in the palette's entries after the
    built-ins, in first-seen order. Labels like 'window 16' take their strategy's look."""

    def __init__(self, users=()):
        self.users = []
        for u in users:
            self[u]

    def _base(self, label):
        return label.split(" ")[0] if label.split(" ")[0] in builtin_strategies() else label

    def user(self, label):
        return self._base(label) not in builtin_strategies() and label != "plain"

    def __getitem__(self, label):
        name = self._base(label)
        if name == "plain":
            return dict(PLAIN)
        known = builtin_strategies()
        if name in known:
            i = known.index(name)  # past ten: the light colours, other markers and dashes (never tab10's pairs)
            marker = MARKERS[i % 10] if i < 10 else MARKERS_MORE[(i - 10) % len(MARKERS_MORE)]
            return {"color": PALETTE[i % 20], "marker": marker, "linestyle": LINESTYLES[(i // 10) % 2]}
        if name not in self.users:
            self.users.append(name)
        i = len(known) + self.users.index(name)
        return {"color": PALETTE[i % 20], "marker": "*", "linestyle": "-", "markersize": 7, "markeredgecolor": "black",
                "markeredgewidth": 0.6, "linewidth": 1.8}

    def order_of(self, names):
        """The names in the legend's order: built-ins as the registry has them, then the user's."""
        known = builtin_strategies()
        names = list(dict.fromkeys(names))
        return sorted(names, key=lambda n: (self.user(n), known.index(self._base(n)) if not self.user(n) else
                                            self.users.index(self._base(n)) if self._base(n) in self.users else 99, n))


def plain_number(v, _pos=None):
    """A tick label without scientific notation: 0.5, 2, 30, 1,000, 25,000."""
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.6g}" if abs(v) >= 1e-4 else f"{v:.6f}".rstrip("0")


def _short_log_ticks(lo, hi):
    """Three to seven round values between lo and hi (under two decades), spread on a log axis: 1-2-5 steps,
    finer ones where those give fewer than three."""
    for mults in ((1, 2, 5), (1, 1.5, 2, 3, 5, 7), (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8)):
        ticks = [m * 10.0 ** e for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
                 for m in mults if lo <= m * 10.0 ** e <= hi]
        if len(ticks) >= 3:
            return ticks[::max(1, math.ceil(len(ticks) / 7))]
    return ticks


def plain_log(ax, axis="y"):
    """A log axis labelled in plain numbers: the decades (the ticks between them unlabelled) over two decades
    or more; under two, three to seven round values (_short_log_ticks), so no labels crowd or overlap."""
    a = ax.yaxis if axis == "y" else ax.xaxis
    lo, hi = (ax.get_ylim() if axis == "y" else ax.get_xlim())
    a.set_major_formatter(FuncFormatter(plain_number))
    if lo > 0 and hi / lo < 100:
        a.set_major_locator(FixedLocator(_short_log_ticks(lo, hi)))
        a.set_minor_locator(NullLocator())
    else:
        a.set_major_locator(LogLocator(base=10))
        a.set_minor_formatter(NullFormatter())


def ticks_at(ax, values, axis="x", log=True):
    """Ticks at the measured values only (segment counts, market counts), on a base-2 log axis by default."""
    values = sorted(set(values))
    if log:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log", base=2)
    a = ax.xaxis if axis == "x" else ax.yaxis
    a.set_major_locator(FixedLocator(values))
    a.set_minor_locator(NullLocator())
    a.set_major_formatter(FuncFormatter(plain_number))


def plain_axes(ax):
    """Plain labels on both axes (logs through plain_log, linear ones without offset or exponent)."""
    for axis, scale in (("x", ax.get_xscale()), ("y", ax.get_yscale())):
        if isinstance((ax.xaxis if axis == "x" else ax.yaxis).get_major_locator(), FixedLocator):
            continue  # ticks_at, or categories
        if scale == "log":
            plain_log(ax, axis)
        else:
            a = ax.xaxis if axis == "x" else ax.yaxis
            if not any(t.get_text() and not _numeric(t.get_text()) for t in a.get_ticklabels()):
                a.set_major_formatter(FuncFormatter(plain_number))


def spread(y, ms, ms_min, ms_max):
    """(low, high) of a throughput y measured as the median ms of timed runs whose fastest took ms_min and
    slowest ms_max (y is proportional to 1/ms), or None where the spread was not recorded."""
    if y is None or not ms or not ms_min or not ms_max:
        return None
    # Clamped about y: a CSV's median and extremes are rounded separately (and the median of two runs lies
    # between them only before rounding), so y * ms / ms_max may pass y by an ulp.
    return min(y, y * ms / ms_max), max(y, y * ms / ms_min)


def lines(ax, data, styles, errorbars=True, **kw):
    """One line per label: data = {label: [(x, y, lo, hi)]} (lo, hi None without a spread); error bars
    where a series has them."""
    for label, pts in data.items():
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        st = {**styles[label], **kw}
        if errorbars and any(p[2] is not None for p in pts):
            err = [[p[1] - p[2] if p[2] is not None else 0 for p in pts],
                   [p[3] - p[1] if p[3] is not None else 0 for p in pts]]
            ax.errorbar(xs, ys, yerr=err, label=label, elinewidth=0.8, **st)
        else:
            ax.plot(xs, ys, label=label, **st)


def reference_line(ax, y, label, styles):
    """A horizontal line (e.g. the plain kernel's median) in the series' colour, named in the legend."""
    ax.axhline(y, color=styles[label]["color"], linestyle=":", linewidth=1, label=label)


class FigureError(ValueError):
    pass


class Figure:
    """A figure of `rows` x `cols` panels, `width` inches wide; notes, a legend below the panels and
    the CPU-served banner are placed by finish(), which also checks the result."""

    def __init__(self, rows=1, cols=1, width=None, panel_h=None, **kw):
        width = width or (COLUMN_W if cols == 1 else PAGE_W)
        panel_h = panel_h or (PANEL_H + 0.4 if width <= COLUMN_W else PANEL_H)
        self.fig, axes = plt.subplots(rows, cols, figsize=(width, panel_h * rows), squeeze=False, **kw)
        self.axes = [ax for row in axes for ax in row]
        self.notes = []
        self.cpu_served = False
        self.timings = False  # does it show timings (then: error bars, or a note that no spread was recorded)

    def note(self, text):
        """A line of caption under the figure: what it leaves out and why, what it cannot show."""
        if text not in self.notes:
            self.notes.append(text)

    def mark_cpu_served(self):
        self.cpu_served = True

    def finish(self, legend=True, legend_cols=None):
        """Lays out panels, legend (one for the figure, below the panels, each label once), notes and
        banner, draws, and checks the rules. Returns the matplotlib figure."""
        fig = self.fig
        for ax in self.axes:
            plain_axes(ax)
        fig.tight_layout(pad=0.4, h_pad=0.8, w_pad=0.8)
        renderer = fig.canvas.get_renderer()
        inv = fig.transFigure.inverted()
        bottom = min(inv.transform(ax.get_tightbbox(renderer))[0][1] for ax in self.axes)
        if legend:
            handles, labels = [], []
            for ax in self.axes:
                for h, lab in zip(*ax.get_legend_handles_labels()):
                    if lab not in labels and not lab.startswith("_"):
                        handles.append(h)
                        labels.append(lab)
            if labels:
                width = fig.get_figwidth() * fig.dpi
                for ncol in range(legend_cols or min(len(labels), 5), 0, -1):
                    lg = fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, bottom - 0.01),
                                    ncol=ncol, handlelength=2.2, columnspacing=1.2)
                    if lg.get_window_extent(renderer).width <= width or ncol == 1:
                        break
                    lg.remove()
                bottom = inv.transform(lg.get_window_extent(renderer))[0][1]
        chars = int(fig.get_figwidth() * 72 / (SMALL * 0.52))  # DejaVu Sans: about half an em a character
        for text in self.notes:
            t = fig.text(0.01, bottom - 0.01, textwrap.fill(text, chars), ha="left", va="top", fontsize=SMALL,
                         color="#444444", style="italic")
            bottom = inv.transform(t.get_window_extent(renderer))[0][1]
        if self.cpu_served:
            fig.canvas.draw()  # titles find their place at draw time
            top = max(inv.transform(ax.get_tightbbox(renderer))[1][1] for ax in self.axes)
            pad = (0.25 * SMALL + 2.5) / 72 / fig.get_figheight()  # the box's pad and a gap (points), in figure coordinates
            fig.text(0.5, top + pad, CPU_BANNER, ha="center", va="bottom", fontsize=SMALL, color="#8b0000",
                     bbox={"boxstyle": "round,pad=0.25", "facecolor": "#fff0f0", "edgecolor": "#8b0000", "linewidth": 0.6})
        fig.canvas.draw()
        check(fig, timings=self.timings)
        return fig


_PATH = re.compile(r"(\b(experiments|papers|runs|cli|python|scripts|build|tests|gpu|planner|tape|engine|api|reference|"
                   r"util)/|\b[\w-]+\.(cpp|h|py|sh|csv|cu|md|json|txt|log)\b)")
_SCI = re.compile(r"\$|\\times|×|\d[eE][+-]?\d|\^")


# What an axis counts or measures, in its label: a unit in parentheses, a count of named things, or a ratio.
_UNIT = re.compile(r"\((?:[^()]*[\s,])?(Mpath/s|M market-paths/s|bytes/thread|bytes a path|bytes|values|instructions|ms|s|nodes|paths|"
                   r"registers per thread)(?:[\s,][^()]*)?\)|per thread|^(segments|markets|time steps|inputs|snapshots|"
                   r"segment length)\b|\bms / [\w ]*ms\b|/ plain\b")


def has_unit(label):
    """Whether an axis label says its unit: '(Mpath/s)', '(bytes/thread)', 'peak_live (values)', 'registers per
    thread', a count ('segments ...', 'markets per dispatch'), or a ratio of two times ('plain ms / ms')."""
    return bool(_UNIT.search(label))


def _numeric(text):
    try:
        float(text.replace(",", "").replace("\u2212", "-"))
        return True
    except ValueError:
        return False


def _has_data(ax):
    if any(len(line.get_xdata()) for line in ax.get_lines()):
        return True
    if any(p.get_height() or p.get_width() for c in ax.containers if isinstance(c, BarContainer) for p in c):
        return True
    return any(len(c.get_offsets()) for c in ax.collections if hasattr(c, "get_offsets"))


def _inside(inner, outer, slack=1.5):
    return (inner.x0 >= outer.x0 - slack and inner.x1 <= outer.x1 + slack and inner.y0 >= outer.y0 - slack
            and inner.y1 <= outer.y1 + slack)


def has_errorbars(fig):
    """Whether any panel draws error bars (errorbar lines, or bars with xerr/yerr)."""
    for ax in fig.axes:
        for c in ax.containers:
            if isinstance(c, ErrorbarContainer) or (isinstance(c, BarContainer) and c.errorbar is not None):
                return True
    return False


def figure_texts(fig):
    """Every text a reader sees: titles, axis labels, tick labels, annotations, legends, figure texts."""
    out = [t.get_text() for t in fig.texts]
    for lg in fig.legends:
        out += [t.get_text() for t in lg.get_texts()]
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_title("left"), ax.get_xlabel(), ax.get_ylabel()]
        out += [t.get_text() for t in ax.texts]
        out += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
        if ax.get_legend():
            out += [t.get_text() for t in ax.get_legend().get_texts()]
    return [t for t in out if t]


def check(fig, timings=False):
    """Raises FigureError naming each rule the drawn figure breaks."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    if not fig.axes:
        problems.append("no panels")
    boxes = [ax.get_window_extent(renderer) for ax in fig.axes]
    for i, ax in enumerate(fig.axes):
        name = f"panel {i + 1} ('{ax.get_title()}')"
        if not _has_data(ax):
            problems.append(f"{name} is empty (omit it and say why in a note)")
            continue
        for axis, lab in ((ax.xaxis, ax.get_xlabel()), (ax.yaxis, ax.get_ylabel())):
            ticks = [t.get_text() for t in axis.get_ticklabels(which="both") if t.get_text()]
            for t in ticks:
                if _SCI.search(t):
                    problems.append(f"{name}: tick label '{t}' is not a plain number")
            if not lab and all(_numeric(t) for t in ticks):
                problems.append(f"{name}: a numeric axis without a label")
            elif lab and ticks and all(_numeric(t) for t in ticks) and not has_unit(lab):
                problems.append(f"{name}: the axis '{lab}' says no unit (values, instructions, ms, Mpath/s, ...)")
        if not ax.get_title():
            problems.append(f"{name}: no title")
        box = boxes[i]
        for what, t, fits in (("y label", ax.yaxis.label, lambda b: b.height <= box.height + 2),
                              ("x label", ax.xaxis.label, lambda b: b.width <= box.width + 2),
                              ("title", ax.title, lambda b: b.width <= box.width * 1.08 + 2)):
            if t.get_text() and not fits(t.get_window_extent(renderer)):
                problems.append(f"{name}: the {what} '{t.get_text()[:40]}' is longer than its panel")
        for t in ax.texts:
            if t.get_visible() and t.get_text() and not _inside(t.get_window_extent(renderer), boxes[i]):
                problems.append(f"{name}: text '{t.get_text()[:30]}' spills out of its panel (over a title or a neighbour)")
        if ax.get_legend():
            problems.append(f"{name}: a legend inside the panel (use the figure's legend, below)")
    for lg in [c for c in fig.get_children() if isinstance(c, Legend)]:
        lb = lg.get_window_extent(renderer)
        if any(lb.overlaps(b) for b in boxes):
            problems.append("the legend overlaps a panel")
    # Figure-level pieces (legend, notes, banner) clear every panel with its title and labels, and each other.
    tight = [ax.get_tightbbox(renderer) for ax in fig.axes]
    pieces = [(f"text '{t.get_text()[:30]}'", (t.get_bbox_patch() or t).get_window_extent(renderer))
              for t in fig.texts if t.get_text()]
    pieces += [("the legend", lg.get_window_extent(renderer)) for lg in fig.legends]
    for i, (what, b) in enumerate(pieces):
        if any(b.overlaps(t) for t in tight):
            problems.append(f"{what} overlaps a panel, its title or its labels")
        if any(b.overlaps(o) for _, o in pieces[i + 1:]):
            problems.append(f"{what} overlaps another note or the legend")
    for t in figure_texts(fig):
        if _PATH.search(t):
            problems.append(f"text '{t[:60]}' names a source path")
    if timings and not has_errorbars(fig) and not any("no spread" in t for t in figure_texts(fig)):
        problems.append("timings without error bars and without a note that no spread was recorded")
    labelled = [line for ax in fig.axes for line in ax.get_lines() if not line.get_label().startswith("_")]
    seen = {}
    for line in labelled:
        key = (line.get_color(), line.get_marker(), line.get_linestyle())
        if seen.setdefault(key, line.get_label()) != line.get_label():
            problems.append(f"series '{line.get_label()}' and '{seen[key]}' look the same")
    if problems:
        raise FigureError("; ".join(dict.fromkeys(problems)))


def save(fig, path, inputs=(), what="figure"):
    """PNG without Software/date metadata, cropped to what was drawn (legends and notes outside the panels
    included): same figure, same bytes. Written through the careful writer (experiments/drivers/careful.py):
    never over one of `inputs` (the CSVs drawn, a driver's tapes), a directory or a device it cannot write;
    careful.OutputRefused / OutputFailed name `what` and the file."""
    png = io.BytesIO()
    try:
        fig.savefig(png, format="png", metadata={"Software": None}, bbox_inches="tight", pad_inches=0.03)
    finally:
        plt.close(fig)
    careful.write_output(path, png.getvalue(), inputs, what)
