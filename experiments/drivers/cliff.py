#!/usr/bin/env python3
"""cliff: the article's first finding, the plain kernel's cliff with tape length.
For each engine and tape length (Asian call, steps), Mpath/s, registers and
spill bytes of the plain kernel, register checkpointing (window, --segments)
and scratch checkpointing (soa and aos at --seglen); where plain falls off, the
registers and spill columns say why. One scratch_sweep run per (engine, steps);
--tape FILE: that tape instead, one run per engine (--steps does not apply).

  cliff.py [--engines cuda,vulkan,opencl] [--steps 16,32,...,504] [--segments 16]
           [--seglen 100] [--paths N] [--reps N] [--out FILE.csv] [--quick]
"""
import sys

import sweep_driver as sd


def main(argv):
    ap = sd.parser("cliff", __doc__.splitlines()[1])
    ap.add_argument("--steps", default=None, help="tape lengths (default 16,32,48,64,96,128,192,252,320,400,504; --quick 16,48)")
    ap.add_argument("--segments", type=sd.careful.integer(1, 1 << 20), default=16, help="register kernel's segment count (window)")
    ap.add_argument("--seglen", type=sd.careful.integer(1, 1 << 30), default=None, help="scratch kernels' segment length in nodes (default 100, --quick 24)")
    a = sd.finish_args(ap.parse_args(argv), argv)
    steps = sd.int_list(a.steps or ("16,48" if a.quick else "16,32,48,64,96,128,192,252,320,400,504"), "--steps", hi=1000000)
    steps = steps[:1] if a.tape else steps  # one tape, one point (scratch_sweep ignores --steps for it)
    seglen = a.seglen or (24 if a.quick else 100)
    w = sd.Writer(a, "cliff", ["steps"], ["cliff.py"] + argv)
    for engine in a.engine_list:
        for s in steps:
            sd.run_point(a, w, engine, {"steps": sd.steps_coord(a, s)}, s, 1, a.segments, [seglen])
    return sd.done(w)


if __name__ == "__main__":
    sys.exit(sd.careful.run_main("cliff", main, sys.argv[1:]))
