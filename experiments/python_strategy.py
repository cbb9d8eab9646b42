#!/usr/bin/env python3
"""Two cut strategies written in Python, as a researcher writes one, and the bench run on them.

live_minima: every ~n/segments nodes, cut where the live count (the values a cut
there must keep: tape.live_across()) is least within half a segment of the
target, ties to the target; the article's window strategy in a few lines of
NumPy, with a window twice as wide. live_minima_nested cuts each of its
segments once more at its own least live count (a two-level plan).

The functions are the whole contract: FN(tape, segments) -> cuts (or {"cuts": [...],
"inner": [...]}). Any file like this one goes through experiments/bench.py, beside every
built-in strategy, with its functions' names in the CSV, the table and the figures:

    experiments/bench.py --python experiments/python_strategy.py --tapes asian,basket:assets=5

`python_strategy.py [BENCH FLAGS]` is that command (bench.py --help lists the flags; without
--tapes or --tape: the 252-step Asian and a 5-asset basket). Needs the tapelab module
(README.md: your own tape, end to end) and python3-matplotlib.
"""
import os
import sys

import numpy as np


def live_minima(tape, segments):
    live = tape.live_across()
    n = len(tape)
    half = n / (2 * segments)
    cuts = []
    for s in range(1, segments):
        target = s * n / segments
        lo = max(int(np.ceil(target - half)), cuts[-1] + 1 if cuts else 1)
        hi = min(int(target + half), n - 1)
        if lo > hi:
            continue
        window = live[lo:hi + 1]
        best = np.flatnonzero(window == window.min()) + lo
        cuts.append(int(best[np.argmin(np.abs(best - target))]))
    return cuts


def live_minima_nested(tape, segments):
    live = tape.live_across()
    cuts = live_minima(tape, segments)
    bounds = [0, *cuts, len(tape)]
    inner = []
    for lo, hi in zip(bounds, bounds[1:]):
        if hi - lo < 8:
            inner.append(None)
            continue
        a, b = lo + (hi - lo) // 4, hi - (hi - lo) // 4  # the middle half of the segment
        inner.append([a + int(np.argmin(live[a:b]))])
    return {"cuts": cuts, "inner": inner}


def main(argv):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench
    tapes = [] if any(a.startswith(("--tapes", "--tape")) for a in argv) else ["--tapes", "asian:steps=252,basket:steps=64:assets=5"]
    return bench.run_main(["--python", os.path.abspath(__file__), *tapes, *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
