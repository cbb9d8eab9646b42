#!/usr/bin/env python3
"""Where a kernel's warps wait, from Nsight Compute's source page (scripts/gpu/kernels-vs-peers.sh mode
ncu-source writes it: ncu -i REPORT --page source --csv --print-source sass).

    scripts/gpu/stall-sites.py ncu-source-x7-register.csv[.xz] [--top N] [--loads]

Prints the warp-state samples by stall reason (all samples, as Nsight's WarpStateStats counts them), then the
N instructions with the most samples, each with its reasons and the SASS around it; with --loads, the
long-scoreboard samples (a warp waiting on L1TEX: local or global memory) charged to the nearest load before
the waiting instruction that writes a register it reads (a heuristic: the load the wait is most likely on),
summed by the load's kind (LDG, LDL, LDS, ...).
"""
import argparse
import collections
import csv
import lzma
import re
import sys


def rows(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        r = csv.reader(f)
        next(r)  # "Kernel Name", ...
        head = next(r)
        for line in r:
            if len(line) >= len(head):
                yield dict(zip(head, line))


def number(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


def registers(text):
    return re.findall(r"\bR(\d+)\b", text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--loads", action="store_true")
    a = ap.parse_args()
    instr = list(rows(a.csv))
    if not instr:
        sys.exit(f"stall-sites: no rows in {a.csv}")
    reasons = [k for k in instr[0] if k.startswith("stall_") and "(Not Issued)" not in k]
    total = sum(number(i["Warp Stall Sampling (All Samples)"]) for i in instr)
    by = collections.Counter()
    for i in instr:
        for k in reasons:
            by[k] += number(i[k])
    print(f"{len(instr)} instructions, {total:.0f} warp-state samples")
    for k, v in by.most_common():
        if v:
            print(f"  {k:24s} {v:10.0f}  {100 * v / total:5.1f}%")
    print(f"\nthe {a.top} instructions with the most samples:")
    order = sorted(range(len(instr)), key=lambda j: -number(instr[j]["Warp Stall Sampling (All Samples)"]))
    for j in order[: a.top]:
        i = instr[j]
        s = number(i["Warp Stall Sampling (All Samples)"])
        top = sorted(((number(i[k]), k) for k in reasons), reverse=True)[:3]
        why = ", ".join(f"{k[6:]} {v:.0f}" for v, k in top if v)
        print(f"  #{j:5d} {s:7.0f} ({100 * s / total:4.1f}%)  {i['Source'].strip():48s} {why}")
    if a.loads:
        kinds = collections.Counter()
        for j, i in enumerate(instr):
            w = number(i.get("stall_long_sb", "0"))
            if not w:
                continue
            reads = set(registers(i["Source"].split(",", 1)[1] if "," in i["Source"] else ""))
            kind = "unknown"
            for back in range(j - 1, max(-1, j - 400), -1):
                src = instr[back]["Source"].strip()
                m = re.match(r"(?:@!?P\d+\s+)?(LD[GLS]|LDSM|ATOM|RED)(\S*)\s+R(\d+)", src)
                if not m:
                    continue
                width = 4 if ".128" in m.group(2) else 2 if ".64" in m.group(2) else 1  # registers it writes
                if any(str(int(m.group(3)) + k) in reads for k in range(width)):
                    kind = m.group(1)
                    break
            kinds[kind] += w
        print("\nlong-scoreboard samples by the load they most likely wait on:")
        lsb = sum(kinds.values())
        for k, v in kinds.most_common():
            print(f"  {k:8s} {v:10.0f}  {100 * v / lsb:5.1f}% of long scoreboard, {100 * v / total:5.1f}% of all")


if __name__ == "__main__":
    main()
