#!/usr/bin/env python3
"""Parses `tapelab compare` text tables (as pasted into runs/*/*.txt)
into CSV rows, one per table line, so the paper plots numbers from a CSV.

  convert_compare.py --machine h200 --source DIR/FILE.txt [...] > papers/data/compare-h200.csv

Each table starts with an 'asian-252: ... | N paths per call | ... | value + Greeks|value only'
line; the columns are split on two or more spaces (the engine column holds one).
"""
import argparse
import csv
import re
import sys

COLUMNS = ["source", "table", "steps", "paths", "greeks", "engine", "precision", "kernel", "segments",
           "markets", "ms_per_ladder", "mpath_s", "price", "delta", "vega", "same_bits", "registers",
           "spill_bytes", "compile_s", "cached"]


def rows_of(path, label):
    table = 0
    steps = paths = greeks = None
    for line in open(path, encoding="utf-8"):
        head = re.match(r"^\S+-(\d+): \d+ nodes \| (\d+) paths per call .*\| (value \+ Greeks|value only) \|", line)
        if head:
            table += 1
            steps, paths, greeks = head.group(1), head.group(2), "on" if "Greeks" in head.group(3) else "off"
            continue
        if not table or line.startswith(("engine", "---")):
            continue
        cells = re.split(r"\s{2,}", line.strip())
        m = re.match(r"^(\S+) (fp32|fp64)$", cells[0]) if cells else None
        if not m or len(cells) < 13:
            continue
        engine, precision = m.groups()
        kernel, segs, mkts, ms, mps, price, delta, vega, same, regs, spill = cells[1:12]
        compile_text = " ".join(cells[12:])
        cached = "yes" if "cached" in compile_text else "no"
        compile_s = compile_text.split()[0]
        yield [label, table, steps, paths, greeks, engine, precision, kernel, segs, mkts, ms, mps, price,
               "" if delta == "-" else delta, "" if vega == "-" else vega, "" if same == "-" else same, regs,
               spill, compile_s, cached]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--machine", required=True)
    ap.add_argument("files", nargs="+", help="compare text files; the source column names each")
    a = ap.parse_args()
    out = csv.writer(sys.stdout, lineterminator="\n")
    sys.stdout.write(f"# machine={a.machine} driver=tapelab-compare (converted by papers/convert_compare.py)\n")
    out.writerow(COLUMNS)
    for f in a.files:
        label = "/".join(f.split("/")[-2:])
        for r in rows_of(f, label):
            out.writerow(r)


if __name__ == "__main__":
    main()
