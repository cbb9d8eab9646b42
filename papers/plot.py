#!/usr/bin/env python3
"""Draws every figure and table of papers/findings.md from the CSVs in a data
directory (papers/data/ by default): one function per figure, each naming the
CSV files and rows it draws. CSV names are <driver>-<machine>.csv; a comment
row (# machine=... driver=... commit=...) heads each file and is copied under
the figure's table. Every figure goes through papers/style.py (sizes for a
two-column paper, a palette that does not repeat, legends below the panels,
plain ticks, the CPU-served banner, notes for what a figure leaves out) and is
checked there: an empty panel, a legend over the data or text out of its panel
stops the build. Timings carry error bars (fastest and slowest of the timed
runs: the drivers' ms_min and ms_max) where the CSV records them, and a note
saying no spread was recorded where it does not. Same inputs, same files: Agg
backend, DejaVu Sans, no Software/date metadata, inputs in sorted order.

  plot.py DATA_DIR OUT_DIR [--require-spread]    (papers/build.sh runs it)

--require-spread: fail when a figure shows timings without error bars (the
drivers record the spread since 2026-12-02; CTest's paper_build_quick uses it).
"""
import csv
import glob
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import style  # noqa: E402

SPILL_UNKNOWN = 1 << 35  # NVIDIA's Vulkan driver reports 2^36 + n for spills: not a byte count, drawn as missing
MPATH = "throughput (Mpath/s)"
MARKET_PATHS = "throughput (M market-paths/s)"


def read(path):
    """(comment rows, list of dict rows) of one CSV with leading '#' rows. A header row's knobs=A=1;B=2
    (the TAPELAB_* knobs a driver ran with, experiments/drivers/sweep_driver.py; ',' in files before
    2026-12-01c's last calls) goes into each tapelab row's 'knobs' as 'A=1 B=2'."""
    comments, lines = [], []
    for line in open(path, encoding="utf-8"):
        (comments if line.startswith("#") else lines).append(line)
    rows = list(csv.DictReader(lines))
    knobs = [m.group(1) for c in comments for m in [re.search(r"\bknobs=(\S+)", c)] if m]
    for r in rows:  # tapelab's rows only: JAX and the hand-written kernel read no TAPELAB_* knob
        if knobs and r.get("who", "tapelab") == "tapelab":
            r.setdefault("knobs", " ".join(knobs[0].split(";" if ";" in knobs[0] else ",")))
    return [c.strip("# \n") for c in comments], rows


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def spill(v):
    x = num(v)
    return None if x is None or x < 0 or x >= SPILL_UNKNOWN else x


def positive(v):
    x = num(v)
    return x if x is not None and x > 0 else None


def inputs(data, driver):
    """[(machine tag, path)] of data/<driver>-<machine>.csv, sorted."""
    out = []
    for p in sorted(glob.glob(os.path.join(data, driver + "-*.csv"))):
        out.append((os.path.basename(p)[len(driver) + 1:-4], p))
    return out


def cpu_served(machine):
    return "cpu" in machine or "quick" in machine  # CI writes <driver>-quick.csv


def machine_name(machine):
    """How a figure names the machine: H200, sm_90 (compile only), CPU (quick)."""
    return {"h200": "H200", "sm90": "sm_90, compile only", "hip": "HIP, compile only"}.get(
        machine, "CPU" + (" (quick run)" if "quick" in machine else ""))


def preferred(data, *drivers):
    """(machine, [paths]) of the first driver's GPU CSV (h200 first) when one is in data, else its CPU-served
    quick CSV; the other drivers' CSVs of that machine join it (e.g. strategies_revolve7)."""
    found = inputs(data, drivers[0])
    if not found:
        return None
    gpu = sorted((m for m, _ in found if not cpu_served(m)), key=lambda m: (m != "h200", m))
    machine = gpu[0] if gpu else sorted(m for m, _ in found)[0]
    paths = [p for m, p in found if m == machine]
    paths += [p for d in drivers[1:] for m, p in inputs(data, d) if m == machine]
    return machine, paths


def read_all(paths):
    comments, rows = [], []
    for p in paths:
        c, r = read(p)
        comments += c
        rows += r
    return comments, rows


class Out:
    """Where figures and tables go; `drawn` keeps what each figure showed (for papers/tests)."""

    def __init__(self, out, require_spread=False, inputs=()):
        self.dir = out
        self.inputs = list(inputs)  # the CSVs drawn: never overwritten (careful.py)
        self.made = []
        self.drawn = {}
        self.require_spread = require_spread
        os.makedirs(os.path.join(out, "figures"), exist_ok=True)
        os.makedirs(os.path.join(out, "tables"), exist_ok=True)

    def save(self, f, name):
        """Lays out and checks a style.Figure (style.FigureError names the figure), then writes it."""
        try:
            fig = f.finish()
            if self.require_spread and f.timings and not style.has_errorbars(fig):
                raise style.FigureError("timings without error bars (--require-spread: the drivers record ms_min, ms_max)")
        except style.FigureError as e:
            raise style.FigureError(f"{name}: {e}") from None
        self.drawn[name] = {"texts": style.figure_texts(fig), "errorbars": style.has_errorbars(fig),
                            "cpu_served": f.cpu_served, "timings": f.timings, "panels": len(fig.axes), "notes": f.notes}
        path = os.path.join(self.dir, "figures", name + ".png")
        style.save(fig, path, self.inputs)
        self.made.append(path)

    def table(self, name, source, comments, columns, rows):
        path = os.path.join(self.dir, "tables", name + ".md")
        text = f"<!-- generated by papers/plot.py from {source}; do not edit -->\n"
        text += "".join(f"_{c}_\n\n" for c in comments)
        text += "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
        text += "".join("| " + " | ".join(str(r.get(c, "")) for c in columns) + " |\n" for r in rows)
        style.careful.write_output(path, text, self.inputs, "table")
        self.made.append(path)


def label(r):
    k = r["kernel"]
    if k == "scratch":
        return f"{r['engine']} scratch {r['layout']} {r['seglen']}"
    return f"{r['engine']} {k}"


def series(rows, key, x, y):
    """{label: sorted [(x, y, None, None)]} of rows with both values (no spread: counts, bytes)."""
    out = {}
    for r in rows:
        xv, yv = num(r.get(x)), y(r)
        if xv is None or yv is None:
            continue
        out.setdefault(key(r), []).append((xv, yv, None, None))
    return {k: sorted(v, key=lambda p: p[:2]) for k, v in sorted(out.items())}


def timed(rows, key, x, y, ms="ms"):
    """{label: sorted [(x, y, lo, hi)]} of timed rows: y a throughput (proportional to 1/ms), lo and hi its
    values at the slowest and fastest timed run (ms_max, ms_min) where the row records them."""
    out = {}
    for r in rows:
        xv, yv = num(r.get(x)), y(r)
        if xv is None or yv is None:
            continue
        sp = style.spread(yv, num(r.get(ms)), num(r.get("ms_min")), num(r.get("ms_max")))
        out.setdefault(key(r), []).append((xv, yv) + (sp or (None, None)))
    return {k: sorted(v, key=lambda p: p[:2]) for k, v in sorted(out.items())}


def timing_note(f, rows, ms="ms", who=None, precision="fp32"):
    """Marks f as showing timings, names what was run (precision: the rows' own column, else `precision`,
    which every driver of this paper runs; paths a run), and says what its error bars are, or that no
    spread was recorded (for every timed row, or for the rows `who` names)."""
    f.timings = True
    precisions = sorted({r["precision"] for r in rows if r.get("precision")}) or [precision]
    paths = sorted({int(num(r["paths"])) for r in rows if num(r.get("paths"))})
    f.note(f"Runs: {'/'.join(precisions)}" + (f", {'/'.join(f'{p:,}' for p in paths)} paths a run" if paths else "") + ".")
    ran = [r for r in rows if num(r.get(ms))]
    bare = [r for r in ran if not num(r.get("ms_min"))]
    reps = sorted({int(num(r["reps"])) for r in ran if num(r.get("reps")) and r not in bare})
    if len(bare) < len(ran):
        f.note("Error bars: fastest and slowest of the timed runs" + (f" ({'/'.join(map(str, reps))} per point)" if reps else "")
               + "; each point or bar is their median.")
    if bare and len(bare) == len(ran):
        f.note("Timings: no spread recorded. This run kept each point's median of its timed runs only (the drivers "
               "record the fastest and slowest since 2026-12-02), so there are no error bars.")
    elif bare:
        f.note(f"No spread recorded for {who or f'{len(bare)} of {len(ran)} points'}: no error bars there.")


def omitted(f, what, why):
    f.note(f"Not shown: {what} ({why}).")


SWEEP_COLS = ["engine", "steps", "kernel", "layout", "seglen", "segments", "markets", "paths", "mpath_s",
              "ratio_to_plain", "registers", "spill_bytes", "bit_exact_vs_plain"]


def sweep_cols(rows, cols=SWEEP_COLS):
    """The table's columns, with the spread next to mpath_s where the CSV records it."""
    if rows and "ms_min" in rows[0]:
        at = cols.index("mpath_s") + 1
        return cols[:at] + ["ms", "ms_min", "ms_max", "reps"] + cols[at:]
    return cols


def timed_figure(f, machine):
    if cpu_served(machine):
        f.mark_cpu_served()


# Finding 1: the plain kernel's cliff with tape length. Rows: every row of cliff-<m>.csv that ran: (a)
# throughput, (b) spill bytes and (c) registers of the plain and register kernels (each panel one quantity;
# an engine that reports neither leaves its panel out, said in a note).
def fig_cliff(data, out):
    for machine, path in inputs(data, "cliff"):
        comments, rows = read(path)
        flat = [r for r in rows if r["kernel"] != "scratch"]
        spills = series(flat, label, "steps", lambda r: spill(r["spill_bytes"]))
        regs = series(flat, label, "steps", lambda r: positive(r["registers"]))
        f = style.Figure(1, 1 + bool(spills) + bool(regs), width=style.PAGE_W)
        st = style.Styles()
        axes = iter(f.axes)
        a = next(axes)
        style.lines(a, timed(rows, label, "steps", lambda r: num(r["mpath_s"])), st)
        a.set(xlabel="time steps (tape length)", ylabel=MPATH, yscale="log", title=f"(a) throughput, {machine_name(machine)}")
        if spills:
            b = next(axes)
            style.lines(b, spills, st)
            b.set(xlabel="time steps (tape length)", ylabel="spills (bytes/thread)",
                  title="(b) spills, plain and register")
        else:
            omitted(f, "spill bytes", "no engine of this run reports them")
        if regs:
            c = next(axes)
            style.lines(c, regs, st)
            c.set(xlabel="time steps (tape length)", ylabel="registers per thread", title="(c) registers, plain and register")
        else:
            omitted(f, "registers", "no engine of this run reports them")
        timed_figure(f, machine)
        timing_note(f, rows)
        out.save(f, f"cliff-{machine}")
        out.table(f"cliff-{machine}", os.path.basename(path), comments, sweep_cols(rows), rows)


# Finding 2: the segment-count curve. Rows: register rows of segments-<m>.csv (plain's median a dotted line per
# engine), and gpu_kernels_segments-<m>.csv (the 2026-11-29 Vulkan run on the H200) where present.
def fig_segments(data, out):
    for machine, path in inputs(data, "segments"):
        comments, rows = read(path)
        f = style.Figure(1, 1)
        ax = f.axes[0]
        st = style.Styles()
        reg = [r for r in rows if r["kernel"] == "register"]
        style.lines(ax, timed(reg, label, "segments", lambda r: num(r["mpath_s"])), st)
        for eng, pts in series([r for r in rows if r["kernel"] == "plain"], label, "segments",
                               lambda r: num(r["mpath_s"])).items():
            ys = sorted(p[1] for p in pts)
            style.reference_line(ax, ys[len(ys) // 2], f"{eng} (median)", st)
        style.ticks_at(ax, [num(r["segments"]) for r in reg if num(r["mpath_s"])])
        ax.set(xlabel="segments (window plan)", ylabel=MPATH, title=f"register kernel by segment count, {machine_name(machine)}")
        timed_figure(f, machine)
        timing_note(f, rows)
        out.save(f, f"segments-{machine}")
        out.table(f"segments-{machine}", os.path.basename(path), comments, sweep_cols(rows), rows)
    for machine, path in inputs(data, "gpu_kernels_segments"):
        comments, rows = read(path)
        f = style.Figure(1, 1)
        ax = f.axes[0]
        style.lines(ax, timed(rows, lambda r: f"{r['engine']} {r['kind']}", "segments", lambda r: num(r["mpaths_per_s"]),
                              ms="ms_per_ladder"), style.Styles())
        style.ticks_at(ax, [num(r["segments"]) for r in rows])
        ax.set(xlabel="segments (window plan)", ylabel=MPATH, title=f"register kernel by segment count, {machine_name(machine)}")
        f.note("gpu_kernels: Mpath/s of a 7-point spot ladder, one market per dispatch.")
        timed_figure(f, machine)
        timing_note(f, rows, ms="ms_per_ladder")
        out.save(f, f"segments_gpu_kernels-{machine}")
        out.table(f"segments_gpu_kernels-{machine}", os.path.basename(path), comments,
                  ["engine", "steps", "segments", "kind", "paths", "markets", "registers", "mpaths_per_s"], rows)


# Finding 3: segment length x layout of the scratch kernel. Rows: scratch rows of scratch_sweep-<m>.csv
# per engine and layout; plain and register of the same file as horizontal lines.
def fig_seglen(data, out):
    for machine, path in inputs(data, "scratch_sweep"):
        comments, rows = read(path)
        engines = sorted({r["engine"] for r in rows if num(r["mpath_s"])})
        f = style.Figure(1, len(engines))
        st = style.Styles(["scratch aos", "scratch soa", "plain", "register"])
        for i, (ax, eng) in enumerate(zip(f.axes, engines)):
            er = [r for r in rows if r["engine"] == eng]
            scratch = [r for r in er if r["kernel"] == "scratch"]
            style.lines(ax, timed(scratch, lambda r: f"scratch {r['layout']}", "seglen", lambda r: num(r["mpath_s"])), st)
            for r in er:
                if r["kernel"] != "scratch" and num(r["mpath_s"]):
                    style.reference_line(ax, num(r["mpath_s"]), r["kernel"], st)
            style.ticks_at(ax, [num(r["seglen"]) for r in scratch if num(r["mpath_s"])])
            ax.set(xlabel="segment length (nodes)", ylabel=MPATH, title=f"({chr(97 + i)}) {eng}, {machine_name(machine)}")
        timed_figure(f, machine)
        timing_note(f, rows)
        out.save(f, f"seglen_layout-{machine}")
        cols = [c for c in SWEEP_COLS if c in rows[0]] if rows else SWEEP_COLS
        out.table(f"seglen_layout-{machine}", os.path.basename(path), comments, sweep_cols(rows, cols), rows)


# Finding 4: registers and spilling. Rows: regmap-cuda-*.csv (ptxas, sm_90, compile only) by markets,
# one line per kind and segment count: (a) registers, (b) spill stores.
def fig_registers(data, out):
    for machine, path in inputs(data, "regmap-cuda"):
        comments, rows = read(path)
        f = style.Figure(1, 2)
        order = sorted({(r["kind"], int(r["segments"])) for r in rows})
        st = style.Styles(f"{k}, {s} segment{'s' * (s > 1)}" for k, s in order)
        key = lambda r: f"{r['kind']}, {r['segments']} segment{'s' * (int(r['segments']) > 1)}"  # noqa: E731
        ordered = lambda d: {k: d[k] for k in st.order if k in d}  # noqa: E731
        a, b = f.axes
        style.lines(a, ordered(series(rows, key, "markets", lambda r: num(r["registers"]))), st)
        a.set(xlabel="markets per dispatch", ylabel="registers per thread", title=f"(a) ptxas registers, {machine_name(machine)}")
        style.lines(b, ordered(series(rows, key, "markets", lambda r: num(r["spill_store_bytes"]))), st)
        b.set(xlabel="markets per dispatch", ylabel="spill stores (bytes/thread)", title="(b) spill stores")
        for ax in (a, b):
            style.ticks_at(ax, [num(r["markets"]) for r in rows], log=False)
        out.save(f, f"registers-cuda-{machine}")
        out.table(f"registers-cuda-{machine}", os.path.basename(path), comments, list(rows[0].keys()), rows)


# Markets per dispatch x kernel kind. Rows: every row of markets-<m>.csv that ran (the H200's when
# committed, else the CPU-served quick run, marked in the figure); y = mpath_s x markets. markets.png.
def fig_markets(data, out):
    pick = preferred(data, "markets")
    if pick:
        machine, paths = pick
        comments, rows = read_all(paths)
        f = style.Figure(1, 1)
        ax = f.axes[0]
        style.lines(ax, timed(rows, label, "markets",
                              lambda r: num(r["mpath_s"]) * num(r["markets"]) if num(r["mpath_s"]) else None), style.Styles())
        style.ticks_at(ax, [num(r["markets"]) for r in rows], log=False)
        ax.set(xlabel="markets per dispatch", ylabel=MARKET_PATHS, title=f"markets by kernel kind, {machine_name(machine)}")
        timed_figure(f, machine)
        timing_note(f, rows)
        out.save(f, "markets")
        out.table("markets", ", ".join(os.path.basename(p) for p in paths), comments, sweep_cols(rows), rows)
    # The converted `tapelab compare` tables: Mpath/s by markets, per engine x kernel, greeks on, per path count.
    for machine, path in inputs(data, "compare"):
        comments, rows = read(path)
        rows = [r for r in rows if r["greeks"] == "on"]
        counts = sorted({r["paths"] for r in rows}, key=int)
        f = style.Figure(1, len(counts))
        key = lambda r: f"{r['engine']} {r['kernel']} ({r['segments']} segment{'s' * (r['segments'] != '1')})"  # noqa: E731
        st = style.Styles(sorted({key(r) for r in rows}))
        for i, (ax, pc) in enumerate(zip(f.axes, counts)):
            pr = [r for r in rows if r["paths"] == pc]
            data_ = timed(pr, key, "markets", lambda r: num(r["mpath_s"]), ms="ms_per_ladder")
            n = len(st.order)
            dodged = {k: [(p[0] + 0.06 * (st.order.index(k) - (n - 1) / 2),) + p[1:] for p in pts] for k, pts in data_.items()}
            style.lines(ax, dodged, st, linestyle="")
            style.ticks_at(ax, [num(r["markets"]) for r in pr], log=False)
            ax.set(xlabel="markets per dispatch", ylabel=MPATH,
                   title=f"({chr(97 + i)}) {int(pc) // 1000000}M paths, {machine_name(machine)}")
        f.note("tapelab compare, value and five Greeks, Mpath/s of a 7-point spot ladder; each point one table of a run (points of one x spread "
               "sideways to stay apart).")
        timed_figure(f, machine)
        timing_note(f, rows, ms="ms_per_ladder")
        out.save(f, f"compare-{machine}")
        out.table(f"compare-{machine}", os.path.basename(path), comments,
                  ["source", "paths", "engine", "kernel", "segments", "markets", "ms_per_ladder", "mpath_s", "same_bits",
                   "registers", "spill_bytes"], rows)


# Peers: JAX (one market, vmap ladder, ladder loop), the hand-written CUDA kernel and tapelab (plain and
# register, one market per dispatch and the ladder in one dispatch), one panel per pass and path count.
# Rows: every row of peers-<m>.csv (experiments/drivers/peers.py; H200 first, else the CPU quick run).
PEERS_COLS = ["who", "formulation", "engine", "kernel", "segments", "pass", "paths", "markets", "ladder_points", "ms",
              "mpath_s", "registers", "spill_bytes", "same_bits", "notes", "knobs"]
WHO = {"jax": "JAX", "handwritten": "hand-written CUDA (contraction allowed)", "tapelab": "tapelab"}


def peer_label(r):
    if r["who"] == "tapelab":
        # A knob a row was run with (the notes name it) tells apart rows of one kernel and formulation.
        knob = re.search(r"TAPELAB_[A-Z_]+=\S+?(?=[:;)]|$)", r.get("notes", "") or "")
        run_knobs = (r.get("knobs") or "").split()  # the run's knobs (CSV header): one named, more counted
        extra = (f" {run_knobs[0]}" if len(run_knobs) == 1 else
                 f" +{len(run_knobs)} knobs" if run_knobs else "")
        contract = f" math={r['math']}" if r.get("math") not in (None, "", "ieee", "glsl") else ""  # the looser one, named
        return (f"tapelab {r['engine']} {r['kernel']} {r['formulation']} ({r['markets']}/dispatch)"
                + (f" {knob.group(0)}" if knob else "") + extra + contract)
    if r["who"] == "jax":
        return f"jax {r['formulation']} ({r['markets']}/call)"
    return f"hand-written cuda {r['formulation']}"


def fig_peers(data, out):
    pick = preferred(data, "peers", "peers_vulkan")  # peers_vulkan: Vulkan run apart when cuda ran with knobs
    if not pick:
        return
    machine, paths = pick
    comments, rows = read_all(paths)
    rows = [r for r in rows if num(r.get("mpath_s"))]
    order = {"jax": 0, "handwritten": 1, "tapelab": 2}
    panels = sorted({(r["pass"], int(r["paths"])) for r in rows}, key=lambda k: (k[0] != "value+5greeks", k[1]))
    per = [sorted((r for r in rows if r["pass"] == ps and int(r["paths"]) == pc),
                  key=lambda r: (order.get(r["who"], 3), peer_label(r))) for ps, pc in panels]
    heights = [0.45 + 0.13 * len(b) for b in per]
    f = style.Figure(len(panels), 1, width=style.PAGE_W, panel_h=sum(heights) / len(heights),
                     gridspec_kw={"height_ratios": heights})
    st = style.Styles(WHO[w] for w in sorted(order, key=order.get))
    for i, (ax, (ps, pc), bs) in enumerate(zip(f.axes, panels, per)):
        ys = list(range(len(bs)))  # positions, not categories: a label measured twice keeps both bars
        top = 0
        for who in sorted({r["who"] for r in bs}, key=lambda w: order.get(w, 3)):
            at = [(y, r) for y, r in zip(ys, bs) if r["who"] == who]
            xs = [num(r["mpath_s"]) for _, r in at]
            sp = [style.spread(x, num(r["ms"]), num(r.get("ms_min")), num(r.get("ms_max"))) for x, (_, r) in zip(xs, at)]
            err = [[x - s[0] if s else 0 for x, s in zip(xs, sp)], [s[1] - x if s else 0 for x, s in zip(xs, sp)]]
            bars = ax.barh([y for y, _ in at], xs, height=0.75, color=st[WHO.get(who, who)]["color"], label=WHO.get(who, who),
                           xerr=err if any(sp) else None, error_kw={"elinewidth": 0.7, "capsize": 1.5})
            for (y, _), x, s in zip(at, xs, sp):  # the value, right of the bar and of its error bar
                ax.annotate(f"{x:,.0f}" if x >= 100 else f"{x:.1f}", (s[1] if s else x, y), xytext=(2, 0),
                            textcoords="offset points", va="center", fontsize=5.5)
            top = max([top] + [s[1] if s else x for x, s in zip(xs, sp)])
        ax.set_xlim(0, top * 1.16)
        ax.set_yticks(ys)
        ax.set_yticklabels([peer_label(r) for r in bs], fontsize=5.5)
        ax.set(xlabel=f"{MARKET_PATHS}, {ps}", title=f"({chr(97 + i)}) {pc:,} paths, {ps}, {machine_name(machine)}")
        ax.invert_yaxis()
        ax.grid(axis="y", visible=False)
    timed_figure(f, machine)
    bare = [WHO[w].split(" (")[0] for w in order if any(r["who"] == w and not num(r.get("ms_min")) for r in rows)]
    timing_note(f, rows, who=" and ".join(bare) + f" (the script{'s' * (len(bare) > 1)} print{'s' * (len(bare) == 1)} a median only)"
                if any(r["who"] == "tapelab" and num(r.get("ms_min")) for r in rows) and "tapelab" not in bare else None)
    out.save(f, "peers")
    out.table("peers", ", ".join(os.path.basename(p) for p in paths), comments, PEERS_COLS, rows)


# Cut strategies, flat and nested, at equal segment counts: the register kernel's market-paths/s per strategy
# (bars per requested segment count; registers / spill bytes over each bar), one panel per engine and markets
# per dispatch that has timed rows (others named in a note), the plain kernel's median as a dotted line.
# Rows: strategies-<m>.csv (+ strategies_revolve7-, strategies_vulkan-, strategies_vulkan7-<m>.csv), H200 first,
# else the CPU quick run.
STRATEGY_COLS = ["engine", "markets", "strategy", "requested_segments", "segments", "depth", "peak_live",
                 "recompute_cost", "mpath_s", "ratio_to_plain", "vs_median_plain", "registers", "spill_bytes",
                 "bit_exact_vs_plain", "notes"]


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


def fig_strategies(data, out):
    # The cuda panels and each engine's later runs join (strategies_vulkan, strategies_vulkan7: 2026-12-03b).
    pick = preferred(data, "strategies", "strategies_revolve7", "strategies_vulkan", "strategies_vulkan7")
    if not pick:
        return
    machine, paths = pick
    comments, rows = read_all(paths)
    # Rows timed under the configuration tapelab tune found for each plan (strategies.py --configs
    # defaults,tuned) are drawn as markers over the defaults' bars.
    tuned = [r for r in rows if r.get("configuration") == "tuned"]
    rows = [r for r in rows if r.get("configuration", "defaults") in ("", "defaults")]
    reg = [r for r in rows if r["kernel"] == "register"]
    engines = sorted({r["engine"] for r in reg})
    markets = sorted({int(r["markets"]) for r in reg if num(r["markets"])})
    strategies = []
    for r in reg:  # the order the driver ran them in
        if r["strategy"] not in strategies:
            strategies.append(r["strategy"])
    counts = sorted({int(r["requested_segments"]) for r in reg})
    shown = []
    for e in engines:
        for m in markets:
            if any(r["engine"] == e and num(r["markets"]) == m and num(r["mpath_s"]) for r in reg):
                shown.append((e, m))
            else:
                f_missing = f"{e} at {m} market{'s' * (m > 1)} per dispatch"
                shown.append((None, f_missing))
    missing = [m for e, m in shown if e is None]
    shown = [(e, m) for e, m in shown if e is not None]
    cols = 1 if len(shown) == 1 else 2
    f = style.Figure((len(shown) + cols - 1) // cols, cols, panel_h=2.3)
    for ax in f.axes[len(shown):]:
        f.fig.delaxes(ax)
    f.axes = f.axes[:len(shown)]
    st = style.StrategyStyles()  # a strategy's colour is its colour in every figure
    strategies = st.order_of(strategies)
    width = 0.8 / max(1, len(strategies))
    annotated = False
    for i, (ax, (e, m)) in enumerate(zip(f.axes, shown)):
        here = [r for r in rows if r["engine"] == e and num(r["markets"]) == m]
        top = 0
        for k, s in enumerate(strategies):
            xs, ys, lo, hi, notes = [], [], [], [], []
            for x, n in enumerate(counts):
                r = next((r for r in here if r["kernel"] == "register" and r["strategy"] == s
                          and int(r["requested_segments"]) == n), None)
                if r is None or not num(r["mpath_s"]):
                    continue
                y = num(r["mpath_s"]) * m
                sp = style.spread(y, num(r["ms"]), num(r.get("ms_min")), num(r.get("ms_max")))
                xs.append(x - 0.4 + width * (k + 0.5))
                ys.append(y)
                lo.append(y - sp[0] if sp else 0)
                hi.append(sp[1] - y if sp else 0)
                regs, sb = positive(r["registers"]), spill(r["spill_bytes"])
                notes.append((f"{int(regs)}r" if regs else "") + (f" {int(sb)}B" if sb else ""))
            if not xs:
                continue
            ax.bar(xs, ys, width, color=st[s]["color"], label=s,
                   yerr=[lo, hi] if any(lo) or any(hi) else None, error_kw={"elinewidth": 0.7, "capsize": 1.2})
            for x, y, h, t in zip(xs, ys, hi, notes):
                if t:
                    annotated = True
                    ax.annotate(t.strip(), (x, y + h), xytext=(0, 1.5), textcoords="offset points", fontsize=4.5,
                                ha="center", va="bottom", rotation=90)
                top = max(top, y + h)
            tx, ty = [], []
            for x, n in enumerate(counts):
                t = next((r for r in tuned if r["engine"] == e and num(r["markets"]) == m and r["kernel"] == "register"
                          and r["strategy"] == s and int(r["requested_segments"]) == n and num(r["mpath_s"])), None)
                if t is not None:
                    tx.append(x - 0.4 + width * (k + 0.5))
                    ty.append(num(t["mpath_s"]) * m)
            if tx:
                ax.plot(tx, ty, linestyle="", marker="_", color="black", ms=8, mew=1.5, label="tuned configuration")
                top = max([top] + ty)
        plain = median([num(r["mpath_s"]) * m for r in here if r["kernel"] == "plain" and num(r["mpath_s"])])
        if plain:
            ax.axhline(plain, ls=":", lw=1, color="black", label="plain kernel (median of its runs)")
            top = max(top, plain)
        ax.set_xticks(range(len(counts)))
        ax.set_xticklabels([f"{n} segments" for n in counts])
        ax.grid(axis="x", visible=False)
        ax.set(ylabel=MARKET_PATHS, ylim=(0, top * 1.45),
               title=f"({chr(97 + i)}) {e}, {m} market{'s' * (m > 1)} per dispatch, {machine_name(machine)}")
    tapes = sorted({r.get("tape") or "" for r in reg} - {""})
    f.note(f"Register kernels of each cut strategy (value and Greeks) on {', '.join(tapes) or 'the Asian call'}; bars "
           "grouped by the segment count requested (budget and auto choose their own).")
    if annotated:
        f.note("Over each bar: the kernel's registers per thread (r) and spill bytes per thread (B), where the engine "
               "reports them.")
    for what in missing:
        omitted(f, what, "no timed rows: the run was cut short before these points")
    for e, m in shown:  # a strategy without bars in a panel that has some
        for s_ in strategies:
            mine = [r for r in reg if r["engine"] == e and num(r["markets"]) == m and r["strategy"] == s_]
            if not any(num(r["mpath_s"]) for r in mine):
                why = next((r["notes"] for r in mine if r.get("notes")), "") or "not in this run"
                omitted(f, f"{s_} on {e} at {m} market{'s' * (m > 1)} per dispatch", why)
    timed_figure(f, machine)
    timing_note(f, [r for r in rows if r["kernel"] == "register" or r["kernel"] == "plain"])
    out.save(f, "strategies")
    plain_rows = []
    for e in engines:
        for m in markets:
            ps = [r for r in rows if r["engine"] == e and num(r["markets"]) == m and r["kernel"] == "plain"]
            med = median([num(r["mpath_s"]) for r in ps if num(r["mpath_s"])])
            if med is not None:
                plain_rows.append({"engine": e, "markets": m, "strategy": f"plain (median of {len(ps)} runs)",
                                   "segments": 1, "mpath_s": f"{med:.3f}", "registers": ps[0]["registers"],
                                   "spill_bytes": ps[0]["spill_bytes"]})
                # ratio_to_plain divides by each point's own plain run (its spread is the plain kernel's); against
                # the median of every point's plain run, the ratios compare across points
                for r in reg:
                    if r["engine"] == e and num(r["markets"]) == m and num(r["mpath_s"]):
                        r["vs_median_plain"] = f"{num(r['mpath_s']) / med:.3f}"
    out.table("strategies", ", ".join(os.path.basename(p) for p in paths), comments, sweep_cols(reg, STRATEGY_COLS),
              plain_rows + reg)


# Beyond the article: tangent (forward) mode against the adjoint kernels as inputs grow. Rows: every
# basket row of tangent_crossover-<m>.csv that ran (Mpath/s against inputs, per engine and kind); the
# Asian rows (5 inputs) in the table only.
def fig_tangent(data, out):
    cols = ["engine", "product", "assets", "inputs", "kind", "segments", "registers", "spill_bytes", "mpaths_per_s",
            "value_bits_equal_plain", "max_greek_dev_stderr"]
    for machine, path in inputs(data, "tangent_crossover"):
        comments, rows = read(path)
        engines = sorted({r["engine"] for r in rows})
        f = style.Figure(1, len(engines))
        st = style.Styles(["plain", "register", "scratch", "tangent"])
        basket = [r for r in rows if r["product"] == "basket"]
        for i, (ax, e) in enumerate(zip(f.axes, engines)):
            mine = [r for r in basket if r["engine"] == e]
            style.lines(ax, timed(mine, lambda r: r["kind"], "inputs", lambda r: num(r["mpaths_per_s"])), st)
            style.ticks_at(ax, [num(r["inputs"]) for r in mine if num(r["mpaths_per_s"])])
            ax.set(xlabel="inputs (Greeks)", ylabel=MPATH, yscale="log", title=f"({chr(97 + i)}) {e}, {machine_name(machine)}")
        f.note("Basket call: tangent (forward) mode against the adjoint kernels as the inputs grow.")
        timed_figure(f, machine)
        timing_note(f, basket)
        out.save(f, f"tangent_crossover-{machine}")
        out.table(f"tangent_crossover-{machine}", os.path.basename(path), comments, cols, rows)


def fig_zoo(data, out):
    """experiments/zoo.py. zoo-<m>: peak_live against segments per zoo tape (window plans), the pipe width
    against the least peak_live any strategy reached, and where the CSV has sm_90 columns (one point per
    distinct register kernel) registers and spill-store bytes against peak_live. zoo_timings-<m>, where the
    CSV has timings: per engine, each strategy's register kernel against the plain kernel (plain ms / ms,
    median, error bars the fastest and slowest run), CPU-served engines marked."""
    cols = ["tape", "params", "nodes", "draws", "inputs", "pipe_width", "strategy", "segments", "depth", "peak_live",
            "persistent", "recompute_ops", "same_plan_as", "sm90_registers", "sm90_spill_bytes", "sm90_compile_s",
            "time_engine", "served", "ms", "ms_min", "ms_max", "plain_ms", "vs_plain", "bits"]
    for machine, path in inputs(data, "zoo"):
        comments, rows = read(path)
        rows = [r for r in rows if num(r.get("peak_live")) is not None]
        tapes = list(dict.fromkeys(r["tape"] for r in rows))
        seen, reg = set(), []
        for r in rows:  # one point per distinct register kernel (a timed plan has a row per engine)
            key = (r["tape"], r["strategy"], r.get("requested_segments"))
            if (r["strategy"] != "plain" and not r.get("same_plan_as") and num(r.get("sm90_registers")) is not None
                    and key not in seen):
                seen.add(key)
                reg.append(r)
        spills = any(num(r["sm90_spill_bytes"]) for r in reg)  # (d) only where some kernel spills
        f = style.Figure(2 if spills else 1, 2 if spills or not reg else 3)
        st = style.Styles(tapes)
        ax = f.axes[0]
        for t in tapes:
            w = sorted((r for r in rows if r["tape"] == t and r["strategy"] == "window"), key=lambda r: num(r["segments"]))
            if w:
                ax.plot([num(r["segments"]) for r in w], [num(r["peak_live"]) for r in w], label=t, **st[t])
        style.ticks_at(ax, [num(r["segments"]) for r in rows if r["strategy"] == "window"])
        ax.set(xlabel="segments (window plan)", ylabel="peak_live (values)", yscale="log",
               title="(a) register-pressure proxy by segments")
        ax = f.axes[1]
        for t in tapes:
            tr = [r for r in rows if r["tape"] == t and r["strategy"] != "plain"]
            s = st[t]
            ax.plot([num(tr[0]["pipe_width"])], [min(num(r["peak_live"]) for r in tr)], linestyle="", marker=s["marker"],
                    color=s["color"], ms=5, label=t)
        ax.set(xlabel="pipe width (values live across a mid-tape cut)", ylabel="least peak_live (values)",
               xscale="log", yscale="log", title="(b) narrow and wide pipes (best plan)")
        if reg:
            ax, ax2 = f.axes[2], (f.axes[3] if spills else None)
            for t in tapes:
                tr = [r for r in reg if r["tape"] == t]
                s = st[t]
                clean = [r for r in tr if num(r["sm90_spill_bytes"]) == 0]
                spilt = [r for r in tr if num(r["sm90_spill_bytes"]) > 0]
                for part, face in ((clean, s["color"]), (spilt, "none")):
                    if part:
                        ax.plot([num(r["peak_live"]) for r in part], [num(r["sm90_registers"]) for r in part],
                                linestyle="", marker=s["marker"], color=s["color"], markerfacecolor=face,
                                label=t if part is (clean or spilt) else "_" + t)
                if spilt and ax2 is not None:
                    ax2.plot([num(r["peak_live"]) for r in spilt], [num(r["sm90_spill_bytes"]) for r in spilt],
                             linestyle="", marker=s["marker"], color=s["color"], markerfacecolor="none", label="_" + t)
            ax.set(xlabel="peak_live (values)", ylabel="sm_90 registers per thread", xscale="log",
                   title="(c) registers (hollow: the kernel spills)")
            if spills:
                ax2.set(xlabel="peak_live (values)", ylabel="spills (bytes/thread)", xscale="log", yscale="log",
                        title="(d) spill stores where it spills")
            else:
                omitted(f, "spill stores against peak_live", "no register kernel in this data spills")
            config = sorted({r["sm90_config"] for r in reg if r.get("sm90_config")})
            f.note(f"sm_90: NVRTC + ptxas, compile only (no GPU), register kernels fp32 with Greeks, one market, "
                   f"config {', '.join(config)} over cuda's defaults; {len(reg)} distinct kernels, "
                   f"{sum(1 for r in reg if num(r['sm90_spill_bytes']) == 0)} without spills"
                   + (" (not in d)." if spills else "."))
        else:
            omitted(f, "sm_90 registers and spills against peak_live", "this data has no sm_90 columns (zoo.py --cuda)")
        timed_rows = [r for r in rows if num(r.get("ms")) and r["strategy"] != "plain"]
        f.note("Plan metrics and sm_90 statistics: the same on every machine; "
               + ("timings in the zoo_timings figure." if timed_rows else "no timings in this data."))
        out.save(f, f"zoo-{machine}")
        out.table(f"zoo-{machine}", os.path.basename(path), comments, cols, rows)
        engines = list(dict.fromkeys(r["time_engine"] for r in timed_rows))
        if not engines:
            continue
        f = style.Figure(1, len(engines), panel_h=3.2)
        ss = style.StrategyStyles()  # a strategy's colour and marker are its own in every figure
        strategies = ss.order_of(r["strategy"] for r in timed_rows)
        for ax, e in zip(f.axes, engines):
            er = [r for r in timed_rows if r["time_engine"] == e]
            order = [t for t in tapes if any(r["tape"] == t for r in er)]
            for k, strat in enumerate(strategies):
                pts = [(order.index(r["tape"]) + (k - (len(strategies) - 1) / 2) * 0.12, r) for r in er
                       if r["strategy"] == strat]
                if not pts:
                    continue
                xs = [num(r["vs_plain"]) for _, r in pts]
                # clamped at 0: vs_plain is rounded to 4 digits in the CSV, the bounds are not
                lo = [max(0.0, x - num(r["plain_ms"]) / num(r["ms_max"])) for x, (_, r) in zip(xs, pts)]
                hi = [max(0.0, num(r["plain_ms"]) / num(r["ms_min"]) - x) for x, (_, r) in zip(xs, pts)]
                s = ss[strat]
                ax.errorbar(xs, [y for y, _ in pts], xerr=[lo, hi], linestyle="", marker=s["marker"], color=s["color"],
                            elinewidth=0.8, label=strat)
            ax.axvline(1, color="black", linestyle=":", linewidth=1, label="as fast as plain (ratio 1)")
            ax.set_yticks(range(len(order)))
            ax.set_yticklabels(order)
            ax.invert_yaxis()
            segs = sorted({int(num(r["segments"])) for r in er if r["shape"] == "flat"})
            ax.set(xlabel="plain ms / register ms (right of 1: faster)", xscale="log",
                   title=f"{e}, {', '.join(map(str, segs))} segments")
        if all(r.get("served") == "cpu" for r in timed_rows) or cpu_served(machine):
            f.mark_cpu_served()
        timing_note(f, timed_rows)
        paths = sorted({r["paths"] for r in timed_rows})
        f.note(f"Register kernels (value and Greeks) against the plain kernel on the same engine, {'/'.join(paths)} "
               f"paths a run, runs taken in turn over the tape's kernels; value and Greeks bit-identical to plain in "
               f"{sum(1 for r in timed_rows if r['bits'] == 'same')} of {len(timed_rows)} kernels.")
        out.save(f, f"zoo_timings-{machine}")


# Finding 3 without a GPU: the scratch kernels of today's cuda engine compiled for sm_90 (experiments/scratch_model.py):
# per layout and segment length, the H200's measured Mpath/s joined where the CSV has it, the modelled bytes a path
# sends from L1 to L2 (the buffer's own accesses, coalesced per warp; write-through stores, an LRU share of L1), and
# ptxas's spill bytes. Rows: every row of scratch_model-<m>.csv.
def fig_scratch_model(data, out):
    for machine, path in inputs(data, "scratch_model"):
        comments, rows = read(path)
        st = style.Styles(["scratch aos", "scratch soa"])
        key = lambda r: f"scratch {r['layout']}"  # noqa: E731
        measured = any(num(r.get("h200_mpath_s")) for r in rows)
        f = style.Figure(1, 3 if measured else 2, width=style.PAGE_W)
        axes = iter(f.axes)
        if measured:
            a = next(axes)
            style.lines(a, series(rows, key, "seglen", lambda r: num(r.get("h200_mpath_s"))), st)
            a.set(xlabel="segment length (nodes)", ylabel=MPATH, title="(a) measured, H200 (cuda)")
        b = next(axes)
        style.lines(b, series(rows, key, "seglen", lambda r: num(r["l2_bytes_per_path"])), st)
        b.set(xlabel="segment length (nodes)", ylabel="to L2 (bytes a path)",
              title=f"({'b' if measured else 'a'}) modelled buffer traffic")
        c = next(axes)
        style.lines(c, series(rows, key, "seglen", lambda r: spill(r["spill_bytes"])), st)
        c.set(xlabel="segment length (nodes)", ylabel="spills (bytes/thread)",
              title=f"({'c' if measured else 'b'}) sm_90 spills, compile only")
        lengths = sorted({num(r["seglen"]) for r in rows})
        shown = lengths if len(lengths) <= 5 else lengths[(len(lengths) + 1) % 2::2]  # the last always
        for ax in f.axes:
            style.ticks_at(ax, shown)  # every other length where all would crowd a third of a page
        regs = sorted({r["registers"] for r in rows if r.get("registers")})
        f.note(f"252-step Asian scratch kernels, fp32, value and Greeks, one path per lane, compiled for sm_90 without a "
               f"GPU ({'/'.join(regs)} registers). Traffic: every access of the buffer in program order, for the 32 "
               "lanes of a warp: AoS puts each lane's word in its own 32-byte sector, SoA a warp's words in four; stores "
               "go to L2 (write-through), loads through an LRU share of a 256 KB L1 at the kernel's occupancy.")
        if measured:
            f.note("Measured: the H200 on 2026-11-29, that day's kernels and draws; the model is of today's kernels, so "
                   "it explains the gap between layouts rather than predicting Mpath/s.")
        out.save(f, f"scratch_model-{machine}")
        out.table(f"scratch_model-{machine}", os.path.basename(path), comments,
                  ["layout", "seglen", "segments", "words_per_lane", "registers", "spill_bytes", "ptx_ld_global",
                   "ptx_st_global", "ptx_ld_local", "ptx_st_local", "requests_per_warp", "l2_bytes_per_path",
                   "h200_mpath_s", "l2_gbs"], rows)


# The researcher's bench (experiments/bench.py): the headline Pareto front of every strategy's plans per tape, the
# user's strategies highlighted, and where the CSV has timings the speed against plain. Rows: every row of
# bench-<m>.csv (metrics rows for the front, timed rows for the speed); drawn by benchlib/report.py's functions,
# the ones the bench itself draws with.
def fig_bench(data, out):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments"))
    from benchlib import report
    for machine, path in inputs(data, "bench"):
        comments, rows = read(path)
        st = style.StrategyStyles(sorted({r["strategy"] for r in rows if r.get("source") in ("python", "process")}))
        metric = [r for r in rows if not r.get("engine")]
        f = report.pareto_figure(metric, "Plan metrics (no run): " + (comments[1] if len(comments) > 1 else ""), st)
        out.save(f, f"bench-{machine}")
        devices = {r["engine"]: r["device"] for r in rows if r.get("engine")}
        paths_ = sorted({r["paths"] for r in rows if r.get("paths")})
        f = report.speed_figure(rows, f"Timings: {'/'.join(f'{int(p):,}' for p in paths_)} paths a run, fp32, value and Greeks; "
                                      f"{comments[0].split('; devices')[0] if comments else ''}.", st, devices,
                                cpu=cpu_served(machine))
        if f is not None:
            out.save(f, f"bench_speed-{machine}")
        out.table(f"bench-{machine}", os.path.basename(path), comments,
                  ["tape", "strategy", "source", "requested_segments", "segments", "family", "peak_live",
                   "recompute_cost", "gap", "engine", "ms", "ms_lo", "ms_hi", "vs_plain", "vs_plain_lo", "vs_plain_hi",
                   "resolved", "bits", "note"], rows)


def fig_gap(data, out):
    """experiments/gap_table.py. gap-<m>: per budget (optimal's peak_live at 4, 12 and 32 segments, ranked
    per tape from the tightest), each strategy's least weighted recompute within the budget over exact's (the per-value MILP's
    optimum; 1 = as good; below 1 only for plans outside its space), one marker per strategy in every panel,
    exact's proven bound where the solve stopped at its limit; and exact's solve times (processor seconds,
    hollow where it stopped at the limit). The table: every row of the CSV."""
    cols = ["tape", "nodes", "budget_from", "budget", "strategy", "family", "segments", "peak_live", "recompute_cost",
            "gap", "exact_status", "exact_gap", "solve_s", "exact_blocks", "sm90_registers", "sm90_spill_bytes",
            "cpujit_ms", "bits"]
    for machine, path in inputs(data, "gap"):
        comments, rows = read(path)
        rows = [r for r in rows if r.get("strategy")]
        fits = [r for r in rows if r.get("fits") == "yes" and num(r.get("gap")) is not None and r["strategy"] != "exact-front"]
        if not fits:
            continue
        tapes = list(dict.fromkeys(r["tape"] for r in fits))
        strategies = [s for s in dict.fromkeys(r["strategy"] for r in fits) if s != "exact"]
        for r in rows:  # each tape's budgets by size: 0 the tightest
            r["level"] = sorted({num(x["budget"]) for x in fits if x["tape"] == r["tape"]}).index(num(r["budget"])) \
                if r in fits else None
        levels = sorted({r["level"] for r in fits})
        f = style.Figure(2, 2, panel_h=3.0)
        st = style.StrategyStyles()  # a strategy's look is its look in every figure; exact's line takes exact's
        names = ["(a) each tape's tightest budget", "(b) its middle budget", "(c) its loosest budget"]
        for k, (ax, lv) in enumerate(zip(f.axes, levels)):
            lr = [r for r in fits if r["level"] == lv]
            ax.axhline(1, color=st["exact (optimum)"]["color"], linestyle=":", linewidth=1, label="exact (optimum)")
            for j, strat in enumerate(strategies):
                pts = [(tapes.index(r["tape"]) + (j - (len(strategies) - 1) / 2) * 0.07, 1 + num(r["gap"]))
                       for r in lr if r["strategy"] == strat]
                if pts:
                    s = st[strat]
                    ax.plot([x for x, _ in pts], [y for _, y in pts], linestyle="", marker=s["marker"], color=s["color"],
                            ms=4, label=strat)
            bound = [(tapes.index(r["tape"]), num(r["exact_bound"]) / num(r["recompute_cost"])) for r in lr
                     if r["strategy"] == "exact" and r.get("exact_status") == "feasible" and num(r.get("exact_bound"))]
            if bound:
                ax.plot([x for x, _ in bound], [y for _, y in bound], linestyle="", marker="_", ms=10, color="#000000",
                        label="exact's proven bound (solve stopped at its limit)")
            ax.set_xticks(range(len(tapes)))
            ax.set_xticklabels(tapes, rotation=45, ha="right")
            ax.set(ylabel="recompute (instructions) / exact's", yscale="log", title=names[lv])
        ax = f.axes[3]
        ex = [r for r in fits if r["strategy"] == "exact" and num(r.get("solve_s")) is not None]
        for lv in levels:
            s = st["exact (optimum)"]
            pts = [(tapes.index(r["tape"]) + (lv - 1) * 0.15, num(r["solve_s"]), r["exact_status"])
                   for r in ex if r["level"] == lv]
            for status, face in (("optimal", s["color"]), ("feasible", "none")):
                part = [p for p in pts if p[2] == status]
                if part:
                    ax.plot([p[0] for p in part], [max(p[1], 0.01) for p in part], linestyle="", marker="o", ms=4,
                            color=s["color"], markerfacecolor=face, label="_exact")
        ax.set_xticks(range(len(tapes)))
        ax.set_xticklabels(tapes, rotation=45, ha="right")
        ax.set(ylabel="exact's solve (processor s)", yscale="log",
               title="(d) the optimum's solve (hollow: stopped at the limit)")
        nodes = {r["tape"]: r["nodes"] for r in fits}
        budgets = {t: "/".join(str(int(b)) for b in sorted({num(r["budget"]) for r in fits if r["tape"] == t}))
                   for t in tapes}
        f.note(f"Every strategy against the exact optimum on {len(tapes)} zoo tapes, 3 peak_live budgets each; "
               "precision: any (plan metrics, the same in fp32 and fp64 on every machine). "
               "Tapes (nodes; budgets): " + ", ".join(f"{t} ({nodes[t]}; {budgets[t]})" for t in tapes) + ". A budget is "
               "the peak_live (most values live at once) of the optimal strategy's plan at 4, 12 or 32 segments; each "
               "strategy's plan of least weighted recompute (PTX instructions per op) within it over 2 to 32 segments; "
               "exact's over its solves' blocks. Plan metrics: the same for every precision and machine. In (d) each "
               "tape's budgets left to right, tightest first.")
        missing = sorted({(r["strategy"]) for r in rows if r.get("fits") == "no" and r["strategy"] != "exact-front"})
        if missing:
            omitted(f, "a strategy where no plan of it fits the budget", ", ".join(missing) + " at some budgets")
        out.save(f, f"gap-{machine}")
        out.table(f"gap-{machine}", os.path.basename(path), comments, cols, rows)


FIGURES = [fig_cliff, fig_segments, fig_seglen, fig_scratch_model, fig_registers, fig_markets, fig_peers,
           fig_strategies, fig_tangent, fig_zoo, fig_bench, fig_gap]


def main(argv):
    flags = [a for a in argv if a.startswith("--")]
    argv = [a for a in argv if not a.startswith("--")]
    if len(argv) != 2 or any(a != "--require-spread" for a in flags):
        sys.exit("usage: plot.py DATA_DIR OUT_DIR [--require-spread]")
    data, out_dir = argv
    if not os.path.isdir(data):
        sys.exit(f"tapelab: {data}: no such data directory")
    out = Out(out_dir, require_spread="--require-spread" in flags, inputs=sorted(glob.glob(os.path.join(data, "*"))))
    try:
        for f in FIGURES:
            f(data, out)
    except style.FigureError as e:
        sys.exit(f"tapelab: papers/plot.py: figure {e}")
    except (style.careful.OutputRefused, style.careful.OutputFailed) as e:
        sys.exit(f"tapelab: papers/plot.py: {style.careful.one_line(e)}")
    for p in out.made:
        print(p)
    if not out.made:
        sys.exit(f"tapelab: {data}: no CSV the paper draws (cliff-*.csv, segments-*.csv, ...)")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
