#!/usr/bin/env python3
"""segments: the register kernel at 1 to 64 segments (window strategy), the
article's flat segment-count curve, with the plain kernel of the same run as
the baseline (ratio_to_plain). No scratch kernels. One scratch_sweep run per
(engine, segments).

  segments.py [--engines cuda,vulkan,opencl] [--segments 1,2,4,...,64] [--steps 252]
              [--paths N] [--reps N] [--out FILE.csv] [--quick]
"""
import sys

import sweep_driver as sd

NO_SCRATCH = 1 << 30  # a segment length above any tape: scratch_sweep then skips its scratch kernels


def main(argv):
    ap = sd.parser("segments", __doc__.splitlines()[1])
    ap.add_argument("--segments", default=None, help="segment counts (default 1,2,4,8,12,16,24,32,48,64; --quick 1,4)")
    ap.add_argument("--steps", type=sd.STEPS, default=None, help="time steps (default 252, --quick 16)")
    a = sd.finish_args(ap.parse_args(argv), argv)
    counts = sd.int_list(a.segments or ("1,4" if a.quick else "1,2,4,8,12,16,24,32,48,64"), "--segments", hi=1 << 20)
    steps = a.steps or (16 if a.quick else 252)
    w = sd.Writer(a, "segments", ["steps"], ["segments.py"] + argv)  # segments is one of scratch_sweep's columns
    for engine in a.engine_list:
        for n in counts:
            sd.run_point(a, w, engine, {"steps": sd.steps_coord(a, steps)}, steps, 1, n, [NO_SCRATCH])
    return sd.done(w)


if __name__ == "__main__":
    sys.exit(sd.careful.run_main("segments", main, sys.argv[1:]))
