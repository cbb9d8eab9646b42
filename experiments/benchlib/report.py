"""The bench's outputs: one CSV, one table (3 significant figures, intervals, warnings) and figures.

Figures go through papers/style.py (the paper's look and its checks): one colour and marker per
strategy in every panel and figure (style.StrategyStyles: the registry's order, the user's
strategies highlighted), titles naming tape, engine, device and precision, units on every axis,
legends below the panels, log axes where a range spans decades.
"""
import csv
import io
import os
import sys

from . import output
from .timing import sig, with_interval

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))), "papers"))
import style  # noqa: E402

COLUMNS = ["tape", "nodes", "strategy", "source", "requested_segments", "segments", "family", "depth", "peak_live",
           "persistent", "recompute_ops", "recompute_cost", "plan_s", "same_plan_as", "best_known_cost", "gap",
           "sm90_registers", "sm90_spill_bytes", "sm90_ptx_instructions", "engine", "device", "precision", "paths",
           "rounds", "ms", "ms_lo", "ms_hi", "ms_min", "ms_max", "coverage", "vs_plain", "vs_plain_lo", "vs_plain_hi",
           "resolved", "bits", "note"]


def csv_text(rows, head):
    buf = io.StringIO()
    buf.write("".join(f"# {h}\n" for h in head))
    w = csv.DictWriter(buf, COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def _cell(r, key, digits=3):
    v = r.get(key)
    if v in (None, ""):
        return "-"
    if isinstance(v, int) or (isinstance(v, str) and v.isdigit()):
        return f"{int(v):,}"  # counts exactly
    return sig(float(v), digits) if isinstance(v, float) else str(v)


def table_text(rows, head, warnings):
    """Markdown: the header lines, then per tape one table (metrics, gap, sm_90, and per engine the median ms
    with its interval and the ratio to plain), then the warnings."""
    out = [f"_{h}_\n" for h in head]
    for tape in dict.fromkeys(r["tape"] for r in rows):
        mine = [r for r in rows if r["tape"] == tape]
        out.append(f"\n### {tape} ({mine[0]['nodes']:,} nodes)\n")
        engines = [e for e in dict.fromkeys(r.get("engine") for r in mine) if e]
        cols = ["strategy", "segments (made)", "peak_live (values)", "recompute (instructions)", "gap",
                "sm_90 regs/spill B"]
        for e in engines:
            cols += [f"{e} ms [95% CI]", f"{e} plain ms / ms [CI]"]
        out.append("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
        keys = list(dict.fromkeys((r["strategy"], r["requested_segments"]) for r in mine))
        for strategy, n in keys:
            rs = [r for r in mine if (r["strategy"], r["requested_segments"]) == (strategy, n)]
            r = rs[0]
            name = f"**{strategy}**" if r.get("source") in ("python", "process") else strategy
            gap = ("-" if r.get("gap") in (None, "") else "plain fits" if r["gap"] == "inf"
                   else f"{100 * float(r['gap']):+.1f}%")
            sm = "-" if r.get("sm90_registers") in (None, "") else f"{r['sm90_registers']}/{r['sm90_spill_bytes']}"
            made = "" if str(r.get("segments", "")) in ("", str(n)) else f" ({r['segments']})"
            cells = [name, f"{n}{made}", _cell(r, "peak_live"), _cell(r, "recompute_cost"), gap, sm]
            for e in engines:
                t = next((x for x in rs if x.get("engine") == e), None)
                if t is None or t.get("ms") in (None, ""):
                    cells += ["-", "-"]
                    continue
                cells.append(with_interval(_Stat(t, "ms")))
                flag = "" if t.get("resolved") != "no" else " ~"
                cells.append("-" if strategy == "plain" else with_interval(_Stat(t, "vs_plain")) + flag)
            out.append("| " + " | ".join(cells) + " |\n")
    out.append("\n**bold**: your strategies. segments: requested (made, where the plan chose another count). gap: weighted "
               "recompute over the least of any plan here (exact included where run) with no more peak_live; plain fits: "
               "the plain kernel lives in as few values and recomputes nothing. ~: the ratio's interval holds 1 (not "
               "resolved at this noise).\n")
    if warnings:
        out.append("\nWarnings:\n" + "".join(f"- {w}\n" for w in warnings))
    return "".join(out)


class _Stat:
    def __init__(self, row, key):
        self.value = float(row[key])
        self.low = float(row[key + "_lo"])
        self.high = float(row[key + "_hi"])


def write_all(out_dir, rows, head, warnings, inputs):
    paths = {"csv": os.path.join(out_dir, "bench.csv"), "table": os.path.join(out_dir, "bench.md")}
    output.write_text(paths["csv"], csv_text(rows, head), inputs)
    output.write_text(paths["table"], table_text(rows, head, warnings), inputs)
    return paths


# ---------------------------------------------------------------- figures

def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _log_if_decades(ax, axis, values):
    vals = [v for v in values if v and v > 0]
    if vals and max(vals) / min(vals) >= 10:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")


def pareto_figure(rows, caption, styles):
    """The headline: per tape, peak_live against weighted recompute of every plan (one point per strategy and
    segment count), the front of the plans no other beats on both, the user's strategies highlighted."""
    tapes = list(dict.fromkeys(r["tape"] for r in rows))
    cols = min(3, len(tapes))
    f = style.Figure((len(tapes) + cols - 1) // cols, cols, panel_h=style.PANEL_H + 0.4)
    for ax in f.axes[len(tapes):]:
        f.fig.delaxes(ax)
    f.axes = f.axes[:len(tapes)]
    for i, (ax, tape) in enumerate(zip(f.axes, tapes)):
        pts = {}
        for r in rows:
            if r["tape"] != tape or r["strategy"] == "plain" or _num(r.get("recompute_cost")) is None:
                continue
            pts.setdefault(r["strategy"], {})[(r["peak_live"], r["recompute_cost"])] = r
        plain = next((r for r in rows if r["tape"] == tape and r["strategy"] == "plain"), None)
        every = [(float(p), float(c)) for s in pts.values() for (p, c) in s]
        front, best = [], None
        for p, c in sorted(set(every)):
            if best is None or c < best:
                front.append((p, c))
                best = c
        if len(front) > 1:
            ax.step([p for p, _ in front], [max(c, 1) for _, c in front], where="post", color=style.GREY,
                    linewidth=0.8, label="Pareto front (plans no other beats on both)", zorder=1)
        for s in styles.order_of(pts):
            xy = sorted((float(p), max(float(c), 1)) for p, c in pts[s])
            st = styles[s]
            ax.plot([x for x, _ in xy], [y for _, y in xy], linestyle="", label=s, zorder=3 if styles.user(s) else 2,
                    **{k: v for k, v in st.items() if k != "linestyle"})
        if plain is not None:
            ax.axvline(float(plain["peak_live"]), color="black", linestyle=":", linewidth=1,
                       label="plain kernel's peak_live (no recompute)")
        _log_if_decades(ax, "x", [p for p, _ in every] + ([float(plain["peak_live"])] if plain else []))
        _log_if_decades(ax, "y", [max(c, 1) for _, c in every])
        ax.set(xlabel="peak_live (values)", ylabel="weighted recompute (instructions)", title=f"({chr(97 + i)}) {tape}")
    f.note("Tapes: " + ", ".join(f"({chr(97 + i)}) {t}, {int(float(next(r['nodes'] for r in rows if r['tape'] == t))):,} "
                                 "nodes" for i, t in enumerate(tapes)) + ".")
    f.note(caption)
    zero_on_log = any(ax.get_yscale() == "log" for ax in f.axes) and any(
        _num(r.get("recompute_cost")) == 0 for r in rows if r["strategy"] != "plain")
    f.note("Each point a plan (strategy at one segment count); lower left is better: fewer values live at once "
           "(registers) and fewer instructions recomputed." + (" Recompute 0 is drawn at 1 on the log axis."
                                                              if zero_on_log else ""))
    return f


def speed_figure(rows, caption, styles, devices, cpu):
    """Per tape and engine: plain ms / ms (above 1: faster than plain) against segments, the median of paired
    ratios with its interval, one line per strategy."""
    timed = [r for r in rows if _num(r.get("vs_plain")) is not None and r["strategy"] != "plain"]
    panels = list(dict.fromkeys((r["tape"], r["engine"]) for r in timed))
    if not panels:
        return None
    cols = min(3, len(panels))
    f = style.Figure((len(panels) + cols - 1) // cols, cols, panel_h=style.PANEL_H + 0.4)
    for ax in f.axes[len(panels):]:
        f.fig.delaxes(ax)
    f.axes = f.axes[:len(panels)]
    for i, (ax, (tape, engine)) in enumerate(zip(f.axes, panels)):
        mine = [r for r in timed if r["tape"] == tape and r["engine"] == engine]
        data = {}
        for s in styles.order_of({r["strategy"] for r in mine}):
            data[s] = sorted((float(r["requested_segments"]), float(r["vs_plain"]), float(r["vs_plain_lo"]),
                              float(r["vs_plain_hi"])) for r in mine if r["strategy"] == s)
        style.lines(ax, data, styles)
        ax.axhline(1.0, color="black", linestyle=":", linewidth=1, label="as fast as plain (ratio 1)")
        style.ticks_at(ax, [float(r["requested_segments"]) for r in mine])
        ax.set(xlabel="segments requested", ylabel="plain ms / ms (above 1: faster)",
               title=f"({chr(97 + i)}) {tape} on {engine}")
        lo = min(float(r["vs_plain_lo"]) for r in mine)
        hi = max(float(r["vs_plain_hi"]) for r in mine)
        if hi / max(lo, 1e-9) >= 10:
            ax.set_yscale("log")
    f.timings = True
    f.note(caption)
    f.note("Devices: " + "; ".join(f"{e}: {d}" for e, d in devices.items()) + ". Error bars: the "
           "order-statistic interval of the median of per-round ratios (runs interleaved, paired by round).")
    if cpu:
        f.mark_cpu_served()
    return f


def sm90_figure(rows, caption, styles):
    """sm_90 registers against peak_live (hollow: the kernel spills), one point per distinct register kernel."""
    kern = [r for r in rows if _num(r.get("sm90_registers")) is not None and r["strategy"] != "plain"
            and not r.get("same_plan_as") and not r.get("engine")]
    if not kern:
        return None
    f = style.Figure(1, 1)
    ax = f.axes[0]
    for s in styles.order_of({r["strategy"] for r in kern}):
        mine = [r for r in kern if r["strategy"] == s]
        st = {k: v for k, v in styles[s].items() if k != "linestyle"}
        for part, face, lab in (([r for r in mine if not float(r["sm90_spill_bytes"])], st["color"], s),
                                ([r for r in mine if float(r["sm90_spill_bytes"])], "none", "_" + s)):
            if part:
                ax.plot([float(r["peak_live"]) for r in part], [float(r["sm90_registers"]) for r in part],
                        linestyle="", markerfacecolor=face, label=lab if part else "_", **st)
    _log_if_decades(ax, "x", [float(r["peak_live"]) for r in kern])
    ax.set(xlabel="peak_live (values)", ylabel="sm_90 registers per thread", title="NVRTC sm_90, compile only")
    f.note(caption)
    f.note("Hollow markers: the kernel spills (ptxas spill stores > 0). Register kernels, fp32, value and Greeks, "
           "one market, the cuda engine's defaults.")
    return f


def save_figure(f, path, inputs):
    """Lays out, checks (style.FigureError names the rule broken) and writes one figure."""
    fig = f.finish()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None}, bbox_inches="tight", pad_inches=0.03)
    style.plt.close(fig)
    output.write_bytes(path, buf.getvalue(), inputs)
    return fig
