#!/usr/bin/python3
"""The zoo driver: every cut strategy at several segment counts over every zoo tape.

For each tape (tape/products/zoo.cpp, and the 252-step Asian for reference) it records the tape's
size (nodes, draws, inputs, pipe width: planner/liveness.h's pipeWidth), then for each strategy
(flat: window, uniform; nested: revolve, two-level; budget) at each segment count the plan metrics
(peak_live, persistent, recompute_ops, recompute_cost, depth; planner/metrics.h), and optionally
  --cuda       sm_90 registers, spill-store and spill-load bytes, stack frame and compile seconds of
               every distinct register kernel (and each tape's plain kernel) from NVRTC + ptxas (fp32,
               value and Greeks, one market), compile-only where no driver is: one `gpu_kernels
               --engine cuda --tape T --plan P --kinds register` per kernel (--jobs at once), in a fresh
               kernel cache so compile_s is a cold compile; --cuda-config over the engine's defaults
               (default min_blocks=0: the register demand up to the 255 cap, as the Asian's calibration
               in runs/calibration-sm90-2026-12-01 measured it; the defaults' min_blocks=10 caps at 96);
  --time E,... each engine's plain kernel and register kernels (value and Greeks, fp32: the drivers' one
               precision, benchlib.PRECISION) at the --time-segments counts: a warm-up each, then --repeats runs taken in
               turn over the tape's kernels (so a load change hits all alike): ms is their median,
               ms_min and ms_max their spread; every run's value and Greeks (the plain kernel's own
               runs included) must equal the plain kernel's first run bit for bit (exit 1 if not). `served` says cpu for CPU-served engines (cpu-jit,
               Vulkan on lavapipe, OpenCL on PoCL), gpu for a real device (cuda on the H200).
Plans with the same cuts as an earlier plan of the tape (budget at 4 and 8 often) are compiled once:
`same_plan_as` names the first, and summaries count each kernel once; such a row gets the kernel's sm_90
columns and timings even where the first plan's segment count is not among --cuda-segments/--time-segments.
--tape FILE (repeatable) adds a .tape file of your own to the run, named by its file name.
--budget-seconds S: no sm_90 compile and no timing kernel is started after S seconds (rows keep their
metrics; a note says what was left out). The CSV goes to --out, by default $TMPDIR/tapelab-zoo/zoo.csv
(outside the source tree); the comment row's commit is `git describe --always --dirty`.
One CSV row per (tape, strategy, segments) and timed engine (a row per engine; one row when untimed),
and a "plain" row per tape; a comment row first (machine, driver, commit, arguments).
--size table (default) compiles the zoo at sizes where the whole sm_90 table takes well under an
hour on two cores; --size full is each product's default size (plan metrics in seconds; NVRTC takes
minutes per kernel for the 40-forward LMM there); --quick: small tapes, two segment counts, sm_90
for two tapes where gpu_kernels is given, cpu-jit timing of one (CTest runs it).
--summary CSV prints, for a table with sm_90 columns, Spearman rank correlations of peak_live with
registers and with spill-store bytes per tape and overall, the no-spill line, and the winners.

usage: zoo.py [--out FILE.csv] [--quick] [--size table|full] [--tapes heston,lmm,...] [--tape FILE.tape ...]
              [--segments 4,8,16,32] [--strategies window,uniform,revolve,two-level,budget]
              [--cuda] [--cuda-segments 4,8,16,32] [--cuda-config min_blocks=0] [--gpu-kernels BIN]
              [--sm90-from EARLIER.csv]
              [--jobs 2] [--time cpu-jit,vulkan,opencl] [--time-segments 16] [--paths N] [--repeats R]
              [--budget-seconds S] [--machine cpu]
       zoo.py --summary FILE.csv
"""
import concurrent.futures
import csv
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from calibration_summary import pearson, spearman  # noqa: E402  (the proxy's calibration uses the same)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "drivers"))
import careful  # noqa: E402  (every file this driver writes goes through it)
from benchlib import PRECISION  # noqa: E402  (the one precision of the drivers: every timed kernel, named per row)
from benchlib.sm90 import compile_sm90  # noqa: E402  (gpu_kernels on cuda, compile-only: ptxas's registers and spills)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(tempfile.gettempdir(), "tapelab-zoo", "zoo.csv")

# name -> {size: (product, parameters)}: full is the product's default, table what the committed table
# compiles (the wide tapes smaller: at full size one LMM kernel takes 150 s of NVRTC here, a neural one
# 70-90 s, heat 43 s; at these sizes 4-18 s, with the pipe still 22-109 values wide), quick for CI.
ZOO = {
    "asian": {"full": ("asian", {"steps": 252}), "table": ("asian", {"steps": 252}), "quick": ("asian", {"steps": 24})},
    "heston": {"full": ("heston", {"steps": 100}), "table": ("heston", {"steps": 100}),
               "quick": ("heston", {"steps": 12})},
    "cev": {"full": ("cev", {"steps": 100}), "table": ("cev", {"steps": 100}), "quick": ("cev", {"steps": 12})},
    "barrier": {"full": ("barrier", {"steps": 50}), "table": ("barrier", {"steps": 50}),
                "quick": ("barrier", {"steps": 12})},
    "barrier-smooth": {"full": ("barrier", {"steps": 50, "smoothing": 0.002}),
                       "table": ("barrier", {"steps": 50, "smoothing": 0.002}),
                       "quick": ("barrier", {"steps": 12, "smoothing": 0.01})},
    "lookback": {"full": ("lookback", {"steps": 50}), "table": ("lookback", {"steps": 50}),
                 "quick": ("lookback", {"steps": 12})},
    "lmm": {"full": ("lmm", {"forwards": 40}), "table": ("lmm", {"forwards": 20}), "quick": ("lmm", {"forwards": 8})},
    "worstof": {"full": ("worstof", {"assets": 20, "steps": 12}), "table": ("worstof", {"assets": 20, "steps": 6}),
                "quick": ("worstof", {"assets": 20, "steps": 2})},
    "neural": {"full": ("neural", {"hidden": 16, "steps": 16}), "table": ("neural", {"hidden": 8, "steps": 16}),
               "quick": ("neural", {"hidden": 4, "steps": 4})},
    "heat": {"full": ("heat", {"points": 41, "steps": 48}), "table": ("heat", {"points": 21, "steps": 24}),
             "quick": ("heat", {"points": 11, "steps": 8})},
    # The wide products (issue 48): many inputs, where one reverse sweep gives every Greek.
    "bucketed": {"full": ("bucketed", {"steps": 252, "buckets": 252}),
                 "table": ("bucketed", {"steps": 252, "buckets": 252}),
                 "quick": ("bucketed", {"steps": 24, "buckets": 24})},
    "localvol": {"full": ("localvol", {"steps": 100, "strikes": 20, "times": 12}),
                 "table": ("localvol", {"steps": 24, "strikes": 20, "times": 12}),
                 "quick": ("localvol", {"steps": 4, "strikes": 5, "times": 3})},
    "hestonbasket": {"full": ("hestonbasket", {"assets": 5, "steps": 252}),
                     "table": ("hestonbasket", {"assets": 5, "steps": 24}),
                     "quick": ("hestonbasket", {"assets": 3, "steps": 4})},
}
QUICK_CUDA_TAPES = ("cev", "heat")  # --quick: sm_90 for these (a narrow and a wide pipe), where gpu_kernels is
QUICK_TIME_TAPES = ("cev",)
STRATEGIES = ["window", "uniform", "revolve", "two-level", "budget"]  # the default; --strategies takes any of the registry's
HEADER = ["tape", "product", "params", "nodes", "draws", "inputs", "pipe_width", "strategy", "shape",
          "requested_segments", "segments", "depth", "peak_live", "persistent", "recompute_ops", "recompute_cost",
          "same_plan_as", "sm90_config", "sm90_registers", "sm90_spill_bytes", "sm90_spill_load_bytes",
          "sm90_stack_bytes", "sm90_compile_s", "sm90_cache_hit", "time_engine", "served", "precision", "paths",
          "reps", "ms", "ms_min", "ms_max", "paths_per_s", "plain_ms", "vs_plain", "bits", "note"]


def shape_of(strategy, plan):
    """plain, flat, nested or per-value: read from the plan (no list of strategies kept here)."""
    if strategy == "plain":
        return "plain"
    if plan is None:
        return ""
    if '"per-value"' in plan.to_json():
        return "per-value"
    return "nested" if plan.nested else "flat"


def ints(text):
    return [int(x) for x in text.split(",") if x]


def commit():
    try:
        return subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty", "--abbrev=12"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def sm90_of(path):
    """{(tape, nodes): {(strategy, requested): sm_90 columns}} of an earlier zoo CSV's compiled rows."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            if not r.get("sm90_registers") or r.get("same_plan_as"):
                continue
            try:
                out.setdefault((r["tape"], int(r["nodes"])), {})[(r["strategy"], int(r["requested_segments"]))] = {
                    "config": r["sm90_config"], "registers": int(r["sm90_registers"]),
                    "spill_bytes": int(r["sm90_spill_bytes"]), "spill_load_bytes": int(r["sm90_spill_load_bytes"]),
                    "stack_bytes": int(r["sm90_stack_bytes"]), "compile_s": float(r["sm90_compile_s"]),
                    "cache_hit": int(r["sm90_cache_hit"])}
            except (KeyError, TypeError, ValueError) as e:
                sys.exit(f"zoo.py: --sm90-from: {path}: not a zoo table with sm_90 columns ({e!r})")
    return out


def time_kernels(tapelab, tape, engine, plans, paths, repeats, in_budget):
    """{key: {ms, ms_min, ms_max, reps, precision, same}} of the plain kernel (key None) and each plan's
    register kernel on `engine`: a warm-up each (another seed), then `repeats` rounds over all of them.
    `same`: every run's value and Greeks equal the plain kernel's first run bit for bit (the plain kernel's
    own runs included). No kernel is compiled once in_budget() says the time is up (those keys are absent)."""
    kernels = {None: tapelab.compile(tape, engine, checkpoint="off", precision=PRECISION)}
    for key, plan in plans.items():
        if not in_budget():
            break
        kernels[key] = tapelab.compile(tape, engine, plan=plan, kernel="register", precision=PRECISION)
    for k in kernels.values():
        k.run(paths=max(paths // 8, 64), seed=99)
    secs = {key: [] for key in kernels}
    same = {key: True for key in kernels}
    precision = {}
    ref = None
    for _ in range(repeats):
        for key, k in kernels.items():
            r = k.run(paths=paths, seed=1)
            d = r.to_dict()
            secs[key].append(d["seconds"])
            precision.setdefault(key, d["precision"])
            bits = (r.value, dict(r.greeks))
            if ref is None:
                ref = bits  # the plain kernel's first run: the plain kernel is first in every round
            same[key] = same[key] and bits == ref
    out = {}
    for key, s in secs.items():
        out[key] = {"ms": statistics.median(s) * 1e3, "ms_min": min(s) * 1e3, "ms_max": max(s) * 1e3, "reps": len(s),
                    "precision": precision[key], "same": same[key]}
    return out


GPU_COLUMNS = ["tape", "nodes", "ladder_input", "engine", "kernel", "plan", "segments", "precision", "math", "paths",
               "ladder_points", "ms", "ms_min", "ms_max", "reps", "mpath_s", "ratio_to_plain", "same_bits", "registers",
               "spill_bytes", "config"]


def from_compare(files, out, machine):
    """The zoo's GPU table from `tapelab compare TAPE --markets 1 --json` files (one per tape): each engine's
    plain and checkpointed rows of the one-market-per-call ladder, ms the median ladder, its spread, Mpath/s
    (ladder points x paths / median), the ratio to the engine's plain kernel and whether the bits equal it."""
    rows = []
    for path in files:
        try:
            with open(path) as f:
                d = json.load(f)
            tape = os.path.splitext(d["tape"])[0]
            these, plain = [], {}
            for r in d["rows"]:
                if r["markets"] != 1:
                    continue
                res = r["result"]
                ks = res.get("kernel_stats", {})
                ms = r["ms_ladders"]
                these.append({"tape": tape, "nodes": d["nodes"], "ladder_input": d["ladder_input"], "engine": r["engine"],
                              "kernel": r["kernel"], "plan": r["plan"], "segments": r["segments"],
                              "precision": res["precision"], "math": res["math"], "paths": d["paths"],
                              "ladder_points": len(d["ladder_values"]), "ms": fmt(r["ms_per_ladder"]),
                              "ms_min": fmt(min(ms)), "ms_max": fmt(max(ms)), "reps": len(ms),
                              "mpath_s": fmt(r["mpaths_per_second"], 1), "same_bits": r["identical_to_plain"],
                              "registers": ks.get("registers", ""), "spill_bytes": ks.get("spill_bytes", ""),
                              "config": res["config"], "_mps": r["mpaths_per_second"]})
                if r["kernel"] == "plain":
                    plain[r["engine"]] = r["mpaths_per_second"]
        except OSError as e:
            sys.exit(f"zoo.py: --from-compare {path}: {e.strerror}")
        except (ValueError, KeyError, TypeError) as e:  # not JSON, or not `tapelab compare --json`'s
            sys.exit(f"zoo.py: --from-compare {path}: not a `tapelab compare --json` result "
                     f"({type(e).__name__}: {e})")
        for row in these:
            mps = row.pop("_mps")
            if row["engine"] in plain:
                row["ratio_to_plain"] = fmt(mps / plain[row["engine"]], 3)
        rows += these
    head = f"# machine={machine} driver=zoo --from-compare {' '.join(os.path.basename(f) for f in files)}\n"
    text = io.StringIO()
    text.write(head)
    w = csv.DictWriter(text, GPU_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    except OSError as e:
        raise careful.OutputFailed(f"--out {out}: cannot make its directory: {e.strerror}") from None
    careful.write_output(out, text.getvalue(), files)  # never over one of the --from-compare inputs
    print(f"zoo: {len(rows)} rows from {len(files)} compare files in {out}", file=sys.stderr)
    return 0


def fmt(x, digits=4):
    return "" if x is None else round(x, digits)


def run(a):
    try:
        import tapelab
    except ImportError:  # run from the source tree without PYTHONPATH: the ci build's staged module
        sys.path.insert(0, os.path.join(REPO, "build", "ci", "python"))
        import tapelab

    size = "quick" if a.quick else a.size
    segments = ints(a.segments or ("4,8" if a.quick else "4,8,16,32"))
    cuda_segments = ints(a.cuda_segments) if a.cuda_segments else segments
    time_segments = ints(a.time_segments or ("4" if a.quick else "16"))
    names = [t for t in a.tapes.split(",") if t]
    for t in names:
        if t not in ZOO:
            sys.exit(f"zoo.py: --tapes: unknown tape '{t}' (known: {', '.join(ZOO)})")
    own = {}  # --tape FILE: a user's tape, named by its file (without .tape), at every size
    for path in a.tape or []:
        name = os.path.splitext(os.path.basename(path))[0]
        if name in ZOO or name in own:
            sys.exit(f"zoo.py: --tape {path}: the name '{name}' is taken (rename the file)")
        try:
            own[name] = tapelab.read_tape(path)
        except (OSError, ValueError, RuntimeError) as e:
            sys.exit(f"zoo.py: --tape {path}: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
        names.append(name)
    strategies = [s for s in a.strategies.split(",") if s]
    known = set(tapelab.strategies())
    for s in strategies:
        if s not in known:
            sys.exit(f"zoo.py: --strategies: unknown strategy '{s}' (known: {', '.join(sorted(known))})")
    engines = {e["name"]: e for e in tapelab.engines()}
    time_engines = [e for e in (a.time or ("cpu-jit" if a.quick else "")).split(",") if e]
    for e in time_engines:
        if e not in engines:
            sys.exit(f"zoo.py: --time: unknown engine '{e}' (known: {', '.join(engines)})")
    skipped = {e: engines[e]["reason"] for e in time_engines if not engines[e]["usable"]}
    for e, why in skipped.items():
        print(f"zoo: --time {e} skipped: {why}", file=sys.stderr)
    time_engines = [e for e in time_engines if e not in skipped]
    cuda = a.cuda or (a.quick and a.gpu_kernels is not None)
    gpu_kernels = a.gpu_kernels or os.path.join(REPO, "build", "ci", "experiments", "gpu_kernels")
    if cuda and not os.access(gpu_kernels, os.X_OK):
        sys.exit(f"zoo.py: --gpu-kernels: {gpu_kernels}: not an executable (build it: ninja -C build/ci gpu_kernels)")
    reused = sm90_of(a.sm90_from) if a.sm90_from else {}
    work = tempfile.mkdtemp(prefix="tapelab-zoo-")
    cache = a.cuda_cache or os.path.join(work, "cache")
    start = time.perf_counter()
    in_budget = lambda: a.budget_seconds is None or time.perf_counter() - start < a.budget_seconds  # noqa: E731
    bad_kernels = {}  # (tape, engine, kernel key) -> every run equal to plain's bits
    failed = set()  # (tape, kernel key) of each failed sm_90 compile: counted per kernel, not per row
    out_dir = os.path.dirname(os.path.abspath(a.out))
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise careful.OutputFailed(f"--out {a.out}: cannot make its directory: {e.strerror}") from None
    # Rows as each tape finishes, never over an input of the run (careful.py: the --tape files, --sm90-from).
    fh = careful.OutputFile(a.out, list(a.tape or []) + ([a.sm90_from] if a.sm90_from else []) + [gpu_kernels])
    try:
        with fh:
            fh.write(f"# machine={a.machine} driver=zoo commit={commit()} size={size} cores={os.cpu_count()} "
                     f"load={os.getloadavg()[0]:.1f} args=zoo.py {' '.join(a.argv)}\n")
            out = csv.writer(fh, lineterminator="\r\n")  # csv's own default, as before
            out.writerow(HEADER)
            for name in names:
                if name in own:
                    tape, product, params = own[name], "file", {"file": a.tape[list(own).index(name)]}
                else:
                    product, params = ZOO[name][size]
                    tape = tapelab.product(product, **params)
                tape_file = os.path.join(work, name + ".tape")
                tape.write(tape_file)
                size_cols = [name, product, " ".join(f"{k}={v}" for k, v in params.items()), len(tape), tape.draws,
                             len(tape.inputs), tape.pipe_width]
                # Every plan first: rows in order, each with its key (strategy, requested segments).
                entries = []  # (key, strategy, s, plan or None, error, same_as)
                plain = tapelab._core._plain_plan(tape)
                entries.append((("plain", 1), "plain", 1, plain, "", ""))
                for strategy in strategies:
                    for s in segments:
                        try:
                            plan = tapelab.plan(tape, strategy, segments=s)
                        except ValueError as e:
                            entries.append(((strategy, s), strategy, s, None, str(e), ""))
                            continue
                        same = next((f"{st} {ss}" for (st, ss), st2, _, p, _, sa in entries
                                     if p is not None and st != "plain" and not sa and p.same_cuts(plan)), "")
                        entries.append(((strategy, s), strategy, s, plan, "", same))
                # The kernel behind each row: its own plan's, or the earlier plan's it repeats (same_plan_as).
                def source_of(key, same):
                    if not same:
                        return key
                    st, ss = same.split(" ")
                    return (st, int(ss))

                plan_of = {key: plan for key, _, _, plan, _, _ in entries if plan is not None}
                # sm_90: each distinct kernel once (a repeated plan's kernel wherever any row at a --cuda-segments
                # count needs it, whatever the count of the plan it repeats), --jobs at a time, each started only
                # while --budget-seconds allows.
                sm90 = {key: v for key, v in reused.get((name, len(tape)), {}).items()}
                if cuda and (not a.quick or name in QUICK_CUDA_TAPES):
                    need = list(dict.fromkeys(source_of(key, same) for key, strategy, s, plan, _, same in entries
                                              if plan is not None and (strategy == "plain" or s in cuda_segments)))
                    need = [key for key in need if key not in sm90]

                    def job(key):
                        if not in_budget():
                            return {"skipped": "not compiled: --budget-seconds was spent"}
                        plan_file = None
                        if key[0] != "plain":
                            plan_file = os.path.join(work, f"{name}-{key[0]}-{key[1]}.json")
                            plan_of[key].write(plan_file)
                        return compile_sm90(gpu_kernels, tape_file, plan_file, a.cuda_config, cache, a.cuda_timeout)

                    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
                        for key, res in zip(need, pool.map(job, need)):
                            sm90[key] = res
                            if "error" in res and not res.get("unavailable"):
                                failed.add((name, key))
                # Timings: per engine, the plain kernel and the register kernel behind each row at --time-segments
                # (a repeated plan's kernel is the earlier plan's, timed once).
                timed = {}
                if time_engines and (not a.quick or name in QUICK_TIME_TAPES):
                    plans = {}
                    for key, strategy, s, plan, _, same in entries:
                        if plan is not None and strategy != "plain" and s in time_segments:
                            src = source_of(key, same)
                            plans.setdefault(src, plan_of[src])
                    for e in time_engines:
                        if not in_budget():
                            break
                        t0 = time.perf_counter()
                        try:
                            timed[e] = time_kernels(tapelab, tape, e, plans, a.paths, a.repeats, in_budget)
                        except (ValueError, RuntimeError) as ex:
                            timed[e] = {"error": str(ex).splitlines()[0]}
                        print(f"zoo: {name}: timed on {e} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
                        if "error" not in timed[e]:
                            for k, tk in timed[e].items():
                                bad_kernels[(name, e, k)] = tk["same"]
                for key, strategy, s, plan, err, same in entries:
                    if plan is None:
                        out.writerow(size_cols + [strategy, shape_of(strategy, None), s] + [""] * 26 + [err])
                        continue
                    m = plan.metrics
                    row = size_cols + [strategy, shape_of(strategy, plan), s, plan.segments, m.depth, m.peak_live, m.persistent,
                                       m.recompute_ops, fmt(m.recompute_cost, 2), same]
                    source = source_of(key, same)
                    st90 = sm90.get(source)
                    note = []
                    if st90 is None:
                        row += [""] * 7
                    elif "skipped" in st90:
                        row += [""] * 7
                        note.append("cuda: " + st90["skipped"])
                    elif "error" in st90:
                        row += [st90.get("config", a.cuda_config)] + [""] * 6
                        note.append("cuda: " + st90["error"])
                    else:
                        row += [st90.get("config", a.cuda_config), st90["registers"], st90["spill_bytes"],
                                st90["spill_load_bytes"],
                                st90["stack_bytes"], st90["compile_s"], st90["cache_hit"]]
                    wrote = False
                    for e, res in timed.items():
                        served = "cpu" if engines[e]["cpu_device"] or e.startswith(("cpu", "reference")) else "gpu"
                        if "error" in res:
                            if strategy == "plain" or s in time_segments:
                                out.writerow(row + [e, served] + [""] * 10 + ["; ".join(note + [f"{e}: {res['error']}"])])
                                wrote = True
                            continue
                        if strategy != "plain" and s not in time_segments:
                            continue
                        tk = res.get(None if strategy == "plain" else source)
                        if tk is None:
                            continue
                        pl = res[None]
                        same_bits = tk["same"]
                        out.writerow(row + [e, served, tk["precision"], a.paths, tk["reps"], fmt(tk["ms"]),
                                            fmt(tk["ms_min"]), fmt(tk["ms_max"]), round(a.paths / tk["ms"] * 1e3, 1),
                                            fmt(pl["ms"]), fmt(pl["ms"] / tk["ms"]),
                                            "same" if same_bits else "DIFFER", "; ".join(note)])
                        wrote = True
                    if not wrote:
                        out.writerow(row + [""] * 12 + ["; ".join(note)])
                fh.flush()
                print(f"zoo: {name}: {len(tape)} nodes, pipe {tape.pipe_width}, {len(sm90)} sm_90 kernels, "
                      f"{time.perf_counter() - start:.0f} s, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failed:
        print(f"zoo: {len(failed)} sm_90 kernels failed to compile (the rows' notes say why)", file=sys.stderr)
    bad = sum(1 for res in bad_kernels.values() if not res)
    if bad:
        print(f"zoo: {bad} kernels' runs differ from the plain kernel's bits", file=sys.stderr)
    return 1 if bad or failed else 0


# ----------------------------------------------------------------- --summary


def summary(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line for line in f if not line.startswith("#")]
    except OSError as e:
        sys.exit(f"zoo.py: --summary: {path}: {e.strerror}")
    rows = list(csv.DictReader(lines))
    kernels, seen = [], set()
    for r in rows:  # one row per distinct kernel: the first of its (tape, strategy, segments), no repeated plan
        key = (r["tape"], r["strategy"], r["requested_segments"])
        if key in seen or r.get("same_plan_as") or not r.get("sm90_registers"):
            continue
        seen.add(key)
        kernels.append(r)
    if not kernels:
        sys.exit(f"zoo.py: --summary: {path}: no sm_90 columns")
    reg = [k for k in kernels if k["strategy"] != "plain"]
    tapes = list(dict.fromkeys(k["tape"] for k in reg))
    pw = {k["tape"]: int(k["pipe_width"]) for k in reg}
    configs = sorted({k.get("sm90_config") or "the engine's defaults" for k in reg})
    print(f"{path}: {len(reg)} distinct register kernels ({len(kernels) - len(reg)} plain), sm_90 config "
          f"{', '.join(configs)}; spill = ptxas spill-store bytes")
    print(f"{'tape':<16} {'pipe':>4} {'n':>3} {'rho(pl,regs)':>12} {'rho(pl,spill)':>13} {'regs':>9} "
          f"{'spill B':>11} {'no-spill':>8}  least spill (strategy seg: peak_live, regs, spill)")

    def line(label, ks, pipe=""):
        if not ks:  # an empty group (no narrow or no wide tape in this table): no line
            return
        pl = [int(k["peak_live"]) for k in ks]
        rg = [int(k["sm90_registers"]) for k in ks]
        sp = [int(k["sm90_spill_bytes"]) for k in ks]
        best = min(ks, key=lambda k: (int(k["sm90_spill_bytes"]), int(k["sm90_registers"])))
        print(f"{label:<16} {pipe:>4} {len(ks):>3} {spearman(pl, rg):>12.3f} {spearman(pl, sp):>13.3f} "
              f"{min(rg):>4}-{max(rg):<4} {min(sp):>5}-{max(sp):<5} {sum(1 for s in sp if s == 0):>8}  "
              f"{best['strategy']} {best['requested_segments']}: {best['peak_live']}, {best['sm90_registers']}, "
              f"{best['sm90_spill_bytes']}")
    for t in tapes:
        line(t, [k for k in reg if k["tape"] == t], pw[t])
    narrow = [k for k in reg if pw[k["tape"]] <= 13]
    wide = [k for k in reg if pw[k["tape"]] > 13]
    line("narrow (<=13)", narrow)
    line("wide (>13)", wide)
    line("all", reg)
    ns = [k for k in reg if int(k["sm90_spill_bytes"]) == 0 and int(k["sm90_registers"]) < 255]
    if len(ns) >= 2:
        x = [float(k["peak_live"]) for k in ns]
        y = [float(k["sm90_registers"]) for k in ns]
        mx, my = sum(x) / len(x), sum(y) / len(y)
        sxx = sum((v - mx) ** 2 for v in x)
        b = sum((u - mx) * (v - my) for u, v in zip(x, y)) / sxx if sxx else float("nan")
        print(f"no-spill rows below the cap: registers ~ {my - b * mx:.1f} + {b:.3f} * peak_live "
              f"({len(ns)} kernels, pearson {pearson(x, y):.3f})")
    spilled = [int(k["peak_live"]) for k in reg if int(k["sm90_spill_bytes"]) > 0]
    clean = [int(k["peak_live"]) for k in reg if int(k["sm90_spill_bytes"]) == 0]
    if spilled and clean:
        print(f"spilling kernels: {len(spilled)} of {len(reg)}; least peak_live that spilled {min(spilled)}, "
              f"most that did not {max(clean)}; every kernel at peak_live >= "
              f"{min(p for p in spilled if p > max(clean)) if any(p > max(clean) for p in spilled) else 'n/a'} spills")
    plains = [k for k in kernels if k["strategy"] == "plain"]
    if plains:
        print("plain kernels: " + "; ".join(f"{k['tape']} {k['sm90_registers']} regs {k['sm90_spill_bytes']} B"
                                            for k in plains))
    cs = [float(k["sm90_compile_s"]) for k in kernels if k.get("sm90_compile_s") and k.get("sm90_cache_hit") == "0"]
    if cs:
        print(f"compile (cold, NVRTC + ptxas): {len(cs)} kernels, {sum(cs) / 60:.1f} min in all, median "
              f"{statistics.median(cs):.1f} s, max {max(cs):.1f} s")
    timed = [r for r in rows if r.get("ms")]
    if timed:
        print("timed (median ms, [min, max]; vs_plain = plain ms / ms; least ms per tape and engine):")
        for e in dict.fromkeys(r["time_engine"] for r in timed):
            for t in dict.fromkeys(r["tape"] for r in timed):
                tr = [r for r in timed if r["time_engine"] == e and r["tape"] == t and r["strategy"] != "plain"]
                if not tr:
                    continue
                best = min(tr, key=lambda r: float(r["ms"]))
                print(f"  {e:<8} {t:<16} best {best['strategy']} {best['requested_segments']}: {best['ms']} ms "
                      f"[{best['ms_min']}, {best['ms_max']}], plain {best['plain_ms']} ms, vs_plain {best['vs_plain']}"
                      f" ({best['served']}-served); " + ", ".join(f"{r['strategy']} {r['vs_plain']}" for r in tr))
        differ = [r for r in timed if r["bits"] != "same"]
        print(f"bits: {len(timed) - len(differ)} of {len(timed)} timed kernels equal plain"
              + (f"; DIFFER: {differ}" if differ else ""))
    return 0


def main(argv):
    ap = careful.Parser(prog="zoo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT,
                    help=f"the CSV written (default {DEFAULT_OUT}: outside the source tree; the committed table is "
                         "papers/data/zoo-cpu.csv)")
    ap.add_argument("--tape", metavar="FILE", action="append", default=None,
                    help="a .tape file of your own, added to the zoo run under its file name (repeatable; the same "
                         "tape at every --size)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--size", choices=["table", "full"], default="table")
    ap.add_argument("--tapes", default=",".join(ZOO))
    ap.add_argument("--segments", default=None, help="segment counts (default 4,8,16,32; --quick 4,8)")
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--cuda", action="store_true", help="sm_90 registers and spills (NVRTC, compile-only)")
    ap.add_argument("--cuda-segments", default=None, help="segment counts compiled for sm_90 (default: --segments)")
    ap.add_argument("--cuda-config", default="min_blocks=0", help="kernel configuration over cuda's defaults")
    ap.add_argument("--sm90-from", metavar="CSV", default=None,
                    help="take the sm_90 columns of kernels an earlier zoo CSV compiled (same tape and nodes)")
    ap.add_argument("--cuda-cache", default=None, help="kernel cache (default: a fresh one, cold compiles)")
    ap.add_argument("--cuda-timeout", type=float, default=900, help="seconds one kernel's compile may take")
    ap.add_argument("--gpu-kernels", default=None, help="the gpu_kernels binary (default build/ci/experiments/)")
    ap.add_argument("--jobs", type=careful.integer(1, 256), default=2, help="sm_90 kernels compiled at once")
    ap.add_argument("--time", default=None, help="engines to time plain and register kernels on (--quick: cpu-jit)")
    ap.add_argument("--time-segments", default=None, help="segment counts timed (default 16; --quick 4)")
    ap.add_argument("--paths", type=careful.integer(1, 2**48), default=16384)
    ap.add_argument("--repeats", type=careful.integer(1, 1000), default=5)
    ap.add_argument("--budget-seconds", type=float, default=None,
                    help="start no compile (cuda or timing) after this many seconds; rows keep their metrics")
    ap.add_argument("--machine", default="cpu", help="machine name for the comment row")
    ap.add_argument("--summary", metavar="CSV", default=None, help="print the sm_90 and timing summary of a table")
    ap.add_argument("--from-compare", metavar="JSON", nargs="+", default=None,
                    help="a zoo timed on a GPU with `tapelab compare TAPE --markets 1 --json` per tape (where the "
                         "Python module cannot run, e.g. the lent H200: scripts/gpu/tune-and-compare.sh final): "
                         "one CSV row per engine and kernel, to --out")
    a = ap.parse_args(argv)
    a.argv = argv
    if a.summary:
        return summary(a.summary)
    if a.from_compare:
        if not any(x == "--machine" or x.startswith("--machine=") for x in argv):
            sys.exit("zoo.py: --from-compare: give --machine NAME (the machine the compare runs were timed on)")
        return from_compare(a.from_compare, a.out, a.machine)
    if a.jobs < 1 or a.paths < 1 or a.repeats < 1:
        sys.exit("zoo.py: --jobs, --paths and --repeats take a positive integer")
    return run(a)


if __name__ == "__main__":
    sys.exit(careful.run_main("zoo", main, sys.argv[1:]))
