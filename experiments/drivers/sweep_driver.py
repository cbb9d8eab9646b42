"""Shared part of the paper's drivers (cliff, markets, segments, strategies): each point is
one run of experiments/scratch_sweep (plain, register and scratch kernels of the
Asian call, or of --tape FILE, value + Greeks, fp32, bits checked against plain), and its rows are
appended to the driver's CSV as soon as the point finishes, so a run cut short
keeps what it measured. The first CSV line is a comment row naming the machine,
the driver, the commit and the arguments; then a header; each row repeats the
point's coordinates (steps, markets, segments) before scratch_sweep's columns:
ms is the median of --reps timed runs, ms_min and ms_max their spread (the
error bars of papers/plot.py), reps their count; tape the tape that ran (the
file's name for --tape FILE, whose rows leave steps empty: it does not apply).

Progress goes to stderr. Exit 0 when every point ran (engines that cannot run
here are skipped with their reason), 1 when a kernel failed or differed from
plain, 2 on bad flags (docs/cli.md's table). The CSV goes through careful.py's
OutputFile, refused before anything runs when it is an input of the run (the
--tape file, the binaries) or no file (a directory).
"""
import csv
import io
import os
import shlex
import socket
import subprocess
import sys
import time

import careful

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUICK_ENGINES = "cpu-jit,vulkan,opencl"  # the engines CI serves on the CPU (lavapipe, PoCL)
NOT_OFFERED = "has no scratch kernels"  # an engine without that kind (cpu-jit): its rows are left out, not failures
# scratch_sweep's CSV header (experiment_sweep_driver_header checks they agree)
SWEEP_HEADER = ("engine,kernel,layout,strategy,seglen,segments,slots,paths,markets,ms,ms_min,ms_max,reps,mpath_s,"
                "ratio_to_plain,registers,spill_bytes,scratch_bytes,compile_s,cache_hit,bit_exact_vs_plain,price,delta,kernel_stats,notes,math,config,tape").split(",")


PROGRAM = "sweep_driver"  # the driver's name, for its messages (parser() sets it)


def bad(message):
    """Bad input: one line on stderr, "DRIVER: message" (control characters escaped), exit 2."""
    sys.stderr.write(f"{PROGRAM}: {careful.one_line(message)}\n")
    raise SystemExit(careful.EXIT_INVALID)


def run_inputs(a):
    """Every file the run reads that a user names: an --out that is one of them is refused."""
    return [p for p in (getattr(a, "tape", None), a.sweep_bin, getattr(a, "tapelab_bin", None)) if p]


STEPS = careful.integer(1, 1000000)  # the Asian call's --steps, as tapelab takes them


def int_list(text, flag, hi=None):
    items = [v for v in text.split(",") if v]
    if not all(v.isascii() and v.isdigit() for v in items):
        bad(f"{flag}: expected a comma-separated list of positive integers, got '{text}'")
    values = [int(v) for v in items]
    if hi is not None and values and max(values) > hi:
        bad(f"{flag}: expected integers in 1..{hi}, got '{text}'")
    if not values or min(values) <= 0:
        bad(f"{flag}: expected a comma-separated list of positive integers, got '{text}'")
    return values


def parser(name, description):
    global PROGRAM
    PROGRAM = name
    ap = careful.Parser(prog=name, description=description)
    ap.add_argument("--engines", default="cuda,vulkan,opencl", help="engines to sweep (--quick: %s)" % QUICK_ENGINES)
    ap.add_argument("--paths", type=careful.integer(1, 2**48), default=None, help="paths per dispatch (default 1000000, --quick 2048)")
    ap.add_argument("--reps", "--repeat", dest="reps", type=careful.integer(1, 1000), default=None,
                    help="timed runs per kernel: the median is ms, their spread ms_min and ms_max (default 5, --quick 2)")
    ap.add_argument("--out", default=None, help="CSV file (default: standard output)")
    ap.add_argument("--quick", action="store_true", help="CI's smoke test: CPU-served engines, tiny tapes (flags given win)")
    ap.add_argument("--machine", default=socket.gethostname(), help="machine name for the header row (default: host name)")
    ap.add_argument("--sweep-bin", default=os.path.join(REPO, "build", "ci", "experiments", "scratch_sweep"),
                    help="the scratch_sweep executable (default: build/ci/experiments/scratch_sweep)")
    ap.add_argument("--tapelab-bin", default=os.path.join(REPO, "build", "ci", "cli", "tapelab"),
                    help="the tapelab executable, for strategies and peers (default: build/ci/cli/tapelab)")
    ap.add_argument("--commit", default=None, help="commit for the header row (default: git, else a COMMIT file, else unknown)")
    ap.add_argument("--jobs", type=careful.integer(1, 256), default=None, help="kernels compiled in parallel (scratch_sweep's --jobs)")
    ap.add_argument("--tape", default=None,
                    help="a .tape file of yours instead of the built-in Asian call (its --steps then do not apply)")
    return ap


def finish_args(a, argv):
    if a.quick and "--engines" not in " ".join(argv):
        a.engines = QUICK_ENGINES
    a.paths = a.paths if a.paths is not None else 2048 if a.quick else 1000000
    a.reps = a.reps if a.reps is not None else 2 if a.quick else 5
    if not os.access(a.sweep_bin, os.X_OK):
        bad(f"--sweep-bin: {a.sweep_bin} is not an executable (build the scratch_sweep target)")
    if a.tape and not os.path.isfile(a.tape):
        bad(f"--tape: {a.tape}: no such file")
    if a.tape and getattr(a, "steps", None):
        bad("--steps: does not apply with --tape (the Asian call's steps; the tape has its own)")
    a.engine_list = [e for e in a.engines.split(",") if e]
    if not a.engine_list:
        bad(f"--engines: names no engine, got '{a.engines}'")
    if a.out:
        try:
            careful.check_output(a.out, run_inputs(a))
        except careful.OutputRefused as e:
            bad(str(e))
    return a


def steps_coord(a, steps):
    """The steps coordinate of a row: the Asian call's steps, empty for --tape FILE (they do not apply)."""
    return "" if getattr(a, "tape", None) else steps


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


# TAPELAB_* variables that locate things rather than change a kernel: not recorded as knobs.
_NOT_KNOBS = {"TAPELAB_CACHE_DIR", "TAPELAB_SOURCE_DIR", "TAPELAB_DUMP", "TAPELAB_COMMIT"}


def knobs_note():
    """' knobs=A=1;B=2' for the TAPELAB_* knobs set in this environment (they reach every tapelab run
    a driver starts, and some change the bits or the speed), or '' when none is set. ';' because a value
    may hold commas (TAPELAB_HIP_ARCH); spaces in a value become '_'."""
    set_ = sorted(f"{k}={v}".replace(" ", "_") for k, v in os.environ.items()
                  if k.startswith("TAPELAB_") and k not in _NOT_KNOBS)
    return f" knobs={';'.join(set_)}" if set_ else ""


class Writer:
    """Header comment row, CSV header, then rows flushed one point at a time."""

    def __init__(self, a, driver, coords, argv):
        self.file = careful.OutputFile(a.out, run_inputs(a)) if a.out else sys.stdout
        self.file.write(f"# machine={a.machine} driver={driver} commit={commit(a.commit)} args={shlex.join(argv)}{knobs_note()}\n")
        self.coords = coords
        self.header = None
        self.rows = 0
        self.skipped = 0
        self.failed = False
        self.driver = driver
        self.tape = os.path.basename(a.tape) if getattr(a, "tape", None) else None

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

    def skip(self, coords, **cells):
        """A row for a point that did not run (e.g. its compile ran past --point-timeout): its coords and the
        scratch_sweep columns given (engine, kernel, strategy, markets, notes...), the rest empty."""
        out = csv.writer(self.file, lineterminator="\n")
        if self.header is None:
            self.header = SWEEP_HEADER
            out.writerow(self.coords + self.header)
        cells.setdefault("tape", self.tape or (f"asian-{coords['steps']}" if coords.get("steps") else ""))
        out.writerow([coords[c] for c in self.coords] + [cells.get(h, "") for h in self.header])
        self.file.flush()
        self.skipped += 1


def sweep_command(a, engine, steps, markets, segments, seglens, plan=None, paths=None, reps=None, jobs=None, config=None):
    """scratch_sweep's command line: plain, register (window at `segments`, or `plan`), scratch at each seglen;
    `config`: the kernel configuration's text over the engine's defaults (--config)."""
    cmd = [a.sweep_bin, "--engines", engine, "--paths", str(paths or a.paths), "--steps", str(steps), "--markets",
           str(markets), "--seglens", ",".join(map(str, seglens)), "--reps", str(reps or a.reps)]
    cmd += ["--plan", plan] if plan else ["--segments", str(segments)]
    cmd += ["--config", config] if config else []
    cmd += ["--tape", a.tape] if getattr(a, "tape", None) else []
    if jobs or a.jobs:
        cmd += ["--jobs", str(jobs or a.jobs)]
    return cmd


def precompile(a, label, points, jobs, timeout):
    """Fills the kernel caches before anything is timed: one tiny scratch_sweep run per point (64 paths, one
    rep), `jobs` side by side, each cut at `timeout` seconds. points: [(key, command)]. Returns {key: reason}
    of the points that ran past the limit (their timed run would too) or could not run."""
    import concurrent.futures as cf
    failed = {}

    def one(key, cmd):
        cmd = list(cmd)
        cmd[cmd.index("--paths") + 1] = "64"
        cmd[cmd.index("--reps") + 1] = "1"
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return key, f"compile ran past {timeout} s", time.time() - t0
        return key, (f"scratch_sweep exit 2: {p.stderr.strip()[-200:]}" if p.returncode == 2 else None), time.time() - t0

    t0 = time.time()
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for key, why, took in pool.map(lambda kc: one(*kc), points):
            sys.stderr.write(f"{label}: compiled {key} in {took:.1f} s{' (' + why + ')' if why else ''}\n")
            if why:
                failed[key] = why
    sys.stderr.write(f"{label}: precompiled {len(points)} points in {time.time() - t0:.1f} s, {jobs} at a time\n")
    return failed


def run_point(a, w, engine, coords, steps, markets, segments, seglens, plan=None, timeout=None, label=None, config=None):
    """One scratch_sweep run: plain, register (window, `segments`, or `plan`), scratch at each seglen below
    the tape size. A run past `timeout` seconds is killed and its point written as a skipped row."""
    cmd = sweep_command(a, engine, steps, markets, segments, seglens, plan, config=config)
    point = label or (engine + " " + " ".join(f"{k} {v}" for k, v in coords.items() if v != "") + f" markets {markets} segments {segments}")
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        sys.stderr.write(f"{w.driver}: {point}: killed after {timeout} s (--point-timeout)\n")
        w.skip(coords, engine=engine, kernel="register", markets=markets, notes=f"skipped: ran past {timeout} s")
        return 0
    took = time.time() - t0
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
    sys.stderr.write(f"{w.driver}: {w.rows} rows{f', {w.skipped} points skipped' if w.skipped else ''}"
                     f"{' (some kernels failed)' if w.failed else ''}\n")
    return 1 if w.failed else 0
