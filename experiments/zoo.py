#!/usr/bin/python3
"""The zoo driver: every cut strategy at several segment counts over every zoo tape.

For each tape (tape/products/zoo.cpp, and the 252-step Asian for reference) it records the tape's
size (nodes, draws, inputs, pipe width: planner/liveness.h's pipeWidth), then for each strategy
(flat: window, uniform; nested: revolve, two-level; budget) at each segment count the plan metrics
(peak_live, persistent, recompute_ops, recompute_cost, depth; planner/metrics.h), and optionally
  --cuda       the register kernel's sm_90 registers and spill bytes from NVRTC + ptxas (fp32, value and
               Greeks; the cuda engine compiles without a GPU here), at the --cuda-segments counts;
  --time E     paths/s of the plain kernel and of each register kernel on engine E (cpu-jit: CPU-served),
               median of --repeats runs, each checked bit-identical to plain (exit 1 if not),
               at the --time-segments counts;
  a GPU engine given to --time (cuda on the H200) times there the same way.
One CSV row per (tape, strategy, segments). --quick: small tapes, two segment counts, no timing
(CTest runs it).

usage: zoo.py [--out FILE.csv] [--quick] [--tapes heston,lmm,...] [--segments 4,8,16,32]
              [--strategies window,uniform,revolve,two-level,budget] [--cuda] [--cuda-segments 16]
              [--time cpu-jit] [--time-segments 16] [--paths N] [--repeats R] [--budget-seconds S]
"""
import argparse
import csv
import statistics
import sys
import time

import tapelab

# name -> (product, parameters) at the full size, and a small one for --quick.
ZOO = {
    "asian": (("asian", {"steps": 252}), ("asian", {"steps": 24})),
    "heston": (("heston", {"steps": 100}), ("heston", {"steps": 12})),
    "cev": (("cev", {"steps": 100}), ("cev", {"steps": 12})),
    "barrier": (("barrier", {"steps": 50}), ("barrier", {"steps": 12})),
    "barrier-smooth": (("barrier", {"steps": 50, "smoothing": 0.002}), ("barrier", {"steps": 12, "smoothing": 0.01})),
    "lookback": (("lookback", {"steps": 50}), ("lookback", {"steps": 12})),
    "lmm": (("lmm", {"forwards": 40}), ("lmm", {"forwards": 8})),
    "worstof": (("worstof", {"assets": 20, "steps": 12}), ("worstof", {"assets": 20, "steps": 2})),
    "neural": (("neural", {"hidden": 16, "steps": 16}), ("neural", {"hidden": 4, "steps": 4})),
    "heat": (("heat", {"points": 41, "steps": 48}), ("heat", {"points": 11, "steps": 8})),
}
STRATEGIES = ["window", "uniform", "revolve", "two-level", "budget"]
KIND = {"window": "flat", "uniform": "flat", "revolve": "nested", "two-level": "nested", "budget": "budget"}
HEADER = ["tape", "product", "nodes", "draws", "inputs", "pipe_width", "strategy", "shape", "requested_segments",
          "segments", "depth", "peak_live", "persistent", "recompute_ops", "recompute_cost", "sm90_registers",
          "sm90_spill_bytes", "sm90_compile_s", "time_engine", "paths", "plain_paths_per_s", "paths_per_s",
          "vs_plain", "bits", "note"]


def ints(text):
    return [int(x) for x in text.split(",") if x]


def timed(tape, engine, plan, paths, repeats):
    kw = dict(precision="fp64" if engine.startswith("cpu") or engine.startswith("reference") else "fp32")
    if plan is None:
        k = tapelab.compile(tape, engine, checkpoint="off", **kw)
    else:
        k = tapelab.compile(tape, engine, plan=plan, kernel="register", **kw)
    k.run(paths=max(paths // 4, 64), seed=99)  # warm-up on another seed
    runs = [k.run(paths=paths, seed=1) for _ in range(repeats)]
    return runs[0], statistics.median(paths / r.to_dict()["seconds"] for r in runs)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="zoo.csv")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tapes", default=",".join(ZOO))
    ap.add_argument("--segments", default=None, help="segment counts (default 4,8,16,32; --quick 4,8)")
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--cuda", action="store_true", help="sm_90 registers and spills (NVRTC, compile-only)")
    ap.add_argument("--cuda-segments", default="16")
    ap.add_argument("--time", default=None, help="engine to time plain and register kernels on")
    ap.add_argument("--time-segments", default="16")
    ap.add_argument("--paths", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget-seconds", type=float, default=None,
                    help="start no compile (cuda or timing) after this many seconds; rows keep their metrics")
    a = ap.parse_args(argv)
    segments = ints(a.segments or ("4,8" if a.quick else "4,8,16,32"))
    cuda_segments, time_segments = ints(a.cuda_segments), ints(a.time_segments)
    names = [t for t in a.tapes.split(",") if t]
    for t in names:
        if t not in ZOO:
            sys.exit(f"zoo.py: --tapes: unknown tape '{t}' (known: {', '.join(ZOO)})")
    strategies = [s for s in a.strategies.split(",") if s]
    known = set(tapelab.strategies())
    for s in strategies:
        if s not in known:
            sys.exit(f"zoo.py: --strategies: unknown strategy '{s}' (known: {', '.join(sorted(known))})")
    start = time.perf_counter()
    in_budget = lambda: a.budget_seconds is None or time.perf_counter() - start < a.budget_seconds  # noqa: E731
    bad = 0
    with open(a.out, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(HEADER)
        for name in names:
            product, params = ZOO[name][1 if a.quick else 0]
            tape = tapelab.product(product, **params)
            size = [name, product, len(tape), tape.draws, len(tape.inputs), tape.pipe_width]
            plain_rate, plain_result = None, None
            if a.time and in_budget():
                plain_result, plain_rate = timed(tape, a.time, None, a.paths, a.repeats)
            for strategy in strategies:
                for s in segments:
                    note = ""
                    try:
                        plan = tapelab.plan(tape, strategy, segments=s)
                    except ValueError as e:
                        out.writerow(size + [strategy, KIND.get(strategy, "flat"), s] + [""] * 15 + [str(e)])
                        continue
                    m = plan.metrics
                    row = size + [strategy, KIND.get(strategy, "flat"), s, plan.segments, m.depth, m.peak_live,
                                  m.persistent, m.recompute_ops, m.recompute_cost]
                    regs = spill = secs = ""
                    if a.cuda and s in cuda_segments and in_budget():
                        try:
                            k = tapelab.compile(tape, "cuda", plan=plan, kernel="register", precision="fp32")
                            st = k.stats.to_dict() if hasattr(k, "stats") else k.kernel_stats.to_dict()
                            regs, spill, secs = st["registers"], st["spill_bytes"], round(st["compile_seconds"], 2)
                        except (ValueError, RuntimeError) as e:
                            note = f"cuda: {e}"
                    rate = ratio = bits = ""
                    if a.time and plain_rate and s in time_segments and in_budget():
                        r, rate = timed(tape, a.time, plan, a.paths, a.repeats)
                        same = r.value == plain_result.value and r.greeks == plain_result.greeks
                        bits = "same" if same else "DIFFER"
                        bad += not same
                        ratio = round(rate / plain_rate, 4)
                        rate = round(rate, 1)
                    out.writerow(row + [regs, spill, secs, a.time or "", a.paths if a.time else "",
                                        round(plain_rate, 1) if plain_rate else "", rate, ratio, bits, note])
                    fh.flush()
            print(f"zoo: {name}: {len(tape)} nodes, pipe {tape.pipe_width}, {time.perf_counter() - start:.0f} s",
                  file=sys.stderr)
    if bad:
        print(f"zoo: {bad} checkpointed kernels differ from plain", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
