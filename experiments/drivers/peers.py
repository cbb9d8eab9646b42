#!/usr/bin/env python3
"""peers: JAX, the hand-written CUDA kernel and tapelab on the same GPU in the same call, one CSV.
The 252-step Asian call, fp32, value + 5 Greeks and price only, at each --paths:
  jax          experiments/peers/jax_peers.py: one market per call, the ladder by
               vmap of value_and_grad with shared draws (the strongest formulation),
               the ladder as one call per point; needs python3 with jax
  handwritten  experiments/peers/handwritten_asian.cu (forward pathwise, contraction
               allowed: a ceiling, not a peer with the same bits): one market per launch, and
               the 7-point ladder in one launch; built twice, as written and with --fmad=false
               (tapelab's contract: formulations ending in "+nofma"); needs nvcc and a GPU
  tapelab      `tapelab compare --json` per engine: plain and register kernels, the
               ladder one market per dispatch and --markets per dispatch
Mpath/s counts market-paths (a 7-point ladder over N paths is 7N); greeks is the Greeks a path computes
(5 on the Asian with Greeks, 0 for price only) and mgreek_path_s greeks x Mpath/s. ms is a median of timed
calls; every row records its spread (ms_min, ms_max: tapelab's of --reps ladders, default 3; reps: how
many; JAX's and the hand-written kernel's of their --repeats calls, since 2026-12-02b). A peer that
cannot run here is skipped with its reason on stderr and in a '# skipped' row.
Rows are written as each call finishes; a '# machine= driver= commit=' row first. Each row names
its tape (column tape: asian-STEPS, or the file's name).
--tape FILE: tapelab's rows run that tape (compare FILE.tape, steps left empty); JAX and the
hand-written kernel implement the Asian call only, so they are skipped, saying so on stderr and
in a '# skipped' row.

  peers.py [--engines cuda,vulkan] [--paths 1000000,4000000] [--markets 7] [--points 7]
           [--steps 252] [--config TEXT ...] [--untuned] [--no-jax] [--no-handwritten] [--call-timeout S]
           [--out FILE.csv] [--quick]
tapelab's rows name their kernel configuration and math contract (columns config, math; tuned: the
tuning cache entry compare used, tapelab tune). --config TEXT (repeatable) times tapelab once per
text (e.g. '' for the defaults or the tuned winner, then 'math=approx'); --untuned ignores the cache.
  peers.py --convert PEERS.csv LADDER.txt [...]   (a gpu-measure.sh `peers ladder` call, as this CSV)
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import sweep_driver as sd

sys.path.insert(0, os.path.join(sd.REPO, "papers"))
import convert_compare  # noqa: E402  (the text tables of `tapelab compare`, for --convert)

COLUMNS = ["who", "formulation", "engine", "kernel", "segments", "pass", "tape", "steps", "paths", "markets", "ladder_points",
           "ms", "ms_min", "ms_max", "reps", "mpath_s", "greeks", "mgreek_path_s", "value", "delta", "registers", "spill_bytes", "same_bits", "math",
           "config", "tuned", "notes"]
GREEKS, PRICE = "value+5greeks", "price"


def with_greeks(row, greeks):
    """The row with its Greeks per path and Greeks x Mpath/s ("many Greeks per second", issue 48)."""
    return {**row, "greeks": greeks, "mgreek_path_s": f"{greeks * float(row['mpath_s']):.2f}"}
PEERS_DIR = os.path.join(sd.REPO, "experiments", "peers")


class Rows:
    def __init__(self, path, head, inputs):
        self.file = sd.careful.OutputFile(path, inputs) if path else sys.stdout
        self.file.write(f"# {head}\n")
        self.out = csv.DictWriter(self.file, COLUMNS, lineterminator="\n", extrasaction="ignore")
        self.out.writeheader()
        self.count = 0
        self.failed = False

    def comment(self, text):
        self.file.write(f"# {text}\n")
        self.file.flush()

    def add(self, row):
        self.out.writerow(row)
        self.file.flush()
        self.count += 1


def jax_rows(text):
    """Rows of jax_peers.py's CSV; its '# jax ...' line names the device."""
    device = "jax"
    body = []
    for line in text.splitlines():
        if line.startswith("# jax "):
            device = "jax-" + line.split(" on ")[1].split(",")[0] if " on " in line else device
        elif line and not line.startswith("#"):
            body.append(line)
    for r in csv.DictReader(body):
        ladder = r["formulation"] != "one"
        yield with_greeks({"who": "jax", "formulation": r["formulation"], "engine": device, "pass": r["pass"], "paths": r["paths"],
               "markets": r["markets"] if r["formulation"] == "ladder" else 1,
               "ladder_points": r["markets"] if ladder else 1, "ms": f"{float(r['median_s']) * 1e3:.4f}",
               "mpath_s": r["mpaths_per_s"], "value": r["value_at_spot100"], "delta": r["delta_at_spot100"],
               **({"ms_min": f"{float(r['min_s']) * 1e3:.4f}", "ms_max": f"{float(r['max_s']) * 1e3:.4f}"}
                  if r.get("min_s") else {}),  # jax_peers.py records its spread since 2026-12-02b
               "notes": "spots 85..115 (step 5), draws shared by the ladder" if ladder else "spot 100"},
                          5 if r["pass"] == GREEKS else 0)


def handwritten_rows(text, contraction=True):
    """The hand-written kernels' CSV as rows; `contraction`: built with nvcc's default (--fmad=true), else with
    --fmad=false, tapelab's contract (math=ieee: no contraction), its formulation then ending in "+nofma"."""
    body = [l for l in text.splitlines() if l and not l.startswith("#")]
    for r in csv.DictReader(body):
        markets = int(r.get("markets") or 1)  # the ladder variant (since issue 46): 7 markets in one launch
        yield with_greeks({"who": "handwritten", "formulation": r["variant"] + ("" if contraction else "+nofma"),
               "engine": "cuda", "kernel": "forward-pathwise",
               "pass": r["pass"], "paths": r["paths"], "markets": markets, "ladder_points": markets, "ms": r["median_ms"],
               **({"ms_min": r["min_ms"], "ms_max": r["max_ms"]} if r.get("min_ms") else {}),
               "mpath_s": r["mpaths_per_s"], "value": r["value"], "delta": r["delta"],
               "notes": ("contraction allowed; " if contraction else "--fmad=false (tapelab's contract); ")
               + ("spots 97..103, value and delta at 100" if markets > 1 else "spot 100")},
                          5 if r["pass"] == GREEKS else 0)


def formulation(markets, points):
    return "ladder-loop" if markets == 1 else "ladder" if markets >= points else f"ladder x{markets}"


def spread(ms):
    """ms_min, ms_max and reps of the timed ladders (compare --json's ms_ladders); empty when none were."""
    ms = [float(v) for v in ms]
    return {"ms_min": f"{min(ms):.4f}", "ms_max": f"{max(ms):.4f}", "reps": len(ms)} if ms else {}


def compare_json_rows(js, steps):
    """Rows of `tapelab compare --json`; `steps`: the Asian call's, "" for a --tape FILE."""
    points = len(js["ladder_values"])
    for r in js["rows"]:
        res, st = r.get("result", {}), r.get("result", {}).get("kernel_stats", {})
        m = int(r["markets"])
        greeks = r.get("greeks_per_path", len(res.get("greeks", {})))
        yield with_greeks({"who": "tapelab", "formulation": formulation(m, points), "engine": r["engine"], "kernel": r["kernel"],
               "segments": r["segments"], "pass": GREEKS if js["greeks"] else PRICE, "tape": js.get("tape", ""),
               "steps": steps,
               "paths": js["paths"], "markets": m, "ladder_points": points, "ms": f"{r['ms_per_ladder']:.4f}",
               **spread(r.get("ms_ladders") or []),
               "mpath_s": f"{r['mpaths_per_second']:.2f}", "value": res.get("value", ""),
               "delta": res.get("greeks", {}).get("spot", ""), "registers": st.get("registers", ""),
               "spill_bytes": st.get("spill_bytes", ""), "same_bits": r.get("identical_to_plain", ""),
               "math": res.get("math", ""), "config": res.get("config", ""), "tuned": res.get("tuned", ""),
               "notes": js["ladder_input"] + " " + ",".join(f"{s:g}" for s in js["ladder_values"])}, greeks)


def run(cmd, timeout, what):
    """(stdout, None) or (None, reason)."""
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"{what}: ran past {timeout} s"
    except OSError as e:
        return None, f"{what}: {e}"
    sys.stderr.write(f"peers: {what}: exit {p.returncode} in {time.time() - t0:.1f} s\n")
    if p.returncode != 0:
        return None, f"{what}: exit {p.returncode}: " + (p.stderr.strip().splitlines() or [""])[-1][:300]
    return p.stdout, None


def skip(rows, what, why):
    sys.stderr.write(f"peers: {what} skipped: {why}\n")
    rows.comment(f"skipped {what}: {why}")


def main(argv):
    if argv[:1] == ["--convert"]:
        return convert(argv[1:])
    ap = sd.parser("peers", __doc__.splitlines()[0])
    ap.set_defaults(engines="cuda,vulkan")
    ap.add_argument("--markets", type=sd.careful.integer(1, 8), default=None, help="tapelab's markets per dispatch (default 7, --quick 2)")
    ap.add_argument("--points", type=sd.careful.integer(1, 1000), default=None, help="tapelab's ladder points (default 7, --quick 2)")
    ap.add_argument("--steps", type=sd.STEPS, default=None, help="time steps (default 252, --quick 16)")
    ap.add_argument("--passes", default=None, help=f"{GREEKS},{PRICE} (default both; --quick {GREEKS})")
    ap.add_argument("--config", action="append", default=None,
                    help="tapelab's kernel configuration (compare --config); repeatable: one pass each (default: '')")
    ap.add_argument("--untuned", action="store_true", help="tapelab without the tuning cache's winners (compare --untuned)")
    ap.add_argument("--no-jax", action="store_true", help="leave JAX out")
    ap.add_argument("--no-handwritten", action="store_true", help="leave the hand-written CUDA kernel out")
    ap.add_argument("--jax-python", default=sys.executable, help="python with jax (default: this one)")
    ap.add_argument("--cuda-arch", default="sm_90", help="nvcc -arch for the hand-written kernel (default sm_90)")
    ap.add_argument("--call-timeout", type=sd.careful.integer(1, 86400), default=None, help="seconds per call (default 420; --quick 120)")
    for act in ap._actions:  # peers takes a list of path counts; scratch_sweep's flags are accepted, unused
        if act.dest == "paths":
            act.type, act.help = str, "paths per call, a list (default 1000000,4000000; --quick 2048)"
        elif act.dest in ("sweep_bin", "jobs"):
            act.help = "unused by peers (accepted so scripts/gpu-drivers.sh passes every driver one set of flags)"
        elif act.dest == "engines":
            act.help = "tapelab's engines (default cuda,vulkan; --quick cpu-jit,vulkan,opencl)"
    a = ap.parse_args(argv)
    if a.tape and not os.path.isfile(a.tape):
        sd.bad(f"--tape: {a.tape}: no such file")
    if a.tape and a.steps:
        sd.bad("--steps: does not apply with --tape (the Asian call's steps; the tape has its own)")
    if a.quick and "--engines" not in argv:
        a.engines = sd.QUICK_ENGINES
    a.engine_list = [e for e in a.engines.split(",") if e]
    ladders = a.reps or (2 if a.quick else 3)  # tapelab's timed ladders: their median is ms, their spread ms_min/ms_max
    a.reps = a.reps or (2 if a.quick else 5)
    paths = sd.int_list(a.paths or ("2048" if a.quick else "1000000,4000000"), "--paths", hi=1 << 48)
    if not os.access(a.tapelab_bin, os.X_OK):
        sd.bad(f"--tapelab-bin: {a.tapelab_bin} is not an executable (build the tapelab target)")
    steps = a.steps or (16 if a.quick else 252)
    markets = a.markets or (2 if a.quick else 7)
    points = a.points or (2 if a.quick else 7)
    passes = (a.passes or (GREEKS if a.quick else f"{GREEKS},{PRICE}")).split(",")
    if any(p not in (GREEKS, PRICE) for p in passes):
        sd.bad(f"--passes: expected {GREEKS} and/or {PRICE}, got '{a.passes}'")
    timeout = a.call_timeout or (120 if a.quick else 420)
    inputs = [p for p in (a.tape, a.tapelab_bin, a.jax_python) if p]
    rows = Rows(a.out, f"machine={a.machine} driver=peers commit={sd.commit(a.commit)} args=peers.py {' '.join(argv)}{sd.knobs_note()}",
                inputs)

    # JAX first (it takes the GPU's memory as it likes; its process ends before tapelab's start).
    asian_only = f"implements the Asian call only, not --tape {a.tape} (tapelab's rows run it)" if a.tape else None
    asian = {"tape": f"asian-{steps}", "steps": steps}
    if asian_only:
        skip(rows, "jax", asian_only)
    elif a.no_jax:
        skip(rows, "jax", "--no-jax")
    elif subprocess.run([a.jax_python, "-c", "import jax"], capture_output=True).returncode != 0:
        skip(rows, "jax", f"{a.jax_python} has no jax here (pip install jax[cuda12] on the GPU machine)")
    else:
        cmd = [a.jax_python, os.path.join(PEERS_DIR, "jax_peers.py"), "--steps", str(steps), "--repeats", str(a.reps),
               "--paths"] + [str(p) for p in paths]
        cmd += ["--platform", "cpu"] if a.quick else []
        text, why = run(cmd, timeout, "jax")
        if why:
            skip(rows, "jax", why)
            rows.failed = True
        else:
            for r in jax_rows(text):
                if r["pass"] in passes:
                    rows.add({**asian, **r})

    nvcc = shutil.which("nvcc")
    if asian_only:
        skip(rows, "handwritten", asian_only)
    elif a.no_handwritten:
        skip(rows, "handwritten", "--no-handwritten")
    elif not nvcc:
        skip(rows, "handwritten", "no nvcc on PATH (the CUDA toolkit builds experiments/peers/handwritten_asian.cu)")
    else:
        # Twice: as the expert wrote it (nvcc contracts a * b + c into fused multiply-adds), and under tapelab's
        # contract (--fmad=false), so that a ratio can be read at the same contract.
        for contraction in (True, False):
            exe = os.path.join(tempfile.mkdtemp(prefix="tapelab-peers-"), "handwritten_asian")
            what = "handwritten" + ("" if contraction else " --fmad=false")
            _, why = run([nvcc, "-O3", "-std=c++17", f"-arch={a.cuda_arch}", *([] if contraction else ["--fmad=false"]),
                          "-o", exe, os.path.join(PEERS_DIR, "handwritten_asian.cu")], timeout, "nvcc " + what)
            text, why = (None, why) if why else run([exe, "--paths", ",".join(map(str, paths)), "--steps", str(steps),
                                                     "--repeats", str(a.reps)], timeout, what)
            if why:
                skip(rows, what, why)
                continue
            for r in handwritten_rows(text, contraction):
                if r["pass"] in passes:
                    rows.add({**asian, **r})

    for pc in paths:
        for config in (a.config or [""]):
            for ps in passes:
                for engine in a.engine_list:
                    what = f"tapelab {engine} {ps} {pc} paths" + (f" --config {config}" if config else "")
                    tape = [a.tape] if a.tape else ["--product", "asian", "--steps", str(steps)]
                    cmd = [a.tapelab_bin, "compare", *tape, "--engines", engine,
                           "--kernels", "register,tangent", "--paths", str(pc), "--markets", str(markets), "--points", str(points),
                           "--ladders", str(ladders), "--fp32", "--json"] + ([] if ps == GREEKS else ["--no-greeks"])
                    cmd += (["--config", config] if config else []) + (["--untuned"] if a.untuned else [])
                    text, why = run(cmd, timeout, what)
                    if why:
                        skip(rows, what, why)
                        rows.failed = rows.failed or "exit 3" not in why  # exit 3: the engine is not usable here
                        continue
                    for r in compare_json_rows(json.loads(text), "" if a.tape else steps):
                        rows.add(r)
                        if r["same_bits"] == "no":
                            rows.failed = True
                    best = max((r for r in compare_json_rows(json.loads(text), "")), key=lambda r: float(r["mpath_s"]))
                    sys.stderr.write(f"peers: {what}: best {best['kernel']} x{best['markets']} {best['mpath_s']} Mpath/s\n")
    if rows.file is not sys.stdout:
        rows.file.close()
    sys.stderr.write(f"peers: {rows.count} rows{' (some calls failed)' if rows.failed else ''}\n")
    return 1 if rows.failed else 0


def convert(files):
    """An earlier call's peers.csv (jax_peers.py's CSV then handwritten_asian's) and its ladder.txt (compare
    tables) as this driver's CSV on stdout."""
    if len(files) < 2:
        sd.bad("--convert: expected PEERS.csv LADDER.txt [...]")
    for f in files:
        if not os.path.isfile(f):
            sd.bad(f"--convert: {f}: no such file")
    out = csv.DictWriter(sys.stdout, COLUMNS, lineterminator="\n", extrasaction="ignore")
    sys.stdout.write("# machine=h200 driver=peers (converted by peers.py --convert from "
                     + ", ".join("/".join(f.split("/")[-2:]) for f in files) + ")\n")
    out.writeheader()
    text = open(files[0], encoding="utf-8").read()
    at = text.find("# handwritten_asian")
    jax_part, hw_part = (text, "") if at < 0 else (text[:at], text[at:])
    for r in jax_rows(jax_part):
        out.writerow({"tape": "asian-252", "steps": 252, **r})
    for r in handwritten_rows(hw_part):
        out.writerow({"tape": "asian-252", "steps": 252, **r})
    cols = convert_compare.COLUMNS
    for f in files[1:]:
        for cells in convert_compare.rows_of(f, "/".join(f.split("/")[-2:])):
            c = dict(zip(cols, cells))
            m = int(c["markets"])
            out.writerow({"who": "tapelab", "formulation": formulation(m, 7), "engine": c["engine"], "kernel": c["kernel"],
                          "segments": c["segments"], "pass": GREEKS if c["greeks"] == "on" else PRICE,
                          "tape": f"asian-{c['steps']}",
                          "steps": c["steps"], "paths": c["paths"], "markets": m, "ladder_points": 7,
                          "ms": c["ms_per_ladder"], "mpath_s": c["mpath_s"], "value": c["price"], "delta": c["delta"],
                          "registers": c["registers"], "spill_bytes": c["spill_bytes"],
                          "same_bits": c["same_bits"] or "-", "notes": f"spots 97..103; {c['source']} table {c['table']}"})
    return 0


if __name__ == "__main__":
    sys.exit(sd.careful.run_main("peers", main, sys.argv[1:]))
