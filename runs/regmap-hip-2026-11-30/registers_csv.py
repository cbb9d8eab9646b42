#!/usr/bin/env python3
"""registers.csv and the README's table from gpu_kernels' log on the hip engine.

    registers_csv.py gpu_kernels.log... > registers.csv
    registers_csv.py --table gpu_kernels.log...     # markdown: VGPRs / scratch bytes

Reads the notes line the hip engine prints for each kernel (gpu/hip/hip.cpp,
describe()) and the row after it (compile seconds, cache hit or miss: a hit's
seconds are not a compile's). One CSV row per kernel, target and VGPR limit
(vgpr_limit 256: a gfx11 kernel built with TAPELAB_HIP_GFX11_VGPRS=256).
"""
import re
import sys

NOTE = re.compile(r"^\s+(\w[\w-]*), (\d+) markets, greeks (\w+), (\d+) segments: (.*)$")
TARGET = re.compile(
    r"(gfx[0-9a-f]+(?::[a-z]+[+-])*) wave(\d+): (\d+) VGPRs(?: \((\d+) AGPRs\))?, (\d+) SGPRs, (\d+) B scratch/lane "
    r"\(spills: (\d+) VGPRs, (\d+) SGPRs\), (\d+) waves/SIMD by registers \(compiler: (-?\d+)\)")
ROW = re.compile(r"^(\S+)\s+(\d+)\s+\S+\s+(\d+)\s+(\w+)\s+([\d.]+)\s+(hit|miss)")
FIELDS = ["target", "vgpr_limit", "kind", "markets", "segments", "wave", "vgprs", "agprs", "sgprs", "scratch_bytes",
          "vgpr_spills", "sgpr_spills", "waves_per_simd", "compiler_waves_per_simd", "compile_s", "cache"]


def kernels(lines):
    pending = []
    for line in lines:
        m = NOTE.match(line)
        if m:
            kind, markets, _, segments, rest = m.groups()
            pending = []
            for part in rest.split("; "):
                t = TARGET.search(part)
                if not t:
                    continue
                target, wave, vgprs, agprs, sgprs, scratch, vs, ss, waves, cw = t.groups()
                # what the compiler may allocate per lane: gfx90a's 512 count AGPRs
                limit = 512 if target.startswith("gfx90a") else 256
                if target.startswith("gfx11") and "limit lifted" not in part:
                    limit = 128
                pending.append(dict(target=target, vgpr_limit=limit, kind=kind, markets=int(markets), segments=int(segments),
                                    wave=int(wave), vgprs=int(vgprs), agprs=int(agprs or 0), sgprs=int(sgprs),
                                    scratch_bytes=int(scratch), vgpr_spills=int(vs), sgpr_spills=int(ss),
                                    waves_per_simd=int(waves), compiler_waves_per_simd=int(cw)))
            continue
        r = ROW.match(line)
        if r and pending:
            for k in pending:
                k["compile_s"] = float(r.group(5))
                k["cache"] = r.group(6)
                yield k
            pending = []


def main():
    args = sys.argv[1:]
    table = args and args[0] == "--table"
    rows = [k for path in args[1 if table else 0:] for k in kernels(open(path))]
    if not table:
        print(",".join(FIELDS))
        for k in sorted(rows, key=lambda k: (k["target"], k["vgpr_limit"], k["kind"] != "plain", k["segments"], k["markets"])):
            print(",".join(str(k.get(f, "")) for f in FIELDS))
        return
    for target, limit in sorted({(k["target"], k["vgpr_limit"]) for k in rows}):
        cells = {(k["kind"], k["segments"], k["markets"]): k for k in rows
                 if k["target"] == target and k["vgpr_limit"] == limit}
        columns = [("plain", 1)] + sorted({(k, s) for (k, s, _) in cells if k != "plain"}, key=lambda c: c[1])
        print(f"{target}, at most {limit} VGPRs: VGPRs / scratch bytes per lane (waves per SIMD)\n")
        print("| markets | " + " | ".join("plain" if k == "plain" else f"{k} {s} seg" for k, s in columns) + " |")
        print("|---" * (len(columns) + 1) + "|")
        for m in sorted({m for (_, _, m) in cells}):
            out = []
            for k, s in columns:
                c = cells.get((k, s, m))
                out.append(f"{c['vgprs']} / {c['scratch_bytes']} ({c['waves_per_simd']})" if c else "")
            print(f"| {m} | " + " | ".join(out) + " |")
        print()


if __name__ == "__main__":
    main()
