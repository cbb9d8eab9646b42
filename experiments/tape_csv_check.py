#!/usr/bin/env python3
"""tape_csv_check: runs one experiment driver on a user's tape and checks that its CSV ran that tape.
CTest's experiment_*_user_tape: the driver's arguments follow `--`, with {out} standing for a CSV path
in a fresh temporary directory (removed afterwards; never the source tree). The check: the driver
exits 0, its CSV has a `tape` column and at least one row, and every row names --tape-name (none
the built-in Asian, which a driver that ignored --tape would have run); each --comment text
appears in one of the CSV's '#' rows (peers: why JAX and the hand-written kernel were skipped).
An exit --skip-rc from the driver (the engine is not usable, or not built) is passed on, with the
driver's reason, for CTest's SKIP_RETURN_CODE.

  tape_csv_check.py --tape-name user-heston.tape [--comment TEXT ...] [--skip-rc 3] -- DRIVER ARGS... {out} ...
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile


def fail(message):
    sys.stderr.write(f"tape_csv_check: {message}\n")
    raise SystemExit(1)


def main(argv):
    if "--" not in argv:
        sys.stderr.write("tapelab: tape_csv_check: expected -- DRIVER ARGS... after the flags\n")
        return 2
    cut = argv.index("--")
    ap = argparse.ArgumentParser(prog="tape_csv_check")
    ap.add_argument("--tape-name", required=True, help="what every row's tape column must say")
    ap.add_argument("--comment", action="append", default=[], help="a text one of the '#' rows must hold")
    ap.add_argument("--skip-rc", type=int, default=None, help="the driver's exit code for 'cannot run here'")
    a = ap.parse_args(argv[:cut])
    command = argv[cut + 1:]
    if not command or not any("{out}" in c for c in command):
        sys.stderr.write("tapelab: tape_csv_check: the driver's arguments need {out} (where its CSV goes)\n")
        return 2

    tmp = tempfile.mkdtemp(prefix="tapelab-user-tape-")
    out = os.path.join(tmp, "out.csv")
    command = [c.replace("{out}", out) for c in command]
    print("tape_csv_check: " + " ".join(command), flush=True)
    try:
        p = subprocess.run(command, cwd=tmp, capture_output=True, text=True)
        sys.stdout.write(p.stdout[-4000:])
        sys.stderr.write(p.stderr[-4000:])
        if a.skip_rc is not None and p.returncode == a.skip_rc:
            reason = (p.stderr.strip().splitlines() or ["(no reason printed)"])[-1]
            print(f"tape_csv_check: SKIP: {os.path.basename(command[0])} cannot run here: {reason}")
            return a.skip_rc
        if p.returncode != 0:
            fail(f"{os.path.basename(command[0])} exit {p.returncode}")
        if not os.path.isfile(out):
            fail(f"no CSV at {out}")
        with open(out, newline="") as f:
            lines = f.read().splitlines()
        comments = [l for l in lines if l.startswith("#")]
        rows = list(csv.DictReader(l for l in lines if l and not l.startswith("#")))
        if not rows:
            fail("the CSV has no rows")
        if "tape" not in rows[0]:
            fail(f"the CSV has no tape column: {', '.join(rows[0])}")
        wrong = sorted({r["tape"] for r in rows if r["tape"] != a.tape_name})
        if wrong:
            fail(f"rows name other tapes than {a.tape_name}: {', '.join(wrong)}")
        for text in a.comment:
            if not any(text in c for c in comments):
                fail(f"no '#' row says '{text}' (they are: {' | '.join(comments)})")
        print(f"tape_csv_check: {len(rows)} rows, every one tape={a.tape_name}"
              + (f"; comments hold {a.comment}" if a.comment else ""))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
