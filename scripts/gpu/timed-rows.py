#!/usr/bin/env python3
"""The rows kernels-vs-peers.sh's timed_row wrote (MODE-xMARKETS-CONFIG-rROUND.json: compare --json with
TAPELAB_TIMELINE=1), one line per mode, kernel, markets and configuration: Mpath/s of each round and their
median, the last run's wall, kernel and gap milliseconds (the dispatches' device times), registers, spill and
whether its bits are its plain kernel's. What a record's table quotes.

    scripts/gpu/timed-rows.py DIR [MODE...]      (default: every mode found)
"""
import glob
import json
import os
import re
import statistics
import sys

NAME = re.compile(r"^(?P<mode>[a-z0-9]+)(-(?P<kind>[a-z]+))?-x(?P<markets>\d+)-(?P<config>.*)-r(?P<round>\d+)\.json$")


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) >= 2 else 2
    folder, modes = sys.argv[1], set(sys.argv[2:])
    if not os.path.isdir(folder):
        print(f"timed-rows.py: {folder}: not a folder", file=sys.stderr)
        return 2
    rows: dict = {}
    for path in sorted(glob.glob(os.path.join(folder, "*-x*-r*.json"))):
        m = NAME.match(os.path.basename(path))
        if not m or (modes and m["mode"] not in modes):
            continue
        try:
            job = json.load(open(path))
        except ValueError as e:
            print(f"{os.path.basename(path)}: unreadable ({e})")
            continue
        for r in job["rows"]:
            if r["kernel"] == "plain":
                continue
            res = r["result"]
            ds = res.get("dispatches", [])
            stats = res.get("kernel_stats", {})
            # compare at M: rows at 1 and M; the name's second part is the kernel (kinds) or the product (minblocks)
            what = m["kind"] if m["kind"] and m["kind"] not in r["kernel"] else ""
            key = (m["mode"], (what + " " if what else "") + r["kernel"], int(r["markets"]), m["config"])
            rows.setdefault(key, []).append({
                "round": int(m["round"]), "mpaths": r["mpaths_per_second"], "wall": res["seconds"] * 1e3,
                "kernels": sum(d.get("kernel_seconds", 0) for d in ds) * 1e3,
                "gaps": sum(max(d.get("gap_seconds", 0), 0) for d in ds) * 1e3, "dispatches": len(ds),
                "bits": r.get("identical_to_plain"), "registers": stats.get("registers"),
                "spill": stats.get("spill_bytes"), "config": res.get("config", "")})
    if not rows:
        print(f"timed-rows.py: no timed rows in {folder}", file=sys.stderr)
        return 1
    for (mode, kernel, markets, config), v in sorted(rows.items()):
        v.sort(key=lambda x: x["round"])
        last = v[-1]
        rounds = ", ".join(f"{x['mpaths']:.1f}" for x in v)
        print(f"{mode:8s} {kernel:12s} x{markets} {config:40s} median {statistics.median(x['mpaths'] for x in v):8.1f} "
              f"Mpath/s ({rounds}); last run {last['wall']:.3f} ms wall, {last['kernels']:.3f} ms kernels, "
              f"{last['gaps']:.3f} ms gaps, {last['dispatches']} dispatches; {last['registers']} registers, "
              f"{last['spill']} B spill; bits as plain: {last['bits']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
