#!/usr/bin/env python3
"""The researcher's bench: strategies x tapes x segment counts x engines, in one CSV, one table, figures.

    experiments/bench.py --python mine.py --tapes cev,heston,barrier --segments 4,8,16 --engines cpu-jit

Strategies: --strategies (default all: every built-in, from the registry), each function of --python
FILE.py[:FN+FN] (FN(tape, segments) -> cuts, as tapelab.plan takes), each --strategy-cmd "COMMAND" (a
process writing a plan file, docs/strategies.md). Tapes: --tapes NAME[:PARAM=V:...],... (the catalog:
`tapelab tape --help`), --tape FILE.tape or FILE.py:FN (a recording; repeatable).
For every tape, strategy and segment count: the plan's metrics (peak_live, persistent, recompute, depth;
planner/metrics.h), the time it took, and its gap: weighted recompute over the least of any plan of the
run with no more peak_live (--exact adds the per-value optimum at each of your plans' peak_live).
--cuda: sm_90 registers, spill-store bytes and PTX instructions of each register kernel (NVRTC, compile
only). --engines: each engine times the plain kernel and the kernels of --timed (default: your strategies,
window and optimal; `all`): compiled first, then --repeats rounds interleaved (rotated, every other round
reversed) after a warm-up; the median ms with its 95% order-statistic interval, and plain ms / ms as the
median of per-round ratios with its interval; every run's value and Greeks must equal the plain kernel's
(exit 1 if not). All in fp32 (benchlib.PRECISION). A ratio whose interval holds 1 is flagged; so is a
median whose interval is wider than 10%.
Writes bench.csv, bench.md (the table) and figures (bench_pareto.png, the headline; bench_speed.png;
bench_sm90.png with --cuda) to --out (default $TMPDIR/tapelab-bench), each after every tape, so a run cut
short (Ctrl-C) keeps what it measured, and says so. Exit 2 on bad input (one line), 1 if bits differ.
"""
import argparse
import concurrent.futures
import os
import signal
import sys
import tempfile
import time

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import tapelab  # noqa: E402
except ImportError:  # run from the source tree without the venv or PYTHONPATH: the ci build's staged module
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "build", "ci", "python"))
    import tapelab  # noqa: E402
from benchlib import PRECISION, report, sources, timing  # noqa: E402
from benchlib import sm90 as benchsm90  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
DEFAULT_OUT = os.path.join(tempfile.gettempdir(), "tapelab-bench")


def say(text):
    print("bench: " + text, file=sys.stderr, flush=True)


def metrics_row(label, tape, strategy, n, plan, seconds):
    m = plan.metrics
    fam = "per-value" if '"per-value"' in plan.to_json() else ("nested" if plan.nested else "segment")
    return {"tape": label, "nodes": len(tape), "strategy": strategy.name if strategy else "plain",
            "source": strategy.kind if strategy else "plain", "requested_segments": n, "segments": m.segments,
            "family": fam, "depth": m.depth, "peak_live": m.peak_live, "persistent": m.persistent,
            "recompute_ops": m.recompute_ops, "recompute_cost": round(m.recompute_cost, 1), "plan_s": round(seconds, 4)}


def plan_tape(label, tape, strategies, counts, a):
    """Rows and plans of every strategy at every count; a strategy that fails here is a row with its note."""
    plain = tapelab.plan(tape, cuts=[], name="plain")
    rows, plans = [metrics_row(label, tape, None, 1, plain, 0.0)], {("plain", 1): plain}
    for s in strategies:
        for n in counts:
            if n >= len(tape):
                continue
            t0 = time.perf_counter()
            try:
                p = s.plan(tape, n)
            except tapelab.EngineUnavailable as e:  # a process that cannot run here (a missing solver): exit 3
                say(f"{s.name}: {str(e).splitlines()[0]}")
                raise SystemExit(3) from None
            except (ValueError, RuntimeError) as e:
                if s.user and isinstance(e, ValueError) and "raised" in str(e):
                    raise sources.InputError(str(e).replace("tapelab: ", "")) from None
                rows.append({"tape": label, "nodes": len(tape), "strategy": s.name, "source": s.kind,
                             "requested_segments": n, "note": str(e).splitlines()[0][:200]})
                continue
            row = metrics_row(label, tape, s, n, p, time.perf_counter() - t0)
            same = None  # an earlier strategy's plan with the same cuts and kept values: the same kernel
            for k, q in plans.items():
                if k[0] != "plain" and q.same_cuts(p) and q.persistent == p.persistent:
                    same = k
                    break
            row["same_plan_as"] = f"{same[0]} {same[1]}" if same else ""
            plans[(s.name, n)] = p
            rows.append(row)
    return rows, plans


def exact_rows(label, tape, rows, a, work):
    """exact at the peak_live of each of your strategies' plans (its blocks: optimal's cuts at that count)."""
    out = []
    for r in [r for r in rows if r.get("source") in ("python", "process") and r.get("peak_live")]:
        n, budget = int(r["requested_segments"]), int(r["peak_live"])
        try:
            p, solver = sources.exact_plan(a.tapelab_bin, work, tape, n, budget, a.solve_seconds)
        except tapelab.EngineUnavailable as e:
            say(f"--exact: skipped: {e}")
            return out
        except RuntimeError as e:
            out.append({"tape": label, "nodes": len(tape), "strategy": "exact", "source": "exact",
                        "requested_segments": n, "note": f"budget {budget}: {str(e)[:160]}"})
            continue
        row = metrics_row(label, tape, None, n, p, 0.0)
        row.update({"strategy": "exact", "source": "exact",
                    "note": f"budget {budget} (peak_live of {r['strategy']} {n}); {solver}"})
        out.append(row)
    return out


def fill_gaps(rows):
    """best_known_cost and gap of every row with metrics: against the least recompute of any plan of its
    tape with no more peak_live."""
    for r in rows:
        if r.get("peak_live") in (None, ""):
            continue
        best = min(float(q["recompute_cost"]) for q in rows if q["tape"] == r["tape"] and q.get("peak_live") not in
                   (None, "") and int(q["peak_live"]) <= int(r["peak_live"]))
        r["best_known_cost"] = best
        cost = float(r["recompute_cost"])
        r["gap"] = round(cost / best - 1, 4) if best > 0 else (0.0 if cost == 0 else "inf")  # inf: plain fits too


def sm90(tape, rows, plans, a, work):
    """sm_90 registers, spill-store bytes and static PTX instructions of each distinct register kernel (the cuda
    engine through experiments/gpu_kernels, compile-only here; benchlib/sm90.py), into the metrics rows."""
    tape_file = os.path.join(work, f"sm90-{tape.structure[:16]}.tape")
    tape.write(tape_file)
    for r in rows:
        key = (r["strategy"], int(r.get("requested_segments") or 0))
        if r.get("same_plan_as") or key not in plans:
            continue
        plan_file = None
        if key[0] != "plain":
            plan_file = os.path.join(work, f"sm90-{len(os.listdir(work))}.json")
            plans[key].write(plan_file)
        dump = tempfile.mkdtemp(dir=work)
        st = benchsm90.compile_sm90(a.gpu_kernels, tape_file, plan_file, "", None, 900, dump=dump)
        if "error" in st:
            r["note"] = "; ".join(x for x in (r.get("note"), f"sm_90: {st['error'][:120]}") if x)
            continue
        r["sm90_registers"], r["sm90_spill_bytes"] = st["registers"], st["spill_bytes"]
        ptx = benchsm90.ptx_of(open(st["source"], encoding="utf-8").read()) if st.get("source") else None
        r["sm90_ptx_instructions"] = benchsm90.ptx_counts(ptx)["ptx_instructions"] if ptx else ""
        say(f"sm_90 {r['tape']} {key[0]} {key[1]}: {st['registers']} registers, {st['spill_bytes']} B spill stores")
    by = {(r["strategy"], str(r["requested_segments"])): r for r in rows}
    for r in rows:
        if r.get("same_plan_as"):
            src = by.get(tuple(r["same_plan_as"].split(" ")))
            for c in ("sm90_registers", "sm90_spill_bytes", "sm90_ptx_instructions"):
                r[c] = (src or {}).get(c, "")


def time_engine(label, tape, engine, device, keys, plans, a, warnings):
    """Timed rows of `keys` (plain first) on `engine`: compiled, then interleaved rounds."""
    kernels, rows = {}, []
    t0 = time.perf_counter()

    def build(key):  # the GIL is released while a kernel compiles: one per core at once
        return tapelab.compile(tape, engine, plan=plans[key], precision=PRECISION,
                               kernel="plain" if key[0] == "plain" else "register")
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        futures = {pool.submit(build, key): key for key in keys}
        for i, done in enumerate(concurrent.futures.as_completed(futures)):
            key = futures[done]
            try:
                kernels[key] = done.result()
            except tapelab.EngineUnavailable as e:
                rows.append({"key": key, "engine": engine, "device": device,
                             "note": f"{engine}: {str(e).splitlines()[0][:160]}"})
            took = time.perf_counter() - t0
            say(f"{label}: {engine}: compiled {i + 1} of {len(keys)} kernels, {took:.0f} s "
                f"(about {took / (i + 1) * (len(keys) - i - 1):.0f} s to go)")
    if ("plain", 1) not in kernels:
        return rows
    first, differ = {}, set()

    def runner(key):
        k = kernels[key]

        def run():
            r = k.run(paths=a.paths, seed=42)
            bits = (r.values.tobytes(), np.asarray(r.greek_array).tobytes())
            first.setdefault(("plain", 1), bits) if key == ("plain", 1) else None
            if first.get(("plain", 1)) is not None and bits != first[("plain", 1)]:
                differ.add(key)
            return r.seconds
        return run
    order = [k for k in keys if k in kernels]  # plain first (keys' order), whatever order the compiles ended in
    samples = timing.interleaved({k: runner(k) for k in order}, a.repeats, warmup=1,
                                 progress=lambda r, n: say(f"{label}: {engine}: round {r} of {n}") if r == n else None)
    plain = samples[("plain", 1)]
    for key in order:
        ms = timing.Stat([s * 1e3 for s in samples[key]])
        row = {"key": key, "engine": engine, "device": device, "precision": PRECISION, "paths": a.paths,
               "rounds": a.repeats, "ms": ms.value, "ms_lo": ms.low, "ms_hi": ms.high, "ms_min": ms.min,
               "ms_max": ms.max, "coverage": round(ms.coverage, 3), "bits": "DIFFER" if key in differ else "same"}
        if ms.noisy():
            warnings.append(f"{label} {key[0]} {key[1]} on {engine}: median {ms.value:.3g} ms, interval "
                            f"[{ms.low:.3g}, {ms.high:.3g}] ({100 * ms.spread:.0f}% wide): noisy")
        if key != ("plain", 1):
            rt = timing.ratio(plain, samples[key])
            row.update({"vs_plain": rt.value, "vs_plain_lo": rt.low, "vs_plain_hi": rt.high,
                        "resolved": "no" if rt.holds(1.0) else "yes"})
            v = timing.verdict(rt, f"{label} {key[0]} {key[1]} on {engine} against plain")
            if v:
                warnings.append(v)
        rows.append(row)
    for r in rows:
        for c in ("ms", "ms_lo", "ms_hi", "ms_min", "ms_max", "vs_plain", "vs_plain_lo", "vs_plain_hi"):
            if isinstance(r.get(c), float):
                r[c] = round(r[c], 6)
    if differ:
        warnings.append(f"{label} on {engine}: NOT bit-identical to plain: {sorted(differ)}")
    return rows


def parse(argv):
    ap = argparse.ArgumentParser(prog="bench.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("--strategies", default="all", help="built-in names, `all`, or FILE.py[:FN] (default all)")
    ap.add_argument("--python", action="append", default=[], metavar="FILE.py[:FN+FN]", help="your strategies (repeatable)")
    ap.add_argument("--strategy-cmd", action="append", default=[], metavar="COMMAND",
                    help="a strategy process writing a plan file (repeatable)")
    ap.add_argument("--tapes", default="", help="catalog products NAME[:PARAM=V:...],... (tapelab tape --help)")
    ap.add_argument("--tape", action="append", default=[], metavar="FILE", help="FILE.tape or FILE.py:FN (repeatable)")
    ap.add_argument("--segments", default="4,8,16", help="segment counts (default 4,8,16)")
    ap.add_argument("--engines", default="cpu-jit", help="engines that time kernels (default cpu-jit; '' for none)")
    ap.add_argument("--timed", default="user,window,optimal", help="strategies timed: names, `user`, `all`")
    ap.add_argument("--paths", type=int, default=20000, help="paths a run (default 20000)")
    ap.add_argument("--repeats", type=int, default=9,
                    help="interleaved rounds (default 9: the median's 96%% interval is [2nd, 8th] run, one outlier "
                         "each side does not widen it)")
    ap.add_argument("--cuda", action="store_true", help="sm_90 registers, spills and PTX instructions (NVRTC, compile only)")
    ap.add_argument("--gpu-kernels", default=os.path.join(REPO, "build", "ci", "experiments", "gpu_kernels"),
                    help="the gpu_kernels binary, for --cuda (default build/ci/experiments/gpu_kernels)")
    ap.add_argument("--exact", action="store_true", help="the per-value optimum at your plans' peak_live (HiGHS)")
    ap.add_argument("--solve-seconds", type=float, default=20)
    ap.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    ap.add_argument("--tapelab-bin", default=os.path.join(REPO, "build", "ci", "cli", "tapelab"),
                    help="the tapelab command, for --strategy-cmd and --exact (default build/ci/cli/tapelab)")
    ap.add_argument("--quick", action="store_true",
                    help="CI's smoke test: 2,000 paths, segments 2,4,8 (flags given win)")
    a = ap.parse_args(argv)
    if a.quick:
        given = " ".join(argv)
        a.paths = a.paths if "--paths" in given else 2000
        a.segments = a.segments if "--segments" in given else "2,4,8"
    try:
        a.counts = sorted({int(x) for x in a.segments.split(",") if x})
    except ValueError:
        raise sources.InputError(f"--segments: expected counts like 4,8,16, got '{a.segments}'") from None
    if not a.counts or min(a.counts) < 2 or a.paths < 2 or a.repeats < 1:
        raise sources.InputError("--segments take counts >= 2, --paths >= 2, --repeats >= 1")
    if a.cuda and not os.access(a.gpu_kernels, os.X_OK):
        raise sources.InputError(f"--gpu-kernels {a.gpu_kernels}: not an executable (build gpu_kernels) for --cuda")
    if os.path.exists(a.out) and not os.path.isdir(a.out):
        raise sources.InputError(f"--out {a.out}: not a folder (the bench writes bench.csv, bench.md and figures into it)")
    return a


def main(argv):
    a = parse(argv)
    work = tempfile.mkdtemp(prefix="tapelab-bench-")
    spec = ",".join(x for x in [a.strategies] + a.python if x)
    strategies = sources.resolve_strategies(spec, a.tapelab_bin, work, a.strategy_cmd)
    tapes = sources.resolve_tapes(a.tapes, a.tape)
    info = {e["name"]: e for e in tapelab.engines()}
    engines = []
    for e in [x for x in a.engines.split(",") if x]:
        if e not in info:
            raise sources.InputError(f"--engines: unknown engine '{e}' (tapelab engines lists them)")
        if info[e]["usable"]:
            engines.append(e)
        else:
            say(f"{e} skipped: {info[e]['reason']}")
    devices = {e: timing.device_name(e, info[e]) for e in engines}
    inputs = [t[2].split(" ", 1)[1] for t in tapes if not t[2].startswith("product")]
    inputs += [s.origin for s in strategies if s.kind == "python"]
    timed = {x for x in a.timed.split(",") if x}
    state = {"rows": [], "warnings": [], "done": []}
    machine = timing.machine()

    def flush(final=False, cut=None):
        head = [timing.header_line(timing.machine() if final else machine, devices or {"none": "no engine timed"},
                                   PRECISION, a.paths, a.repeats),
                f"tapes {', '.join(t[0] for t in tapes)}; strategies {', '.join(s.name for s in strategies)}; "
                f"segments {','.join(map(str, a.counts))}; commit {commit()}"]
        if cut:
            head.append(f"CUT SHORT ({cut}) after {len(state['done'])} of {len(tapes)} tapes: partial results")
        paths = report.write_all(a.out, state["rows"], head, state["warnings"], inputs)
        figures(a, state["rows"], head, devices, inputs, strategies)
        return paths

    def on_signal(sig, _frame):
        name = signal.Signals(sig).name
        say(f"cut by {name}: writing what was measured ({len(state['done'])} of {len(tapes)} tapes) to {a.out}")
        flush(cut=name)
        raise SystemExit(130)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    t0 = time.perf_counter()
    for index, (label, tape, source) in enumerate(tapes):
        rows, plans = plan_tape(label, tape, strategies, a.counts, a)
        if a.exact:
            rows += exact_rows(label, tape, rows, a, work)
        for r in rows:
            r["_tape_index"] = index
        fill_gaps(rows)
        if a.cuda:
            sm90(tape, rows, plans, a, work)
        def wanted(r):
            return r["strategy"] == "plain" or "all" in timed or r["strategy"] in timed or (
                "user" in timed and r.get("source") in ("python", "process"))

        def kernel_of(r):  # a plan the same as an earlier one is that one's kernel
            if r.get("same_plan_as"):
                name, n = r["same_plan_as"].split(" ")
                return name, int(n)
            return r["strategy"], int(r.get("requested_segments") or 0)
        keys = list(dict.fromkeys(kernel_of(r) for r in rows if wanted(r) and kernel_of(r) in plans))
        keys = [("plain", 1)] + [k for k in keys if k != ("plain", 1)]
        for e in engines:
            timed_rows = {t["key"]: t for t in time_engine(label, tape, e, devices[e], keys, plans, a, state["warnings"])}
            for r in rows:
                t = timed_rows.get(kernel_of(r)) if wanted(r) else None
                if t is not None:
                    note = "; ".join(x for x in (r.get("note"), t.get("note"), f"the kernel of {r['same_plan_as']} (the same "
                                                 "plan)" if r.get("same_plan_as") else "") if x)
                    state["rows"].append({**r, **{k: v for k, v in t.items() if k not in ("key", "note")}, "note": note})
        state["rows"] += rows
        state["rows"].sort(key=lambda r: row_order(r, strategies))
        state["done"].append(label)
        flush()
        say(f"{label}: {len(tape):,} nodes, {len(rows)} plans, {time.perf_counter() - t0:.0f} s so far")
    summarize_noise(state, machine, engines)
    paths = flush(final=True)
    print(open(paths["table"], encoding="utf-8").read())
    say(f"wrote {paths['csv']}, {paths['table']} and figures in {a.out} ({time.perf_counter() - t0:.0f} s)")
    return 1 if any("NOT bit-identical" in w for w in state["warnings"]) else 0


def summarize_noise(state, machine, engines):
    """One line first among the warnings: how many medians were noisy and ratios unresolved, and the load."""
    timed = [r for r in state["rows"] if r.get("engine") and r.get("ms") not in (None, "") and not r.get("same_plan_as")]
    if not timed:
        return
    noisy = sum(1 for w in state["warnings"] if w.endswith(": noisy"))
    unresolved = sum(1 for w in state["warnings"] if w.endswith("not resolved at this noise"))
    load = machine["load"][0]
    busy = f"; the machine was busy (load {load:.1f} on {machine['cpus']} cores): time again on an idle one" \
        if load > machine["cpus"] else ""
    if noisy or unresolved or busy:
        state["warnings"].insert(0, f"{noisy} of {len(timed)} medians noisy (interval over 10% wide), {unresolved} "
                                    f"ratios to plain not resolved{busy}")


def row_order(r, strategies):
    """Tapes as given; in each, plain, then the strategies as given (the registry's order, then yours), by
    segment count; a plan's metrics row before its timed rows."""
    names = ["plain"] + [s.name for s in strategies] + ["exact"]
    name = r["strategy"]
    return (r.get("_tape_index", 0), names.index(name) if name in names else len(names),
            int(r.get("requested_segments") or 0), bool(r.get("engine")), r.get("engine") or "")


def commit():
    import subprocess
    try:
        return subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty", "--abbrev=12"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def figures(a, rows, head, devices, inputs, strategies):
    styles = report.style.StrategyStyles([s.name for s in strategies if s.user])
    cap = head[0].split("; devices")[0]
    made = []
    metric_rows = [r for r in rows if not r.get("engine")]
    if metric_rows:
        made.append(("bench_pareto.png", report.pareto_figure(metric_rows, "Plan metrics (no run): " + head[1], styles)))
    cpu = any(timing.served_by_cpu(e, None) or "llvmpipe" in d or "PoCL" in d for e, d in devices.items())
    f = report.speed_figure(rows, f"Timings: {a.paths:,} paths a run, {PRECISION}, value and Greeks; {cap}.", styles,
                            devices, cpu)
    if f:
        made.append(("bench_speed.png", f))
    f = report.sm90_figure(metric_rows, head[1], styles) if a.cuda else None
    if f:
        made.append(("bench_sm90.png", f))
    for name, fig in made:
        try:
            report.save_figure(fig, os.path.join(a.out, name), inputs)
        except report.style.FigureError as e:  # a figure breaking the paper's rules is a bug here: said, not drawn
            say(f"{name} not drawn: {e}")
            report.style.plt.close(fig.fig)


def run_main(argv):
    """main with bad input as one line and exit 2 (python_strategy.py runs the bench through it)."""
    try:
        return main(argv)
    except (sources.InputError, report.output.OutputError) as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(run_main(sys.argv[1:]))
