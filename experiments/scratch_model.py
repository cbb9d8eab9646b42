#!/usr/bin/python3
"""The scratch findings without a GPU: sm_90 statistics and an address-trace model of AoS against SoA.

For the 252-step Asian (or --tape FILE) at each --seglens length and in both layouts, the scratch kernel
the cuda engine writes (fp32, value and Greeks, one market, the engine's defaults) is compiled for sm_90
without a GPU (experiments/scratch_sweep --engines cuda: NVRTC and ptxas) and its source kept; then:
  registers, spill stores (ptxas), PTX instructions and memory instructions (ld/st.global: the buffer,
  inputs and partials; ld/st.local: spills), counted in NVRTC's PTX of that source (benchlib/sm90.py);
  the buffer's traffic per warp from the kernel's own accesses in program order (benchlib/scratch_trace.py):
  sectors requested (coalescing), the footprint, and the sectors reaching L2 with write-through stores
  and an LRU share of a 256 KB L1 at the occupancy the kernel's registers allow; l2_bytes_per_path.
--h200 CSV joins the H200's measured Mpath/s of the same layout and segment length (cuda rows of a
scratch_sweep CSV, papers/data/scratch_sweep-h200.csv) and the L2 bandwidth the modelled traffic needs at
that speed (l2_gbs). The H200 rows are of the kernels of their day (the CSV's comment row): the model
explains a difference between layouts, it does not predict Mpath/s.
One CSV (--out; the careful writer, benchlib/output.py), a comment row first (commit, arguments).

usage: scratch_model.py [--out FILE.csv] [--seglens 24,48,...] [--tape FILE] [--h200 CSV] [--quick]
       [--scratch-sweep BIN]
--quick: seglens 24,200 (CTest: experiment_scratch_model_quick, skipped where cuda is not built).
"""
import argparse
import csv
import glob
import io
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import output, scratch_trace, sm90  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMNS = ["tape", "layout", "seglen", "segments", "words_per_lane", "registers", "spill_bytes", "ptx_instructions",
           "ptx_ld_global", "ptx_st_global", "ptx_ld_local", "ptx_st_local", "accesses", "stores", "resident_warps",
           "requests_per_warp", "unique_per_warp", "l2_sectors_per_warp", "l2_bytes_per_path", "h200_mpath_s",
           "l2_gbs", "note"]


def compile_all(a, work):
    """scratch_sweep on cuda (compile-only here): its CSV rows of scratch kernels, and the dump folder."""
    dump = os.path.join(work, "dump")
    cmd = [a.scratch_sweep, "--engines", "cuda", "--seglens", a.seglens, "--paths", "64", "--reps", "1",
           "--dump", dump, "--out", os.path.join(work, "sweep.csv")]
    cmd += ["--tape", a.tape] if a.tape else []
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode == 3 or "cuda" in p.stderr and "not built" in p.stderr:
        print(f"scratch_model: skipped: cuda cannot compile here ({(p.stderr.strip().splitlines() or [''])[-1]})",
              file=sys.stderr)
        sys.exit(3)
    rows = list(csv.DictReader(open(os.path.join(work, "sweep.csv"))))
    rows = [r for r in rows if r["kernel"] == "scratch" and r["engine"] == "cuda"]
    if not rows:
        sys.exit(f"scratch_model: scratch_sweep wrote no cuda scratch rows (exit {p.returncode}): "
                 f"{(p.stderr.strip().splitlines() or [''])[-1]}")
    return rows, dump


def h200_of(path):
    if not path:
        return {}
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return {(r["layout"], int(r["seglen"])): float(r["mpath_s"]) for r in rows
            if r["engine"] == "cuda" and r["kernel"] == "scratch" and r.get("mpath_s")}


def model_rows(rows, dump, h200):
    by = {(r["layout"], int(r["segments"])): r for r in rows}
    out = []
    for path in sorted(glob.glob(os.path.join(dump, "*scratch*.cu"))):
        src = open(path, encoding="utf-8").read()
        m = re.search(r"tape (\S+), \d+ nodes, scratch \((\d+) segments", src[:600])
        layout, stride, esize, accesses = scratch_trace.parse(src)
        r = by.get((layout, int(m.group(2)))) if m else None
        if r is None:
            continue
        regs = int(r["registers"]) if r["registers"] not in ("", "-1") else None
        warps = scratch_trace.resident_warps(regs)
        t = scratch_trace.model(layout, stride, esize, accesses, warps=warps)
        ptx = sm90.ptx_of(src)
        counts = sm90.ptx_counts(ptx) if ptx else {}
        row = {"tape": m.group(1), "layout": layout, "seglen": int(r["seglen"]), "segments": int(r["segments"]),
               "words_per_lane": stride if layout == "aos" else max(s for _, s in accesses) + 1,
               "registers": regs, "spill_bytes": r["spill_bytes"], **counts, "accesses": t["accesses"],
               "stores": t["stores"], "resident_warps": warps, "requests_per_warp": t["requests"],
               "unique_per_warp": t["unique"], "l2_sectors_per_warp": t["l2"],
               "l2_bytes_per_path": round(t["l2"] * scratch_trace.SECTOR / scratch_trace.WARP, 1),
               "note": "" if ptx else "no libnvrtc: PTX not counted"}
        mps = h200.get((layout, row["seglen"]))
        if mps:
            row["h200_mpath_s"] = mps
            row["l2_gbs"] = round(row["l2_bytes_per_path"] * mps * 1e6 / 1e9, 1)
        out.append(row)
    return sorted(out, key=lambda x: (x["seglen"], x["layout"]))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "tapelab-scratch_model", "scratch_model.csv"))
    ap.add_argument("--seglens", default=None, help="segment lengths (default 24,48,100,200,300,400,600,800)")
    ap.add_argument("--tape", default=None, help="a .tape file instead of the 252-step Asian")
    ap.add_argument("--h200", default=None, help="a scratch_sweep CSV timed on the H200, joined by layout and seglen")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--scratch-sweep", default=os.path.join(REPO, "build", "ci", "experiments", "scratch_sweep"))
    a = ap.parse_args(argv)
    a.seglens = a.seglens or ("24,200" if a.quick else "24,48,100,200,300,400,600,800")
    if not os.access(a.scratch_sweep, os.X_OK):
        sys.exit(f"scratch_model: --scratch-sweep {a.scratch_sweep}: not an executable (build scratch_sweep)")
    h200 = h200_of(a.h200)
    with tempfile.TemporaryDirectory(prefix="tapelab-scratch-model-") as work:
        rows, dump = compile_all(a, work)
        out = model_rows(rows, dump, h200)
    commit = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty", "--abbrev=12"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    buf = io.StringIO()
    buf.write(f"# machine=sm90 driver=scratch_model commit={commit} args={' '.join(argv)}"
              + (f" h200={os.path.basename(a.h200)}" if a.h200 else "") + "\n")
    w = csv.DictWriter(buf, COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(out)
    try:
        output.write_text(a.out, buf.getvalue(), [a.tape, a.h200])
    except output.OutputError as e:
        print(f"scratch_model: --out {e}", file=sys.stderr)
        return 2
    print(f"scratch_model: {len(out)} kernels to {a.out}", file=sys.stderr)
    for r in out:
        print(f"{r['layout']} seglen {r['seglen']:>4}: {r['registers']} regs, spill {r['spill_bytes']} B, "
              f"{r.get('ptx_ld_global', '-')} ld / {r.get('ptx_st_global', '-')} st.global; per warp-path "
              f"{r['requests_per_warp']} sectors requested, {r['l2_sectors_per_warp']} to L2 "
              f"({r['l2_bytes_per_path']} B a path)" + (f"; H200 {r['h200_mpath_s']} Mpath/s needs {r['l2_gbs']} GB/s"
                                                         if r.get("h200_mpath_s") else ""))
    return 0 if out else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
