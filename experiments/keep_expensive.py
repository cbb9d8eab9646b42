#!/usr/bin/python3
"""A strategy process (`tapelab ... --strategy-cmd "python3 experiments/keep_expensive.py"`): a
researcher's per-value heuristic in a few lines, read from the tape's summary, no tapelab module.

It takes the request's blocks (window's cuts at --segments) and keeps, heaviest first, the values the
reverse sweep reads whose recompute costs most instructions (draws, logarithms, powers, ...), while
the kept count stays within a quarter of --budget; everything else is recomputed where needed.
Writes a version-2 plan file to --out (docs/strategies.md, "Strategies as processes").
"""
import argparse
import json
import sys


def main(argv):
    p = argparse.ArgumentParser()
    for flag in ("--tape", "--summary", "--out", "--segments", "--budget", "--time-limit"):
        p.add_argument(flag, required=flag in ("--summary", "--out"))
    a = p.parse_args(argv)
    with open(a.summary) as f:
        s = json.load(f)
    budget = int(s["request"]["budget"])
    read = {j for reads in s["adjoint_reads"] for j in reads}
    heavy = sorted((j for j in read if s["op"][j] not in ("input", "const")), key=lambda j: (-s["weight"][j], j))
    keep = sorted(heavy[: max(0, budget // 4)])
    blocks = s["request"]["blocks"]
    plan = {"format": "tapelab-plan 2", "tape": s["tape"], "strategy": "keep-expensive", "family": "per-value",
            "cuts": blocks[1:-1], "keep": keep}
    with open(a.out, "w") as f:
        json.dump(plan, f)


if __name__ == "__main__":
    main(sys.argv[1:])
