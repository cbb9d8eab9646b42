#!/usr/bin/env python3
"""strategies: the register kernel per cut strategy, flat and nested, at equal segment counts.
For each engine, markets per dispatch and segment count, every strategy's plan
(`tapelab plan --strategy S --checkpoint N --out FILE`) runs as scratch_sweep's
register kernel (`--plan FILE`), beside the plain kernel of the same run:
Mpath/s, ratio to plain, registers, spill bytes, bits against plain, and the
plan's own metrics (depth, peak_live, recompute_cost) in the row. mpath_s counts
paths per dispatch (market-paths per second is mpath_s x markets). budget and
auto choose their own count: `requested_segments` is what was asked, `segments`
what the plan has.

--configs defaults,tuned times each point under the engine's default kernel configuration and under
the configuration `tapelab tune --plan FILE` finds for that very plan (the plan kept, each field's
search values tried from the defaults, --tune-seconds per point, not stored in the tuning cache), so a
ranking of strategies can be checked against the configurations a user would run; the column
`configuration` says which, `config` what it was (scratch_sweep's columns: every row records it).

Kernels are compiled first, --compile-jobs side by side (each point a tiny
scratch_sweep run, cut at --point-timeout), then timed one point at a time, so
no compile overlaps a timed run. A point whose compile runs past the limit is
written as a row noting it (revolve at 7 markets takes over 4 minutes with
NVRTC for sm_90: --skip revolve@7 leaves it out instead).

  strategies.py [--engines cuda,vulkan] [--strategies window,uniform,...] [--segments 8,12,16]
                [--markets 1,7] [--skip S@M,...] [--steps 252] [--paths N] [--reps N]
                [--configs defaults,tuned] [--tune-seconds S] [--point-timeout S] [--compile-jobs N]
                [--out FILE.csv] [--quick]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import sweep_driver as sd

NO_SCRATCH = 1 << 30  # a segment length above any tape: scratch_sweep then skips its scratch kernels
DEFAULT_STRATEGIES = "window,uniform,optimal,two-level,revolve,budget"  # flat (3), nested (2), budget's own count
PLAN_COLUMNS = ["depth", "persistent", "peak_live", "recompute_cost"]
CONFIGS = ("defaults", "tuned")


def tuned_config(a, engine, steps, markets, plan_path, seconds):
    """The configuration `tapelab tune` finds for this plan on this engine (its canonical text), or
    (None, why) when the search timed nothing with its plain kernel's bits."""
    cmd = [a.tapelab_bin, "tune", *tape_args(a, steps), "--engine", engine, "--markets",
           str(markets), "--plan", plan_path, "--paths", str(a.paths), "--repeats", str(a.reps), "--budget-seconds",
           str(seconds), "--no-store", "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode == 2:
        sd.bad(f"{' '.join(cmd[1:])}: {p.stderr.strip()}")
    try:
        js = json.loads(p.stdout)
    except ValueError:
        return None, f"tune exit {p.returncode}: {(p.stderr.strip().splitlines() or [''])[-1][:200]}"
    if js.get("winner", 0) < 1:
        return None, "tune timed no candidate with its plain kernel's bits"
    return js["candidates"][js["winner"] - 1]["config"], None


def tape_args(a, steps):
    """The tape for tapelab's commands: --tape FILE, else the Asian at `steps`."""
    return [a.tape] if a.tape else ["--product", "asian", "--steps", str(steps)]


def make_plan(a, steps, strategy, segments, path):
    """`tapelab plan --out path --json`: the plan file and its metrics (planner/metrics.h)."""
    cmd = [a.tapelab_bin, "plan", *tape_args(a, steps), "--strategy", strategy, "--checkpoint", str(segments),
           "--out", path, "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sd.bad(f"{' '.join(cmd[1:])}: {p.stderr.strip() or p.returncode}")
    return json.loads(p.stdout)["plan"]["metrics"]


def skip_pairs(text):
    """'revolve@7,budget@7' -> {(revolve, 7), (budget, 7)}; 'revolve' alone: at every market count."""
    out = set()
    for item in (text or "").split(","):
        if not item:
            continue
        name, _, m = item.partition("@")
        try:
            out.add((name, int(m) if m else None))
        except ValueError:
            sd.bad(f"--skip: expected STRATEGY[@MARKETS],..., got '{text}'")
    return out


def main(argv):
    ap = sd.parser("strategies", __doc__.splitlines()[1])
    ap.set_defaults(engines="cuda,vulkan")
    next(x for x in ap._actions if x.dest == "engines").help = "engines (default cuda,vulkan; --quick cpu-jit,vulkan,opencl)"
    ap.add_argument("--strategies", default=None,
                    help=f"cut strategies, `tapelab plan --help` lists them (default {DEFAULT_STRATEGIES}; "
                         "--quick window,two-level,revolve)")
    ap.add_argument("--segments", default=None, help="segment counts (default 8,12,16; --quick 4)")
    ap.add_argument("--markets", default=None, help="markets per dispatch (default 1,7; --quick 1,2)")
    ap.add_argument("--skip", default="", help="STRATEGY@MARKETS pairs left out, e.g. revolve@7 (STRATEGY alone: all)")
    ap.add_argument("--steps", type=sd.STEPS, default=None, help="time steps (default 252, --quick 16)")
    ap.add_argument("--point-timeout", type=sd.careful.integer(1, 86400), default=None,
                    help="seconds one point's compile or timed run may take (default 300; --quick 120)")
    ap.add_argument("--configs", default="defaults",
                    help="kernel configurations per point: defaults, tuned (tapelab tune for that plan), or both")
    ap.add_argument("--tune-seconds", type=sd.careful.integer(1, 86400), default=None, help="tapelab tune's budget per point (default 120; --quick 60)")
    ap.add_argument("--compile-jobs", type=sd.careful.integer(0, 256), default=None,
                    help="points compiled side by side before timing (default: cores/2; 0: no compile phase)")
    a = sd.finish_args(ap.parse_args(argv), argv)
    if not os.access(a.tapelab_bin, os.X_OK):
        sd.bad(f"--tapelab-bin: {a.tapelab_bin} is not an executable (build the tapelab target)")
    strategies = [s for s in (a.strategies or ("window,two-level,revolve" if a.quick else DEFAULT_STRATEGIES)).split(",") if s]
    counts = sd.int_list(a.segments or ("4" if a.quick else "8,12,16"), "--segments", hi=1 << 20)
    markets = sd.int_list(a.markets or ("1,2" if a.quick else "1,7"), "--markets", hi=8)
    steps = a.steps or (16 if a.quick else 252)
    timeout = a.point_timeout or (120 if a.quick else 300)
    jobs = a.compile_jobs if a.compile_jobs is not None else max(1, (os.cpu_count() or 2) // 2)
    skipped = skip_pairs(a.skip)
    configs = [c for c in a.configs.split(",") if c]
    if not configs or any(c not in CONFIGS for c in configs):
        sd.bad(f"--configs: expected defaults and/or tuned, got '{a.configs}'")
    tune_seconds = a.tune_seconds or (60 if a.quick else 120)

    plan_dir = tempfile.mkdtemp(prefix="tapelab-strategies-")
    plans = {}  # (strategy, segments) -> (path, metrics)
    for s in strategies:
        for n in counts:
            path = os.path.join(plan_dir, f"{s}-{n}.json")
            plans[(s, n)] = (path, make_plan(a, steps, s, n, path))
    sys.stderr.write(f"strategies: {len(plans)} plans of {a.tape or 'asian-' + str(steps)} in {plan_dir}\n")

    w = sd.Writer(a, "strategies", ["steps", "requested_segments", "configuration"] + PLAN_COLUMNS, ["strategies.py"] + argv)
    points = []  # (engine, markets, strategy, segments), in timing order
    for engine in a.engine_list:
        for m in markets:
            for s in strategies:
                if (s, m) in skipped or (s, None) in skipped:
                    sys.stderr.write(f"strategies: {engine} {s} at {m} markets: left out (--skip)\n")
                    continue
                for n in counts:
                    points.append((engine, m, s, n))

    def command(p, **kw):
        engine, m, s, n = p
        return sd.sweep_command(a, engine, steps, m, n, [NO_SCRATCH], plan=plans[(s, n)][0], **kw)

    compile_failed = {}
    if jobs > 0:
        key = lambda p: f"{p[0]} markets {p[1]} {p[2]} {p[3]}"  # noqa: E731
        # First one point per (engine, markets), which compiles that plain kernel once; then the rest side by side.
        first = {}
        for p in points:
            first.setdefault((p[0], p[1]), p)
        rest = [p for p in points if p not in first.values()]
        for wave, per_point in ((list(first.values()), 2), (rest, 1)):
            failed = sd.precompile(a, "strategies", [(key(p), command(p, jobs=per_point)) for p in wave], jobs, timeout)
            compile_failed.update({p: failed[key(p)] for p in wave if key(p) in failed})

    for p in points:
        engine, m, s, n = p
        metrics = plans[(s, n)][1]
        for configuration in configs:
            coords = {"steps": sd.steps_coord(a, steps), "requested_segments": n, "configuration": configuration,
                      **{c: round(metrics[c], 1) for c in PLAN_COLUMNS}}
            label = f"{engine} markets {m} {s} {n} ({configuration})"
            if p in compile_failed:
                sys.stderr.write(f"strategies: {label}: not timed: {compile_failed[p]}\n")
                w.skip(coords, engine=engine, kernel="register", strategy=s, markets=m, notes=f"skipped: {compile_failed[p]}")
                continue
            config = None
            if configuration == "tuned":
                config, why = tuned_config(a, engine, steps, m, plans[(s, n)][0], tune_seconds)
                if why:
                    sys.stderr.write(f"strategies: {label}: not timed: {why}\n")
                    w.skip(coords, engine=engine, kernel="register", strategy=s, markets=m, notes=f"skipped: {why}")
                    continue
                sys.stderr.write(f"strategies: {label}: tuned {config}\n")
            sd.run_point(a, w, engine, coords, steps, m, n, [NO_SCRATCH], plan=plans[(s, n)][0], timeout=timeout,
                         label=label, config=config)
    shutil.rmtree(plan_dir, ignore_errors=True)
    return sd.done(w)


if __name__ == "__main__":
    sys.exit(sd.careful.run_main("strategies", main, sys.argv[1:]))
