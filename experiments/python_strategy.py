#!/usr/bin/python3
"""A cut strategy written in Python, against the built-in ones.

live_minima: every ~n/segments nodes, cut where the live count (the values a cut
there must keep: tape.live_across()) is least within half a segment of the
target, ties to the target; the article's window strategy in a few lines of
NumPy, with a window twice as wide. live_minima_nested cuts each of its
segments once more at its own least live count (a two-level plan).

Compared with every built-in strategy
  1. on plan metrics (peak_live, persistent, recompute_cost; planner/metrics.h)
     over segment counts, on the 252-step Asian and a 5-asset basket, or on
     your tapes (--tape FILE, --product NAME: repeatable, the CLI's meaning);
  2. on speed: paths/s on cpu-jit and Vulkan of the plain kernel and of the
     register-checkpointed kernel of each strategy at one segment count, on the
     first tape (median of --repeat runs after a warm-up on another seed, with
     the fastest and slowest run beside it: ms, ms_min, ms_max), each checked
     bit-identical to the plain kernel (exit 1 if not). Without a GPU, Vulkan
     runs on lavapipe, a CPU: its times say nothing about GPUs.
Writes metrics.csv, speed.csv and python_strategy.png (drawn through
papers/style.py) to --out, by default $TMPDIR/tapelab-python_strategy (never
the source tree).

usage: python_strategy.py [--out DIR] [--quick] [--tape FILE ...] [--product NAME ...] [--steps N]
                          [--engines cpu-jit,vulkan] [--paths N] [--repeat R] [--segments S]
--quick: a 32-step Asian (or the tapes given), three segment counts, a few strategies, 2,000 paths
(CTest runs it).
Needs the tapelab module (README.md: Python) and python3-matplotlib.
"""
import argparse
import csv
import io
import os
import statistics
import sys
import tempfile

import numpy as np

import tapelab

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "drivers"))
import careful  # noqa: E402  (every file this driver writes goes through it)

PAPERS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "papers")
DEFAULT_OUT = os.path.join(tempfile.gettempdir(), "tapelab-python_strategy")


def live_minima(tape, segments):
    live = tape.live_across()
    n = len(tape)
    half = n / (2 * segments)
    cuts = []
    for s in range(1, segments):
        target = s * n / segments
        lo = max(int(np.ceil(target - half)), cuts[-1] + 1 if cuts else 1)
        hi = min(int(target + half), n - 1)
        if lo > hi:
            continue
        window = live[lo:hi + 1]
        best = np.flatnonzero(window == window.min()) + lo
        cuts.append(int(best[np.argmin(np.abs(best - target))]))
    return cuts


def live_minima_nested(tape, segments):
    live = tape.live_across()
    cuts = live_minima(tape, segments)
    bounds = [0, *cuts, len(tape)]
    inner = []
    for lo, hi in zip(bounds, bounds[1:]):
        if hi - lo < 8:
            inner.append(None)
            continue
        a, b = lo + (hi - lo) // 4, hi - (hi - lo) // 4  # the middle half of the segment
        inner.append([a + int(np.argmin(live[a:b]))])
    return {"cuts": cuts, "inner": inner}


PYTHON = {"python:live_minima": live_minima, "python:live_minima_nested": live_minima_nested}


def make_plan(tape, strategy, segments):
    if strategy in PYTHON:
        return tapelab.plan(tape, PYTHON[strategy], segments=segments, name=strategy)
    return tapelab.plan(tape, strategy, segments=segments)


def metrics_rows(tapes, strategies, counts):
    rows = []
    for tape in tapes:
        plain = tapelab.plan(tape, "uniform", segments=1).metrics
        rows.append({"tape": tape.name, "nodes": len(tape), "strategy": "plain", "requested": 1, **plain.to_dict(),
                     "plan_seconds": 0.0})
        for strategy in strategies:
            for count in counts:
                if count > len(tape):
                    continue
                p = make_plan(tape, strategy, count)
                rows.append({"tape": tape.name, "nodes": len(tape), "strategy": strategy, "requested": count,
                             **p.metrics.to_dict(), "plan_seconds": p.seconds})
        print(f"{tape.name}: {len(tape)} nodes, {len(strategies)} strategies x {len(counts)} counts planned",
              flush=True)
    return rows


def speed_rows(tape, strategies, engines, segments, paths, repeats):
    rows, mismatches = [], []
    seed = 42
    for engine in engines:
        plain_result = None
        for strategy in ["plain", *strategies]:
            if strategy == "plain":
                k = tapelab.compile(tape, engine, checkpoint="off")
            else:
                k = tapelab.compile(tape, engine, plan=make_plan(tape, strategy, segments))
            k.run(paths=paths, seed=seed + 1)  # warm-up on another seed
            results = [k.run(paths=paths, seed=seed) for _ in range(repeats)]
            times = [r.seconds for r in results]
            seconds = statistics.median(times)
            r = results[0]
            if strategy == "plain":
                plain_result = r
            identical = bool(np.array_equal(r.values, plain_result.values)
                             and np.array_equal(r.greek_array, plain_result.greek_array))
            if not identical:
                mismatches.append(f"{engine} {strategy}")
            stats = k.stats
            ran = r.to_dict()  # the kernel configuration and math contract every speed row names
            rows.append({"tape": tape.name, "nodes": len(tape), "engine": engine, "precision": k.precision,
                         "math": ran["math"], "config": ran["config"], "strategy": strategy, "kind": k.kind,
                         "segments": k.plan.segments, "depth": k.plan.depth, "peak_live": k.plan.metrics.peak_live,
                         "paths": paths, "repeat": repeats, "seconds": seconds, "ms": 1e3 * seconds,
                         "ms_min": 1e3 * min(times), "ms_max": 1e3 * max(times), "paths_per_second": paths / seconds,
                         "registers": stats.registers, "spill_bytes": stats.spill_bytes,
                         "compile_seconds": stats.compile_seconds, "cache_hit": stats.cache_hit,
                         "identical_to_plain": identical, "value": r.value})
            print(f"{engine:8s} {strategy:28s} {k.kind:8s} {paths / seconds / 1e3:10.1f} kpath/s "
                  f"({1e3 * min(times):.2f}..{1e3 * max(times):.2f} ms)  "
                  f"compile {stats.compile_seconds:6.2f} s{' (cache)' if stats.cache_hit else ''}  "
                  f"{'bit-identical to plain' if identical else 'DIFFERS FROM PLAIN'}", flush=True)
    return rows, mismatches


def write_csv(path, rows, inputs):
    text = io.StringIO()
    w = csv.DictWriter(text, fieldnames=list(rows[0]), lineterminator="\r\n")  # csv's own default, as before
    w.writeheader()
    w.writerows(rows)
    careful.write_output(path, text.getvalue(), inputs, "--out")


def plot(path, metrics, speed, tapes, cpu_served, inputs):
    """Each tape's peak_live and recompute_cost over segment counts, then paths/s per strategy on each engine
    (median, bars from the fastest to the slowest run), through papers/style.py."""
    sys.path.insert(0, PAPERS)
    import style

    engines = list(dict.fromkeys(s["engine"] for s in speed))[:2]
    rows = len(tapes) + (1 if engines else 0)
    f = style.Figure(rows, 2, panel_h=style.PANEL_H + 0.3)
    styles = style.Styles()  # a strategy looks the same in every panel; the plain kernel is black
    for row, tape in enumerate(tapes):
        mine = [m for m in metrics if m["tape"] == tape.name]
        plain = next(m for m in mine if m["strategy"] == "plain")
        for col, key in enumerate(("peak_live", "recompute_cost")):
            ax = f.axes[2 * row + col]
            data = {}
            for m in mine:
                if m["strategy"] != "plain":
                    data.setdefault(m["strategy"], []).append((m["requested"], m[key], None, None))
            style.lines(ax, {k: sorted(v) for k, v in data.items()}, styles)
            if key == "peak_live":
                ax.axhline(plain[key], color="k", linestyle=":", linewidth=1, label="plain kernel")
                ax.set_yscale("log")
            style.ticks_at(ax, [m["requested"] for m in mine if m["strategy"] != "plain"])
            ax.set_xlabel("segments (revolve: snapshots)")
            ax.set_ylabel(key)
            ax.set_title(f"{tape.name}: {key}")
    for col in range(2):
        if col >= len(engines):
            if engines:
                ax = f.axes[2 * len(tapes) + col]
                f.fig.delaxes(ax)
                f.axes.remove(ax)
            continue
        engine = engines[col]
        ax = f.axes[2 * len(tapes) + col]
        mine = [s for s in speed if s["engine"] == engine]
        ys = [r["paths_per_second"] / 1e3 for r in mine]
        spreads = [style.spread(y, r["ms"], r["ms_min"], r["ms_max"]) for y, r in zip(ys, mine)]
        err = [[y - lo for y, (lo, _) in zip(ys, spreads)], [hi - y for y, (_, hi) in zip(ys, spreads)]]
        colors = ["k" if r["strategy"] == "plain" else styles[r["strategy"]]["color"] for r in mine]
        bars = ax.barh([r["strategy"] for r in mine], ys, xerr=err, color=colors, error_kw={"elinewidth": 0.8})
        for bar, r in zip(bars, mine):
            if r["strategy"].startswith("python:"):
                bar.set_hatch("////")
                bar.set_edgecolor("white")
        ax.invert_yaxis()
        ax.set_xlabel("kpath/s (median, min to max)")
        ax.set_title(f"{engine}: {mine[-1]['segments']} segments")  # the contract in a note: a title fits its panel
        f.timings = True
    f.note("Tapes: " + ", ".join(f"{t.name} ({len(t):,} nodes)" for t in tapes) + ".")
    if engines:
        r = speed[0]
        f.note(f"Speed: {r['tape']}, {r['paths']:,} paths, median of {r['repeat']} run(s) after a warm-up on "
               "another seed; error bars from the fastest to the slowest run; Python strategies hatched.")
        f.note("Contracts: " + ", ".join(
            f"{e} {m['precision']} math={m['math']}" for e in engines
            for m in [next(s for s in speed if s["engine"] == e)]) + ".")
    else:
        f.note("No speed panels: no timed engine is usable here.")
    if cpu_served:
        f.mark_cpu_served()
    style.save(f.finish(), path, inputs, "--out")


def load_tapes(a):
    """--tape FILE and --product NAME, in the order given (the CLI's meaning; --steps for every product)."""
    tapes = []
    for kind, what in a.tapes:
        try:
            tapes.append(tapelab.read_tape(what) if kind == "tape" else tapelab.product(what, steps=a.steps))
        except (ValueError, RuntimeError) as e:
            bad_input(f"--{kind} {what}: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
    names = [t.name for t in tapes]
    for name in names:
        if names.count(name) > 1:
            bad_input(f"two tapes are named '{name}' (the CSV's rows are keyed by name)")
    return tapes


def bad_input(message):
    """A one-line error naming the flag, exit 2 (as the CLI's bad input)."""
    raise careful.BadInput(message)


class _Tape(argparse.Action):
    def __call__(self, parser, namespace, value, option):
        getattr(namespace, self.dest).append((option.lstrip("-"), value))


def main(argv):
    ap = careful.Parser(prog="python_strategy", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help=f"output directory, created (default {DEFAULT_OUT})")
    ap.add_argument("--quick", action="store_true", help="small tape, few strategies and paths (CTest)")
    ap.add_argument("--tape", dest="tapes", metavar="FILE", action=_Tape, default=[],
                    help="a .tape file of your own (repeatable); replaces the built-in tapes, the first is timed")
    ap.add_argument("--product", dest="tapes", metavar="NAME", action=_Tape,
                    help="a product's tape (tapelab products; repeatable), as tapelab price --product NAME")
    ap.add_argument("--steps", type=careful.integer(1, 1000000), help="--product's steps (default the product's)")
    ap.add_argument("--engines", default="cpu-jit,vulkan")
    ap.add_argument("--paths", type=careful.integer(1, 2**48))
    ap.add_argument("--repeat", "--repeats", dest="repeat", type=careful.integer(1, 1000),
                    help="timed runs per kernel (default 3; quick 1): the median, fastest and slowest are recorded")
    ap.add_argument("--segments", type=careful.integer(1, 1 << 20),
                    help="segment count of the timed kernels (default 16; quick 4)")
    a = ap.parse_args(argv)
    for flag, v in (("--paths", a.paths), ("--repeat", a.repeat), ("--segments", a.segments), ("--steps", a.steps)):
        if v is not None and v < 1:
            bad_input(f"{flag}: expected a positive integer, got {v}")
    if a.steps is not None and not any(kind == "product" for kind, _ in a.tapes):
        bad_input("--steps: applies to --product only (a --tape has its own steps)")
    own = load_tapes(a)
    builtin = list(tapelab.strategies())
    if a.quick:
        tapes = own or [tapelab.product("asian", steps=32)]
        strategies = ["uniform", "window", "optimal", "two-level", "revolve", *PYTHON]
        counts, timed = [2, 4, 8], ["window", *PYTHON]
        paths, repeats, segments = a.paths or 2000, a.repeat or 1, a.segments or 4
    else:
        tapes = own or [tapelab.product("asian", steps=252), tapelab.product("basket", steps=64, assets=5)]
        strategies = [s for s in builtin if s != "auto"] + list(PYTHON)  # auto picks its own count
        counts, timed = [2, 3, 4, 6, 8, 12, 16, 24, 32], ["window", "marginal", "optimal", "two-level", *PYTHON]
        paths, repeats, segments = a.paths or 100000, a.repeat or 3, a.segments or 16
    if segments > len(tapes[0]):
        bad_input(f"--segments {segments}: more than the timed tape's {len(tapes[0])} nodes")
    usable = {e["name"]: e for e in tapelab.engines()}
    engines = []
    for e in a.engines.split(","):
        if e not in usable:
            bad_input(f"--engines: unknown engine '{e}'")
        if usable[e]["usable"]:
            engines.append(e)
        else:
            print(f"python_strategy: skipping {e}: {usable[e]['reason']}", file=sys.stderr)
    try:
        os.makedirs(a.out, exist_ok=True)
    except OSError as e:
        bad_input(f"--out {a.out}: {e.strerror}")
    inputs = [what for kind, what in a.tapes if kind == "tape"]  # never written over (careful.py)
    outputs = [os.path.join(a.out, name) for name in ("metrics.csv", "speed.csv", "python_strategy.png")]
    for path in outputs:
        careful.check_output(path, inputs, "--out")  # refused before the run, not after it
    metrics = metrics_rows(tapes, strategies, counts)
    write_csv(outputs[0], metrics, inputs)
    speed, mismatches = speed_rows(tapes[0], timed, engines, segments, paths, repeats)
    if speed:
        write_csv(outputs[1], speed, inputs)
    elif os.path.isfile(outputs[1]) and not os.path.islink(outputs[1]):
        os.remove(outputs[1])  # an earlier run's: not this run's tape
    cpu_served = any(e == "cpu-jit" or usable[e].get("cpu_device") for e in engines[:2])
    plot(outputs[2], metrics, speed, tapes, cpu_served, inputs)
    print(f"wrote {a.out}/metrics.csv, {'speed.csv, ' if speed else ''}python_strategy.png")
    count = counts[len(counts) // 2]
    for tape in tapes:
        row = {m["strategy"]: m for m in metrics if m["tape"] == tape.name and m["requested"] == count}
        print(f"{tape.name} at {count} segments, peak_live / recompute_cost: " + ", ".join(
            f"{s} {row[s]['peak_live']} / {row[s]['recompute_cost']:.0f}"
            for s in ("window", "optimal", "two-level", *PYTHON) if s in row))
    if mismatches:
        print("python_strategy: not bit-identical to plain: " + ", ".join(mismatches), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(careful.run_main("python_strategy", main, sys.argv[1:]))
