#!/usr/bin/env python3
"""markets: markets per dispatch (a spot ladder 100, 101, ...) x kernel kind.
For each engine and market count, the plain, register (window, --segments) and
scratch (soa and aos at --seglen) kernels of the Asian call; mpath_s counts
paths per dispatch, so market-paths per second is mpath_s x markets. One
scratch_sweep run per (engine, markets).

  markets.py [--engines cuda,vulkan,opencl] [--markets 1,...,8] [--steps 252]
             [--segments 16] [--seglen 100] [--paths N] [--reps N] [--out FILE.csv] [--quick]
"""
import sys

import sweep_driver as sd


def main(argv):
    ap = sd.parser("markets", __doc__.splitlines()[1])
    ap.add_argument("--markets", default=None, help="market counts (default 1,2,...,8; --quick 1,2)")
    ap.add_argument("--steps", type=sd.STEPS, default=None, help="time steps (default 252, --quick 16)")
    ap.add_argument("--segments", type=sd.careful.integer(1, 1 << 20), default=16, help="register kernel's segment count (window)")
    ap.add_argument("--seglen", type=sd.careful.integer(1, 1 << 30), default=None, help="scratch kernels' segment length (default 100, --quick 24)")
    a = sd.finish_args(ap.parse_args(argv), argv)
    markets = sd.int_list(a.markets or ("1,2" if a.quick else "1,2,3,4,5,6,7,8"), "--markets", hi=8)
    steps = a.steps or (16 if a.quick else 252)
    seglen = a.seglen or (24 if a.quick else 100)
    w = sd.Writer(a, "markets", ["steps"], ["markets.py"] + argv)  # markets is one of scratch_sweep's columns
    for engine in a.engine_list:
        for m in markets:
            sd.run_point(a, w, engine, {"steps": sd.steps_coord(a, steps)}, steps, m, a.segments, [seglen])
    return sd.done(w)


if __name__ == "__main__":
    sys.exit(sd.careful.run_main("markets", main, sys.argv[1:]))
