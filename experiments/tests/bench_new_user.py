#!/usr/bin/python3
"""A new user's first bench (CTest experiment_bench_quick): a strategy file written outside the project,
a strategy process (experiments/keep_expensive.py), three zoo tapes, three segment counts, cpu-jit.

Asserts: exit 0 within 5 minutes; the CSV has every tape x strategy x count, the user's function and the
process under their own names, each timed row with its median inside its interval, fp32, the plain kernel's
bits; the table names the device and the load and marks the user's strategy; the figures exist. Then that
bad input is one line and exit 2 (a function that raises, an unknown product, an --out onto the strategy's file).

    bench_new_user.py --tapelab-bin BIN --out DIR [--full]   (--full: the tapes at the catalog's sizes)
"""
import argparse
import csv
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXPERIMENTS = os.path.dirname(HERE)

MINE = '''
import numpy as np


def every_third_least_live(tape, segments):
    """Cut near even targets where the fewest values are live, looking a third of a segment each way."""
    live, n = tape.live_across(), len(tape)
    cuts = []
    for s in range(1, segments):
        t = s * n // segments
        lo, hi = max(t - n // (3 * segments), (cuts[-1] + 1) if cuts else 1), min(t + n // (3 * segments), n - 1)
        if lo <= hi:
            cuts.append(lo + int(np.argmin(live[lo:hi + 1])))
    return cuts
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tapelab-bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--full", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    mine = os.path.join(a.out, "mine.py")
    with open(mine, "w") as f:
        f.write(MINE)
    tapes = "cev,heston,barrier" if a.full else "cev:steps=16,heston:steps=12,barrier:steps=16"
    cmd = [sys.executable, os.path.join(EXPERIMENTS, "bench.py"), "--python", mine, "--strategy-cmd",
           f"{sys.executable} {os.path.join(EXPERIMENTS, 'keep_expensive.py')}", "--tapes", tapes, "--segments", "4,8,16",
           "--engines", "cpu-jit", "--tapelab-bin", a.tapelab_bin, "--out", a.out]
    if not a.full:
        cmd.append("--quick")
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    took = time.perf_counter() - t0
    print(p.stderr[-3000:], file=sys.stderr)
    assert p.returncode == 0, p.returncode
    print(f"bench: {took:.0f} s")
    assert took < 300, f"the bench took {took:.0f} s, over the 5 minutes a new user is promised"
    with open(os.path.join(a.out, "bench.csv")) as f:
        head = [line for line in f if line.startswith("#")]
        f.seek(0)
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    assert any("devices cpu-jit:" in h and "load " in h and "precision fp32" in h for h in head), head
    labels = {r["tape"] for r in rows}
    assert len(labels) == 3, labels
    metric = [r for r in rows if not r["engine"]]
    for who in ("every_third_least_live", "keep-expensive", "window", "optimal", "revolve", "mincut"):
        got = {(r["tape"], r["requested_segments"]) for r in metric if r["strategy"] == who and r["peak_live"]}
        assert len(got) == 9, (who, sorted(got))
    assert all(r["gap"] != "" and float(r["gap"]) >= -1e-9 for r in metric if r["peak_live"]), "gaps are >= 0"
    timed = [r for r in rows if r["engine"] == "cpu-jit"]
    assert {r["strategy"] for r in timed} >= {"plain", "every_third_least_live", "keep-expensive", "window", "optimal"}
    for r in timed:
        assert float(r["ms_lo"]) <= float(r["ms"]) <= float(r["ms_hi"]), r
        assert r["precision"] == "fp32" and r["bits"] == "same" and r["device"], r
        if r["strategy"] != "plain":
            assert float(r["vs_plain_lo"]) <= float(r["vs_plain"]) <= float(r["vs_plain_hi"]), r
    table = open(os.path.join(a.out, "bench.md")).read()
    assert "**every_third_least_live**" in table and "**keep-expensive**" in table and "[" in table
    for fig in ("bench_pareto.png", "bench_speed.png"):
        assert os.path.getsize(os.path.join(a.out, fig)) > 10000, fig
    bad(a, mine)
    print(f"{len(rows)} rows, {len(timed)} timed on cpu-jit, in {took:.0f} s")


def bad(a, mine):
    """Bad input: one line naming what, exit 2, nothing overwritten."""
    raising = os.path.join(a.out, "raising.py")
    with open(raising, "w") as f:
        f.write("def broken(tape, segments):\n    return 1 / 0\n")
    base = [sys.executable, os.path.join(EXPERIMENTS, "bench.py"), "--strategies", "window", "--segments", "4",
            "--engines", "", "--tapelab-bin", a.tapelab_bin, "--out", os.path.join(a.out, "bad")]
    for extra, says in ((["--python", raising, "--tapes", "cev:steps=8"], "raised ZeroDivisionError"),
                        (["--tapes", "nosuch"], "unknown product 'nosuch'"),
                        (["--python", mine, "--tapes", "cev:steps=8", "--out", mine], "not a folder")):
        before = open(mine).read()
        p = subprocess.run(base + extra, capture_output=True, text=True)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and says in p.stderr, (extra, p.returncode, p.stderr)
        assert open(mine).read() == before


if __name__ == "__main__":
    main()
