#!/usr/bin/python3
"""The gap table: every strategy, both families, against the exact optimum, at three budgets per tape.

For each product of the zoo (at zoo.py's table sizes; european at its default, basket at 52 steps) the
budgets are the peak_live of `optimal` at 4, 12 and 32 segments (each reachable by a segment plan),
and at each budget L:
  exact            `tapelab plan --strategy exact --budget L --checkpoint S` for S the count that gave L
                   and each of --exact-segments (its blocks: optimal's cuts at S), each within
                   --solve-seconds: the least weighted recompute over every kept set for those blocks;
                   the table's optimum is the least of them (exact_blocks), with its status, bound,
                   gap, solve time (solve_s: the solver's wall clock, its limit's clock; solve_cpu_s: the
                   processor time tapelab and the solver used, which on a shared machine is less), all the
                   solves' time (solve_total_s) and each solve (exact_solves:
                   "blocks:status:seconds:cpu_s:gap", status feasible = stopped at the limit, infeasible =
                   no kept set fits over those blocks, failed = another error);
  every strategy   its plan of least weighted recompute_cost with peak_live <= L over the segment
                   counts of --segments (`tapelab plan --all --json` for the segment strategies and
                   mincut; budget, mincut-weighted and the user's process with --budget L);
                   none = no plan of it fits.
gap = recompute_cost / exact's - 1. Exact's space is every kept set over those block structures: a
plan with other blocks (window's cuts at 12, a nested plan recomputing values twice) may lie outside
it, and a negative gap says so.
--solve-clock (default cpu): the solves' limit counts processor time (tapelab --solve-clock), so that the
load of a shared machine does not stop a search that an idle one would finish; solve_s is on that clock.
--cuda: sm_90 registers and local-memory (spill) bytes of each plan's register kernel (fp32, Greeks, one
market; NVRTC + ptxas compile-only, `gpu_kernels --engine cuda --tape`; per-value plans too, as register
kernels). --time: cpu-jit ms of each plan (`tapelab price --plan --fp32`, value and
Greeks, --paths, median of --repeats), checked equal to the plain kernel's bits.
--front N: exact's Pareto front of peak_live against weighted recompute (tapelab plan --strategy exact
--front) at N budgets from the tightest to twice the loosest, over --front-blocks blocks: rows exact-front.
--user-cmd CMD adds a strategy process (`--strategy-cmd`), by default experiments/keep_expensive.py.
One CSV (--out, written to a temporary file and renamed: never onto a special file or an input),
a comment row first (commit, arguments). --merge A.csv,B.csv,... --out FILE: one CSV from runs split over
processes (each run's comment row kept).

usage: gap_table.py [--quick] [--out FILE.csv] [--tapelab BIN] [--gpu-kernels BIN] [--products a,b]
                    [--segments 2,3,4,...] [--exact-segments 4,8,16,32] [--solve-seconds 60] [--solve-clock cpu|wall]
                    [--front N [--front-blocks 16]] [--cuda] [--time] [--paths N] [--repeats R]
                    [--user-cmd CMD]
--quick: two small tapes, one budget, three segment counts, 10 s solves, a 3-point front over 8 blocks,
cpu-jit timing (CTest runs it).
"""
import argparse
import csv
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import PRECISION, output  # noqa: E402  (the drivers' one precision, the one careful writer)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRODUCTS = {  # zoo.py's table sizes; european at its default, basket (5 assets) at 52 steps (3,439 nodes; its
    # default 252 steps is 16,439 nodes: 5 such solves per budget would not fit a run of a few hours)
    "european": {}, "asian": {"steps": 252}, "basket": {"steps": 52}, "heston": {"steps": 100}, "cev": {"steps": 100},
    "barrier": {"steps": 50}, "lookback": {"steps": 50}, "lmm": {"forwards": 20},
    "worstof": {"assets": 20, "steps": 6}, "neural": {"hidden": 8, "steps": 16}, "heat": {"points": 21, "steps": 24},
}
QUICK = {"asian": {"steps": 24}, "cev": {"steps": 12}}
SEGMENT_STRATEGIES = ["window", "uniform", "marginal", "optimal", "optimal-persistent", "auto", "two-level", "revolve",
                      "mincut"]
BUDGET_COUNTS = (4, 12, 32)
HEADER = ["tape", "nodes", "budget_from", "budget", "strategy", "family", "segments", "fits", "peak_live",
          "persistent", "recompute_ops", "recompute_cost", "gap", "exact_status", "exact_bound", "exact_gap",
          "solve_s", "solve_cpu_s", "exact_blocks", "solve_total_s", "exact_solves", "sm90_registers", "sm90_spill_bytes", "cpujit_ms", "bits", "note"]


def run(cmd, timeout=900):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""


def product_args(name, params):
    args = ["--product", name]
    for k, v in params.items():
        args += ["--param", f"{k}={v}"]
    return args


def plan_file(a, work, tag, pargs, flags):
    """Writes a plan with `tapelab plan ... --out`; returns (plan file, its JSON) or (None, error line). The
    JSON's "cpu_seconds": the processor time the command and its children (the exact solver) used, beside
    the solver's wall-clock seconds (on a shared machine they differ)."""
    path = os.path.join(work, tag + ".json")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc, _, err = run([a.tapelab, "plan", *pargs, *flags, "--out", path])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        return None, err
    with open(path) as f:
        j = json.load(f)
    j["cpu_seconds"] = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 3)
    return path, j


def metrics_row(j):
    m = j["metrics"]
    return {"segments": m["segments"], "peak_live": m["peak_live"], "persistent": m["persistent"],
            "recompute_ops": m["recompute_ops"], "recompute_cost": m["recompute_cost"],
            "family": j.get("family", "segment")}


def best_of(candidates, budget):
    fits = [c for c in candidates if c["peak_live"] <= budget]
    return min(fits, key=lambda c: (c["recompute_cost"], c["peak_live"], c["segments"])) if fits else None


def sm90(a, tape_file, path, work):
    """sm_90 registers and local memory (spill) bytes per thread of the plan's register kernel, from
    gpu_kernels' CSV (NVRTC compile-only here; a cached kernel reports them too)."""
    if not a.gpu_kernels:
        return "", "", "no gpu_kernels"
    out = os.path.join(work, "k.csv")
    cmd = [a.gpu_kernels, "--engine", "cuda", "--tape", tape_file, "--markets", "1", "--greeks", "on", "--kinds",
           "register", "--plan", path, "--out", out]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    rows = []
    if p.returncode == 0 and os.path.exists(out):
        with open(out) as f:
            rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#")) if r.get("kind") == "register"]
    if rows and rows[0].get("registers"):
        return rows[0]["registers"], rows[0].get("spill_bytes", ""), ""
    last = (p.stderr.strip().splitlines() or ["no register row"])[-1]
    return "", "", "sm90: " + last[:120]


def cpujit(a, pargs, path):
    """Median ms of --repeats runs of the plan on cpu-jit, and its value and Greeks (for the bits)."""
    times, bits = [], None
    for r in range(a.repeats):
        flags = ["--plan", path] if path else ["--checkpoint", "off"]
        rc, out, err = run([a.tapelab, "price", *pargs, *flags, "--engine", "cpu-jit", "--paths", str(a.paths),
                            "--" + PRECISION, "--json"])
        if rc != 0:
            return "", None, "cpu-jit: " + err[:120]
        j = json.loads(out)
        times.append(1000 * j["seconds"])
        bits = json.dumps([j["value"], j["greeks"]], sort_keys=True)
    return f"{statistics.median(times):.3f}", bits, ""


def measure(a, pargs, path, pj, family, work, plain_bits):
    """sm_90 registers and spills (--cuda) and cpu-jit ms and bits (--time) of one plan file, once per
    plan: the same cuts, nested cuts and kept set at another budget or from another strategy reuse them."""
    key = json.dumps([name_of(pargs), pj.get("cuts"), pj.get("inner"), pj.get("keep"), family], sort_keys=True)
    if key in a.memo:
        return a.memo[key]
    cells, notes = {}, []
    if a.cuda:  # per-value plans too: register kernels (gpu/codegen)
        reg, spill, note = sm90(a, os.path.join(work, "tape.tape"), path, work)
        cells.update({"sm90_registers": reg, "sm90_spill_bytes": spill})
        if note:
            notes.append(note)
    if a.time:
        ms, bits, note = cpujit(a, pargs, path)
        cells["cpujit_ms"] = ms
        cells["bits"] = "" if bits is None else ("same" if bits == plain_bits else "DIFFERENT")
        if note:
            notes.append(note)
    a.memo[key] = {"cells": cells, "notes": notes}
    return a.memo[key]


def name_of(pargs):
    return " ".join(pargs)


def table_for(a, name, params, work, w):
    pargs = product_args(name, params)
    rc, _, err = run([a.tapelab, "tape", *pargs, "--out", os.path.join(work, "tape.tape")])  # gpu_kernels reads a file
    if rc != 0:
        sys.exit(f"gap_table.py: {name}: tapelab tape: {err}")
    rc, out, err = run([a.tapelab, "plan", *pargs, "--all", "--json", "--strategies", ",".join(SEGMENT_STRATEGIES),
                        "--min-segments", str(min(a.segments)), "--max-segments", str(max(a.segments))])
    if rc != 0:
        sys.exit(f"gap_table.py: {name}: tapelab plan --all: {err}")
    allj = json.loads(out)
    nodes = allj["tape"]["nodes"]
    rows = [r for r in allj["rows"] if r["requested_segments"] in a.segments]
    cands = {}
    for r in rows:
        c = metrics_row(r)
        c["family"] = "per-value" if r["strategy"] == "mincut" else "segment"
        c["flags"] = ["--strategy", r["strategy"], "--checkpoint", str(r["requested_segments"])]
        cands.setdefault(r["strategy"], []).append(c)
    optimal = {r["requested_segments"]: r["metrics"]["peak_live"] for r in rows if r["strategy"] == "optimal"}
    budgets = sorted({(optimal[s], s) for s in a.budget_counts if s in optimal})
    plain_bits = cpujit(a, pargs, None)[1] if a.time else None
    for budget, s_from in budgets:
        extra = {}
        for strategy in ["budget", "mincut-weighted", "user"]:
            for s in (a.segments if strategy != "budget" else [16]):
                flags = ["--strategy", strategy, "--checkpoint", str(s), "--budget", str(budget)]
                if strategy == "user":
                    flags = ["--strategy-cmd", a.user_cmd, "--checkpoint", str(s), "--budget", str(budget)]
                path, j = plan_file(a, work, f"{name}-{strategy}-{s}", pargs, flags)
                if path:
                    c = metrics_row(j)
                    c["flags"] = flags
                    extra.setdefault(strategy, []).append(c)
        # Exact over the blocks optimal cuts at each count of --exact-segments (and the count that set the
        # budget): the least of those solves is the table's optimum.
        exact, ej, solves = None, "no exact plan", []
        for s in sorted({s_from} | {c for c in a.exact_segments if c in a.segments}):
            flags = ["--strategy", "exact", "--checkpoint", str(s), "--budget", str(budget),
                     "--solve-seconds", str(a.solve_seconds), "--solve-clock", a.solve_clock]
            path, j = plan_file(a, work, f"{name}-exact-{budget}-{s}", pargs, flags)
            if path is None and "cannot run here" in j:
                print(f"gap_table.py: skipped: {j}", file=sys.stderr)
                sys.exit(3)
            if path is None:
                ej = j
                solves.append(f"{s}:{'infeasible' if 'infeasible' in j else 'failed'}")
                continue
            c = metrics_row(j)
            c["flags"], c["solver"] = flags, j.get("solver", {})
            sv = c["solver"]
            c["cpu_seconds"] = j["cpu_seconds"]
            solves.append(f"{s}:{sv.get('status', '')}:{sv.get('seconds', '')}:{j['cpu_seconds']}:{sv.get('gap', '')}")
            c["solve_total"] = (exact or {}).get("solve_total", 0) + c["solver"].get("seconds", 0)
            if c["peak_live"] <= budget and (exact is None or c["recompute_cost"] < exact["recompute_cost"]):
                c["solve_total"], exact = c["solve_total"], c
            elif exact is not None:
                exact["solve_total"] = c["solve_total"]
        every = dict(cands, **extra)
        every["exact"] = [exact] if exact else []
        for strategy, cs in every.items():
            best = best_of(cs, budget)
            row = {"tape": name, "nodes": nodes, "budget_from": f"optimal@{s_from}", "budget": budget,
                   "strategy": strategy}
            if not best:
                row.update({"fits": "no", "note": "no plan within the budget" if cs else (ej if strategy == "exact" else "no plan")})
                w.writerow(row)
                continue
            row.update({k: best[k] for k in ("family", "segments", "peak_live", "persistent", "recompute_ops",
                                              "recompute_cost")})
            row["fits"] = "yes"
            if exact:
                e = exact["recompute_cost"]
                row["gap"] = f"{(best['recompute_cost'] / e - 1) if e > 0 else (0.0 if best['recompute_cost'] == 0 else float('inf')):.4f}"
                sv = exact["solver"]
                row.update({"exact_status": sv.get("status", ""), "exact_bound": sv.get("bound", ""),
                            "exact_gap": sv.get("gap", ""), "solve_s": sv.get("seconds", ""),
                            "solve_cpu_s": exact["cpu_seconds"],
                            "exact_blocks": exact["segments"], "solve_total_s": round(exact["solve_total"], 3),
                            "exact_solves": " ".join(solves)})
            notes = []
            if a.cuda or a.time:
                path, pj = plan_file(a, work, f"{name}-{strategy}-{budget}-best", pargs, best["flags"])
                measured = measure(a, pargs, path, pj, best["family"], work, plain_bits) if path else {}
                row.update(measured.get("cells", {}))
                notes += measured.get("notes", [])
            row["note"] = "; ".join(notes)
            w.writerow(row)
    if a.front and budgets:
        front_rows(a, name, nodes, pargs, budgets, w)


def front_rows(a, name, nodes, pargs, budgets, w):
    """--front N: exact's Pareto front (`tapelab plan --strategy exact --front`) over --front-blocks blocks at N
    budgets from the table's tightest to twice its loosest, one solve each within --solve-seconds, the model
    built once: rows of strategy exact-front."""
    lo, hi = budgets[0][0], 2 * budgets[-1][0]
    points = sorted({round(lo + (hi - lo) * k / max(1, a.front - 1)) for k in range(a.front)})
    cmd = [a.tapelab, "plan", *pargs, "--strategy", "exact", "--checkpoint", str(a.front_blocks), "--front",
           ",".join(map(str, points)), "--solve-seconds", str(a.solve_seconds), "--solve-clock", a.solve_clock, "--json"]
    rc, out, err = run(cmd, timeout=int(a.solve_seconds * len(points) * 70 + 60))
    if rc != 0:
        w.writerow({"tape": name, "nodes": nodes, "budget_from": "front", "strategy": "exact-front", "fits": "no",
                    "note": "front: " + err[:160]})
        return
    for p in json.loads(out)["front"]:
        row = {"tape": name, "nodes": nodes, "budget_from": "front", "budget": p["budget"], "strategy": "exact-front",
               "family": "per-value", "segments": a.front_blocks, "exact_status": p["status"]}
        if "peak_live" in p:
            row.update({"fits": "yes", "peak_live": p["peak_live"], "recompute_ops": p["recompute_ops"],
                        "recompute_cost": p["recompute_cost"], "exact_bound": p["bound"], "exact_gap": p["gap"],
                        "solve_s": p["seconds"], "exact_blocks": a.front_blocks})
        else:
            row.update({"fits": "no", "note": p["status"]})
        w.writerow(row)


def bad_input(line):
    """One line and exit 2 (a flag or a file the user named is wrong)."""
    print(line, file=sys.stderr)
    sys.exit(2)


def write_out(path, text, inputs):
    """benchlib/output.py's careful writer (a temporary file renamed onto the target; never onto a special file
    or a file the run reads); a refusal is one line and exit 2."""
    try:
        output.write_text(path, text, inputs)
    except output.OutputError as e:
        bad_input(f"gap_table.py: {e}")


def merge(paths, out):
    """--merge A.csv,B.csv,...: one table from runs split over processes (their comment rows first, in order;
    the columns of HEADER, a cell a file lacks (an older run's) left empty), through the careful writer."""
    comments, body = [], []
    for path in paths:
        try:
            with open(path, newline="") as f:
                lines = f.read().splitlines()
        except OSError as e:
            bad_input(f"gap_table.py: --merge: {path}: {e.strerror}")
        comments += [line for line in lines if line.startswith("#")]
        rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
        unknown = sorted(set(rows[0]) - set(HEADER)) if rows else ["(no rows)"]
        if unknown:
            bad_input(f"gap_table.py: --merge: {path}: not a gap table (columns {', '.join(unknown)[:80]})")
        body += rows
    buf = io.StringIO()
    buf.write("\n".join(comments) + "\n")
    w = csv.DictWriter(buf, fieldnames=HEADER)
    w.writeheader()
    w.writerows(body)
    write_out(out, buf.getvalue(), paths)
    print(f"gap_table.py: wrote {out} ({len(body)} rows from {len(paths)} files)", file=sys.stderr)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "tapelab-gap", "gap.csv"))
    p.add_argument("--tapelab", default=os.path.join(REPO, "build", "ci", "cli", "tapelab"))
    p.add_argument("--gpu-kernels", default=os.path.join(REPO, "build", "ci", "experiments", "gpu_kernels"))
    p.add_argument("--products", default="")
    p.add_argument("--segments", default="2,3,4,6,8,12,16,24,32")
    p.add_argument("--solve-seconds", type=float, default=60)
    p.add_argument("--exact-segments", default="4,8,16,32")
    p.add_argument("--solve-clock", default="cpu", choices=["cpu", "wall"],
                   help="the clock of --solve-seconds (tapelab's --solve-clock): cpu, so that a shared machine's load "
                        "does not end a search early")
    p.add_argument("--front", type=int, default=0, help="exact's Pareto front at this many budgets (0: none)")
    p.add_argument("--front-blocks", type=int, default=16)
    p.add_argument("--cuda", action="store_true")
    p.add_argument("--time", action="store_true")
    p.add_argument("--paths", type=int, default=16384)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--user-cmd", default="/usr/bin/python3 " + os.path.join(REPO, "experiments", "keep_expensive.py"))
    p.add_argument("--merge", default="", help="A.csv,B.csv,...: write one table from runs split over processes")
    a = p.parse_args(argv)
    if a.merge:
        return merge(a.merge.split(","), a.out)
    a.segments = sorted({int(x) for x in a.segments.split(",") if x})
    a.budget_counts = BUDGET_COUNTS
    a.exact_segments = sorted({int(x) for x in a.exact_segments.split(",") if x})
    a.memo = {}
    products = QUICK if a.quick else PRODUCTS
    if a.quick:
        a.segments, a.budget_counts, a.solve_seconds, a.time, a.repeats, a.paths = [2, 4, 8], (4,), 10, True, 1, 4096
        a.front, a.front_blocks = a.front or 3, 8
    if a.products:
        products = {k: (QUICK if a.quick else PRODUCTS)[k] for k in a.products.split(",")}
    if a.gpu_kernels and not os.path.exists(a.gpu_kernels):
        a.gpu_kernels = None
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=HEADER, extrasaction="ignore")
    commit = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty", "--abbrev=12"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    buf.write(f"# gap_table.py commit {commit} args {' '.join(argv)}\n")
    w.writeheader()
    with tempfile.TemporaryDirectory(prefix="tapelab-gap-") as work:
        for name, params in products.items():
            print(f"gap_table.py: {name}", file=sys.stderr, flush=True)
            table_for(a, name, params, work, w)
            write_out(a.out, buf.getvalue(), [])  # what is done so far, each tape
    print(f"gap_table.py: wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
