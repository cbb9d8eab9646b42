#!/usr/bin/env python3
"""The rounds of tapelab run --json that a call script wrote as PREFIX-VARIANT-rN.json, one line per variant:
its kernel kind, plan, segments and registers, the median Mpath/s of its rounds, whether the rounds agree and
whether its value and Greeks are the first variant's bits; with --jax CSV (experiments/peers/jax_wide.py's),
each variant's ratio to JAX's Mpath/s and JAX's line. What scripts/gpu/stac-a2-greeks.sh's summaries print.

    scripts/gpu/variant-runs.py DIR PREFIX [--jax FILE.csv]
"""
import csv
import glob
import json
import os
import re
import statistics
import sys


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 2 or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args and args[0] in ("-h", "--help") else 2
    folder, prefix, jax_path = args[0], args[1], None
    if len(args) == 4 and args[2] == "--jax":
        jax_path = args[3]
    elif len(args) != 2:
        print(f"variant-runs.py: expected DIR PREFIX [--jax FILE.csv], got {' '.join(args)}", file=sys.stderr)
        return 2
    runs: dict = {}
    for path in sorted(glob.glob(os.path.join(folder, f"{prefix}-*-r*.json"))):
        try:
            run = json.load(open(path))
        except ValueError as e:
            print(f"{os.path.basename(path)}: unreadable ({e})")
            continue
        variant = re.sub(r"-r\d+\.json$", "", os.path.basename(path))[len(prefix) + 1:]
        runs.setdefault(variant, []).append(run)
    jax = []
    if jax_path and os.path.exists(jax_path):
        jax = list(csv.DictReader(l for l in open(jax_path) if l.strip() and not l.startswith("#")))
    ref = None
    for variant, rs in runs.items():
        r0 = rs[0]
        bits = [r0["value"]] + list(r0["greeks"].values())
        agree = all([x["value"]] + list(x["greeks"].values()) == bits for x in rs)
        if ref is None:
            ref = (variant, bits)
        mp = statistics.median(x["paths_per_second"] for x in rs) / 1e6
        vs = f", {mp / float(jax[0]['mpaths_per_s']):.2f}x JAX" if jax else ""
        # a tangent kernel promises its value's bits (its Greeks are forward-mode sums, equal within rounding)
        same = f"value bits as {ref[0]}: {bits[0] == ref[1][0]}" if r0["kernel_kind"] == "tangent" \
            else f"bits as {ref[0]}: {bits == ref[1]}"
        print(f"tapelab {r0['engine']} {r0['kernel_kind']} {variant:24s} {r0['strategy']} {r0['segments']:>4} segments, "
              f"{r0['kernel_stats'].get('registers')} registers: {mp:10.3f} Mpath/s (median of {len(rs)}{vs}), "
              f"{len(r0['greeks'])} Greeks, rounds agree: {agree}, {same}")
    for j in jax:
        print(f"jax {j['params']}: {float(j['mpaths_per_s']):.3f} Mpath/s")
    if not runs:
        print(f"variant-runs.py: no {prefix}-*-rN.json in {folder}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
