"""Shared part of the paper's drivers (cliff, markets, segments): each point is
one run of experiments/scratch_sweep (plain, register and scratch kernels of the
Asian call, value + 5 Greeks, fp32, bits checked against plain), and its rows are
appended to the driver's CSV as soon as the point finishes, so a run cut short
keeps what it measured. The first CSV line is a comment row naming the machine,
the driver, the commit and the arguments; then a header; each row repeats the
point's coordinates (steps, markets, segments) before scratch_sweep's columns.

Progress goes to stderr. Exit 0 when every point ran (engines that cannot run
here are skipped with their reason), 1 when a kernel failed or differed from
plain, 2 on bad flags.
"""
import argparse
import csv
import io
import os
import shlex
import socket
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUICK_ENGINES = "cpu-jit,vulkan,opencl"  # the engines CI serves on the CPU (lavapipe, PoCL)
NOT_OFFERED = "has no scratch kernels"  # an engine without that kind (cpu-jit): its rows are left out, not failures


def int_list(text, flag):
    try:
        values = [int(v) for v in text.split(",") if v]
    except ValueError:
        raise SystemExit(f"tapelab: {flag}: expected a comma-separated list of positive integers, got '{text}'")
    if not values or min(values) <= 0:
        raise SystemExit(f"tapelab: {flag}: expected a comma-separated list of positive integers, got '{text}'")
    return values


def parser(name, description):
    ap = argparse.ArgumentParser(prog=name, description=description)
    ap.add_argument("--engines", default="cuda,vulkan,opencl", help="engines to sweep (--quick: %s)" % QUICK_ENGINES)
    ap.add_argument("--paths", type=int, default=None, help="paths per dispatch (default 1000000, --quick 2048)")
    ap.add_argument("--reps", type=int, default=None, help="timed runs per kernel, median (default 5, --quick 2)")
    ap.add_argument("--out", default=None, help="CSV file (default: standard output)")
    ap.add_argument("--quick", action="store_true", help="CI's smoke test: CPU-served engines, tiny tapes (flags given win)")
    ap.add_argument("--machine", default=socket.gethostname(), help="machine name for the header row (default: host name)")
    ap.add_argument("--sweep-bin", default=os.path.join(REPO, "build", "ci", "experiments", "scratch_sweep"),
                    help="the scratch_sweep executable (default: build/ci/experiments/scratch_sweep)")
    ap.add_argument("--commit", default=None, help="commit for the header row (default: git, else a COMMIT file, else unknown)")
    ap.add_argument("--jobs", type=int, default=None, help="kernels compiled in parallel (scratch_sweep's --jobs)")
    return ap


def finish_args(a, argv):
    if a.quick and "--engines" not in " ".join(argv):
        a.engines = QUICK_ENGINES
    a.paths = a.paths or (2048 if a.quick else 1000000)
    a.reps = a.reps or (2 if a.quick else 5)
    if a.paths <= 0 or a.reps <= 0:
        raise SystemExit("tapelab: --paths and --reps must be positive")
    if not os.access(a.sweep_bin, os.X_OK):
        raise SystemExit(f"tapelab: --sweep-bin: {a.sweep_bin} is not an executable (build the scratch_sweep target)")
    a.engine_list = [e for e in a.engines.split(",") if e]
    return a


def commit(given=None):
    if given:
        return given
    if os.path.exists(os.path.join(REPO, "COMMIT")):  # a packed tree without .git (the lent GPU machine)
        return open(os.path.join(REPO, "COMMIT")).read().strip()
    try:
        return subprocess.run(["git", "-C", REPO, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


class Writer:
    """Header comment row, CSV header, then rows flushed one point at a time."""

    def __init__(self, a, driver, coords, argv):
        self.file = open(a.out, "w", newline="") if a.out else sys.stdout
        self.file.write(f"# machine={a.machine} driver={driver} commit={commit(a.commit)} args={shlex.join(argv)}\n")
        self.coords = coords
        self.header = None
        self.rows = 0
        self.failed = False
        self.driver = driver

    def add(self, coords, sweep_csv):
        reader = csv.reader(io.StringIO(sweep_csv))
        lines = [r for r in reader if r and not any(NOT_OFFERED in cell for cell in r)]
        if not lines:
            return
        out = csv.writer(self.file, lineterminator="\n")
        if self.header is None:
            self.header = lines[0]
            out.writerow(self.coords + self.header)
        for r in lines[1:]:
            out.writerow([coords[c] for c in self.coords] + r)
            self.rows += 1
        self.file.flush()


def run_point(a, w, engine, coords, steps, markets, segments, seglens):
    """One scratch_sweep run: plain, register (window, `segments`), scratch at each seglen below the tape size."""
    cmd = [a.sweep_bin, "--engines", engine, "--paths", str(a.paths), "--steps", str(steps), "--markets",
           str(markets), "--segments", str(segments), "--seglens", ",".join(map(str, seglens)), "--reps", str(a.reps)]
    if a.jobs:
        cmd += ["--jobs", str(a.jobs)]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    took = time.time() - t0
    point = engine + " " + " ".join(f"{k} {v}" for k, v in coords.items())
    point += f" markets {markets} segments {segments}"
    if p.returncode == 2:
        sys.stderr.write(p.stderr)
        raise SystemExit(2)
    skipped = [l.strip() for l in p.stderr.splitlines() if "skipped:" in l]
    w.add(coords, p.stdout)
    rows = max(0, len([l for l in p.stdout.splitlines() if l and NOT_OFFERED not in l]) - 1)
    best = ""
    for r in list(csv.DictReader(io.StringIO(p.stdout))):
        if r.get("mpath_s"):
            best += f" {r['kernel']}{('-' + r['layout']) if r['layout'] else ''}{r['seglen'] if r['kernel'] == 'scratch' else ''}={r['mpath_s']}"
    sys.stderr.write(f"{w.driver}: {point}: {rows} rows in {took:.1f} s{':' + best if best else ''}"
                     f"{' (' + skipped[0] + ')' if skipped else ''}\n")
    failures = [l.strip() for l in p.stderr.splitlines() if ("FAILED" in l or " NO " in l) and NOT_OFFERED not in l]
    if p.returncode != 0 and (failures or rows == 0):
        w.failed = True
        sys.stderr.write(f"{w.driver}: {point}: scratch_sweep exit {p.returncode}: "
                         + " | ".join(failures or p.stderr.splitlines()[-1:])[:400] + "\n")
    return rows


def done(w):
    if w.file is not sys.stdout:
        w.file.close()
    sys.stderr.write(f"{w.driver}: {w.rows} rows{' (some kernels failed)' if w.failed else ''}\n")
    return 1 if w.failed else 0
