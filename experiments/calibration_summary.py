#!/usr/bin/env python3
"""calibration_summary: how well the planner's peak_live predicts sm_90 registers and spills, over
every calibrate_proxy run kept: its CSVs (--out) and, for runs cut short before the CSV existed,
its stderr logs ("[k/N] STRATEGY SEG xM: peak_live P, R registers, L B local, S B spill stores").
A file may be tagged, ORDER=FILE, with the market order its kernels were emitted in (joint before
2026-12-01's sequential default): one kernel per (order, strategy, requested segments, markets), a
later file's row replacing an earlier one; single-market kernels have no order and merge across tags.
Prints Spearman rank correlations of peak_live x markets against registers and spill-store bytes
(all kernels, per market count, per strategy), the no-spill line, and the smallest peak_live x
markets that always spilled; --csv writes the merged rows.

  calibration_summary.py [ORDER=]FILE... [--csv OUT.csv]
"""
import argparse
import csv
import io
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "drivers"))
import careful  # noqa: E402  (--csv goes through it: never over one of the files read)

LOG = re.compile(r"^\[\d+/\d+\] (\S+) (\d+) x(\d+): peak_live (\d+), (-?\d+) registers, (-?\d+) B local, "
                 r"(-?\d+) B spill stores")
COLUMNS = ["order", "strategy", "requested", "markets", "peak_live", "peak_live_x_markets", "registers", "local_bytes",
           "spill_store_bytes", "source"]


def rows_of(arg):
    order, _, path = arg.rpartition("=") if "=" in arg else ("", "", arg)
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read().splitlines()
    except OSError as e:
        sys.stderr.write(f"calibration_summary: {path}: {e.strerror}\n")
        sys.exit(2)
    if text and text[0].startswith("engine,"):
        for r in csv.DictReader(text):
            if r.get("error"):
                continue
            out.append({"strategy": r["strategy"], "requested": int(r["requested"]), "markets": int(r["markets"]),
                        "peak_live": int(r["peak_live"]), "registers": int(r["registers"]),
                        "local_bytes": int(r["local_bytes"]), "spill_store_bytes": int(r["spill_store_bytes"]),
                        "source": path})
    else:
        for line in text:
            m = LOG.match(line)
            if m and "ERROR" not in line:
                s, n, mk, pl, regs, loc, sp = m.groups()
                out.append({"strategy": s, "requested": int(n), "markets": int(mk), "peak_live": int(pl),
                            "registers": int(regs), "local_bytes": int(loc), "spill_store_bytes": int(sp),
                            "source": path})
    for r in out:
        r["peak_live_x_markets"] = r["peak_live"] * r["markets"]
        r["order"] = order if r["markets"] > 1 else ""
    return out


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0 + 1
        i = j + 1
    return r


def pearson(x, y):
    n = len(x)
    if n < 2:
        return float("nan")
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else float("nan")


def spearman(x, y):
    return pearson(ranks(x), ranks(y))


def line(label, rows):
    x = [r["peak_live_x_markets"] for r in rows]
    return (f"{label:<22} {len(rows):4d} kernels  spearman(peak_live x markets, registers) "
            f"{spearman(x, [r['registers'] for r in rows]):6.3f}  (, spill-store bytes) "
            f"{spearman(x, [r['spill_store_bytes'] for r in rows]):6.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--csv")
    a = ap.parse_args()
    merged = {}
    for p in a.files:
        for r in rows_of(p):
            merged[(r["order"], r["strategy"], r["requested"], r["markets"])] = r
    every = sorted(merged.values(), key=lambda r: (r["order"], r["strategy"], r["requested"], r["markets"]))
    if not every:
        sys.exit("calibration_summary: no kernels in " + " ".join(a.files))
    orders = sorted({r["order"] for r in every if r["order"]})
    for o in orders or [""]:
        rows = [r for r in every if r["order"] in ("", o)]
        if orders:
            print(f"== market order {o} (single-market kernels included) ==")
        summary(rows)
    if a.csv:
        text = io.StringIO()
        w = csv.DictWriter(text, COLUMNS, lineterminator="\r\n")  # csv's own default, as before
        w.writeheader()
        for r in every:
            w.writerow({c: r[c] for c in COLUMNS})
        careful.write_output(a.csv, text.getvalue(), [f.rpartition("=")[2] if "=" in f else f for f in a.files], "--csv")
    return 0


def summary(rows):
    print(line("all", rows))
    for m in sorted({r["markets"] for r in rows}):
        print(line(f"{m} market{'s' if m > 1 else ''}", [r for r in rows if r["markets"] == m]))
    for s in sorted({r["strategy"] for r in rows}):
        here = [r for r in rows if r["strategy"] == s]
        print(line(s, here) + f"  markets {sorted({r['markets'] for r in here})}, segments "
              f"{sorted({r['requested'] for r in here})}")
    clean = [r for r in rows if r["spill_store_bytes"] == 0]
    x, y = [r["peak_live_x_markets"] for r in clean], [r["registers"] for r in clean]
    if len(x) >= 2:
        mx, my = sum(x) / len(x), sum(y) / len(y)
        b = sum((p - mx) * (q - my) for p, q in zip(x, y)) / max(1e-9, sum((p - mx) ** 2 for p in x))
        print(f"no-spill rows: registers ~ {my - b * mx:.1f} + {b:.3f} * peak_live x markets "
              f"({len(x)} kernels, pearson {pearson(x, y):.3f})")
    spilled = [r for r in rows if r["spill_store_bytes"] > 0]
    always = min((r["peak_live_x_markets"] for r in rows
                  if all(q["spill_store_bytes"] > 0 for q in rows if q["peak_live_x_markets"] >= r["peak_live_x_markets"])),
                 default=None)
    print(f"{len(spilled)} of {len(rows)} kernels spill; every kernel at peak_live x markets >= {always} spills")
    multi = [r for r in rows if r["markets"] > 1 and r["peak_live_x_markets"] <= 400]
    print(f"multi-market kernels at peak_live x markets <= 400: {len(multi)}, of which "
          f"{sum(r['spill_store_bytes'] == 0 for r in multi)} spill nothing, the rest "
          f"{min((r['spill_store_bytes'] for r in multi if r['spill_store_bytes']), default=0)}-"
          f"{max((r['spill_store_bytes'] for r in multi), default=0)} B")


if __name__ == "__main__":
    sys.exit(careful.run_main("calibration_summary", lambda argv: main(), sys.argv[1:]))
