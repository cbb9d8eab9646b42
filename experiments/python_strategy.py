#!/usr/bin/python3
"""A cut strategy written in Python, against the built-in ones.

live_minima: every ~n/segments nodes, cut where the live count (the values a cut
there must keep: tape.live_across()) is least within half a segment of the
target, ties to the target; the article's window strategy in a few lines of
NumPy, with a window twice as wide. live_minima_nested cuts each of its
segments once more at its own least live count (a two-level plan).

Compared with every built-in strategy
  1. on plan metrics (peak_live, persistent, recompute_cost; planner/metrics.h)
     over segment counts, on the 252-step Asian and a 5-asset basket;
  2. on speed: paths/s on cpu-jit and Vulkan of the plain kernel and of the
     register-checkpointed kernel of each strategy at one segment count (median
     of --repeats runs after a warm-up on another seed), each checked
     bit-identical to the plain kernel (exit 1 if not). Without a GPU, Vulkan
     runs on lavapipe, a CPU: its times say nothing about GPUs.
Writes metrics.csv, speed.csv and python_strategy.png to --out.

usage: python_strategy.py [--out DIR] [--quick] [--engines cpu-jit,vulkan] [--paths N] [--repeats R] [--segments S]
--quick: a 32-step Asian, three segment counts, a few strategies, 2,000 paths (CTest runs it).
Needs the tapelab module (README.md: Python) and python3-matplotlib.
"""
import argparse
import csv
import os
import statistics
import sys

import numpy as np

import tapelab


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
            seconds = statistics.median(r.seconds for r in results)
            r = results[0]
            if strategy == "plain":
                plain_result = r
            identical = bool(np.array_equal(r.values, plain_result.values)
                             and np.array_equal(r.greek_array, plain_result.greek_array))
            if not identical:
                mismatches.append(f"{engine} {strategy}")
            stats = k.stats
            rows.append({"engine": engine, "precision": k.precision, "strategy": strategy, "kind": k.kind,
                         "segments": k.plan.segments, "depth": k.plan.depth, "peak_live": k.plan.metrics.peak_live,
                         "paths": paths, "seconds": seconds, "paths_per_second": paths / seconds,
                         "registers": stats.registers, "spill_bytes": stats.spill_bytes,
                         "compile_seconds": stats.compile_seconds, "cache_hit": stats.cache_hit,
                         "identical_to_plain": identical, "value": r.value})
            print(f"{engine:8s} {strategy:28s} {k.kind:8s} {paths / seconds / 1e3:10.1f} kpath/s  "
                  f"compile {stats.compile_seconds:6.2f} s{' (cache)' if stats.cache_hit else ''}  "
                  f"{'bit-identical to plain' if identical else 'DIFFERS FROM PLAIN'}", flush=True)
    return rows, mismatches


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def plot(path, metrics, speed, tapes):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(tapes) + 1, 2, figsize=(14, 4.2 * (len(tapes) + 1)), squeeze=False)
    for row, tape in enumerate(tapes):
        mine = [m for m in metrics if m["tape"] == tape.name]
        plain = next(m for m in mine if m["strategy"] == "plain")
        for col, key in enumerate(("peak_live", "recompute_cost")):
            ax = axes[row][col]
            for strategy in dict.fromkeys(m["strategy"] for m in mine if m["strategy"] != "plain"):
                pts = sorted((m["requested"], m[key]) for m in mine if m["strategy"] == strategy)
                python = strategy.startswith("python:")
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o--" if python else ".-", lw=2 if python else 1,
                        ms=5 if python else 3, alpha=0.85 if python else 1, label=strategy, zorder=3 if python else 2)
            if key == "peak_live":
                ax.axhline(plain[key], color="grey", ls=":", lw=1, label="plain kernel")
                ax.set_yscale("log")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("segments (requested; revolve: snapshots)")
            ax.set_ylabel(key)
            ax.set_title(f"{tape.name} ({len(tape)} nodes): {key}")
            ax.grid(alpha=0.3)
        handles, labels = axes[row][0].get_legend_handles_labels()
        axes[row][1].legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    engines = list(dict.fromkeys(s["engine"] for s in speed))
    for col, engine in enumerate(engines[:2]):
        ax = axes[-1][col]
        rows = [s for s in speed if s["engine"] == engine]
        colors = ["tab:red" if r["strategy"].startswith("python:") else "tab:grey" if r["strategy"] == "plain"
                  else "tab:blue" for r in rows]
        ax.barh([r["strategy"] for r in rows], [r["paths_per_second"] / 1e3 for r in rows], color=colors)
        ax.invert_yaxis()
        ax.set_xlabel("kpath/s (median)")
        ax.set_title(f"{engine} ({rows[0]['precision']}), {tapes[0].name}, {rows[-1]['segments']} segments, "
                     f"{rows[0]['paths']} paths", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    for col in range(len(engines), 2):
        axes[-1][col].axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="python_strategy_out", help="output directory (created)")
    ap.add_argument("--quick", action="store_true", help="small tape, few strategies and paths (CTest)")
    ap.add_argument("--engines", default="cpu-jit,vulkan")
    ap.add_argument("--paths", type=int)
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--segments", type=int, help="segment count of the timed kernels (default 16; quick 4)")
    a = ap.parse_args()
    builtin = list(tapelab.strategies())
    if a.quick:
        tapes = [tapelab.product("asian", steps=32)]
        strategies = ["uniform", "window", "optimal", "two-level", "revolve", *PYTHON]
        counts, timed = [2, 4, 8], ["window", *PYTHON]
        paths, repeats, segments = a.paths or 2000, a.repeats or 1, a.segments or 4
    else:
        tapes = [tapelab.product("asian", steps=252), tapelab.product("basket", steps=64, assets=5)]
        strategies = [s for s in builtin if s != "auto"] + list(PYTHON)  # auto picks its own count
        counts, timed = [2, 3, 4, 6, 8, 12, 16, 24, 32], ["window", "marginal", "optimal", "two-level", *PYTHON]
        paths, repeats, segments = a.paths or 100000, a.repeats or 3, a.segments or 16
    usable = {e["name"]: e for e in tapelab.engines()}
    engines = []
    for e in a.engines.split(","):
        if e not in usable:
            sys.exit(f"python_strategy: unknown engine '{e}'")
        if usable[e]["usable"]:
            engines.append(e)
        else:
            print(f"python_strategy: skipping {e}: {usable[e]['reason']}", file=sys.stderr)
    os.makedirs(a.out, exist_ok=True)
    metrics = metrics_rows(tapes, strategies, counts)
    write_csv(os.path.join(a.out, "metrics.csv"), metrics)
    speed, mismatches = speed_rows(tapes[0], timed, engines, segments, paths, repeats)
    if speed:
        write_csv(os.path.join(a.out, "speed.csv"), speed)
    plot(os.path.join(a.out, "python_strategy.png"), metrics, speed, tapes)
    print(f"wrote {a.out}/metrics.csv, speed.csv, python_strategy.png")
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
    sys.exit(main())
