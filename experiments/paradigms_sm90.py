#!/usr/bin/env python3
"""The two paradigms of checkpointing as sm_90 register kernels, compiled here without a GPU (issue 47).

Per zoo tape (gap_table.py's sizes) at one budget (the peak_live of `optimal` at --segments segments: the
gap table's middle budget), the plans of each family within it: segment plans (`budget`: least weighted
recompute over segment cuts; `optimal` at --segments) and per-value plans (`exact`: HiGHS's optimum over
kept sets at --segments blocks; `mincut-weighted`). Each plan's register kernel for 1 and 7 markets
(value and Greeks, fp32, the cuda engine's defaults) is compiled by NVRTC (gpu_kernels --engine cuda,
compile-only) and counted by scripts/sass-count.py: registers, spill-store bytes, and sm_90 instructions a
path (thread instructions, loops weighted by their trips): what a GPU would issue. Several markets are
compiled with config markets=copies (each market's code written out), so that every instruction a path
issues is counted (sass-count does not weigh the market loop of the default markets=loop). The plan's own
metrics (peak_live, weighted recompute, planner/metrics.h) beside them. Timing needs the lent GPU:
scripts/gpu/kernels-vs-peers.sh runs these kernels there.

usage: paradigms_sm90.py [--tapelab BIN] [--gpu-kernels BIN] [--products asian,heston,...] [--segments 12]
                         [--markets 1,7] [--solve-seconds 60] [--out FILE.csv] [--plans-dir DIR]
Needs nvdisasm on PATH or --nvdisasm (scripts/sass-count.py says where to get it).
"""
import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import output  # noqa: E402  (the one careful writer)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = {"asian": {"steps": 252}, "heston": {"steps": 100}, "cev": {"steps": 100}, "barrier": {"steps": 50},
         "lookback": {"steps": 50}, "european": {}, "basket": {"steps": 52}}
PLANS = [("budget", "segment"), ("optimal", "segment"), ("exact", "per-value"), ("mincut-weighted", "per-value")]
HEADER = ["tape", "nodes", "budget", "strategy", "family", "segments", "peak_live", "recompute_cost", "exact_status",
          "markets", "registers", "spill_bytes", "instructions_per_path", "instructions_per_market_path", "note"]


def run(argv, what):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{what}: exit {p.returncode}: {(p.stderr or p.stdout).strip().splitlines()[-1:]}")
    return p.stdout


def product_args(name):
    args = ["--product", name]
    for k, v in SIZES[name].items():
        args += ["--param", f"{k}={v}"]
    return args


def plan(a, name, strategy, budget, out):
    argv = [a.tapelab, "plan", *product_args(name), "--strategy", strategy, "--checkpoint", str(a.segments), "--json",
            "--out", out]
    if strategy in ("budget", "exact", "mincut-weighted"):
        argv += ["--budget", str(budget)]
    if strategy == "exact":
        argv += ["--solve-seconds", str(a.solve_seconds), "--solve-clock", "cpu"]
    j = json.loads(run(argv, f"{name} {strategy}"))
    return j


def solver_status(plan_file):
    """The exact solve's status as the plan file keeps it ("optimal", "feasible"...; "" for a heuristic's plan)."""
    with open(plan_file) as f:
        return (json.load(f).get("solver") or {}).get("status", "")


def sass(a, name, plan_file, markets, work):
    dump = tempfile.mkdtemp(dir=work)
    tape = os.path.join(work, f"{name}.tape")
    if not os.path.exists(tape):
        run([a.tapelab, "tape", *product_args(name), "--out", tape], f"{name} tape")
        if a.plans_dir:
            with open(tape, "rb") as f:
                output.write_bytes(os.path.join(a.plans_dir, f"{name}.tape"), f.read())
    argv = [a.gpu_kernels, "--engine", "cuda", "--tape", tape, "--plan", plan_file, "--markets", str(markets),
            "--greeks", "on", "--kinds", "register", "--paths", "1000", "--reps", "1", "--dump", dump]
    if markets > 1:  # straight-line markets: sass-count weighs time loops, not the market loop (markets=loop)
        argv += ["--config", "markets=copies"]
    done = subprocess.run(argv, capture_output=True, text=True)  # compile-only here: it compiles, dumps, cannot run
    sources = [f for f in os.listdir(dump) if f.endswith(".cu")]
    if not sources:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return {"note": f"no kernel dumped (gpu_kernels exit {done.returncode}: {last[:120]})"}
    p = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "sass-count.py"), os.path.join(dump, sources[0])]
                       + (["--nvdisasm", a.nvdisasm] if a.nvdisasm else []), capture_output=True, text=True)
    text = p.stdout + p.stderr
    regs = re.search(r"(\d+) registers, (\d+) bytes spill stores", text)
    per = re.search(r"per path \(thread instructions\): (\d+)", text)
    if not regs or not per:
        return {"note": "sass-count: " + text.strip().splitlines()[-1][:120] if text.strip() else "sass-count failed"}
    return {"registers": regs.group(1), "spill_bytes": regs.group(2), "instructions_per_path": per.group(1),
            "instructions_per_market_path": f"{int(per.group(1)) / markets:.0f}"}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tapelab", default=os.path.join(REPO, "build", "ci", "cli", "tapelab"))
    ap.add_argument("--gpu-kernels", default=os.path.join(REPO, "build", "ci", "experiments", "gpu_kernels"))
    ap.add_argument("--nvdisasm", default="")
    ap.add_argument("--products", default="asian,heston,cev,barrier,lookback")
    ap.add_argument("--segments", type=int, default=12)
    ap.add_argument("--markets", default="1,7")
    ap.add_argument("--solve-seconds", type=int, default=60)
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "tapelab-paradigms", "paradigms-sm90.csv"))
    ap.add_argument("--plans-dir", default="", help="also keep each tape and plan file here (TAPE.tape, TAPE-STRATEGY.json): "
                                                   "what scripts/gpu/kernels-vs-peers.sh's paradigms mode times")
    a = ap.parse_args(argv)
    products = [p for p in a.products.split(",") if p]
    bad = [p for p in products if p not in SIZES]
    if bad or not products:
        ap.error(f"--products: unknown '{bad[0] if bad else ''}' (known: {', '.join(SIZES)})")  # one line, exit 2
    try:
        markets = [int(m) for m in a.markets.split(",")]
    except ValueError:
        ap.error(f"--markets: expected counts like 1,7, got '{a.markets}'")
    if not markets or not all(1 <= m <= 8 for m in markets) or not 2 <= a.segments <= 64 or a.solve_seconds < 1:
        ap.error("--markets take 1..8, --segments 2..64, --solve-seconds >= 1")
    for tool in (a.tapelab, a.gpu_kernels):
        if not os.access(tool, os.X_OK):
            ap.error(f"{tool}: not an executable (build the ci preset, or --tapelab / --gpu-kernels)")
    try:  # refused before the compiles, not after them
        output.careful.check_output(a.out)
    except (output.careful.OutputRefused, output.careful.OutputFailed) as e:
        ap.error(str(e))
    rows = []
    commit = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty", "--abbrev=12"], capture_output=True,
                            text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="tapelab-paradigms-") as work:
        for name in products:
            base = plan(a, name, "optimal", 0, os.path.join(work, "base.json"))
            budget = base["plan"]["metrics"]["peak_live"]
            for strategy, family in PLANS:
                path = os.path.join(work, f"{name}-{strategy}.json")
                try:
                    j = plan(a, name, strategy, budget, path)
                except RuntimeError as e:
                    rows.append({"tape": name, "budget": budget, "strategy": strategy, "family": family, "note": str(e)[:160]})
                    continue
                m = j["plan"]["metrics"]
                if a.plans_dir:
                    os.makedirs(a.plans_dir, exist_ok=True)
                    with open(path, "rb") as f:
                        output.write_bytes(os.path.join(a.plans_dir, os.path.basename(path)), f.read())
                for k in markets:
                    r = {"tape": name, "nodes": j["tape"]["nodes"], "budget": budget, "strategy": strategy, "family": family,
                         "segments": m["segments"], "peak_live": m["peak_live"],
                         "recompute_cost": f"{m['recompute_cost']:.0f}",
                         "exact_status": solver_status(path), "markets": k}
                    r.update(sass(a, name, path, k, work))
                    rows.append(r)
                    print(f"paradigms_sm90: {name} {strategy} x{k}: {r.get('registers', '-')} registers, "
                          f"{r.get('spill_bytes', '-')} B spilled, {r.get('instructions_per_path', '-')} instructions a path "
                          f"{r.get('note', '')}", file=sys.stderr)
    buf = io.StringIO()
    buf.write(f"# paradigms_sm90.py commit={commit} args={' '.join(argv)} (sm_90, NVRTC compile-only, fp32, value + Greeks)\n")
    w = csv.DictWriter(buf, fieldnames=HEADER)
    w.writeheader()
    w.writerows(rows)
    output.write_text(a.out, buf.getvalue())
    print(f"paradigms_sm90: wrote {a.out} ({len(rows)} rows)", file=sys.stderr)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except output.OutputError as e:
        sys.exit(f"paradigms_sm90.py: {e}")
